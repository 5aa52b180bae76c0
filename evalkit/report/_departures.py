"""The judge's error structure on a study page: direction, length probe, locale and stratum.

:func:`error_structure` computes the frames of one dimension with
:mod:`evalkit.gate` (:func:`~evalkit.gate.departure_direction`,
:func:`~evalkit.gate.length_bias`, :func:`~evalkit.gate.departures_by`);
:func:`error_structure_panel` shows them. Both the calibration and the prevalence studies
display it beside their agreement and prevalence tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from evalkit.catalogue import Catalogue
from evalkit.gate import (
    complete_rows,
    departure_direction,
    departures_by,
    gated_rows,
    length_bias,
    reply_lengths,
)
from evalkit.report._html import Html, fmt, is_missing, join, pct, table
from evalkit.report._names import dimension_name, locale_name

_MEASURES = {
    "departure_rate": "Disagreement rate",
    "over_share": "Judge higher, among disagreements",
}


@dataclass(frozen=True)
class ErrorStructure:
    """Where the judge departs from the humans on one dimension (frames of :mod:`evalkit.gate`)."""

    dimension: str
    direction: pd.DataFrame
    length: pd.DataFrame
    by_locale: pd.DataFrame
    by_stratum: pd.DataFrame
    min_n: int
    level: float


def error_structure(
    pairs: pd.DataFrame, catalogue: Catalogue, dimension: str, *, level: float = 0.95
) -> ErrorStructure:
    """The error structure of ``dimension`` on the gated, complete rows of ``pairs``.

    ``pairs`` is a pairs frame (:func:`evalkit.gate.pairs` or ``study_pairs``); diagnostic
    and canary strata, failed judge answers and unlabelled cases are left out, so the
    frames describe exactly the pairs of the gate's kappa. Cells with fewer pairs than the
    frozen ``gate.min_cell_n`` are marked descriptive. Reply lengths are those of the
    catalogue's scored replies (:func:`evalkit.gate.reply_lengths`).
    """
    bins = list(catalogue.constants.bins)
    rows = pairs[pairs["dimension"] == dimension]
    rows = complete_rows(gated_rows(rows), bins)
    min_n = catalogue.constants.gate.min_cell_n
    return ErrorStructure(
        dimension,
        departure_direction(rows, bins, level=level),
        length_bias(rows, bins, reply_lengths(catalogue), level=level),
        departures_by(rows, bins, "locale", min_n=min_n, level=level),
        departures_by(rows, bins, "stratum", min_n=min_n, level=level),
        min_n,
        level,
    )


def _ci(frame: pd.DataFrame, low: str = "ci_low", high: str = "ci_high") -> list[str]:
    """Intervals of shares as percentages, ``[41.3%, 54.6%]`` (``—`` when missing)."""
    return [
        "—" if is_missing(lo) or is_missing(hi) else f"[{pct(lo)}, {pct(hi)}]"
        for lo, hi in zip(frame[low], frame[high], strict=True)
    ]


def _points(value: Any) -> str:
    """A difference of shares in percentage points, signed: ``+7.7 pp``."""
    return "—" if is_missing(value) else f"{100 * float(value):+.1f} pp"


def _points_ci(frame: pd.DataFrame) -> list[str]:
    return [
        "—" if is_missing(lo) or is_missing(hi) else f"[{_points(lo)}, {_points(hi)}]"
        for lo, hi in zip(frame["ci_low"], frame["ci_high"], strict=True)
    ]


def _p_value(value: Any) -> str:
    if isinstance(value, float) and value < 0.001:
        return "< 0.001"
    return fmt(value)


def direction_table(frame: pd.DataFrame, level: float = 0.95) -> Html:
    """Over- against under-scoring (frame of :func:`evalkit.gate.departure_direction`)."""
    share = f"{level:.0%} CI"
    return table(
        frame.assign(ci=_ci(frame), dimension=[dimension_name(d) for d in frame["dimension"]]),
        {
            "dimension": "Dimension",
            "n": "Pairs",
            "agree": "Agree",
            "over": "Judge higher (over-scores)",
            "under": "Judge lower (under-scores)",
            "over_share": "Judge higher, share of disagreements",
            "ci": share,
            "sign_p": "Sign test p",
        },
        caption="Direction of the disagreements",
        formats={"over_share": pct, "sign_p": _p_value},
        note="Judge higher: the judge's bin is above the human label on the ordered scale "
        "low < partial < high. A share near 50% is a judge that errs both ways alike; the "
        "sign test (exact, two-sided) asks whether the lean could be chance.",
    )


def length_table(frame: pd.DataFrame, level: float = 0.95) -> Html:
    """The length-bias probe (frame of :func:`evalkit.gate.length_bias`)."""
    median = frame["median_length"].iloc[0] if len(frame) else float("nan")
    shown = frame.assign(
        measure=[_MEASURES.get(m, m) for m in frame["measure"]],
        short_ci=_ci(frame, "short_low", "short_high"),
        long_ci=_ci(frame, "long_low", "long_high"),
        ci=_points_ci(frame),
    )
    return table(
        shown,
        {
            "measure": "Measure",
            "n_short": "Short: n",
            "short": "Short",
            "short_ci": "Short: CI",
            "n_long": "Long: n",
            "long": "Long",
            "long_ci": "Long: CI",
            "difference": "Long − short",
            "ci": f"{level:.0%} CI of the difference",
        },
        caption=f"Length-bias probe: replies above the median length ({fmt(median, 0)} "
        "characters) against the rest",
        formats={"short": pct, "long": pct, "difference": _points},
        note="n: pairs for the disagreement rate, disagreements for the share where the judge "
        "is higher. Wilson intervals; Newcombe's hybrid score interval for the difference. "
        "A difference whose interval excludes 0 is a length effect.",
    )


def cells_table(frame: pd.DataFrame, by: str, min_n: int, level: float = 0.95) -> Html:
    """Disagreements per ``by`` cell (frame of :func:`evalkit.gate.departures_by`)."""
    label = "Locale" if by == "locale" else by.replace("_", " ").capitalize()
    group = [locale_name(g) if by == "locale" else str(g) for g in frame[by]]
    shown = frame.assign(
        group=group,
        ci=_ci(frame),
        reading=[
            f"descriptive (n < {min_n})" if d else "gating size" for d in frame["descriptive"]
        ],
    )
    return table(
        shown,
        {
            "group": label,
            "n": "Pairs",
            "departures": "Disagreements",
            "departure_rate": "Disagreement rate",
            "ci": f"{level:.0%} CI",
            "over": "Judge higher",
            "under": "Judge lower",
            "reading": "How to read",
        },
        caption=f"Disagreements per {label.lower()}",
        formats={"departure_rate": pct},
        row_class=lambda r: "descriptive" if r["descriptive"] else None,
        note=f"Cells with fewer than {min_n} pairs (greyed, in italics) are descriptive "
        "(frozen constant gate.min_cell_n).",
    )


def error_structure_panel(structure: ErrorStructure) -> Html:
    """The four tables of :class:`ErrorStructure`, one after the other."""
    s = structure
    return join(
        direction_table(s.direction, s.level),
        length_table(s.length, s.level),
        cells_table(s.by_locale, "locale", s.min_n, s.level),
        cells_table(s.by_stratum, "stratum", s.min_n, s.level),
    )
