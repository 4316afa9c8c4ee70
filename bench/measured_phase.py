"""Runs a C benchmark program whose measured part is its `measured_phase` function (it prints
its wall seconds as the second word of its output): a fresh process's wall seconds, or, under
callgrind, the instructions of `measured_phase` alone (they do not move with the machine's load;
one thread, so that the count does not depend on how work was shared)."""
import os
import subprocess


def run(cmd, workdir, callgrind=False):
    """Wall seconds of one fresh process running `cmd`, or its instructions under callgrind."""
    out = os.path.join(workdir, "callgrind.out")
    env = dict(os.environ)
    if callgrind:
        cmd = ["valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=measured_phase",
               f"--callgrind-out-file={out}"] + list(cmd)
        env["H5SPARSE_NTHREADS"] = "1"
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed:\n{p.stderr[-3000:]}")
    if not callgrind:
        return float(p.stdout.split()[1])
    with open(out) as f:
        return next(int(line.split()[1]) for line in f if line.startswith("totals:"))
