"""Krippendorff's alpha for any number of raters, missing data, four levels of measurement.

Coincidence-matrix formulation (Krippendorff 2011, "Computing Krippendorff's
Alpha-Reliability", Annenberg School for Communication, University of Pennsylvania):

    o_ck = Σ_u (n_uc n_uk - [c = k] n_uc) / (m_u - 1)      over units with m_u >= 2 values
    n_c  = Σ_k o_ck,   n = Σ_c n_c
    D_o  = Σ_ck o_ck δ²_ck / n,    D_e = Σ_ck n_c n_k δ²_ck / (n (n - 1))
    alpha = 1 - D_o / D_e

Difference functions δ²_ck:
    nominal   [c ≠ k]
    ordinal   (Σ_{g=c..k} n_g - (n_c + n_k) / 2)^2  over category ranks
    interval  (c - k)^2
    ratio     ((c - k) / (c + k))^2
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from evalkit.agreement._inputs import (
    FloatArray,
    IntArray,
    as_matrix,
    check_categories,
    check_no_bool_number_mix,
    encode_matrix,
    missing_mask,
)
from evalkit.agreement._results import NO_PAIRS, NO_VARIATION, OK, AlphaResult

LEVELS = ("nominal", "ordinal", "interval", "ratio")


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float | np.integer | np.floating) and not isinstance(
        v, bool | np.bool_
    )


def _domain(matrix: npt.NDArray[Any], categories: Any, level: str) -> tuple[Any, ...]:
    if categories is not None:
        cats = check_categories(categories)
    else:
        flat = matrix.ravel()
        present = flat[~missing_mask(flat)]
        try:
            values = [v.item() if isinstance(v, np.generic) else v for v in pd.unique(present)]
        except TypeError as exc:
            raise ValueError(f"data hold an unhashable value: {exc}") from None
        check_no_bool_number_mix(values, "data values")
        try:
            cats = tuple(sorted(values))
        except TypeError as exc:
            raise ValueError(
                "data values cannot be sorted; pass categories=[...] in their order"
            ) from exc
    if level in ("interval", "ratio"):
        for c in cats:
            if not _is_number(c):
                raise ValueError(
                    f"{level} alpha needs numeric values, got {c!r}; "
                    "use level='ordinal' for ordered labels"
                )
    return cats


def _numeric_values(level: str, cats: tuple[Any, ...], codes: IntArray) -> FloatArray:
    """The category values as floats; ``ValueError`` for an infinite or too large value."""
    out = np.empty(len(cats), dtype=np.float64)
    for k, c in enumerate(cats):
        try:
            out[k] = float(c)
        except OverflowError:
            out[k] = np.inf
        if not math.isfinite(out[k]):
            hits = np.argwhere(codes == k)
            where = f"data[{hits[0][0]}][{hits[0][1]}]" if hits.size else f"categories[{k}]"
            text = repr(c) if len(repr(c)) <= 30 else f"{repr(c)[:12]}…({len(repr(c))} digits)"
            raise ValueError(
                f"{where} = {text} is not a finite float; {level} alpha needs finite values"
            )
    if level == "ratio" and bool((out < 0).any()):
        raise ValueError("ratio alpha needs non-negative values")
    return out


def _delta2(level: str, cats: tuple[Any, ...], n_c: FloatArray) -> FloatArray:
    v = len(cats)
    i = np.arange(v)
    if level == "nominal":
        return (i[:, None] != i[None, :]).astype(np.float64)
    if level == "ordinal":
        cum = np.concatenate([[0.0], np.cumsum(n_c)])
        lo = np.minimum(i[:, None], i[None, :])
        hi = np.maximum(i[:, None], i[None, :])
        between = cum[hi + 1] - cum[lo]
        return np.asarray((between - (n_c[:, None] + n_c[None, :]) / 2.0) ** 2)
    x = np.array([float(c) for c in cats], dtype=np.float64)
    diff = x[:, None] - x[None, :]
    if level == "interval":
        return np.asarray(diff**2)
    total = x[:, None] + x[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(total == 0, 0.0, diff / np.where(total == 0, 1.0, total))
    return np.asarray(ratio**2)


def coincidences(codes: IntArray, v: int) -> tuple[FloatArray, int, int]:
    """Coincidence matrix from a raters × units code matrix (-1 missing).

    Returns ``(o, n_pairable_units, n_units)``.
    """
    n_units = codes.shape[1]
    valid = codes >= 0
    unit_idx = np.broadcast_to(np.arange(n_units), codes.shape)[valid]
    counts = np.bincount(unit_idx * v + codes[valid], minlength=n_units * v)
    counts = counts.reshape(n_units, v).astype(np.float64)
    m = counts.sum(axis=1)
    pairable = m >= 2
    c = counts[pairable]
    inv = 1.0 / (m[pairable] - 1.0)
    o = (c * inv[:, None]).T @ c - np.diag((c * inv[:, None]).sum(axis=0))
    return o, int(pairable.sum()), n_units


def alpha_from_coincidences(
    o: FloatArray, level: str, cats: tuple[Any, ...]
) -> tuple[float | None, float | None, float | None]:
    """``(alpha, D_o, D_e)`` from a coincidence matrix; alpha None when D_e = 0."""
    n_c = o.sum(axis=0)
    n = float(n_c.sum())
    if n < 2:
        return None, None, None
    d2 = _delta2(level, cats, n_c)
    d_o = float((o * d2).sum()) / n
    d_e = float((np.outer(n_c, n_c) * d2).sum()) / (n * (n - 1.0))
    if d_e <= 1e-15:
        return None, d_o, d_e
    return 1.0 - d_o / d_e, d_o, d_e


def krippendorff_alpha(data: Any, level: str = "nominal", categories: Any = None) -> AlphaResult:
    """Krippendorff's alpha for ``data`` given as raters × units (None/NaN = missing).

    ``level`` is ``"nominal"``, ``"ordinal"``, ``"interval"`` or ``"ratio"``.  For ordinal
    alpha the category ranks follow ``categories`` when given (so labels such as
    ``["low", "partial", "high"]`` work); otherwise the sorted distinct values.  Interval and
    ratio alpha need numeric values.  The formula is the coincidence-matrix one in the
    module docstring (Krippendorff 2011).

    Units with fewer than 2 ratings cannot be paired; they are skipped and counted in
    ``n_skipped_units``.  Status ``"no_pairs"`` (value None) when no unit is pairable;
    ``"no_variation"`` (value None) when every pairable value is the same, so expected
    disagreement is 0.

    Raises ``ValueError`` for an unknown level, a 1-D or ragged matrix, a value outside
    ``categories`` (naming rater and unit), booleans mixed with numbers (``True == 1``),
    non-numeric values at interval/ratio level, and an infinite value or values so large
    that the squared differences overflow float64 at interval/ratio level (which would
    otherwise give a NaN alpha).
    """
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}: use one of {list(LEVELS)}")
    matrix = as_matrix(
        data, "raters × units", "data rows (raters) must all have the same number of units"
    )
    cats = _domain(matrix, categories, level)
    codes = encode_matrix(matrix, cats)
    if level in ("interval", "ratio"):
        _numeric_values(level, cats, codes)
    n_raters = matrix.shape[0]
    v = max(len(cats), 1)
    o, n_pairable, n_units = coincidences(codes, v)
    notes: list[str] = []
    skipped = n_units - n_pairable
    if skipped:
        notes.append(f"{skipped} unit(s) with fewer than 2 ratings skipped")
    n_values = round(float(o.sum()))
    if n_pairable == 0:
        notes.append("no unit has 2 or more ratings")
        return AlphaResult(
            value=None,
            status=NO_PAIRS,
            level=level,
            n_raters=n_raters,
            n_units=n_units,
            n_pairable_units=0,
            n_skipped_units=skipped,
            n_values=0,
            observed_disagreement=None,
            expected_disagreement=None,
            categories=cats,
            notes=tuple(notes),
        )
    try:
        with np.errstate(over="raise"):
            value, d_o, d_e = alpha_from_coincidences(o, level, cats)
    except FloatingPointError:
        big = max(abs(float(c)) for c in cats)
        raise ValueError(
            f"{level} alpha overflows float64 on these values (largest |value| {big:g}); "
            "rescale them"
        ) from None
    status = OK
    if value is None:
        status = NO_VARIATION
        notes.append("all pairable ratings are the same value: expected disagreement is 0")
    return AlphaResult(
        value=value,
        status=status,
        level=level,
        n_raters=n_raters,
        n_units=n_units,
        n_pairable_units=n_pairable,
        n_skipped_units=skipped,
        n_values=n_values,
        observed_disagreement=d_o,
        expected_disagreement=d_e,
        categories=cats,
        notes=tuple(notes),
    )


def alpha_from_table(
    table: FloatArray, level: str = "nominal"
) -> tuple[float | None, float | None, float | None]:
    """Two-rater alpha straight from a q × q table with no missing data: ``o = T + Tᵀ``."""
    t = np.asarray(table, dtype=np.float64)
    cats = tuple(range(t.shape[0]))
    return alpha_from_coincidences(t + t.T, level, cats)
