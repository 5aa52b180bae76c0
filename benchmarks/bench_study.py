"""Benchmark: wall time of the main job, ``evalkit study`` offline on the shipped catalogue.

Run:  python benchmarks/bench_study.py [--warm] [--cores 2]

Runs ``evalkit study --catalogue catalogues --judge baseline`` in a subprocess (the
offline baseline judge, no key, no network) with its reports and ledgers in a temporary
folder, so the judge starts from an empty ledger (a cold run, as on a fresh checkout),
pinned to ``--cores`` CPUs when the machine has more. Prints the wall time against the
target (under 2 minutes on 2 cores) and the time of each notebook as ``evalkit study``
reports it. With ``--warm`` it runs the same command a second time on the same ledger
folder (the judge answers come from the ledger) and prints that too.
If ``evalkit study`` is not available (it is being built), it says so and exits 0. It only
prints: a failed or slow study is reported, never raised.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO, header, verdict

TARGET_S = 120.0
LINE = re.compile(r"^(\w+): (rendered|FAILED: .*?) in ([0-9.]+) s")


def evalkit_cmd() -> list[str]:
    exe = Path(sys.executable).with_name("evalkit")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "evalkit"]


def available() -> tuple[bool, str]:
    """Whether ``evalkit study`` exists (its --help succeeds), and what it said if not."""
    try:
        done = subprocess.run([*evalkit_cmd(), "study", "--help"], cwd=REPO,
                              capture_output=True, text=True, timeout=120)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, str(exc)
    return done.returncode == 0, (done.stderr or done.stdout).strip()[-500:]


def run_study(out: Path, cores: int) -> tuple[float, int, str, str]:
    cmd = [*evalkit_cmd(), "study", "--catalogue", "catalogues", "--judge", "baseline",
           "--out", str(out / "reports"), "--ledger-dir", str(out / "ledgers")]  # fmt: skip
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []

    def pin() -> None:
        if len(cpus) > cores:
            os.sched_setaffinity(0, set(cpus[:cores]))

    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    t0 = time.monotonic()
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env=env,
                          preexec_fn=pin if cpus else None)  # fmt: skip
    return time.monotonic() - t0, done.returncode, done.stdout, done.stderr


def report(label: str, wall: float, code: int, stdout: str, stderr: str) -> None:
    print(f"\n[{label}] exit {code}, wall time {wall:.1f} s")
    studies = [m.groups() for m in map(LINE.match, stderr.splitlines()) if m]
    for name, state, seconds in studies:
        print(f"    {name:<28}{float(seconds):7.1f} s  {state}")
    if studies:
        rest = wall - sum(float(s) for _, _, s in studies)
        print(f"    {'(start, ADRs, index, scan)':<28}{rest:7.1f} s")
    if code != 0:
        tail = "\n      ".join((stderr or stdout).strip().splitlines()[-15:])
        print(f"    the study failed; last lines:\n      {tail}")
    ok = code == 0 and wall < TARGET_S
    print(f"    target < {TARGET_S:.0f} s on 2 cores: {verdict(ok)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warm", action="store_true", help="also time a second run")
    parser.add_argument("--cores", type=int, default=2, help="CPUs to pin the study to")
    args = parser.parse_args()
    header("bench_study: `evalkit study` offline on the shipped catalogue (baseline judge)")
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"  runs on {min(cpus or 1, args.cores)} of {cpus} CPU(s)")
    ok, said = available()
    if not ok:
        print("\n  `evalkit study` is not available in this checkout yet, so there is nothing to "
              f"time (it is being built). `evalkit study --help` said:\n    {said}")  # fmt: skip
        return
    with tempfile.TemporaryDirectory(prefix="bench-study-") as tmp:
        report("cold: empty ledger", *run_study(Path(tmp), args.cores))
        if args.warm:
            report("warm: same ledger", *run_study(Path(tmp), args.cores))


if __name__ == "__main__":
    main()
