"""Where the judge departs from the humans: direction, cells, and a length-bias probe.

Kappa says how much the judge agrees; these frames say where and which way it does not.
Every function reads a pairs frame (:func:`evalkit.gate.pairs`: ``dimension``, ``judge``,
``human`` and the case's metadata) and the frozen ordered ``bins``. A *departure* is a
pair whose judge bin differs from the human bin; it is *over-scoring* when the judge's
bin is above the human's on the ordinal scale (``bins`` are ordered low to high), and
*under-scoring* when below. Rows without both a judge bin and a human bin (a failed
answer, an unlabelled case, a value outside ``bins``) are left out and counted in
``n_missing``.

Intervals: a share ``x/n`` gets the Wilson score interval (Wilson 1927); a difference of
two independent shares ``p_long − p_short`` gets Newcombe's hybrid score interval
(Newcombe 1998, method 10), from the two Wilson intervals ``(l₁, u₁)``, ``(l₂, u₂)``:

    d − sqrt((p₂ − l₂)² + (u₁ − p₁)²)  …  d + sqrt((u₂ − p₂)² + (p₁ − l₁)²).

The direction of the departures is tested with the exact two-sided sign test (binomial,
``p = 1/2``) of over- against under-scoring. A share or difference with an empty
denominator is NaN, never 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from evalkit.catalogue import Catalogue
from evalkit.errors import GateInputError
from evalkit.prevalence import wilson_interval

#: Columns of :func:`departure_direction`.
DIRECTION_COLUMNS = (
    "dimension",
    "n",
    "n_missing",
    "agree",
    "departures",
    "over",
    "under",
    "over_share",
    "ci_low",
    "ci_high",
    "sign_p",
)
#: The two measures of :func:`length_bias`.
LENGTH_MEASURES = ("departure_rate", "over_share")


def _z(level: float) -> float:
    from scipy.stats import norm  # slow to import: only when used

    if not 0 < level < 1:
        raise GateInputError(f"level: must lie in (0, 1), got {level}")
    return float(norm.ppf(0.5 + level / 2))


def _signed(pairs: pd.DataFrame, bins: Sequence[str]) -> tuple[pd.DataFrame, pd.Series]:
    """Complete rows and, per row, judge rank minus human rank (0: agreement)."""
    missing = {"dimension", "judge", "human"} - set(pairs.columns)
    if missing:
        raise GateInputError(f"pairs: missing column(s) {sorted(missing)}")
    rank = {str(b): i for i, b in enumerate(bins)}
    judge, human = pairs["judge"].map(rank), pairs["human"].map(rank)
    keep = judge.notna() & human.notna()
    return pairs[keep], (judge[keep] - human[keep]).astype(int)


def _share(x: float, n: float, z: float) -> tuple[float, float, float]:
    share, low, high = wilson_interval(np.array([x]), np.array([n]), z)
    return float(share[0]), float(low[0]), float(high[0])


def newcombe_difference(
    x1: int, n1: int, x2: int, n2: int, *, level: float = 0.95
) -> tuple[float, float, float]:
    """``x2/n2 − x1/n1`` and Newcombe's hybrid score interval (method 10, see module).

    NaN for all three when either ``n`` is 0. Newcombe (1998), example (a):
    56/70 − 48/80 = 0.200, interval 0.0524 to 0.3339.
    """
    z = _z(level)
    p1, l1, u1 = _share(x1, n1, z)
    p2, l2, u2 = _share(x2, n2, z)
    if n1 == 0 or n2 == 0:
        return float("nan"), float("nan"), float("nan")
    d = p2 - p1
    low = d - float(np.sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2))
    high = d + float(np.sqrt((u2 - p2) ** 2 + (p1 - l1) ** 2))
    return d, low, high


def sign_test(over: int, under: int) -> float:
    """Exact two-sided sign test of ``over`` against ``under`` (NaN when both are 0)."""
    from scipy.stats import binomtest  # slow to import: only when used

    if over + under == 0:
        return float("nan")
    return float(binomtest(over, over + under, 0.5).pvalue)


def departure_direction(
    pairs: pd.DataFrame, bins: Sequence[str], *, level: float = 0.95
) -> pd.DataFrame:
    """Per dimension: how often the judge over- and under-scores, and whether it leans.

    Columns :data:`DIRECTION_COLUMNS`: ``n`` complete pairs (``n_missing`` left out),
    ``agree``, ``departures`` = ``over`` + ``under``; ``over_share`` = over / departures
    with its Wilson interval (``ci_low``, ``ci_high``; 0.5 is a judge that errs both
    ways alike) and ``sign_p``, the exact sign test of over against under. A dimension
    without departures has NaN share, interval and p-value. Dimensions in sorted order.
    """
    z = _z(level)
    complete, signed = _signed(pairs, bins)
    rows = []
    for dim in sorted(map(str, pairs["dimension"].dropna().unique())):
        s = signed[complete["dimension"] == dim]
        over, under = int((s > 0).sum()), int((s < 0).sum())
        share, low, high = _share(over, over + under, z)
        rows.append(
            (
                dim,
                len(s),
                int((pairs["dimension"] == dim).sum()) - len(s),
                int((s == 0).sum()),
                over + under,
                over,
                under,
                share,
                low,
                high,
                sign_test(over, under),
            )
        )
    return pd.DataFrame(rows, columns=list(DIRECTION_COLUMNS))


def departures_by(
    pairs: pd.DataFrame,
    bins: Sequence[str],
    by: str,
    *,
    min_n: int,
    level: float = 0.95,
) -> pd.DataFrame:
    """Per dimension and value of ``by`` (``locale``, ``stratum``…): where departures fall.

    Columns ``dimension``, ``by``, ``n`` (complete pairs), ``departures``,
    ``departure_rate`` with its Wilson interval (``ci_low``, ``ci_high``), ``over``,
    ``under`` and ``descriptive``: True when ``n < min_n`` (pass the frozen
    ``constants.gate.min_cell_n``), a cell that describes and never decides. Rows of a
    missing ``by`` value form the group ``"None"``. Sorted by dimension then group.
    """
    if by not in pairs.columns:
        raise GateInputError(f"pairs: missing column {by!r}")
    z = _z(level)
    complete, signed = _signed(pairs, bins)
    groups = complete[by].astype(object).where(complete[by].notna(), "None").astype(str)
    rows = []
    for (dim, group), s in signed.groupby([complete["dimension"], groups]):
        over, under = int((s > 0).sum()), int((s < 0).sum())
        rate, low, high = _share(over + under, len(s), z)
        rows.append((dim, group, len(s), over + under, rate, low, high, over, under))
    columns = ["dimension", by, "n", "departures", "departure_rate", "ci_low", "ci_high"]
    frame = pd.DataFrame(rows, columns=[*columns, "over", "under"])
    frame["descriptive"] = frame["n"] < min_n
    return frame.sort_values(["dimension", by], ignore_index=True)


def reply_lengths(catalogue: Catalogue) -> pd.Series:
    """Characters of each case's scored reply (its final assistant turn), by ``case_id``."""
    return pd.Series(
        {c.id: len(c.turns[-1].text) for c in catalogue.cases}, name="reply_chars", dtype="int64"
    )


def length_bias(
    pairs: pd.DataFrame,
    bins: Sequence[str],
    lengths: pd.Series | Mapping[str, int],
    *,
    level: float = 0.95,
) -> pd.DataFrame:
    """A length-bias probe: do departures grow, or lean one way, on long replies?

    ``lengths`` maps ``case_id`` to the length of the scored reply (:func:`reply_lengths`);
    pairs of a case without a length count as missing. Per dimension the complete pairs
    are split at the median length: *short* at or below it, *long* above it (a dimension
    whose replies all have the median length has no long half: NaN). Two rows per
    dimension, ``measure``:

    - ``departure_rate``: departures / pairs in each half;
    - ``over_share``: among the departures of each half, the share where the judge scored
      above the humans (one-sidedness).

    Columns ``dimension``, ``measure``, ``median_length``, ``n_short``, ``n_long`` (the
    denominators: pairs, or departures for ``over_share``), ``short``, ``short_low``,
    ``short_high``, ``long``, ``long_low``, ``long_high`` (Wilson), ``difference`` =
    long − short with Newcombe's interval (``ci_low``, ``ci_high``), ``n_missing``. An
    interval of the difference that excludes 0 is a length effect at ``level``.
    """
    if "case_id" not in pairs.columns:
        raise GateInputError("pairs: missing column 'case_id'")
    z = _z(level)
    complete, signed = _signed(pairs, bins)
    length = complete["case_id"].map(pd.Series(lengths, dtype="float64"))
    rows = []
    for dim in sorted(map(str, pairs["dimension"].dropna().unique())):
        here = (complete["dimension"] == dim) & length.notna()
        s, size = signed[here], length[here]
        median = float(size.median()) if len(size) else float("nan")
        n_missing = int((pairs["dimension"] == dim).sum()) - len(s)
        halves = {"short": s[size <= median], "long": s[size > median]}
        counts = {
            "departure_rate": {h: (int((v != 0).sum()), len(v)) for h, v in halves.items()},
            "over_share": {h: (int((v > 0).sum()), int((v != 0).sum())) for h, v in halves.items()},
        }
        for measure in LENGTH_MEASURES:
            (xs, ns), (xl, nl) = counts[measure]["short"], counts[measure]["long"]
            short, long = _share(xs, ns, z), _share(xl, nl, z)
            diff = newcombe_difference(xs, ns, xl, nl, level=level)
            rows.append((dim, measure, median, ns, nl, *short, *long, *diff, n_missing))
    columns = ["dimension", "measure", "median_length", "n_short", "n_long"]
    columns += ["short", "short_low", "short_high", "long", "long_low", "long_high"]
    columns += ["difference", "ci_low", "ci_high", "n_missing"]
    return pd.DataFrame(rows, columns=columns)
