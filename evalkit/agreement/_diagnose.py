"""``diagnose``: everything needed to tell a weak judge from a kappa paradox.

A low kappa has two very different causes.  Either the judge disagrees with the human
(p_o is low), or agreement is high but the marginals are skewed so chance agreement p_e is
high too (the "kappa paradox", Feinstein & Cicchetti 1990, J Clin Epidemiol 43:543–549).
``diagnose`` puts side by side the quantities that separate the two: both marginals, p_o,
p_e, kappa and the largest kappa the marginals allow, prevalence-robust coefficients
(Brennan–Prediger/PABAK, Gwet's AC1), Krippendorff's alpha, the prevalence and bias
indices of Byrt, Bishop & Carlin (1993), per-category specific agreement, tests of marginal
homogeneity (Stuart–Maxwell) and symmetry (Bowker), the confusion matrix, and flags.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalkit.agreement._ac1 import ac1_from_table
from evalkit.agreement._bp import bp_from_table
from evalkit.agreement._distributions import bowker_test, stuart_maxwell_test
from evalkit.agreement._inputs import FloatArray, constant_raters, make_pairs
from evalkit.agreement._kappa import kappa_from_table, kappa_max_from_table
from evalkit.agreement._krippendorff import krippendorff_alpha
from evalkit.agreement._results import (
    AgreementResult,
    AlphaResult,
    HomogeneityTest,
    _Record,
)

FLAG_NAMES = ("single_class_collapse", "all_high", "all_low", "gate_unreachable")


@dataclass(frozen=True, eq=False, repr=False)
class Diagnosis(_Record):
    """The output of :func:`diagnose`.  Rows of ``confusion`` are the judge (rater ``a``),
    columns the human (rater ``b``); every category appears, used or not.

    ``prevalence_index`` = |a - d| / n and ``bias_index`` = |b - c| / n for the 2 × 2 table
    [[a, b], [c, d]] (Byrt, Bishop & Carlin 1993); None when q > 2.  The ``*_by_category``
    versions give the same indices for each category against the rest (for q = 2 both
    categories give the scalar value).  ``specific_agreement[k] = 2 n_kk / (n_k. + n_.k)``,
    None for a category neither rater used.

    Records compare by identity (the confusion matrix is a DataFrame); compare
    ``to_dict()`` outputs instead.

    ``flags``: ``single_class_collapse`` (a rater used one category only), ``all_high`` /
    ``all_low`` (a rater put every case in the last / first category), ``gate_unreachable``
    (kappa_max < threshold, or kappa_max does not exist: with the two marginals as they
    are, the kappa gate at ``threshold`` cannot be passed; the judge's marginal is one of
    them, so a judge whose marginal matched the humans' would have kappa_max 1).
    """

    categories: tuple[Any, ...]
    n: int
    n_missing: int
    threshold: float
    status: str
    judge_counts: dict[Any, int]
    human_counts: dict[Any, int]
    judge_proportions: dict[Any, float | None]
    human_proportions: dict[Any, float | None]
    p_observed: float | None
    p_expected: float | None
    kappa: AgreementResult
    kappa_max: float | None
    kappa_over_kappa_max: float | None
    brennan_prediger: AgreementResult
    gwet_ac1: AgreementResult
    krippendorff_alpha: AlphaResult
    prevalence_index: float | None
    bias_index: float | None
    prevalence_index_by_category: dict[Any, float | None]
    bias_index_by_category: dict[Any, float | None]
    specific_agreement: dict[Any, float | None]
    marginal_homogeneity: HomogeneityTest
    symmetry: HomogeneityTest
    confusion: pd.DataFrame
    flags: dict[str, bool]
    notes: tuple[str, ...] = ()

    @property
    def active_flags(self) -> tuple[str, ...]:
        """Names of the flags that are set, in a fixed order."""
        return tuple(name for name in FLAG_NAMES if self.flags.get(name))


def square_table_tests(
    table: FloatArray, cats: tuple[Any, ...]
) -> tuple[HomogeneityTest, HomogeneityTest]:
    """Stuart–Maxwell marginal homogeneity and Bowker symmetry (statsmodels' ``SquareTable``
    tests, computed by :mod:`evalkit.agreement._distributions` to the same bits).

    Categories neither rater used are removed first (they carry no information and make
    the covariance singular).  Test status: ``"ok"``; ``"not_applicable"`` when fewer than
    2 categories are used; ``"singular"`` when the Stuart–Maxwell covariance cannot be
    inverted (e.g. no off-diagonal counts, so the marginals are trivially equal).
    """
    used = (table.sum(axis=0) + table.sum(axis=1)) > 0
    used_cats = tuple(c for c, u in zip(cats, used, strict=True) if u)
    if int(used.sum()) < 2:
        note = ("fewer than 2 categories used",)
        return (
            HomogeneityTest("stuart_maxwell", None, None, None, "not_applicable", used_cats, note),
            HomogeneityTest("bowker", None, None, None, "not_applicable", used_cats, note),
        )
    sub = table[np.ix_(used, used)]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        h_stat, h_df, h_p = stuart_maxwell_test(sub)
        s_stat, s_df, s_p = bowker_test(sub)
    if math.isfinite(h_stat) and math.isfinite(h_p):
        h = HomogeneityTest("stuart_maxwell", h_stat, h_df, h_p, "ok", used_cats)
    else:
        h = HomogeneityTest(
            "stuart_maxwell",
            None,
            h_df,
            None,
            "singular",
            used_cats,
            ("covariance of marginal differences is singular",),
        )
    if math.isfinite(s_stat) and math.isfinite(s_p):
        s = HomogeneityTest("bowker", s_stat, s_df, s_p, "ok", used_cats)
    else:
        s = HomogeneityTest("bowker", None, s_df, None, "singular", used_cats)
    return h, s


def diagnose(a: Any, b: Any, categories: Any, threshold: float = 0.60) -> Diagnosis:
    """Diagnose agreement between a judge (``a``) and a human (``b``) on ``categories``.

    Returns a :class:`Diagnosis` record; see its docstring for every field.  ``kappa_max``
    is the largest kappa the two marginals allow (Cohen 1960):
    ``p_max = Σ_k min(p_k., p_.k)``, ``kappa_max = (p_max - p_e) / (1 - p_e)``.  A kappa
    close to kappa_max with a low kappa_max is a marginal (prevalence/bias) problem, not a
    judge problem.  ``.to_dict()`` is JSON-serialisable.  Missing pairs are dropped jointly
    and counted.  Raises ``ValueError`` on bad input, like :func:`cohens_kappa`.
    """
    if not isinstance(threshold, int | float) or not math.isfinite(float(threshold)):
        raise ValueError(f"threshold must be a finite number, got {threshold!r}")
    pairs = make_pairs(a, b, categories)
    cats, q, n = pairs.categories, pairs.q, pairs.n
    table = pairs.table()
    rows, cols = table.sum(axis=1), table.sum(axis=0)
    kap = kappa_from_table(table, categories=cats, n_missing=pairs.n_missing)
    bp = bp_from_table(table, categories=cats, n_missing=pairs.n_missing)
    ac1 = ac1_from_table(table, categories=cats, n_missing=pairs.n_missing)
    codes_a = [cats[i] for i in pairs.a]
    codes_b = [cats[i] for i in pairs.b]
    alpha = krippendorff_alpha([codes_a, codes_b], "nominal", categories=cats)
    kmax = kappa_max_from_table(table) if n > 0 else None
    ratio = None
    if kap.value is not None and kmax is not None and kmax > 1e-12:
        ratio = kap.value / kmax

    def prop(x: float) -> float | None:
        return float(x) / n if n else None

    pi_by: dict[Any, float | None] = {}
    bi_by: dict[Any, float | None] = {}
    spec: dict[Any, float | None] = {}
    for k, c in enumerate(cats):
        both = table[k, k]
        neither = n - rows[k] - cols[k] + both
        pi_by[c] = abs(both - neither) / n if n else None
        bi_by[c] = abs(rows[k] - cols[k]) / n if n else None
        denom = rows[k] + cols[k]
        spec[c] = float(2.0 * both / denom) if denom > 0 else None
    pi = pi_by[cats[0]] if q == 2 else None
    bi = bi_by[cats[0]] if q == 2 else None
    hom, sym = square_table_tests(table, cats)
    const_a, const_b = constant_raters(table) if n else (False, False)
    flags = {
        "single_class_collapse": bool(const_a or const_b),
        "all_high": bool(n and (rows[-1] == n or cols[-1] == n)),
        "all_low": bool(n and (rows[0] == n or cols[0] == n)),
        "gate_unreachable": bool(kmax is None or kmax < threshold),
    }
    notes = list(kap.notes)
    if kmax is None:
        notes.append("kappa_max does not exist for these marginals")
    confusion = pd.DataFrame(
        table.astype(np.int64),
        index=pd.Index(list(cats), name="judge"),
        columns=pd.Index(list(cats), name="human"),
    )
    return Diagnosis(
        categories=cats,
        n=n,
        n_missing=pairs.n_missing,
        threshold=float(threshold),
        status=kap.status,
        judge_counts={c: int(rows[k]) for k, c in enumerate(cats)},
        human_counts={c: int(cols[k]) for k, c in enumerate(cats)},
        judge_proportions={c: prop(rows[k]) for k, c in enumerate(cats)},
        human_proportions={c: prop(cols[k]) for k, c in enumerate(cats)},
        p_observed=kap.p_observed,
        p_expected=kap.p_expected,
        kappa=kap,
        kappa_max=kmax,
        kappa_over_kappa_max=ratio,
        brennan_prediger=bp,
        gwet_ac1=ac1,
        krippendorff_alpha=alpha,
        prevalence_index=pi,
        bias_index=bi,
        prevalence_index_by_category=pi_by,
        bias_index_by_category=bi_by,
        specific_agreement=spec,
        marginal_homogeneity=hom,
        symmetry=sym,
        confusion=confusion,
        flags=flags,
        notes=tuple(notes),
    )
