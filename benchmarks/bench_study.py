"""Benchmark: wall time of the main job, ``make study``, from a fresh checkout's state.

Run:  python benchmarks/bench_study.py [--cores 2] [--twice]

Copies what ``make study`` reads (Makefile, catalogues, notebooks, docs/adr, recordings)
into a temporary folder with empty ``ledgers/`` and ``reports/`` (a fresh clone's state:
the ledgers are not tracked), and runs the Makefile's ``study`` recipe there with this
interpreter's ``.venv`` (``make study BIN=... -o setup``: the install is taken as warm),
pinned to ``--cores`` CPUs when the machine has more. So it times the whole sequence:
``catalogue check``, the recorded reading judge's imports, its ``evalkit study`` run and
the baseline's. It prints the time of each step, of each study as ``evalkit study``
reports it, the total, the CPU time the job used (a load-independent figure: on idle
cores the wall time is about the CPU time over the cores, or the longest study if
longer), the load average before and after (other work on the machine slows it), and
the longest silence between two lines of output. Target: at most 90 s on 2 idle cores.
``--twice`` runs it a second time on the same folder (the ledgers now full, as a second
``make study``). It only prints: a failed or slow run is reported, never raised.
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from _common import REPO, header, verdict

TARGET_S = 90.0
COPIED = ("Makefile", "catalogues", "notebooks", "docs/adr", "recordings")
STUDY = re.compile(r"^(\w+): (rendered|FAILED: .*?) in ([0-9.]+) s")
RUN_START = re.compile(r"^evalkit study: .* -> (\S+)$")
RUN_END = re.compile(r"^wrote (\S+)/index\.html")


@dataclass
class Timed:
    """The output of one ``make study``: each line with the seconds since the start."""

    wall: float = 0.0
    cpu: float = 0.0
    code: int = 0
    lines: list[tuple[float, str]] = field(default_factory=list)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def make_study(folder: Path, cores: int) -> Timed:
    """Run the Makefile's ``study`` recipe in ``folder``, reading its output line by line."""
    bin_dir = Path(sys.executable).parent
    cmd = ["make", "--no-print-directory", "study", f"BIN={bin_dir}", "-o", "setup"]
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []

    def pin() -> None:
        if len(cpus) > cores:
            os.sched_setaffinity(0, set(cpus[:cores]))

    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env["PYTHONUNBUFFERED"] = "1"
    timed = Timed()
    cpu0, t0 = children_cpu(), time.monotonic()
    pipe = {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT, "text": True}
    with subprocess.Popen(cmd, cwd=folder, env=env, preexec_fn=pin if cpus else None,
                          **pipe) as proc:  # type: ignore[call-overload]  # fmt: skip
        assert proc.stdout is not None
        for line in proc.stdout:
            timed.lines.append((time.monotonic() - t0, line.rstrip("\n")))
        timed.code = proc.wait()
    timed.wall, timed.cpu = time.monotonic() - t0, children_cpu() - cpu0
    return timed


def steps(timed: Timed) -> list[tuple[str, float]]:
    """(step, seconds): what came before the first ``evalkit study`` run (the catalogue
    check and the recorded judge's imports), then each ``evalkit study`` run by its folder."""
    out: list[tuple[str, float]] = []
    begun: dict[str, float] = {}
    for t, line in timed.lines:
        if m := RUN_START.match(line):
            if not out and not begun:
                out.append(("catalogue check, recorded judge's imports", t))
            begun[m.group(1)] = t
        elif (m := RUN_END.match(line)) and m.group(1) in begun:
            out.append((f"evalkit study -> {m.group(1)}", t - begun.pop(m.group(1))))
    return out


def report(label: str, timed: Timed, cores: int) -> None:
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    print(f"\n[{label}] exit {timed.code}, wall time {timed.wall:.1f} s, "
          f"CPU time {timed.cpu:.1f} s (that CPU time on {cores} idle cores: "
          f"≥ {timed.cpu / cores:.1f} s), load average now {load[0]:.2f}")  # fmt: skip
    for what, seconds in steps(timed):
        print(f"    {what[:60]:<60}{seconds:7.1f} s")
    studies = [m.groups() for _, line in timed.lines if (m := STUDY.match(line))]
    if studies:
        print("    each study (its kernel's time; runs overlap):")
    for name, state, took in studies:
        print(f"      {name:<28}{float(took):7.1f} s  {state[:40]}")
    marks = [(0.0, "(start)"), *timed.lines, (timed.wall, "(end)")]
    gap, before = max((b[0] - a[0], b[1]) for a, b in itertools.pairwise(marks))
    print(f"    longest silence between two lines: {gap:.1f} s, before: {before[:50]}")
    if timed.code != 0:
        tail = "\n      ".join(line for _, line in timed.lines[-15:])
        print(f"    make study failed; last lines:\n      {tail}")
    ok = timed.code == 0 and timed.wall <= TARGET_S
    print(f"    target ≤ {TARGET_S:.0f} s on {cores} idle cores: {verdict(ok)}"
          + ("" if ok or load[0] < cores else f" (measured with a load of {load[0]:.1f} "
             f"on {os.cpu_count()} CPUs: see the CPU figure)"))  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", type=int, default=2, help="CPUs to pin make study to")
    parser.add_argument("--twice", action="store_true", help="also time a second make study")
    args = parser.parse_args()
    header("bench_study: `make study` from a fresh checkout's state, warm .venv")
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cores = min(cpus or 1, args.cores)
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    print(f"  runs on {cores} of {cpus} CPU(s); load average before: {load[0]:.2f} "
          f"{load[1]:.2f} {load[2]:.2f}")  # fmt: skip
    if shutil.which("make") is None:
        print("\n  `make` is not installed here: nothing to time.")
        return
    with tempfile.TemporaryDirectory(prefix="bench-study-") as tmp:
        folder = Path(tmp)
        for name in COPIED:
            src, dest = REPO / name, folder / name
            if src.is_dir():
                shutil.copytree(src, dest)
            else:
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest)
        (folder / "ledgers").mkdir()
        report("make study, empty ledgers (a fresh clone)", make_study(folder, cores), cores)
        if args.twice:
            report("make study again, full ledgers", make_study(folder, cores), cores)


if __name__ == "__main__":
    main()
