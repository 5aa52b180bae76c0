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

from typing import Any

import numpy as np
import pandas as pd

from evalkit.agreement._inputs import FloatArray, IntArray, check_categories, is_missing
from evalkit.agreement._results import NO_PAIRS, NO_VARIATION, OK, AlphaResult

LEVELS = ("nominal", "ordinal", "interval", "ratio")


def _as_rows(data: Any) -> list[list[Any]]:
    if isinstance(data, pd.DataFrame):
        return [list(row) for row in data.to_numpy(dtype=object)]
    if isinstance(data, np.ndarray):
        if data.ndim != 2:
            raise ValueError(f"data must be 2-dimensional (raters × units), got {data.shape}")
        return [list(row) for row in data.tolist()]
    if data is None or isinstance(data, str | bytes):
        raise ValueError("data must be a raters × units matrix")
    rows = [list(r) if not isinstance(r, str | bytes) else None for r in data]
    if any(r is None for r in rows):
        raise ValueError("data must be a raters × units matrix, not a list of strings")
    return rows  # type: ignore[return-value]


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float | np.integer | np.floating) and not isinstance(
        v, bool | np.bool_
    )


def _domain(rows: list[list[Any]], categories: Any, level: str) -> tuple[Any, ...]:
    if categories is not None:
        cats = check_categories(categories)
    else:
        values = {v for row in rows for v in row if not is_missing(v)}
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
        if level == "ratio" and any(float(c) < 0 for c in cats):
            raise ValueError("ratio alpha needs non-negative values")
    return cats


def _encode(rows: list[list[Any]], cats: tuple[Any, ...]) -> IntArray:
    index = {c: i for i, c in enumerate(cats)}
    codes = np.full((len(rows), len(rows[0]) if rows else 0), -1, dtype=np.int64)
    for r, row in enumerate(rows):
        for u, v in enumerate(row):
            if is_missing(v):
                continue
            try:
                codes[r, u] = index[v]
            except (KeyError, TypeError):
                raise ValueError(
                    f"data[{r}][{u}] = {v!r} is not one of the categories {list(cats)!r}"
                ) from None
    return codes


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
    x = np.array([float(c) for c in cats])
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

    Raises ``ValueError`` for an unknown level, a ragged matrix, a value outside
    ``categories`` (naming rater and unit) or non-numeric values at interval/ratio level.
    """
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}: use one of {list(LEVELS)}")
    rows = _as_rows(data)
    if len({len(r) for r in rows}) > 1:
        raise ValueError("data rows (raters) must all have the same number of units")
    cats = _domain(rows, categories, level)
    codes = _encode(rows, cats)
    n_raters = len(rows)
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
    value, d_o, d_e = alpha_from_coincidences(o, level, cats)
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
