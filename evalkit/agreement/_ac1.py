"""Gwet's AC1 (unweighted) and AC2 (weighted) for two raters, with Gwet's variance.

Formulas (agreement weights ``w_kl``, ``T_w = Σ_kl w_kl``, cell proportions ``p_kl``,
``π_k = (p_k. + p_.k) / 2``)::

    p_a = Σ_kl w_kl p_kl
    p_e = T_w / (q (q - 1)) · Σ_k π_k (1 - π_k)
    AC = (p_a - p_e) / (1 - p_e)

    Var(AC) = [ Σ_kl p_kl (w_kl - 2 (1 - AC) T_w (1 - (π_k + π_l)/2) / (q (q - 1)))^2
                - (p_a - 2 (1 - AC) p_e)^2 ] / (n (1 - p_e)^2)

The variance is conditional on the two raters (subjects are the sampling units), as in
Gwet (2008) British Journal of Mathematical and Statistical Psychology 61:29–48 and Gwet
(2014) Handbook of Inter-Rater Reliability, 4th ed., ch. 2–3; it is the formula of the
irrCAC R package's ``gwet.ac1.table`` with no finite-population correction.  With identity
weights ``T_w = q`` and ``p_e = Σ π_k(1 - π_k) / (q - 1)`` (AC1).  The 95% interval is Wald
(normal quantile), ``AC ± 1.959964·se``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from evalkit.agreement._inputs import (
    FloatArray,
    agreement_weights,
    check_weights,
    constant_raters,
    make_pairs,
    missing_note,
    square_table,
)
from evalkit.agreement._results import NO_PAIRS, OK, TOO_FEW_PAIRS, AgreementResult


def ac1_parts(tables: FloatArray, w: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Vectorised ``(AC, p_a, p_e)`` for tables of shape ``(..., q, q)``; NaN if empty."""
    t = np.asarray(tables, dtype=np.float64)
    q = t.shape[-1]
    n = t.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        pi = (t.sum(axis=-1) + t.sum(axis=-2)) / (2.0 * n[..., None])
        p_a = (t * w).sum(axis=(-2, -1)) / n
        p_e = w.sum() / (q * (q - 1)) * (pi * (1.0 - pi)).sum(axis=-1)
        ac = (p_a - p_e) / (1.0 - p_e)
    return ac, p_a, p_e


def ac1_variance(tables: FloatArray, w: FloatArray) -> FloatArray:
    """Vectorised Gwet variance of AC1/AC2 (conditional on raters), clipped at 0."""
    t = np.asarray(tables, dtype=np.float64)
    q = t.shape[-1]
    n = t.sum(axis=(-2, -1))
    ac, p_a, p_e = ac1_parts(t, w)
    tw = w.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        pi = (t.sum(axis=-1) + t.sum(axis=-2)) / (2.0 * n[..., None])
        pair_mean = (pi[..., :, None] + pi[..., None, :]) / 2.0
        scale = (2.0 * (1.0 - ac) * tw / (q * (q - 1)))[..., None, None]
        dev = w - scale * (1.0 - pair_mean)
        first = (t * dev**2).sum(axis=(-2, -1)) / n
        second = (p_a - 2.0 * (1.0 - ac) * p_e) ** 2
        var = (first - second) / (n * (1.0 - p_e) ** 2)
    return np.where(np.isnan(var), np.nan, np.maximum(var, 0.0))


def ac1_from_table(
    table: Any,
    agreement_w: Any = None,
    *,
    categories: tuple[Any, ...] | None = None,
    n_missing: int = 0,
    weights_name: str | None = None,
) -> AgreementResult:
    """Gwet's AC1 (identity weights) or AC2 from a q × q count table."""
    t, w, cats, n = square_table(table, agreement_w, categories, min_q=2)
    name = "gwet_ac1" if weights_name is None and agreement_w is None else "gwet_ac2"
    notes = list(missing_note(n_missing))

    def result(
        value: float | None, se: float | None, p_a: float | None, p_e: float | None, status: str
    ) -> AgreementResult:
        return AgreementResult.with_wald_interval(
            name,
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
        return result(None, None, None, None, NO_PAIRS)
    ac, p_a, p_e = (float(x) for x in ac1_parts(t, w))
    if n < 2:
        notes.append("fewer than 2 complete pairs: AC1 is not meaningful")
        return result(None, None, p_a, p_e, TOO_FEW_PAIRS)
    const_a, const_b = constant_raters(t)
    if const_a or const_b:
        who = "both raters" if const_a and const_b else ("rater a" if const_a else "rater b")
        notes.append(f"{who} used a single category; AC1 is defined but reflects prevalence")
    se = float(np.sqrt(ac1_variance(t, w)))
    return result(ac, se, p_a, p_e, OK)


def gwet_ac1(a: Any, b: Any, categories: Any, weights: str | None = None) -> AgreementResult:
    """Gwet's AC1 (weights=None) or AC2 ("linear" / "quadratic" agreement weights).

    ``AC = (p_a - p_e) / (1 - p_e)`` with chance agreement
    ``p_e = T_w/(q(q-1)) · Σ_k π_k(1 - π_k)``, ``π_k`` the mean of the two raters'
    proportions in category k and ``T_w`` the sum of the weights (``q`` unweighted).
    ``se`` is Gwet's (2008) variance conditional on raters; ``ci_low``/``ci_high`` are 95% Wald.

    Unlike kappa, AC1 stays defined when one or both raters are constant (p_e < 1 always);
    the status is then ``"ok"`` and a note says so.  Missing pairs are dropped jointly and
    counted; fewer than 2 pairs gives ``"too_few_pairs"``.

    Reference: Gwet, K. L. (2008). Computing inter-rater reliability and its variance in the
    presence of high agreement. Br J Math Stat Psychol 61:29–48.
    """
    wname = check_weights(weights)
    pairs = make_pairs(a, b, categories)
    w = agreement_weights(pairs.q, wname)
    return ac1_from_table(
        pairs.table(),
        w if wname is not None else None,
        categories=pairs.categories,
        n_missing=pairs.n_missing,
        weights_name=wname,
    )
