"""Benchmark: ``evalkit gate`` on the shipped baseline ledger, end to end (issue 29).

Run:  python benchmarks/bench_gate.py [--repeat 3] [--ledger PATH]

The ledger is made as the main job makes it: ``evalkit judge --judge baseline`` on the
shipped catalogue, here into a temporary folder (the key-less baseline, nothing sent).
``--ledger PATH`` times the gate on a ledger you already have instead, for instance
``ledgers/baseline.sqlite`` after ``make study`` (it then also holds the onset study's
per-turn answers and the other rubric versions' rows); the file is copied first, never
touched. The command timed is the one a user runs:

    evalkit gate --ledger LEDGER --catalogue catalogues

in a fresh interpreter with this checkout first on ``PYTHONPATH``; the figure is the
fastest of ``--repeat`` runs (a busy machine only adds). The verdict is FAIL (exit 1):
the baseline is never gate evidence (ADR-0016), and the gate still computes everything.

It also prints the least CPU time of a run (user + system, children included): on a
loaded machine that is what the run would take on an idle core. Then one more run, in a
fresh interpreter under ``python -X importtime``, splits the time:
imports (every module imported at any point of the run, the statistics' lazy imports
included), catalogue load, ledger load, label history (git), statistics (``evaluate``),
writing (the table on stdout and any CI report) and the rest (interpreter start-up,
argument parsing). It prints PASS or MISS against the 3 s target of issue 29; it only
prints, and a slow machine gives a MISS, never a failure.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO, header, verdict
from bench_startup import import_profile

TARGET_S = 3.0
CATALOGUE = REPO / "catalogues"
#: ``import time: self [us] | cumulative | name``; a top-level import has one space.
IMPORT = re.compile(r"^import time:\s+\d+ \|\s+(\d+) \| (\S.*)$")
MARK = re.compile(r"^BENCH (begin|end) (\S+) ([0-9.]+)$")

#: Runs the real ``evalkit.cli.main`` with the gate's stages wrapped: each prints a
#: ``BENCH begin|end STAGE SECONDS`` line on stderr, between the importtime lines.
PROBE = """
import functools, sys, time
t0 = time.perf_counter()
def mark(what, stage):
    print(f"BENCH {what} {stage} {time.perf_counter() - t0:.6f}", file=sys.stderr, flush=True)
def staged(module, name, stage):
    f = getattr(module, name)
    @functools.wraps(f)
    def run(*args, **kwargs):
        mark("begin", stage)
        try:
            return f(*args, **kwargs)
        finally:
            mark("end", stage)
    setattr(module, name, run)
mark("begin", "main")
import evalkit.catalogue, evalkit.judge, evalkit.gate._cli as cli, evalkit.gate._evaluate as ev
import evalkit.gate._labels as lab, evalkit.gate._ci_formats as ci
from evalkit.cli import main
staged(evalkit.catalogue, "load", "catalogue")
staged(evalkit.judge, "load_ledger", "ledger")
staged(lab, "label_history", "history")
staged(ev, "evaluate", "statistics")
staged(ci, "write_ci_reports", "writing")
staged(cli, "render_table", "writing")
code = main(sys.argv[1:])
mark("end", "main")
sys.exit(code)
"""


def _env() -> dict[str, str]:
    paths = [str(REPO), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    env.pop("EVALKIT_DEBUG", None)
    return env


def make_ledger(folder: Path) -> tuple[Path, float]:
    """The baseline ledger of the shipped catalogue, as the main job judges it."""
    ledger = folder / "baseline.sqlite"
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "evalkit", "judge", "--judge", "baseline", "--catalogue",
         str(CATALOGUE), "--ledger", str(ledger), "--yes", "--quiet"],
        check=True, env=_env(), cwd=REPO, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    return ledger, time.perf_counter() - start


def gate_args(ledger: Path) -> list[str]:
    return ["gate", "--ledger", str(ledger), "--catalogue", str(CATALOGUE)]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def end_to_end(ledger: Path, repeat: int) -> tuple[float, float, int]:
    """The fastest of ``repeat`` runs of ``evalkit gate``: wall seconds, the least CPU
    seconds of a run (user + system, git's included), and the exit code."""
    best, cpu, code = float("inf"), float("inf"), -1
    for _ in range(repeat):
        start, used = time.perf_counter(), _children_cpu()
        proc = subprocess.run(
            [sys.executable, "-m", "evalkit", *gate_args(ledger)],
            env=_env(), cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        elapsed, used = time.perf_counter() - start, _children_cpu() - used
        if proc.returncode not in (0, 1):
            sys.exit(f"evalkit gate exited {proc.returncode}:\n{proc.stderr}")
        best, cpu, code = min(best, elapsed), min(cpu, used), proc.returncode
    return best, cpu, code


def breakdown(stderr: str) -> dict[str, float]:
    """Seconds per stage from the probe's stderr: each stage's wall time less the imports
    made inside it, and ``imports`` summed over the whole run."""
    imports = 0.0
    inside: dict[str, float] = {}  # import time within each open stage
    opened: dict[str, float] = {}
    spent: dict[str, float] = {}
    for line in stderr.splitlines():
        if (found := IMPORT.match(line)) is not None:
            seconds = int(found.group(1)) / 1e6
            imports += seconds
            for stage in opened:
                inside[stage] = inside.get(stage, 0.0) + seconds
        elif (found := MARK.match(line)) is not None:
            what, stage, at = found.group(1), found.group(2), float(found.group(3))
            if what == "begin":
                opened[stage] = at
                inside.setdefault(stage, 0.0)
            else:
                wall = at - opened.pop(stage)
                spent[stage] = spent.get(stage, 0.0) + wall - inside.pop(stage, 0.0)
    spent["imports"] = imports
    return spent


def probe(ledger: Path) -> tuple[dict[str, float], dict[str, float], float]:
    """One run of the gate under ``-X importtime`` with its stages marked: seconds per
    stage, milliseconds of imports per top-level package, and the run's wall time."""
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", PROBE, *gate_args(ledger)],
        env=_env(), cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    elapsed = time.perf_counter() - start
    return breakdown(proc.stderr), import_profile(proc.stderr)[1], elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="gate runs (the fastest counts)")
    parser.add_argument("--ledger", type=Path, help="time this ledger (copied) instead")
    opts = parser.parse_args()
    header("bench_gate: evalkit gate on the shipped baseline ledger, end to end")
    print(f"  load average {os.getloadavg()[0]:.2f} (1 min) before the runs")
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-gate-") as tmp:
        if opts.ledger is not None:
            ledger = Path(tmp) / opts.ledger.name
            shutil.copyfile(opts.ledger, ledger)
            print(f"  ledger: a copy of {opts.ledger}")
        else:
            ledger, made = make_ledger(Path(tmp))
            print(f"  ledger: evalkit judge --judge baseline on {CATALOGUE.name}/ ({made:.1f} s)")
        best, cpu, code = end_to_end(ledger, opts.repeat)
        stages, packages, total = probe(ledger)
    print(
        f"\n  evalkit gate, fastest of {opts.repeat}: {best:5.2f} s (exit {code}) "
        f"against {TARGET_S:.0f} s: {verdict(best <= TARGET_S)}"
    )
    print(
        f"  CPU time of a run (user + system): {cpu:5.2f} s, what it takes on an idle core: "
        f"{verdict(cpu <= TARGET_S)} (on a loaded machine the wall time above is inflated)"
    )
    print(f"\n  one run under -X importtime: {total:.2f} s (importtime itself adds a little)")
    named = ("imports", "catalogue", "ledger", "history", "statistics", "writing")
    for stage in named:
        share = stages.get(stage, 0.0) / total
        print(f"    {stage:<11} {stages.get(stage, 0.0):6.2f} s  {share:4.0%}")
        if stage == "imports":
            top = sorted(packages.items(), key=lambda kv: -kv[1])[:6]
            print(f"      heaviest: {', '.join(f'{name} {ms / 1000:.2f} s' for name, ms in top)}")
    rest = total - sum(stages.get(s, 0.0) for s in named)
    print(f"    {'the rest':<11} {rest:6.2f} s  {rest / total:4.0%}  (start-up, parsing, exit)")
    print(f"  load average {os.getloadavg()[0]:.2f} (1 min) after the runs")


if __name__ == "__main__":
    main()
