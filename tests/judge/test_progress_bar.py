"""The judge's progress bar is readable in a terminal of 100 columns and in JupyterLab
(#28: in Lab the bar was 0 px wide behind a status text that overflowed, and showed
tqdm's ``15.70call/s`` beside the traffic controller's ``0.0 req/s``)."""

from __future__ import annotations

import io
import os
import re
import sys
from types import SimpleNamespace
from typing import Any

import pytest

from evalkit.judging._progress import _Progress, widen


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True

    def fileno(self) -> int:
        return 2


class _Traffic:
    """The figures a traffic controller reports; ``sent`` 0 is a local judge."""

    def __init__(self, sent: int) -> None:
        self.sent = sent
        self.header_notes: dict[str, int] = {}

    def figures(self) -> dict[str, Any]:
        return {"in_flight": 0, "window": 8, "pace_per_s": 0.0, "sent": self.sent,
                "rate_limited": 0, "episodes": 0, "header_notes": 0}  # fmt: skip


def _run(sent: int, monkeypatch: pytest.MonkeyPatch) -> str:
    """200 of 432 calls on stderr, a terminal 101 columns wide (tqdm draws one column
    less: 100)."""
    stream = _Terminal()
    monkeypatch.setattr(sys, "stderr", stream)
    monkeypatch.setattr(os, "get_terminal_size", lambda fd=None: os.terminal_size((101, 40)))
    plan = SimpleNamespace(to_send=[None] * 432, pending_in_batches=0, in_ledger=12)
    progress = _Progress(plan, True, None, traffic=_Traffic(sent))  # type: ignore[arg-type]
    for _ in range(200):
        progress.update({"status": "ok", "cost_usd": 0.0001})
    progress.show(final=True)
    progress.close()
    return stream.getvalue()


def test_the_bar_fits_100_columns_with_one_rate(monkeypatch: pytest.MonkeyPatch) -> None:
    out = _run(0, monkeypatch)
    lines = [x for x in re.split(r"[\r\n]", out) if x.strip()]
    bars = [x for x in lines if "|" in x]
    last = bars[-1]
    assert len(last) <= 100, last
    assert len(last.split("|")[1]) >= 25, last  # the bar keeps a quarter of the line
    assert last.count("/s") == 1 and "calls/s" in last and "req/s" not in last
    assert "200/432" in last and "0 failed · $0.0200" in last
    # the full figures under the closed bar; a local judge sent no request: no req/s
    assert lines[-1] == "judge: 200/432 calls · 12 from ledger · 0 failed · $0.0200"


def test_the_traffic_figures_follow_the_bar_when_requests_were_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    last = _run(200, monkeypatch).splitlines()[-1]
    assert last.startswith("judge: 0 in flight (window 8) · 0.0 req/s") and len(last) <= 100


def test_in_a_notebook_the_bar_takes_the_width_and_the_text_wraps_under_it() -> None:
    """The widget is laid out as tqdm's ``ncols="100%"`` would, and its text form (what
    papermill saves beside the widget) still formats: with ``ncols="100%"`` it raised."""
    from tqdm.notebook import tqdm_notebook

    options = _Progress.bar_options()
    assert "ncols" not in options and "{rate_fmt}" in options["bar_format"]
    bar = tqdm_notebook(total=432, file=io.StringIO(), **options)
    widen(bar)
    box = bar.container
    assert box.layout.width == "100%" and box.layout.flex_flow == "row wrap"
    assert box.children[1].layout.flex == "2"
    assert "0/432" in repr(box)
    bar.close()
