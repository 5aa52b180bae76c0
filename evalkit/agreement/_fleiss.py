"""Fleiss' kappa for m raters per unit, with the null-hypothesis standard error.

With ``n_ij`` the number of the m raters putting unit i in category j (N units)::

    P_i = (Σ_j n_ij^2 - m) / (m (m - 1))      p_j = Σ_i n_ij / (N m),  q_j = 1 - p_j
    P̄ = mean_i P_i                            P̄_e = Σ_j p_j^2
    kappa = (P̄ - P̄_e) / (1 - P̄_e)

    Var_0(kappa) = 2 / (N m (m - 1)) · [(Σ_j p_j q_j)^2 - Σ_j p_j q_j (q_j - p_j)]
                   / (Σ_j p_j q_j)^2

The variance is the one valid under the null hypothesis kappa = 0, as corrected by
Fleiss, Nee & Landis (1979), Psychological Bulletin 86:974–977 (the formula of R's
``irr::kappam.fleiss`` and Fleiss, Levin & Paik 2003, ch. 18).  It serves the test
``z = kappa / se``; it is not a standard error for a confidence interval, so none is given.

Per-category kappas (Fleiss 1971, eqs. 20–21):
``kappa_j = 1 - Σ_i n_ij (m - n_ij) / (N m (m - 1) p_j q_j)``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from evalkit.agreement._inputs import check_categories, is_missing
from evalkit.agreement._results import NO_PAIRS, NO_VARIATION, OK, TOO_FEW_PAIRS, FleissResult


def _as_units(data: Any) -> list[list[Any]]:
    if isinstance(data, pd.DataFrame):
        return [list(r) for r in data.to_numpy(dtype=object)]
    if isinstance(data, np.ndarray):
        if data.ndim != 2:
            raise ValueError(f"data must be 2-dimensional (units × raters), got {data.shape}")
        return [list(r) for r in data.tolist()]
    if data is None or isinstance(data, str | bytes):
        raise ValueError("data must be a units × raters matrix")
    units = []
    for r in data:
        if isinstance(r, str | bytes):
            raise ValueError("data must be a units × raters matrix, not a list of strings")
        units.append(list(r))
    return units


def fleiss_from_counts(counts: Any) -> tuple[float | None, float | None, float, float]:
    """``(kappa, se0, P̄, P̄_e)`` from an N × q matrix of rater counts (constant m)."""
    c = np.asarray(counts, dtype=np.float64)
    n_units = c.shape[0]
    m = float(c[0].sum())
    p_j = c.sum(axis=0) / (n_units * m)
    p_bar = float(((c**2).sum(axis=1) - m).mean() / (m * (m - 1.0)))
    p_e = float((p_j**2).sum())
    if 1.0 - p_e <= 1e-12:
        return None, None, p_bar, p_e
    kappa = (p_bar - p_e) / (1.0 - p_e)
    pq = p_j * (1.0 - p_j)
    s = float(pq.sum())
    var0 = 2.0 / (n_units * m * (m - 1.0)) * (s**2 - float((pq * ((1 - p_j) - p_j)).sum())) / s**2
    return kappa, math.sqrt(max(var0, 0.0)), p_bar, p_e


def fleiss_kappa(data: Any, categories: Any) -> FleissResult:
    """Fleiss' kappa for ``data`` given as units × raters (each cell a category value).

    Every unit must be rated by the same number m ≥ 2 of raters, who need not be the same
    people.  A unit with any missing rating is dropped (listwise, as in ``irr``) and counted
    in ``n_missing``.  ``se`` is the null-hypothesis SE (Fleiss, Nee & Landis 1979) and
    ``z``/``p_value`` its two-sided test of kappa = 0; see the module docstring.

    Status ``"no_pairs"`` when no complete unit remains, ``"too_few_pairs"`` for a single
    unit, ``"no_variation"`` (value None) when every rating is the same category.
    Raises ``ValueError`` for fewer than 2 raters, ragged rows or a value outside
    ``categories``.

    Reference: Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters.
    Psychological Bulletin 76:378–382.
    """
    cats = check_categories(categories)
    units = _as_units(data)
    widths = {len(u) for u in units}
    if len(widths) > 1:
        raise ValueError("every unit (row) must have the same number of rater columns")
    m = widths.pop() if widths else 0
    if units and m < 2:
        raise ValueError(f"Fleiss' kappa needs at least 2 raters per unit, got {m}")
    index = {c: i for i, c in enumerate(cats)}
    q = len(cats)
    rows: list[np.ndarray] = []
    n_missing = 0
    for i, unit in enumerate(units):
        if any(is_missing(v) for v in unit):
            n_missing += 1
            continue
        row = np.zeros(q)
        for j, v in enumerate(unit):
            try:
                row[index[v]] += 1
            except (KeyError, TypeError):
                raise ValueError(
                    f"data[{i}][{j}] = {v!r} is not one of the categories {list(cats)!r}"
                ) from None
        rows.append(row)
    notes: list[str] = []
    if n_missing:
        notes.append(f"{n_missing} unit(s) with a missing rating dropped (listwise)")
    n_units = len(rows)

    def result(
        value: float | None,
        se: float | None,
        p_o: float | None,
        p_e: float | None,
        status: str,
        per: dict[Any, float | None] | None = None,
    ) -> FleissResult:
        z = p = None
        if value is not None and se is not None and se > 0:
            z = value / se
            p = float(2.0 * stats.norm.sf(abs(z)))
        return FleissResult(
            value=value,
            se=se,
            z=z,
            p_value=p,
            p_observed=p_o,
            p_expected=p_e,
            n_units=n_units,
            n_raters=m,
            n_missing=n_missing,
            status=status,
            categories=cats,
            per_category=per or {},
            notes=tuple(notes),
        )

    if n_units == 0:
        notes.append("no complete unit")
        return result(None, None, None, None, NO_PAIRS)
    counts = np.vstack(rows)
    kappa, se, p_bar, p_e = fleiss_from_counts(counts)
    if n_units < 2:
        notes.append("a single unit: Fleiss' kappa is not meaningful")
        return result(None, None, p_bar, p_e, TOO_FEW_PAIRS)
    if kappa is None:
        notes.append("every rating is the same category: chance agreement is 1")
        return result(None, None, p_bar, p_e, NO_VARIATION)
    p_j = counts.sum(axis=0) / (n_units * m)
    per: dict[Any, float | None] = {}
    for j, c in enumerate(cats):
        denom = n_units * m * (m - 1) * p_j[j] * (1 - p_j[j])
        if denom <= 0:
            per[c] = None
        else:
            per[c] = float(1.0 - float((counts[:, j] * (m - counts[:, j])).sum()) / denom)
    return result(kappa, se, p_bar, p_e, OK, per)
