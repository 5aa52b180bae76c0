"""``multi_rater`` and ``multi_rater_counts``: six agreement coefficients for two or more
raters with missing ratings, as the irrCAC R package computes them.

Rows, in this order: ``percent_agreement`` (``pa.coeff.raw``), ``fleiss`` (Fleiss'
generalised kappa, ``fleiss.kappa.raw``), ``conger`` (``conger.kappa.raw``), ``gwet_ac1``
(Gwet's AC1, or AC2 when weighted, ``gwet.ac1.raw``), ``brennan_prediger``
(``bp.coeff.raw``) and ``krippendorff_alpha`` (``krippen.alpha.raw``).  The formulas and
their variances are in :mod:`evalkit.agreement._gwet_variance`; the sources are Gwet (2014),
Handbook of Inter-Rater Reliability, 4th ed., ch. 3 and 5, and the irrCAC functions named.

Missing ratings ("available" case analysis, irrCAC's only mode): a unit rated by fewer
than two raters is left out of the agreement term ``p_a``; every unit with at least one
rating enters the classification probabilities of Fleiss, Conger, AC1/AC2 and Brennan–
Prediger and their variances, each with its own number of raters ``r_i``.  Krippendorff's
alpha uses the units with ``r_i ≥ 2`` only.  A unit no rater rated is dropped (irrCAC asks
for such units to be removed beforehand), and so is a rater column with no rating at all
(it would make Conger's kappa NaN in irrCAC).

Inference: the standard error is irrCAC's linearised variance with no finite-population
correction (irrCAC's default ``N = Inf``, so ``f = n / N = 0``).  The interval is irrCAC's,
``value ± t_{1-(1-level)/2, n-1} · se`` with ``n`` the units of that variance (units with at
least one rating; for alpha, units with ``r_i ≥ 2``), then clipped to [-1, 1] (irrCAC clips
the upper bound at 1 only).

Differences from irrCAC, all deliberate: categories are the declared ones, in the declared
order, used or not (as irrCAC with ``categ.labels``), and are matched exactly (irrCAC
upper-cases and trims text ratings); named weights come from the category ranks, as
irrCAC's weight functions do for ``categ.labels``; a number that does not exist is None
with a status, never NaN.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from evalkit.agreement import _gwet_variance as gv
from evalkit.agreement._inputs import (
    FloatArray,
    IntArray,
    agreement_weights,
    as_matrix,
    check_categories,
    encode_matrix,
    encode_values,
)
from evalkit.agreement._results import (
    NO_PAIRS,
    NO_VARIATION,
    NOT_APPLICABLE,
    OK,
    SINGLE_CATEGORY,
    SINGLE_RATER,
    TOO_FEW_PAIRS,
)

COEFFICIENTS = (
    "percent_agreement",
    "fleiss",
    "conger",
    "gwet_ac1",
    "brennan_prediger",
    "krippendorff_alpha",
)
COLUMNS = ("value", "se", "ci_low", "ci_high", "pe", "status", "n_units")
MISSING = ("available", "listwise")
LONG_COLUMNS = ("unit", "rater", "label")
_PREVALENCE_ONLY = ("percent_agreement", "gwet_ac1", "brennan_prediger")


def multi_rater_weights(q: int, weights: Any) -> FloatArray:
    """The q × q agreement weights: None (identity), "linear", "quadratic" or a matrix.

    Named weights use the category ranks 1..q in the declared order (irrCAC's
    ``linear.weights``/``quadratic.weights`` of the category labels):
    ``1 - |k - l| / (q - 1)`` and ``1 - (k - l)^2 / (q - 1)^2``.  A matrix must be q × q,
    finite, within [0, 1] and 1 on the diagonal (a rating always agrees with itself).
    """
    if weights is None or isinstance(weights, str):
        if weights not in (None, "linear", "quadratic"):
            raise ValueError(
                f"unknown weights {weights!r}: use None, 'linear', 'quadratic' or a q × q matrix"
            )
        return agreement_weights(q, weights)
    try:
        w = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"weights must be a q × q matrix of numbers: {exc}") from None
    if w.shape != (q, q):
        raise ValueError(f"weights must be {q} × {q} (one row per category), got {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or np.any(w > 1):
        raise ValueError("weights must be finite agreement weights within [0, 1]")
    if not np.all(np.diag(w) == 1.0):
        raise ValueError("weights must be 1 on the diagonal (a rating agrees with itself)")
    return w


def _check_level(level: Any) -> float:
    if isinstance(level, bool) or not isinstance(level, int | float | np.floating):
        raise ValueError(f"level must be a number between 0 and 1, got {level!r}")
    if not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must be between 0 and 1, got {level!r}")
    return float(level)


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _pivot(units: list[Any], raters: list[Any], codes: IntArray, name: str) -> IntArray:
    """Units × raters code matrix (first-appearance order) from parallel lists."""
    u_codes, u_ids = pd.factorize(pd.Series(units, dtype=object), use_na_sentinel=True)
    r_codes, r_ids = pd.factorize(pd.Series(raters, dtype=object), use_na_sentinel=True)
    for what, c in (("unit", u_codes), ("rater", r_codes)):
        if (c < 0).any():
            raise ValueError(f"{name} has a missing {what} id at position {int(np.argmin(c))}")
    n_u, n_r = len(u_ids), len(r_ids)
    flat = u_codes.astype(np.int64) * n_r + r_codes
    order = np.argsort(flat, kind="stable")
    dup = np.flatnonzero(np.diff(flat[order]) == 0)
    if dup.size:
        pos = int(order[dup[0] + 1])
        raise ValueError(
            f"{name} rates unit {_plain(units[pos])!r} twice for rater {_plain(raters[pos])!r}"
        )
    out = np.full(n_u * n_r, -1, dtype=np.int64)
    out[flat] = codes
    return out.reshape(n_u, n_r)


def rating_codes(data: Any, cats: tuple[Any, ...]) -> IntArray:
    """The units × raters matrix of category codes (-1 missing) for any accepted ``data``.

    Accepted: a wide table (DataFrame, 2-D numpy array or list of rows; units × raters,
    None/NaN empty); a long DataFrame with columns ``unit``, ``rater``, ``label`` (other
    columns ignored; a (unit, rater) pair may appear once); a mapping rater → {unit →
    label} (or rater → Series indexed by unit).  A value outside ``cats`` raises
    ``ValueError`` naming its position: ``data[i][j]`` (wide), ``data['label'][row]`` (long)
    or ``data[rater][unit]``.
    """
    if isinstance(data, pd.DataFrame) and all(c in data.columns for c in LONG_COLUMNS):
        labels = data["label"].to_numpy(dtype=object)
        codes = encode_values(labels, cats, lambda pos: f"data['label'][{pos}]")
        return _pivot(list(data["unit"]), list(data["rater"]), codes, "data")
    if isinstance(data, Mapping):
        units: list[Hashable] = []
        raters: list[Hashable] = []
        values: list[Any] = []
        for rater, inner in data.items():
            if not isinstance(inner, Mapping | pd.Series):
                raise ValueError(
                    f"data[{rater!r}] must be a mapping unit → label, got {type(inner).__name__}"
                )
            for unit, label in inner.items():
                units.append(unit)
                raters.append(rater)
                values.append(label)
        arr = np.fromiter(values, dtype=object, count=len(values))
        codes = encode_values(arr, cats, lambda pos: f"data[{raters[pos]!r}][{units[pos]!r}]")
        return _pivot(units, raters, codes, "data")
    matrix = as_matrix(
        data, "units × raters", "every unit (row) must have the same number of rater columns"
    )
    return encode_matrix(matrix, cats)


Row = tuple[float | None, float | None, float | None, float | None, float | None, str, int]


def _row(est: gv.Estimate, level: float, prevalence_only: bool, single: bool) -> Row:
    """``(value, se, ci_low, ci_high, pe, status, n_units)`` for one estimate."""
    value, se = est.value, est.se
    if est.n < 2:
        value = se = None
        status = TOO_FEW_PAIRS
    elif value is None:
        status = NO_VARIATION
    else:
        status = SINGLE_CATEGORY if single and prevalence_only else OK
    lo, hi = gv.t_interval(value, se, est.n, level)
    return (value, se, lo, hi, est.pe, status, est.n)


def _empty(status: str, n: int) -> Row:
    return (None, None, None, None, None, status, n)


def _frame(rows: dict[str, Row], notes: list[str], attrs: dict[str, Any]) -> pd.DataFrame:
    cols = list(zip(*(rows[c] for c in COEFFICIENTS), strict=True))
    data: dict[str, Any] = {
        col: pd.array(
            [None if v is None or not math.isfinite(v) else v for v in cols[k]],
            dtype=pd.Float64Dtype(),
        )
        for k, col in enumerate(COLUMNS[:5])
    }
    data["status"] = pd.array(cols[5], dtype=object)
    data["n_units"] = pd.array(cols[6], dtype=pd.Int64Dtype())
    out = pd.DataFrame(data, index=pd.Index(list(COEFFICIENTS), name="coefficient"))
    out.attrs.update(attrs, notes=tuple(notes))
    return out


def _rows(estimates: dict[str, gv.Estimate], counts: FloatArray, level: float) -> dict[str, Row]:
    single = int(np.count_nonzero(counts.sum(axis=0))) == 1
    return {c: _row(e, level, c in _PREVALENCE_ONLY, single) for c, e in estimates.items()}


def table_from_codes(
    codes: IntArray, q: int, w: FloatArray, level: float, missing: str
) -> tuple[dict[str, Row], list[str], int]:
    """The six rows from a units × raters code matrix; also the notes and the rater count."""
    notes: list[str] = []
    if missing == "listwise":
        complete = (codes >= 0).all(axis=1)
        if not complete.all():
            notes.append(f"{int((~complete).sum())} unit(s) with a missing rating dropped")
        codes = codes[complete]
    if codes.shape[0]:
        rated_cols = (codes >= 0).any(axis=0)
        if not rated_cols.all():
            notes.append(f"{int((~rated_cols).sum())} rater column(s) with no rating dropped")
        codes = codes[:, rated_cols]
    rated_rows = (codes >= 0).any(axis=1)
    if not rated_rows.all():
        notes.append(f"{int((~rated_rows).sum())} unit(s) with no rating dropped")
    codes = codes[rated_rows]
    n, r = codes.shape
    status = NO_PAIRS if n == 0 else (SINGLE_RATER if r < 2 else None)
    counts = gv.counts_from_codes(codes, q)
    p = gv.parts(counts, w)
    if status is None and p.n2 == 0:
        status = NO_PAIRS
    if status is not None:
        notes.append({NO_PAIRS: "no unit is rated twice", SINGLE_RATER: "a single rater"}[status])
        return {c: _empty(status, n) for c in COEFFICIENTS}, notes, r
    if n > p.n2:
        notes.append(f"{n - p.n2} unit(s) rated once enter the chance terms only")
    used = [np.unique(col[col >= 0]).size for col in codes.T]
    if 1 in used and max(used) > 1:
        notes.append(f"{used.count(1)} rater(s) used a single category (still ok)")
    estimates = {
        "percent_agreement": gv.percent_agreement(p),
        "fleiss": gv.fleiss(p),
        "conger": gv.conger(codes, p),
        "gwet_ac1": gv.gwet(p),
        "brennan_prediger": gv.brennan_prediger(p),
        "krippendorff_alpha": gv.krippendorff_raw(p),
    }
    return _rows(estimates, counts, level), notes, r


def multi_rater(
    data: Any,
    categories: Any,
    weights: Any = None,
    *,
    missing: str = "available",
    level: float = 0.95,
) -> pd.DataFrame:
    """Percent agreement, Fleiss, Conger, Gwet AC1/AC2, Brennan–Prediger and Krippendorff's
    alpha for two or more raters, with missing ratings, as irrCAC's ``*.raw`` functions.

    ``data``: a units × raters table (DataFrame, 2-D numpy array or list of rows; None/NaN
    for a rating not given), a long DataFrame with columns ``unit``, ``rater``, ``label``,
    or a mapping rater → {unit → label}.  ``categories``: the ordered category list (all of
    them count in q, used or not).  ``weights``: None, ``"linear"``, ``"quadratic"`` or a
    q × q matrix of agreement weights; weighted, every coefficient is irrCAC's weighted
    version (the ``gwet_ac1`` row is then Gwet's AC2).  ``missing``: ``"available"``
    (default; each unit enters with the raters it has, see the module docstring) or
    ``"listwise"`` (only units rated by every rater column).  ``level``: the confidence
    level of the t interval.

    Returns a DataFrame indexed by coefficient (``percent_agreement``, ``fleiss``,
    ``conger``, ``gwet_ac1``, ``brennan_prediger``, ``krippendorff_alpha``) with columns
    ``value``, ``se``, ``ci_low``, ``ci_high`` (irrCAC's t interval on ``n_units - 1``
    degrees of freedom, clipped to [-1, 1]), ``pe`` (chance agreement; 0 for percent
    agreement), ``status`` and ``n_units`` (units in the coefficient's variance: units with
    at least one rating, or with two or more for alpha).  Numbers are ``Float64``
    (``<NA>`` when they do not exist, never NaN).  ``attrs`` holds ``notes``, ``n_raters``,
    ``weights`` and ``level``.

    Statuses (see ``STATUSES``): ``"single_rater"`` when at most one rater column holds a
    rating; ``"no_pairs"`` when no unit has two ratings; ``"too_few_pairs"`` when fewer
    than two units enter a coefficient's variance (value None); ``"no_variation"`` when
    chance agreement is 1 (Fleiss, Conger, alpha with every rating in one category: value
    None); ``"single_category"`` for percent agreement, AC1/AC2 and Brennan–Prediger in
    that case (value given).  A rater who used a single category among others who did not
    leaves every coefficient defined (status ``"ok"``, a note says so).

    Raises ``ValueError`` for a value outside ``categories`` (naming its position),
    booleans among numeric categories, a 1-D or ragged table, a duplicated (unit, rater)
    pair, unknown weights or ``missing``, or a bad ``level``.

    References: Gwet (2014), Handbook of Inter-Rater Reliability, 4th ed., ch. 5; irrCAC
    (R) ``pa.coeff.raw``, ``fleiss.kappa.raw``, ``conger.kappa.raw``, ``gwet.ac1.raw``,
    ``bp.coeff.raw``, ``krippen.alpha.raw``.
    """
    cats = check_categories(categories)
    w = multi_rater_weights(len(cats), weights)
    lvl = _check_level(level)
    if missing not in MISSING:
        raise ValueError(f"unknown missing {missing!r}: use 'available' or 'listwise'")
    codes = rating_codes(data, cats)
    rows, notes, r = table_from_codes(codes, len(cats), w, lvl, missing)
    wname = weights if weights is None or isinstance(weights, str) else "custom"
    return _frame(rows, notes, {"n_raters": r, "weights": wname, "level": lvl})


def _count_matrix(counts: Any, q: int) -> FloatArray:
    if isinstance(counts, pd.DataFrame):
        counts = counts.to_numpy()
    arr: npt.NDArray[Any] = np.asarray(counts)
    if arr.ndim != 2:
        raise ValueError(f"counts must be 2-dimensional (units × categories), got {arr.shape}")
    if arr.shape[1] != q:
        raise ValueError(f"counts must have one column per category ({q}), got {arr.shape[1]}")
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise ValueError("counts must be numbers of raters (non-negative integers)")
    c = arr.astype(np.float64)
    bad = np.argwhere(~np.isfinite(c) | (c < 0) | (c != np.round(c)))
    if bad.size:
        i, k = (int(x) for x in bad[0])
        raise ValueError(
            f"counts[{i}][{k}] = {_plain(arr[i, k])!r} is not a count of raters "
            "(a non-negative integer)"
        )
    return c


def multi_rater_counts(
    counts: Any, categories: Any, weights: Any = None, *, level: float = 0.95
) -> pd.DataFrame:
    """The :func:`multi_rater` table from a units × categories table of rater counts.

    ``counts[i][k]`` is the number of raters who put unit i in category k (irrCAC's
    "distribution of raters by subject and category", e.g. ``distrib.6raters``); rows may
    sum to different numbers of raters.  Percent agreement, Fleiss, AC1/AC2 and
    Brennan–Prediger are irrCAC's ``*.dist`` functions (the same formulas as from raw
    ratings, so the same numbers); Krippendorff's alpha is ``krippen.alpha.dist``, whose
    standard error differs from the raw-data one; Conger's kappa needs rater identities, so
    its row has status ``"not_applicable"``.  Rows summing to 0 are dropped.  Statuses,
    interval and columns as in :func:`multi_rater`.  Raises ``ValueError`` for a table that
    is not 2-D with one column per category, or a cell that is not a non-negative integer.
    """
    cats = check_categories(categories)
    q = len(cats)
    w = multi_rater_weights(q, weights)
    lvl = _check_level(level)
    c = _count_matrix(counts, q)
    notes: list[str] = []
    rated = c.sum(axis=1) > 0
    if not rated.all():
        notes.append(f"{int((~rated).sum())} unit(s) with no rating dropped")
    c = c[rated]
    wname = weights if weights is None or isinstance(weights, str) else "custom"
    attrs = {"n_raters": None, "weights": wname, "level": lvl}
    p = gv.parts(c, w)
    if p.n2 == 0:
        notes.append("no unit is rated twice")
        return _frame({k: _empty(NO_PAIRS, p.n) for k in COEFFICIENTS}, notes, attrs)
    estimates = {
        "percent_agreement": gv.percent_agreement(p),
        "fleiss": gv.fleiss(p),
        "gwet_ac1": gv.gwet(p),
        "brennan_prediger": gv.brennan_prediger(p),
        "krippendorff_alpha": gv.krippendorff_dist(p),
    }
    rows = _rows(estimates, c, lvl)
    rows["conger"] = _empty(NOT_APPLICABLE, p.n)
    notes.append("Conger's kappa needs to know which rater gave which rating")
    return _frame(rows, notes, attrs)
