"""Cohen's kappa and weighted kappa with the Fleiss–Cohen–Everitt large-sample SE.

Formulas (agreement weights ``w_ij``, cell proportions ``p_ij``, marginals ``p_i.``, ``p_.j``)::

    p_o = Σ_ij w_ij p_ij                p_e = Σ_ij w_ij p_i. p_.j
    kappa = (p_o - p_e) / (1 - p_e)

    w̄_i. = Σ_j w_ij p_.j                w̄_.j = Σ_i w_ij p_i.
    Var(kappa) = [ Σ_ij p_ij (w_ij - (w̄_i. + w̄_.j)(1 - kappa))^2
                   - (kappa - p_e (1 - kappa))^2 ] / (n (1 - p_e)^2)

This is the non-null ("ASE") variance of Fleiss, Cohen & Everitt (1969), Psychological
Bulletin 72:323–327, as printed in the SAS/STAT PROC FREQ documentation ("Tests and Measures
of Agreement"); with identity weights it is the unweighted formula.  The 95% interval is
Wald: ``kappa ± 1.959964·se``.

The table-level functions take arrays of tables of shape ``(..., q, q)`` so the bootstrap
and the power simulation evaluate thousands of tables in one vectorised pass.
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
from evalkit.agreement._results import (
    BOTH_RATERS_CONSTANT,
    NO_PAIRS,
    OK,
    SINGLE_RATER_CONSTANT,
    TOO_FEW_PAIRS,
    AgreementResult,
)

_EPS = 1e-12


def kappa_parts(tables: FloatArray, w: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Vectorised ``(kappa, p_o, p_e)`` for tables of shape ``(..., q, q)``.

    Sums are taken over counts and divided once, so perfect agreement gives exactly 1.
    kappa is NaN where it is undefined (an empty table, or p_e = 1).
    """
    t = np.asarray(tables, dtype=np.float64)
    n = t.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        p_o = (t * w).sum(axis=(-2, -1)) / n
        p_e = np.einsum("...i,ij,...j->...", t.sum(axis=-1), w, t.sum(axis=-2)) / (n * n)
        denom = 1.0 - p_e
        kappa = np.where(denom > _EPS, (p_o - p_e) / np.where(denom > _EPS, denom, 1.0), np.nan)
    return kappa, p_o, p_e


def kappa_variance(tables: FloatArray, w: FloatArray) -> FloatArray:
    """Vectorised Fleiss–Cohen–Everitt (1969) non-null variance of (weighted) kappa.

    NaN where kappa is undefined. The numerator is a difference of two terms of order
    one; when they agree to 12 significant digits it is rounding noise, and the variance
    is taken as 0 (so that swapping the raters cannot turn noise into a different SE).
    """
    t = np.asarray(tables, dtype=np.float64)
    n = t.sum(axis=(-2, -1))
    kappa, _, p_e = kappa_parts(t, w)
    with np.errstate(invalid="ignore", divide="ignore"):
        rows = t.sum(axis=-1) / n[..., None]
        cols = t.sum(axis=-2) / n[..., None]
        wbar_row = np.einsum("ij,...j->...i", w, cols)  # w̄_i. = Σ_j w_ij p_.j
        wbar_col = np.einsum("ij,...i->...j", w, rows)  # w̄_.j = Σ_i w_ij p_i.
        one_minus = (1.0 - kappa)[..., None, None]
        dev = w - (wbar_row[..., :, None] + wbar_col[..., None, :]) * one_minus
        first = (t * dev**2).sum(axis=(-2, -1)) / n
        second = (kappa - p_e * (1.0 - kappa)) ** 2
        num = first - second
        num = np.where(np.abs(num) <= 1e-12 * np.maximum(np.abs(first), np.abs(second)), 0.0, num)
        var = num / (n * (1.0 - p_e) ** 2)
    return np.where(np.isnan(var), np.nan, np.maximum(var, 0.0))


def kappa_max_from_table(table: FloatArray) -> float | None:
    """Largest unweighted kappa attainable with these marginals (Cohen 1960).

    ``p_max = Σ_k min(p_k., p_.k)``; ``kappa_max = (p_max - p_e) / (1 - p_e)``.
    None when p_e = 1 or the table is empty.
    """
    t = np.asarray(table, dtype=np.float64)
    n = float(t.sum())
    if n <= 0:
        return None
    rows = t.sum(axis=1) / n
    cols = t.sum(axis=0) / n
    p_e = float(rows @ cols)
    if 1.0 - p_e <= _EPS:
        return None
    p_max = float(np.minimum(rows, cols).sum())
    return (p_max - p_e) / (1.0 - p_e)


def kappa_from_table(
    table: Any,
    agreement_w: Any = None,
    *,
    categories: tuple[Any, ...] | None = None,
    n_missing: int = 0,
    weights_name: str | None = None,
) -> AgreementResult:
    """Cohen's (weighted) kappa from a q × q count table and an agreement-weight matrix.

    ``agreement_w`` defaults to the identity (unweighted kappa); any symmetric or
    asymmetric matrix of agreement weights in [0, 1] with ones on the diagonal is accepted,
    which lets published examples with custom weights be reproduced.
    """
    t, w, cats, n = square_table(table, agreement_w, categories)
    notes = list(missing_note(n_missing))

    def result(
        value: float | None, se: float | None, p_o: float | None, p_e: float | None, status: str
    ) -> AgreementResult:
        return AgreementResult.with_wald_interval(
            "cohens_kappa",
            value,
            se,
            p_o,
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
    kappa, p_o_arr, p_e_arr = kappa_parts(t, w)
    p_o, p_e = float(p_o_arr), float(p_e_arr)
    if n < 2:
        notes.append("fewer than 2 complete pairs: kappa is not meaningful")
        return result(None, None, p_o, p_e, TOO_FEW_PAIRS)
    const_a, const_b = constant_raters(t)
    if const_a and const_b:
        notes.append(
            "both raters used a single category: kappa is undefined (0/0) or 0 by "
            "construction, and says nothing about agreement"
        )
        return result(None, None, p_o, p_e, BOTH_RATERS_CONSTANT)
    if const_a or const_b:
        who = "a" if const_a else "b"
        notes.append(
            f"rater {who} used a single category: p_o = p_e, so kappa is 0 by construction; "
            "no standard error or interval is given"
        )
        return result(0.0, None, p_o, p_e, SINGLE_RATER_CONSTANT)
    value = float(kappa)
    se = float(np.sqrt(kappa_variance(t, w)))
    if se == 0.0:
        notes.append("the large-sample SE is 0: the Wald interval is degenerate")
    return result(value, se, p_o, p_e, OK)


def cohens_kappa(a: Any, b: Any, categories: Any, weights: str | None = None) -> AgreementResult:
    """Cohen's kappa (weights=None) or weighted kappa ("linear" or "quadratic").

    ``kappa = (p_o - p_e) / (1 - p_e)`` over the q × q table of the given ordered
    ``categories`` (rows = ``a``, columns = ``b``; unused categories are kept).  Weighted
    kappa uses agreement weights from category ranks: linear (Cicchetti & Allison 1971)
    ``1 - |i-j|/(q-1)`` or quadratic (Fleiss & Cohen 1973) ``1 - (i-j)^2/(q-1)^2``.

    ``se`` is the Fleiss, Cohen & Everitt (1969) large-sample non-null SE (SAS PROC FREQ
    "ASE"); ``ci_low``/``ci_high`` are the 95% Wald limits ``value ± 1.959964·se``.

    Edge cases (see ``evalkit.agreement._results`` for statuses): pairs with a missing rating
    are dropped jointly and counted in ``n_missing``; fewer than 2 pairs gives
    ``"too_few_pairs"``; one rater constant gives value 0.0 with no SE
    (``"single_rater_constant"``); both constant gives value None
    (``"both_raters_constant"``).

    Raises ``ValueError`` for unequal lengths, a value outside ``categories`` (naming the
    value and its position) or an unknown weights name.

    References: Cohen (1960) Educ Psychol Meas 20:37–46; Cohen (1968) Psychol Bull
    70:213–220; Fleiss, Cohen & Everitt (1969) Psychol Bull 72:323–327.
    """
    wname = check_weights(weights)
    pairs = make_pairs(a, b, categories)
    w = agreement_weights(pairs.q, wname)
    return kappa_from_table(
        pairs.table(),
        w,
        categories=pairs.categories,
        n_missing=pairs.n_missing,
        weights_name=wname,
    )
