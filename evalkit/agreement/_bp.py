"""Brennan–Prediger coefficient (PABAK for two categories) and percent agreement.

Formulas (agreement weights ``w_kl``, ``T_w = Σ_kl w_kl``)::

    p_a = Σ_kl w_kl p_kl          p_e = T_w / q^2          BP = (p_a - p_e) / (1 - p_e)
    Var(BP) = [ Σ_kl p_kl w_kl^2 - p_a^2 ] / (n (1 - p_e)^2)

Unweighted, ``p_e = 1/q``; with q = 2 this is PABAK ``= 2 p_o - 1`` (Byrt, Bishop & Carlin
1993, J Clin Epidemiol 46:423–429).  The variance is Gwet (2014, Handbook of Inter-Rater
Reliability, ch. 2), the irrCAC ``bp2.table`` formula without finite-population correction.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from evalkit.agreement._inputs import (
    FloatArray,
    agreement_weights,
    check_weights,
    make_pairs,
    missing_note,
    square_table,
)
from evalkit.agreement._results import NO_PAIRS, OK, TOO_FEW_PAIRS, AgreementResult


def percent_agreement_parts(tables: FloatArray, w: FloatArray) -> FloatArray:
    """Vectorised (weighted) observed agreement ``p_a`` for tables ``(..., q, q)``."""
    t = np.asarray(tables, dtype=np.float64)
    n = t.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray((t * w).sum(axis=(-2, -1)) / n)


def bp_parts(tables: FloatArray, w: FloatArray) -> tuple[FloatArray, FloatArray, float]:
    """Vectorised ``(BP, p_a, p_e)``; p_e = T_w / q^2 is a constant."""
    q = np.asarray(tables).shape[-1]
    p_a = percent_agreement_parts(tables, w)
    p_e = float(w.sum()) / (q * q)
    return (p_a - p_e) / (1.0 - p_e), p_a, p_e


def bp_from_table(
    table: Any,
    agreement_w: Any = None,
    *,
    categories: tuple[Any, ...] | None = None,
    n_missing: int = 0,
    weights_name: str | None = None,
) -> AgreementResult:
    """Brennan–Prediger from a q × q count table (identity weights by default)."""
    t, w, cats, n = square_table(table, agreement_w, categories, min_q=2)
    q = t.shape[0]
    notes = list(missing_note(n_missing))
    p_e = float(w.sum()) / (q * q)

    def result(
        value: float | None, se: float | None, p_a: float | None, status: str
    ) -> AgreementResult:
        return AgreementResult.with_wald_interval(
            "brennan_prediger",
            value,
            se,
            p_a,
            p_e,
            n=n,
            n_missing=n_missing,
            status=status,
            weights=weights_name,
            categories=cats,
            notes=notes,
        )

    if n == 0:
        notes.append("no complete pairs")
        return result(None, None, None, NO_PAIRS)
    p_a = float((t * w).sum()) / n
    if n < 2:
        notes.append("fewer than 2 complete pairs: the coefficient is not meaningful")
        return result(None, None, p_a, TOO_FEW_PAIRS)
    value = (p_a - p_e) / (1.0 - p_e)
    var = max((float((t * w**2).sum()) / n - p_a**2) / (n * (1.0 - p_e) ** 2), 0.0)
    return result(value, float(np.sqrt(var)), p_a, OK)


def brennan_prediger(
    a: Any, b: Any, categories: Any, weights: str | None = None
) -> AgreementResult:
    """Brennan–Prediger coefficient; PABAK (``2 p_o - 1``) when there are two categories.

    ``BP = (p_a - p_e) / (1 - p_e)`` with uniform chance agreement ``p_e = T_w / q^2``
    (``1/q`` unweighted), so it depends on the number of categories, not on the marginals.
    ``se`` is Gwet's (2014) variance conditional on raters; ``ci_low``/``ci_high`` 95% Wald.
    Missing pairs are dropped jointly and counted; fewer than 2 pairs gives
    ``"too_few_pairs"``.  A constant rater does not make it undefined.

    References: Brennan & Prediger (1981) Educ Psychol Meas 41:687–699; Byrt, Bishop &
    Carlin (1993) J Clin Epidemiol 46:423–429.
    """
    wname = check_weights(weights)
    pairs = make_pairs(a, b, categories)
    w = agreement_weights(pairs.q, wname)
    return bp_from_table(
        pairs.table(),
        w,
        categories=pairs.categories,
        n_missing=pairs.n_missing,
        weights_name=wname,
    )
