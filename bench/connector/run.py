#!/usr/bin/env python3
"""Connector vs native, same run: `scripts/dev run python3 bench/connector/run.py [--quick]`.

Each phase runs alternately without and with HDF5_VOL_CONNECTOR (best of N), in fresh
processes, with HDF5's built-in pass_through as the reference passthrough; the table gives
seconds and ratios to native (target <= 1.05)."""
import argparse
import os
import subprocess
import sys
import tempfile

# The reference passthrough: HDF5's own built-in pass_through connector, the floor any
# passthrough pays in a thread-safe HDF5 (every forwarded call is another locked API call).
SETUPS = {"native": None, "pass_through": "pass_through under_vol=0;under_info={}",
          "h5sparse": "h5sparse under_vol=0;under_info={}"}


def run(binary, workdir, phase, setup, groups, mib):
    env = dict(os.environ)
    env.pop("HDF5_VOL_CONNECTOR", None)
    if SETUPS[setup]:
        env["HDF5_VOL_CONNECTOR"] = SETUPS[setup]
    out = subprocess.run([binary, workdir, phase, str(groups), str(mib)], env=env, capture_output=True,
                         text=True, check=True).stdout
    # "<phase> <wall seconds> <CPU seconds>" per line
    return {k: (float(wall), float(cpu)) for k, wall, cpu in (line.split() for line in out.splitlines())}


def instructions(binary, workdir, phase, setup, scale):
    """Instructions the phase executes (callgrind), whole process: deterministic, unlike time."""
    env = dict(os.environ)
    env.pop("HDF5_VOL_CONNECTOR", None)
    if SETUPS[setup]:
        env["HDF5_VOL_CONNECTOR"] = SETUPS[setup]
    out = os.path.join(workdir, "callgrind.out")
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary, workdir, phase,
                    str(1000 * scale), str(16 * scale), str(500 * scale)],
                   env=env, capture_output=True, check=True)
    with open(out) as f:
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                return int(line.split()[1])
    raise RuntimeError("no callgrind totals")


def marginal_instructions(binary, workdir):
    """Instructions per unit of work, startup excluded: I(2N) - I(N) for each phase and setup
    (N = 1,000 groups / 16 MiB / 500 open-close pairs)."""
    table = {}
    for phase in ("groups", "io", "open_close"):
        for setup in SETUPS:
            table[(phase, setup)] = (instructions(binary, workdir, phase, setup, 2)
                                     - instructions(binary, workdir, phase, setup, 1))
    return table


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.environ.get("H5SPARSE_BUILD_DIR", "build"))
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--instructions", action="store_true", help="also count instructions with callgrind")
    args = parser.parse_args()
    binary = os.path.join(args.build, "bin", "connector_bench")
    groups, mib = (2000, 64) if args.quick else (20000, 1024)
    best = {}
    with tempfile.TemporaryDirectory(dir=os.environ.get("H5SPARSE_BENCH_DIR")) as workdir:
        for _ in range(args.repeat):
            for phase in ("groups", "io", "open_close"):
                for setup in SETUPS:
                    for name, (wall, cpu) in run(binary, workdir, phase, setup, groups, mib).items():
                        for clock, seconds in (("wall", wall), ("cpu", cpu)):
                            key = (name, setup, clock)
                            best[key] = min(best.get(key, float("inf")), seconds)
    lines = ["Command: `scripts/dev run python3 bench/connector/run.py" + (" --quick" if args.quick else "") + "`",
             f"({groups:,} groups x 5 attributes; {mib:,} MiB dataset in 1 MiB chunks; 2,000 open/close; "
             f"best of {args.repeat})", "",
             "Wall time, then CPU time of the process (user + system; leaves out what other processes "
             "take on a shared machine):", ""]
    for clock in ("wall", "cpu"):
        lines += ["| phase | native s | pass_through s | h5sparse s | pass_through / native | h5sparse / native |",
                  "| --- | ---: | ---: | ---: | ---: | ---: |"]
        for name in ("groups_create", "groups_iterate", "dataset_write", "dataset_read", "open_close"):
            native, passthru, ours = (best[(name, s, clock)] for s in SETUPS)
            lines.append(f"| {name} ({clock}) | {native:.3f} | {passthru:.3f} | {ours:.3f} | {passthru / native:.3f} | "
                         f"{ours / native:.3f} |")
        lines.append("")
    if args.instructions:
        with tempfile.TemporaryDirectory(dir=os.environ.get("H5SPARSE_BENCH_DIR")) as workdir:
            counts = marginal_instructions(binary, workdir)
        lines += ["", "Instructions (callgrind), marginal cost of 1,000 groups x 5 attributes created and "
                  "iterated / 16 MiB written and read / 500 open-close pairs; deterministic:", "",
                  "| phase | native | pass_through | h5sparse | pass_through / native | h5sparse / native |",
                  "| --- | ---: | ---: | ---: | ---: | ---: |"]
        for phase in ("groups", "io", "open_close"):
            native, passthru, ours = (counts[(phase, s)] for s in SETUPS)
            lines.append(f"| {phase} | {native:,} | {passthru:,} | {ours:,} | {passthru / native:.3f} | "
                         f"{ours / native:.3f} |")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
