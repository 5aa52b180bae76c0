"""Benchmark: how long the ``evalkit`` command spends importing before it does anything.

Run:  python benchmarks/bench_startup.py [--repeat 3]

Each command runs in a fresh interpreter under ``python -X importtime`` with this
checkout first on ``PYTHONPATH``: ``evalkit --help``, ``evalkit gate --help`` and
``evalkit judge --help`` (the parser alone), then ``evalkit gate`` and ``evalkit judge``
pointed at a catalogue folder that does not exist, so that each imports what its run
needs, fails on the missing folder and exits 2 without reading or writing anything.
For each it prints the total import time (the sum of the top-level imports, the
interpreter's own ``site`` and ``encodings`` included), the five heaviest top-level
packages (their modules' own times summed) and PASS or MISS against the 1 s target of
issue 29. The figure is the smallest of ``--repeat`` runs: a busy machine only adds.
It only prints; a slow machine gives a MISS, never a failure.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from _common import REPO, header, verdict

TARGET_MS = 1000.0
#: ``import time: self [us] | cumulative | name``, the name indented two spaces a level.
LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|( +)(\S+)")


def import_profile(stderr: str) -> tuple[float, dict[str, float]]:
    """Total import time in ms (top-level cumulative times summed) and each top-level
    package's own time in ms (every module's self time, grouped by its first name)."""
    total = 0.0
    by_package: dict[str, float] = defaultdict(float)
    for line in stderr.splitlines():
        match = LINE.match(line)
        if match is None:
            continue
        own, cumulative, indent, name = match.groups()
        if len(indent) == 1:
            total += int(cumulative) / 1000
        by_package[name.split(".")[0]] += int(own) / 1000
    return total, by_package


def measure(args: list[str], repeat: int) -> tuple[float, dict[str, float], int]:
    """The fastest of ``repeat`` runs of ``python -X importtime -m evalkit ARGS``."""
    paths = [str(REPO), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    env.pop("EVALKIT_DEBUG", None)
    best: tuple[float, dict[str, float], int] | None = None
    for _ in range(repeat):
        proc = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "evalkit", *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=REPO,
        )
        total, by_package = import_profile(proc.stderr)
        if best is None or total < best[0]:
            best = (total, by_package, proc.returncode)
    assert best is not None
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per command (the fastest)")
    opts = parser.parse_args()
    header("bench_startup: imports before each evalkit command starts its work")
    with tempfile.TemporaryDirectory() as tmp:
        missing = str(Path(tmp) / "no-catalogue")
        commands = {
            "evalkit --help": ["--help"],
            "evalkit gate --help": ["gate", "--help"],
            "evalkit judge --help": ["judge", "--help"],
            "evalkit gate (to its work)": ["gate", "--ledger", f"{tmp}/l.sqlite",
                                           "--catalogue", missing],
            "evalkit judge (to its work)": ["judge", "--judge", "baseline", "--ledger",
                                            f"{tmp}/l.sqlite", "--catalogue", missing],
        }  # fmt: skip
        for label, args in commands.items():
            total, by_package, code = measure(args, opts.repeat)
            ok = total <= TARGET_MS
            print(f"\n  {label}  (exit {code})")
            print(
                f"    imports {total:7.0f} ms  ({total / TARGET_MS:.2f}× the 1 s target): "
                f"{verdict(ok)}"
            )
            top = sorted(by_package.items(), key=lambda kv: -kv[1])[:5]
            print(f"    heaviest: {', '.join(f'{name} {ms:.0f} ms' for name, ms in top)}")


if __name__ == "__main__":
    main()
