#!/usr/bin/env python3
"""Connector vs native, same run: `scripts/dev run python3 bench/connector/run.py [--quick]`.

Workloads (connector_bench.c, one phase per process): 20,000 groups with 5 attributes each,
created, then iterated with every attribute read; a 1 GiB dataset written and read in 1 MiB
chunks; 2,000 file open/close. Setups: native, HDF5's built-in pass_through (the reference
passthrough) and h5sparse.

Wall-time method (docs/DESIGN.md, "Performance notes"): a timing on a shared VM moves by 10-40%
between runs of the same code, mostly slowly (the native column drifts as much as the ratios
we want to see). So every sample is a fresh process running one phase, and the setups
alternate run by run within a round (native, h5sparse, pass_through, then the reverse order in
the next round), for --rounds rounds. Per setup the table gives the minimum and the median of
the samples; the ratio to native is given three ways: of the minima, of the medians, and the
median of the per-round ratios (each h5sparse sample divided by the native sample taken next to
it, which cancels drift slower than a round) with a distribution-free 95% confidence interval
of that median. A difference is resolved when the interval excludes 1; to resolve 5% the
interval must be narrower than that, which takes more rounds the noisier the machine.
The load average before and after is printed: numbers from a loaded machine are indicative.

--against DIR measures another h5sparse build (its plugin directory, e.g. a Release build of an
older commit) in place of pass_through, in the same rounds: a before/after comparison that
shares the machine's drift.

--instructions counts instructions with callgrind, --cache instruction- and data-cache
misses with cachegrind (both deterministic; marginal cost of the work, startup excluded).

Files go to $H5SPARSE_BENCH_DIR, else /dev/shm. The tables replace this script's section of
bench/RESULTS.md (--results-md PATH: of another file; a --quick or --against run writes a
section only there)."""
import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import results  # noqa: E402

# The reference passthrough: HDF5's own built-in pass_through connector, the floor any
# passthrough pays in a thread-safe HDF5 (every forwarded call is another locked API call).
SETUPS = {"native": None, "pass_through": "pass_through under_vol=0;under_info={}",
          "h5sparse": "h5sparse under_vol=0;under_info={}"}
PHASES = {"groups": ("groups_create", "groups_iterate"), "io": ("dataset_write", "dataset_read"),
          "open_close": ("open_close",)}
# The cache geometry cachegrind simulates: this machine's (AMD EPYC: 32 KiB 8-way L1i and L1d,
# 512 KiB 8-way L2 per core, as "LL"; 64-byte lines), fixed so that runs compare.
CACHES = ["--I1=32768,8,64", "--D1=32768,8,64", "--LL=524288,8,64"]
# --against: the plugin directory of the h5sparse build measured in pass_through's place.
AGAINST = None
# The plugin directory of --build, which the h5sparse column measures (not whichever build
# HDF5_PLUGIN_PATH names).
PLUGINS = None


def environment(setup):
    env = dict(os.environ)
    env.pop("HDF5_VOL_CONNECTOR", None)
    if SETUPS[setup]:
        env["HDF5_VOL_CONNECTOR"] = SETUPS[setup]
    if setup == "h5sparse":
        env["HDF5_PLUGIN_PATH"] = PLUGINS
    if AGAINST and setup == "pass_through":
        env["HDF5_VOL_CONNECTOR"] = SETUPS["h5sparse"]
        env["HDF5_PLUGIN_PATH"] = AGAINST
    return env


def run(binary, workdir, phase, setup, groups, mib):
    out = subprocess.run([binary, workdir, phase, str(groups), str(mib)], env=environment(setup),
                         capture_output=True, text=True, check=True).stdout
    # "<phase> <wall seconds> <CPU seconds>" per line
    return {k: (float(wall), float(cpu)) for k, wall, cpu in (line.split() for line in out.splitlines())}


def sample(binary, workdir, rounds, groups, mib):
    """samples[(name, setup, clock)] = list of seconds, one per round, setups alternating."""
    samples = {}
    order = list(SETUPS)
    for r in range(rounds):
        for phase in PHASES:
            for setup in (order if r % 2 == 0 else order[::-1]):
                for name, (wall, cpu) in run(binary, workdir, phase, setup, groups, mib).items():
                    samples.setdefault((name, setup, "wall"), []).append(wall)
                    samples.setdefault((name, setup, "cpu"), []).append(cpu)
    return samples


def median_interval(values, confidence=0.95):
    """Distribution-free confidence interval of the median: the k-th smallest and k-th largest
    sample, k the largest with P(Binomial(n, 1/2) < k) <= (1 - confidence) / 2 (the whole range
    when there are too few samples for that)."""
    ordered, n = sorted(values), len(values)
    tail, k, below = (1 - confidence) / 2, 0, 0.0
    while k < n // 2 and below + math.comb(n, k) / 2 ** n <= tail:
        below += math.comb(n, k) / 2 ** n
        k += 1
    k = max(k, 1)
    return ordered[k - 1], ordered[n - k]


def timing_table(samples, clock):
    lines = ["| phase | native min / median s | pass_through min / median s | h5sparse min / median s "
             "| h5sparse / native: of minima | of medians | paired median [95% CI] "
             "| pass_through / native paired median |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for phase in PHASES.values():
        for name in phase:
            s = {setup: samples[(name, setup, clock)] for setup in SETUPS}
            cells = [f"{min(v):.3f} / {statistics.median(v):.3f}" for v in s.values()]
            ours = [h / n for h, n in zip(s["h5sparse"], s["native"])]
            theirs = [p / n for p, n in zip(s["pass_through"], s["native"])]
            low, high = median_interval(ours)
            lines.append(f"| {name} ({clock}) | " + " | ".join(cells) +
                         f" | {min(s['h5sparse']) / min(s['native']):.3f}"
                         f" | {statistics.median(s['h5sparse']) / statistics.median(s['native']):.3f}"
                         f" | {statistics.median(ours):.3f} [{low:.3f}-{high:.3f}]"
                         f" | {statistics.median(theirs):.3f} |")
    return lines


def valgrind_totals(tool, binary, workdir, phase, setup, scale):
    """Event totals of one phase run under callgrind or cachegrind, whole process."""
    out = os.path.join(workdir, f"{tool}.out")
    options = [f"--{tool}-out-file={out}"] + (["--cache-sim=yes"] + CACHES if tool == "cachegrind" else [])
    subprocess.run(["valgrind", f"--tool={tool}"] + options +
                   [binary, workdir, phase, str(1000 * scale), str(16 * scale), str(500 * scale)],
                   env=environment(setup), capture_output=True, check=True)
    events = None
    with open(out) as f:
        for line in f:
            if line.startswith("events:"):
                events = line.split()[1:]
            if line.startswith("summary:") or line.startswith("totals:"):
                return dict(zip(events, map(int, line.split()[1:])))
    raise RuntimeError(f"no {tool} totals")


def marginal(tool, binary, workdir):
    """Events per unit of work, startup excluded: E(2N) - E(N) for each phase and setup
    (N = 1,000 groups / 16 MiB / 500 open-close pairs)."""
    table = {}
    for phase in PHASES:
        for setup in SETUPS:
            one = valgrind_totals(tool, binary, workdir, phase, setup, 1)
            two = valgrind_totals(tool, binary, workdir, phase, setup, 2)
            table[(phase, setup)] = {event: two[event] - one[event] for event in one}
    return table


def event_table(counts, events):
    lines = ["| phase | event | native | pass_through | h5sparse | pass_through / native | h5sparse / native |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for phase in PHASES:
        for event in events:
            native, passthru, ours = (counts[(phase, s)][event] for s in SETUPS)
            lines.append(f"| {phase} | {event} | {native:,} | {passthru:,} | {ours:,} | {passthru / native:.3f} | "
                         f"{ours / native:.3f} |")
    return lines


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.environ.get("H5SPARSE_BUILD_DIR", "build"))
    parser.add_argument("--quick", action="store_true", help="2,000 groups and 64 MiB instead")
    parser.add_argument("--rounds", "--repeat", type=int, default=15,
                        help="alternating rounds, one sample per setup and phase each (default 15)")
    parser.add_argument("--instructions", action="store_true", help="also count instructions with callgrind")
    parser.add_argument("--cache", action="store_true", help="also count cache misses with cachegrind")
    parser.add_argument("--against", metavar="DIR",
                        help="plugin directory of another h5sparse build, measured in pass_through's column")
    results.add_argument(parser)
    args = parser.parse_args()
    partial = bool(args.quick or args.against)
    bench_dir = os.environ.get("H5SPARSE_BENCH_DIR") or ("/dev/shm" if os.path.isdir("/dev/shm") else None)
    global AGAINST, PLUGINS
    AGAINST = args.against and os.path.abspath(args.against)
    PLUGINS = os.path.abspath(os.path.join(args.build, "plugins"))
    binary = os.path.join(args.build, "bin", "connector_bench")
    groups, mib = (2000, 64) if args.quick else (20000, 1024)
    lines = results.preamble("Connector overhead", partial) + [
        f"{groups:,} groups with 5 attributes each, created, then iterated with every attribute read; a {mib:,} MiB "
        "dataset written and read in 1 MiB chunks, one `H5Dwrite`/`H5Dread` per chunk; 2,000 file open/close. "
        "Native, HDF5's built-in `pass_through` (the reference passthrough) and h5sparse, each sample a fresh "
        "process running one phase; the setups alternate within a round and the order reverses every other round, "
        f"{args.rounds} rounds. Per setup the minimum and the median; the ratio to native three ways: of the minima, "
        "of the medians, and the median of the per-round ratios (each sample over the native sample taken next to "
        "it, which cancels drift slower than a round) with a distribution-free 95% confidence interval. "
        f"Files in {bench_dir or 'the temporary directory'}.", ""]
    if AGAINST:
        lines += [f"The pass_through column is h5sparse from {AGAINST}.", ""]
    if args.rounds > 0:
        load_before = os.getloadavg()
        with tempfile.TemporaryDirectory(dir=bench_dir) as workdir:
            samples = sample(binary, workdir, args.rounds, groups, mib)
        load_after = os.getloadavg()
        lines += [f"Load average (1, 5, 15 min) before: {', '.join(f'{x:.2f}' for x in load_before)}; "
                  f"after: {', '.join(f'{x:.2f}' for x in load_after)}", "",
                  "Wall time, then CPU time of the process (user + system):", ""]
        for clock in ("wall", "cpu"):
            lines += timing_table(samples, clock) + [""]
    if args.instructions or args.cache:
        with tempfile.TemporaryDirectory(dir=bench_dir) as workdir:
            if args.instructions:
                lines += ["Instructions (callgrind), marginal cost of 1,000 groups x 5 attributes created and "
                          "iterated / 16 MiB written and read / 500 open-close pairs; deterministic:", ""]
                lines += event_table(marginal("callgrind", binary, workdir), ["Ir"]) + [""]
            if args.cache:
                lines += ["Cache misses (cachegrind: I1/D1 32 KiB 8-way, LL 512 KiB 8-way), same marginal "
                          "work; I1mr/D1mr: first-level instruction/data read misses, ILmr/DLmr: last level:", ""]
                lines += event_table(marginal("cachegrind", binary, workdir),
                                     ["Ir", "I1mr", "ILmr", "D1mr", "DLmr"]) + [""]
    print("\n".join(lines))
    results.write(args, "bench/connector/run.py", "\n".join(lines), quick=partial)


if __name__ == "__main__":
    sys.exit(main())
