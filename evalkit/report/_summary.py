"""A study's headline: the verdict badge and the few numbers the index page shows.

A study notebook ends by publishing its headline (:func:`publish_headline`): a display
output of the private media type :data:`HEADLINE_MIME` holding JSON. No page shows it (the
renderer drops it); :func:`read_headline` finds it in the executed notebook, so the index
reads the numbers the study itself computed, never a second computation of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import nbformat
import pandas as pd

from evalkit.gate import GateVerdict
from evalkit.report._exploration import Exploration
from evalkit.report._html import fmt, interval, is_missing, pct
from evalkit.report._names import dimension_name

HEADLINE_MIME = "application/vnd.evalkit.headline+json"
#: The badge of a study that has nothing to study on a catalogue (not a failure).
NOT_APPLICABLE = "not applicable"

#: The headline text of a dimension the run did not study (asked for none of its pairs).
NOT_STUDIED = "not studied"

#: Badges of studies that decide nothing: a description, an exploration, a refusal.
DESCRIPTIVE, EXPLORATORY_BADGE, REFUSED = "descriptive", "exploratory", "refused"


@dataclass(frozen=True)
class Headline:
    """A verdict badge (``PASS``, ``FAIL``, ``exploratory``, ``descriptive`` or
    ``refused``) and labelled lines of plain text, e.g. ``("Self-harm", "κ 0.712 [0.601,
    0.823] · 120 pairs · PASS")``."""

    badge: str
    lines: tuple[tuple[str, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"badge": self.badge, "lines": [list(line) for line in self.lines]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Headline:
        """The headline of :meth:`to_dict`; ``ValueError`` when ``data`` is not one."""
        badge, lines = data.get("badge"), data.get("lines", [])
        if not isinstance(badge, str) or not isinstance(lines, list):
            raise ValueError(f"not a study headline: {dict(data)!r}")
        if not all(isinstance(x, list) and len(x) == 2 for x in lines):
            raise ValueError(f"headline lines must be [label, text] pairs: {lines!r}")
        return cls(badge, tuple((str(a), str(b)) for a, b in lines))


def kappa_text(kappa: Any, low: Any, high: Any, n: Any) -> str:
    """``κ 0.712 [0.601, 0.823] · 120 pairs`` with the pages' three decimals (``n/a``
    when kappa is undefined, ``—`` for a missing interval)."""
    k = "n/a" if kappa is None or pd.isna(kappa) else fmt(float(kappa))
    return f"κ {k} {interval(low, high)} · {int(n)} pairs"


def gate_headline(verdict: GateVerdict, exploring: Exploration | None = None) -> Headline:
    """The gate's overall verdict and, per dimension, kappa, interval, pairs and verdict.

    An exploratory run (ADR-0017) gets the badge ``exploratory``, never PASS or FAIL, and
    its lines carry no per-dimension verdict. A dimension the run did not ask for and has
    no pair of (not among ``exploring.dimensions``) reads ``not studied``, not
    ``κ n/a · 0 pairs``; in a gate run its verdict follows (the gate fails it).
    """
    explored = exploring is not None and exploring.exploratory
    asked = set(exploring.dimensions) if exploring is not None else None
    lines = []
    for dim, v in verdict.dimensions.items():
        unstudied = asked is not None and dim not in asked and not v.n
        text = NOT_STUDIED if unstudied else kappa_text(v.kappa, v.ci_low, v.ci_high, v.n)
        lines.append((dimension_name(dim), text if explored else f"{text} · {v.verdict}"))
    return Headline(EXPLORATORY_BADGE if explored else verdict.overall, tuple(lines))


def construct_headline(agreement: pd.DataFrame, dimension: str) -> Headline:
    """Per rubric version, the kappa of ``dimension`` against the human labels (the
    ``agreement`` frame of :func:`evalkit.construct.compare_versions`: version, kappa,
    ci_low, ci_high, n)."""
    name = dimension_name(dimension)
    lines = tuple(
        (f"{name} {r['version']}", kappa_text(r["kappa"], r["ci_low"], r["ci_high"], r["n"]))
        for r in agreement.to_dict("records")
    )
    return Headline(DESCRIPTIVE, lines)


def onset_headline(summary: pd.DataFrame) -> Headline:
    """Per event, the events seen among cases with an onset, the Kaplan–Meier median
    latency and, beside it, the share of those conversations that end at the onset reply
    (the ``summary`` frame of :func:`evalkit.onset.onset_study`): a median of 0 replies
    reads differently when most conversations stop at the reply where it is measured.
    A summary without that column (an older frame) gets the median alone."""

    def line(r: Mapping[Any, Any]) -> str:
        text = (
            f"{fmt(r['n_events'])} of {fmt(r['n_cases'])} cases · median latency "
            f"{fmt(r['km_median_latency'], 1)} replies (KM)"
        )
        share = r.get("share_ending_at_onset_reply")
        if share is None or is_missing(share):
            return text
        return f"{text} · {pct(share, 0)} of conversations end at the onset reply"

    lines = tuple((str(r["event"]), line(r)) for r in summary.to_dict("records"))
    return Headline(DESCRIPTIVE, lines)


def refused_headline(reason: str) -> Headline:
    """A study that refused to compute (e.g. held-out labels not sealed), with its reason."""
    return Headline(REFUSED, (("Refused", reason),))


def publish_headline(headline: Headline) -> None:
    """Display ``headline`` as a :data:`HEADLINE_MIME` output (invisible on the page)."""
    from IPython.display import display

    display({HEADLINE_MIME: headline.to_dict()}, raw=True)


def read_headline(nb: nbformat.NotebookNode) -> Headline | None:
    """The last headline an executed notebook published; ``None`` when it published none
    (it failed first, or it is not a study notebook)."""
    found: Sequence[Any] = [
        out["data"][HEADLINE_MIME]
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if HEADLINE_MIME in out.get("data", {})
    ]
    return Headline.from_dict(found[-1]) if found else None
