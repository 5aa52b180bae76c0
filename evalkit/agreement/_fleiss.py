"""Fleiss' kappa for two or more raters per unit, with missing ratings as irrCAC handles them.

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

Missing ratings (``missing="available"``, the default) follow irrCAC's
``fleiss.kappa.raw`` (Gwet 2014, Handbook of Inter-Rater Reliability, 4th ed., ch. 5): unit
i enters with its own number of ratings ``r_i``; ``P̄`` is the mean of
``Σ_j n_ij (n_ij - 1) / (r_i (r_i - 1))`` over the units with ``r_i ≥ 2``, and
``p_j = mean_i n_ij / r_i`` over every unit with at least one rating.  On complete data this
is exactly the formula above.  ``missing="listwise"`` drops every unit with a missing
rating first (as ``irr::kappam.fleiss``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from evalkit.agreement import _gwet_variance as gv
from evalkit.agreement._distributions import normal_sf
from evalkit.agreement._inputs import as_matrix, check_categories, encode_matrix
from evalkit.agreement._results import NO_PAIRS, NO_VARIATION, OK, TOO_FEW_PAIRS, FleissResult

MISSING = ("available", "listwise")


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


def fleiss_kappa(data: Any, categories: Any, *, missing: str = "available") -> FleissResult:
    """Fleiss' kappa for ``data`` given as units × raters (each cell a category value).

    ``missing="available"`` (default): a unit with empty cells (None/NaN) enters with the
    ratings it has, exactly as irrCAC's ``fleiss.kappa.raw`` (module docstring); a unit
    rated once counts in the category proportions only, a unit with no rating is dropped.
    ``missing="listwise"``: every unit with an empty cell is dropped (as ``irr``).  Units
    with an empty cell are counted in ``n_missing`` either way; ``n_units`` is the number
    of units that entered.  On complete data both give classical Fleiss (1971) kappa.

    ``se`` is the null-hypothesis SE (Fleiss, Nee & Landis 1979) and ``z``/``p_value`` its
    two-sided test of kappa = 0; it needs the same number m of ratings on every unit, so
    with varying numbers of ratings it is None (as are the per-category kappas) and a note
    says so: :func:`~evalkit.agreement.multi_rater` gives irrCAC's standard error and
    interval instead.

    Status ``"no_pairs"`` when no unit has two ratings, ``"too_few_pairs"`` for a single
    unit, ``"no_variation"`` (value None) when every rating is the same category.
    Raises ``ValueError`` for fewer than 2 rater columns, a 1-D or ragged table, a value
    outside ``categories`` (naming ``data[unit][rater]``) or an unknown ``missing``.

    References: Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters.
    Psychological Bulletin 76:378–382.  Gwet (2014), ch. 5; irrCAC ``fleiss.kappa.raw``.
    """
    if missing not in MISSING:
        raise ValueError(f"unknown missing {missing!r}: use 'available' or 'listwise'")
    cats = check_categories(categories)
    matrix = as_matrix(
        data, "units × raters", "every unit (row) must have the same number of rater columns"
    )
    n_rows, m = matrix.shape
    if n_rows and m < 2:
        raise ValueError(f"Fleiss' kappa needs at least 2 raters per unit, got {m}")
    codes = encode_matrix(matrix, cats)
    q = len(cats)
    rated = codes >= 0
    incomplete = ~rated.all(axis=1)
    n_missing = int(incomplete.sum())
    notes: list[str] = []
    if missing == "listwise":
        keep = ~incomplete
        if n_missing:
            notes.append(f"{n_missing} unit(s) with a missing rating dropped (listwise)")
    else:
        keep = rated.any(axis=1)
        n_empty = int((~keep).sum())
        if n_missing > n_empty:
            notes.append(
                f"{n_missing - n_empty} unit(s) with a missing rating kept with the ratings "
                "they have (irrCAC fleiss.kappa.raw)"
            )
        if n_empty:
            notes.append(f"{n_empty} unit(s) with no rating dropped")
    codes = codes[keep]
    n_units = int(codes.shape[0])
    counts = gv.counts_from_codes(codes, q)
    r_i = counts.sum(axis=1)

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
            p = 2.0 * normal_sf(abs(z))
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

    if n_units == 0 or not (r_i >= 2).any():
        notes.append("no complete unit" if missing == "listwise" else "no unit has 2 ratings")
        return result(None, None, None, None, NO_PAIRS)
    est = gv.fleiss(gv.parts(counts, np.eye(q)))
    p_bar, p_e = est.pa, est.pe
    if n_units < 2:
        notes.append("a single unit: Fleiss' kappa is not meaningful")
        return result(None, None, p_bar, p_e, TOO_FEW_PAIRS)
    if est.value is None:
        notes.append("every rating is the same category: chance agreement is 1")
        return result(None, None, p_bar, p_e, NO_VARIATION)
    if np.unique(r_i).size > 1:
        notes.append(
            "units have different numbers of ratings: no null-hypothesis SE or per-category "
            "kappas (use multi_rater for irrCAC's SE and interval)"
        )
        return result(est.value, None, p_bar, p_e, OK)
    m_eff = float(r_i[0])
    if m_eff != m:
        notes.append(f"every unit has {int(m_eff)} ratings: the null SE uses m = {int(m_eff)}")
    _, se, _, _ = fleiss_from_counts(counts)
    p_j = counts.sum(axis=0) / (n_units * m_eff)
    per: dict[Any, float | None] = {}
    for j, c in enumerate(cats):
        denom = n_units * m_eff * (m_eff - 1) * p_j[j] * (1 - p_j[j])
        if denom <= 0:
            per[c] = None
        else:
            per[c] = float(1.0 - float((counts[:, j] * (m_eff - counts[:, j])).sum()) / denom)
    return result(est.value, se, p_bar, p_e, OK, per)
