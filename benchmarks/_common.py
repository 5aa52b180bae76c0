"""Helpers shared by the benchmark scripts (not a benchmark itself).

Puts the repository root on ``sys.path`` so the scripts can import ``tests.stubs`` and
``tests.faults._support`` when run as ``python benchmarks/bench_x.py`` from anywhere,
and prints the machine line and PASS/MISS verdicts the same way in every script.
"""

from __future__ import annotations

import os
import platform
import resource
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def header(title: str) -> None:
    """Print the benchmark title, the date and the machine."""
    print(f"{title}")
    print(
        f"  {datetime.now(UTC):%Y-%m-%d %H:%M} UTC · python {platform.python_version()} · "
        f"{platform.machine()} · {os.cpu_count()} CPU(s) · {platform.system()}"
    )


def verdict(passed: bool) -> str:
    return "PASS" if passed else "MISS"


def peak_rss_mb() -> float:
    """High-water mark of this process's resident memory, in MiB (Linux: KiB units)."""
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kib / 1024 if sys.platform != "darwin" else kib / 2**20


@contextmanager
def fake_anthropic_env(base_url: str | None = None) -> Iterator[str]:
    """A fake key (and optionally the stub's base URL) in the environment, restored after.

    No real key is ever read: whatever ``ANTHROPIC_API_KEY`` held is replaced for the
    duration and put back afterwards.
    """
    from tests.faults._support import FAKE_KEY

    names = ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "EVALKIT_NONCE_SALT")
    saved = {k: os.environ.get(k) for k in names}
    os.environ["ANTHROPIC_API_KEY"] = FAKE_KEY
    os.environ.pop("EVALKIT_NONCE_SALT", None)
    if base_url is None:
        os.environ.pop("ANTHROPIC_BASE_URL", None)
    else:
        os.environ["ANTHROPIC_BASE_URL"] = base_url
    try:
        yield FAKE_KEY
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
