"""Benchmark: do the fault tests pass under CPU load, run after run?

Run:  python benchmarks/bench_fault_tests_under_load.py [--runs 20] [--workers 2] [--load N]

Runs the fault tests (``tests/faults``) and the judge's retry, crash, dead-server and
deadline tests (``tests/judge/test_judge_retry.py``, ``test_judge_cli.py`` with its
SIGKILL test, ``test_judge_traffic.py``) ``--runs`` times with ``pytest -n --workers``,
while ``--load`` busy-loop processes (default: one per CPU) keep every core busy. Those
tests count what a stub server received against what the ledger recorded, and kill
the CLI mid-run; a test that races the clock instead of waiting on the stub fails here
sooner or later. Prints, per run, the outcome and the wall time, then the number of
runs, of runs with a failure, and each failing test id with how often it failed;
target 0 failures. It only prints: a failing run is a figure, not an exit code. No
key is read: the tests plant their own fake key and talk to stubs on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from _common import REPO, header, verdict

SELECTION = (
    "tests/faults",
    "tests/judge/test_judge_retry.py",
    "tests/judge/test_judge_cli.py",
    "tests/judge/test_judge_traffic.py",
)


def busy() -> None:
    """Spin until terminated."""
    while True:
        pass


def failing_ids(junit: Path) -> list[str]:
    """Ids (``path::name``) of the tests a JUnit XML report marks failed or errored."""
    if not junit.is_file():
        return []
    out = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            path = case.get("classname", "").replace(".", "/")
            out.append(f"{path}.py::{case.get('name')}")
    return out


def run_once(workers: int, junit: Path) -> tuple[int, float, str]:
    """One pytest run of :data:`SELECTION`; (exit code, seconds, last line of output)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "EVALKIT_"))}
    cmd = [sys.executable, "-m", "pytest", "-q", "-n", str(workers), "-p", "no:cacheprovider",
           f"--junitxml={junit}", *SELECTION]  # fmt: skip
    t0 = time.monotonic()
    done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    return done.returncode, time.monotonic() - t0, lines[-1] if lines else done.stderr[-200:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="pytest runs (default 20)")
    parser.add_argument("--workers", type=int, default=2, help="pytest -n (default 2)")
    parser.add_argument(
        "--load", type=int, default=os.cpu_count() or 1, help="busy-loop processes (default: CPUs)"
    )
    args = parser.parse_args()
    header("bench_fault_tests_under_load: the fault tests, again and again, on busy CPUs")
    print(f"  selection: {' '.join(SELECTION)}")
    print(f"  {args.runs} run(s) of pytest -n {args.workers}; {args.load} busy-loop process(es)")
    load = [multiprocessing.Process(target=busy, daemon=True) for _ in range(args.load)]
    for proc in load:
        proc.start()
    failures: Counter[str] = Counter()
    bad_runs = 0
    walls = []
    try:
        with tempfile.TemporaryDirectory(prefix="bench-faults-") as tmp:
            for i in range(1, args.runs + 1):
                junit = Path(tmp) / f"run{i}.xml"
                code, wall, last = run_once(args.workers, junit)
                walls.append(wall)
                ids = failing_ids(junit)
                if code != 0:
                    bad_runs += 1
                    failures.update(ids or [f"(pytest exit {code}: {last})"])
                print(f"  run {i:>2}: exit {code} in {wall:.0f} s · {last}", flush=True)
                for test_id in ids:
                    print(f"          failed: {test_id}", flush=True)
    finally:
        for proc in load:
            proc.terminate()
        for proc in load:
            proc.join()
    n_failed = sum(failures.values())
    print("\n[1] outcome")
    print(f"    runs: {args.runs}; runs with a failure: {bad_runs}; failed tests: {n_failed}")
    if walls:
        median = sorted(walls)[len(walls) // 2]
        print(f"    wall per run: median {median:.0f} s, max {max(walls):.0f} s")
    for test_id, n in failures.most_common():
        print(f"    {n} x {test_id}")
    print(f"    target 0 failures: {verdict(n_failed == 0 and bad_runs == 0)}")


if __name__ == "__main__":
    main()
