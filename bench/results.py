"""bench/RESULTS.md is written by the benchmarks, each into its own section; this edits the file.

A section is the text between two marker lines naming the script that writes it:

    <!-- bench/sparse/run.py begin -->
    ### Sparse storage
    ...
    <!-- bench/sparse/run.py end -->

`replace_section(name, markdown)` puts `markdown` between the markers of `name`, or appends a
new marked section at the end of the file; the rest of the file stays byte for byte. Every
script heads its section with `preamble()`: the exact command (as run from the repository
root), the date, the commit, and the machine. A `--quick` run writes no section unless it is
given `--results-md PATH` (a scratch copy), so smaller smoke runs never replace real numbers.
"""
import datetime
import os
import platform
import re
import shlex
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS_MD = os.path.join(REPO, "bench", "RESULTS.md")


def markers(name):
    return f"<!-- {name} begin -->", f"<!-- {name} end -->"


def replace_section(name, markdown, path=RESULTS_MD):
    """Writes `markdown` as the section of `name` (e.g. "bench/sparse/run.py") into `path`."""
    begin, end = markers(name)
    body = markdown.strip("\n") + "\n"
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        text = "# Benchmark results\n"
    found = re.search(re.escape(begin) + r"\n.*?" + re.escape(end) + r"\n?", text, flags=re.S)
    block = f"{begin}\n{body}{end}\n"
    if found:
        text = text[:found.start()] + block + text[found.end():]
    else:
        text = text.rstrip("\n") + "\n\n" + block
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)
    shown = os.path.relpath(path, REPO) if os.path.abspath(path).startswith(REPO + os.sep) else path
    print(f"[results] section {name} written to {shown}", file=sys.stderr, flush=True)


def md_table(header, rows, right_from=2):
    """A Markdown table; columns from `right_from` on are right-aligned."""
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---" if i < right_from else "---:" for i in range(len(header))) + "|"]
    return "\n".join(out + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows])


def add_argument(parser):
    """The --results-md option every benchmark takes."""
    parser.add_argument("--results-md", metavar="PATH",
                        help="Markdown file whose section of this script the run replaces (default "
                             "bench/RESULTS.md; a --quick run writes none unless given a PATH)")


def target(args, quick=False):
    """The file a run writes its section into, or None (a --quick run without --results-md)."""
    if args.results_md:
        return args.results_md
    return None if quick else RESULTS_MD


def write(args, name, markdown, quick=False):
    """replace_section into the file of `args`, if any; says where the section went."""
    path = target(args, quick)
    if path is None:
        print(f"[results] --quick: no section written (give --results-md PATH to write {name}'s)",
              file=sys.stderr, flush=True)
        return
    replace_section(name, markdown, path)


def toolchain_prefix(build=True):
    """The variables scripts/dev was given: H5SPARSE_HDF5=2 and (`build`) a build tree other than
    the default one, as words to put before the command."""
    hdf5 = os.environ.get("H5SPARSE_HDF5", "")
    words = ["H5SPARSE_HDF5=2"] if hdf5.startswith("2") else []
    default = os.path.join(REPO, "build" if not words else "build-hdf5-2")
    build = build and os.environ.get("H5SPARSE_BUILD_DIR")
    if build and os.path.normpath(build) != default:
        rel = os.path.relpath(build, REPO)
        words.append(f"H5SPARSE_BUILD_DIR=$PWD/{rel}" if not rel.startswith("..") else f"H5SPARSE_BUILD_DIR={build}")
    return "".join(w + " " for w in words)


def command_line(argv=None, prefix="scripts/dev run python3"):
    """The command that ran this script, as typed from the repository root."""
    argv = sys.argv if argv is None else argv
    rel = os.path.relpath(os.path.abspath(argv[0]), REPO)
    args = " ".join(shlex.quote(a) for a in argv[1:])
    return f"{toolchain_prefix()}{prefix} {rel}{' ' + args if args else ''}"


def git_describe():
    """The commit, with a note when tracked files differ from it; where git cannot see the
    repository (a worktree inside a toolchain root), what scripts/dev found outside."""
    try:
        head = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
    except OSError:
        head = ""
    if not head:
        return os.environ.get("H5SPARSE_COMMIT") or "unknown"
    return head + (" (with uncommitted changes)" if dirty else "")


def build_type(plugin_dirs):
    """The build tree of the first plugin directory with a CMakeCache.txt, and its build type."""
    for p in plugin_dirs:
        cache = os.path.join(p, "..", "CMakeCache.txt")
        if os.path.exists(cache):
            with open(cache) as f:
                for line in f:
                    if line.startswith("CMAKE_BUILD_TYPE:"):
                        tree = os.path.relpath(os.path.normpath(os.path.join(p, "..")), REPO)
                        return f"{tree} ({line.split('=', 1)[1].strip()})"
    return "unknown"


def plugin_dirs():
    return [p for p in os.environ.get("HDF5_PLUGIN_PATH", "").split(":") if p]


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_line(quick=False, extra="", build=None):
    """Date, commit, build, library versions, CPU and load: one line under the command. `build`
    names the build trees where HDF5_PLUGIN_PATH does not (a script measuring several)."""
    parts = [f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC", f"commit {git_describe()}",
             f"build {build or build_type(plugin_dirs())}"]
    try:
        import h5py
        import numpy
        parts += [f"HDF5 {h5py.version.hdf5_version}", f"h5py {h5py.__version__}", f"numpy {numpy.__version__}"]
    except ImportError:
        pass
    load = os.getloadavg()
    parts.append(f"{cpu_model()} x {os.cpu_count()}, load average at start {load[0]:.2f}")
    line = ", ".join(parts) + (f", {extra}" if extra else "")
    return line + (" (a --quick or partial run)" if quick else "") + "."


def preamble(title, quick=False, command=None, extra="", build=None):
    """Heading, command in a code block and machine line of a section, as a list of lines."""
    return [f"### {title}", "", "```", command or command_line(), "```", "", machine_line(quick, extra, build), ""]
