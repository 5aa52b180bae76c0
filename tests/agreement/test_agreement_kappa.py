"""Cohen's kappa and weighted kappa: published values, reference implementations, edge cases.

Each expected number carries its source.  "Pinned" numbers come from a publication or a
reference implementation's own documentation; "cross-checked" numbers were computed here
and compared with an independent implementation (statsmodels, scikit-learn).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import cohens_kappa as sm_cohens_kappa

from evalkit.agreement import cohens_kappa
from evalkit.agreement._kappa import kappa_from_table, kappa_max_from_table


def expand(table: list[list[int]], cats: list[object]) -> tuple[list[object], list[object]]:
    """Rater a (rows) and rater b (columns) ratings reproducing a count table."""
    a: list[object] = []
    b: list[object] = []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            a += [cats[i]] * count
            b += [cats[j]] * count
    return a, b


# SAS PROC FREQ printout for this 3 × 3 table, quoted in statsmodels' own test suite
# (statsmodels/stats/tests/test_inter_rater.py, TestUnweightedCohens / TestWeightedCohens).
SAS_TABLE = [[0, 4, 1], [0, 8, 0], [0, 1, 5]]

# irrCAC (K. L. Gwet) dataset cont3x3abstractors, README and "weighting" vignette.
ABSTRACTORS = [[13, 0, 0], [0, 20, 7], [0, 4, 56]]
ABSTRACTORS_CATS = ["Ectopic", "AIU", "NIU"]

# SAS/STAT User's Guide, PROC FREQ "Getting Started: Agreement Study" (skin condition data).
SKIN = [[10, 4, 1, 0], [5, 10, 12, 2], [2, 4, 12, 5], [0, 2, 6, 13]]
SKIN_CATS = ["terrible", "poor", "marginal", "clear"]


def test_sas_simple_kappa_with_ase_and_limits() -> None:
    a, b = expand(SAS_TABLE, [1, 2, 3])
    r = cohens_kappa(a, b, [1, 2, 3])
    # SAS PROC FREQ: Kappa 0.4842, ASE 0.1380, 95% limits 0.2137, 0.7547
    assert round(r.value, 4) == 0.4842
    assert round(r.se, 4) == 0.1380
    assert round(r.ci_low, 4) == 0.2137
    assert round(r.ci_high, 4) == 0.7547
    assert r.status == "ok" and r.n == 19 and r.n_missing == 0


def test_sas_weighted_kappa_cicchetti_allison() -> None:
    a, b = expand(SAS_TABLE, [1, 2, 3])
    r = cohens_kappa(a, b, [1, 2, 3], weights="linear")
    # SAS PROC FREQ (Cicchetti–Allison weights): 0.4701, ASE 0.1457, limits 0.1845, 0.7558
    assert round(r.value, 4) == 0.4701
    assert round(r.se, 4) == 0.1457
    assert round(r.ci_low, 4) == 0.1845
    assert round(r.ci_high, 4) == 0.7558


def test_irrcac_kappa2_table_unweighted_and_quadratic() -> None:
    a, b = expand(ABSTRACTORS, ABSTRACTORS_CATS)
    r = cohens_kappa(a, b, ABSTRACTORS_CATS)
    # irrCAC README: kappa2.table(cont3x3abstractors) -> 0.7964094, se 0.05891072
    # (irrCAC's two-rater variance is algebraically the FCE 1969 non-null variance)
    assert round(r.value, 7) == 0.7964094
    assert round(r.se, 8) == 0.05891072
    rq = cohens_kappa(a, b, ABSTRACTORS_CATS, weights="quadratic")
    # irrCAC weighting vignette: kappa2.table(..., quadratic.weights(1:3)) -> 0.8921569,
    # se 0.03535151
    assert round(rq.value, 7) == 0.8921569
    assert round(rq.se, 8) == 0.03535151


def test_statpsych_ci_kappa_documented_example() -> None:
    # R statpsych::ci.kappa(.05, 31, 12, 4, 58) documented output (Bonett):
    # Cohen kappa 0.6756757, SE 0.07344761, LL 0.5317210, UL 0.8196303
    a, b = expand([[31, 12], [4, 58]], [0, 1])
    r = cohens_kappa(a, b, [0, 1])
    assert round(r.value, 7) == 0.6756757
    assert round(r.se, 8) == 0.07344761
    assert round(r.ci_low, 7) == 0.5317210
    assert round(r.ci_high, 7) == 0.8196303


def test_cohen_1968_weighted_kappa_with_custom_weights() -> None:
    # Cohen (1968) Psychol Bull 70:213, as quoted in psych::cohen.kappa examples:
    # "cohen reports .492 and .348" (unweighted, and weighted with disagreement
    # weights [[0,1,3],[1,0,6],[3,6,0]] on these proportions, n = 200).
    props = np.array([[0.44, 0.07, 0.09], [0.05, 0.20, 0.05], [0.01, 0.03, 0.06]])
    disagreement = np.array([[0, 1, 3], [1, 0, 6], [3, 6, 0]], dtype=float)
    assert round(kappa_from_table(props * 200).value, 3) == 0.492
    weighted = kappa_from_table(props * 200, 1.0 - disagreement / disagreement.max())
    assert round(weighted.value, 3) == 0.348


def test_feinstein_cicchetti_paradox_tables() -> None:
    # Feinstein & Cicchetti (1990) J Clin Epidemiol 43:543: both tables p_o = 0.85;
    # table A kappa 0.70, table B kappa 0.32 (high prevalence drags kappa down).
    a, b = expand([[40, 9], [6, 45]], ["yes", "no"])
    ra = cohens_kappa(a, b, ["yes", "no"])
    assert ra.p_observed == pytest.approx(0.85)
    assert round(ra.value, 2) == 0.70
    a, b = expand([[80, 10], [5, 5]], ["yes", "no"])
    rb = cohens_kappa(a, b, ["yes", "no"])
    assert rb.p_observed == pytest.approx(0.85)
    assert round(rb.value, 2) == 0.32


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_skin_condition_cross_checked_with_statsmodels(weights: str | None) -> None:
    # Data: SAS PROC FREQ Getting Started "Agreement Study".  SAS's printed output could
    # not be retrieved here, so the numbers are cross-checked against statsmodels 0.15
    # cohens_kappa on the same table (kappa 0.3449 unweighted, 0.5082 linear).
    a, b = expand(SKIN, SKIN_CATS)
    r = cohens_kappa(a, b, SKIN_CATS, weights=weights)
    sm = sm_cohens_kappa(np.array(SKIN), wt=weights)
    assert r.value == pytest.approx(sm.kappa, abs=1e-12)
    assert r.se == pytest.approx(sm.std_kappa, abs=1e-12)
    assert r.ci_low == pytest.approx(sm.kappa_low, abs=1e-9)
    assert r.ci_high == pytest.approx(sm.kappa_upp, abs=1e-9)
    sk = cohen_kappa_score(a, b, labels=SKIN_CATS, weights=weights)
    assert r.value == pytest.approx(sk, abs=1e-12)
    if weights is None:
        assert round(r.value, 4) == 0.3449
    if weights == "linear":
        assert round(r.value, 4) == 0.5082


def test_random_tables_agree_with_statsmodels_and_sklearn() -> None:
    rng = np.random.default_rng(7)
    cats = ["low", "partial", "high", "very high"]
    for _ in range(25):
        t = rng.integers(0, 15, size=(4, 4)) + np.diag(rng.integers(1, 20, size=4))
        a, b = expand(t.tolist(), cats)
        for w in (None, "linear", "quadratic"):
            r = cohens_kappa(a, b, cats, weights=w)
            sm = sm_cohens_kappa(t, wt=w)
            assert r.value == pytest.approx(sm.kappa, abs=1e-12)
            assert r.se == pytest.approx(sm.std_kappa, abs=1e-12)
            assert r.value == pytest.approx(
                cohen_kappa_score(a, b, labels=cats, weights=w), abs=1e-12
            )


def test_unused_category_is_kept_and_changes_weights() -> None:
    a = ["low", "low", "high", "high", "low"]
    b = ["low", "high", "high", "high", "low"]
    three = cohens_kappa(a, b, ["low", "partial", "high"], weights="linear")
    two = cohens_kappa(a, b, ["low", "high"], weights="linear")
    assert three.categories == ("low", "partial", "high")
    # Unweighted kappa does not depend on an empty category; weighted kappa does (the
    # empty middle category changes the rank distances), checked against scikit-learn.
    assert cohens_kappa(a, b, ["low", "partial", "high"]).value == pytest.approx(
        cohens_kappa(a, b, ["low", "high"]).value
    )
    assert three.value == pytest.approx(
        cohen_kappa_score(a, b, labels=["low", "partial", "high"], weights="linear")
    )
    assert two.value is not None


def test_missing_pairs_dropped_jointly_and_counted() -> None:
    a = ["low", None, "high", float("nan"), "low", "high", "low"]
    b = ["low", "high", None, "low", "low", "high", "high"]
    r = cohens_kappa(a, b, ["low", "high"])
    assert r.n == 4 and r.n_missing == 3 and r.n_dropped == 3
    assert r.status == "ok"
    assert "3 pairs dropped jointly (missing)" in r.notes
    full = cohens_kappa(
        ["low", "low", "high", "low"], ["low", "low", "high", "high"], ["low", "high"]
    )
    assert r.value == pytest.approx(full.value)


def test_accepts_numpy_and_pandas_inputs() -> None:
    a = np.array([1.0, 2.0, np.nan, 3.0, 1.0])
    b = pd.Series([1, 2, 2, 3, 2], dtype="Int64")
    b[1] = pd.NA
    r = cohens_kappa(a, b, [1, 2, 3])
    assert r.n == 3 and r.n_missing == 2
    s = cohens_kappa(pd.Series(["x", "y", "x"]), np.array(["x", "y", "y"]), ["x", "y"])
    assert s.n == 3
    c = cohens_kappa(
        pd.Series(["x", None, "y"], dtype="category"), ["x", "y", "y"], np.array(["x", "y"])
    )
    assert c.n == 2 and c.categories == ("x", "y") and type(c.categories[0]) is str


def test_single_rater_constant_is_zero_without_interval() -> None:
    r = cohens_kappa(["low"] * 5, ["low", "high", "low", "high", "low"], ["low", "high"])
    assert r.status == "single_rater_constant"
    assert r.value == 0.0
    assert r.se is None and r.ci_low is None and r.ci_high is None
    assert any("0 by construction" in note for note in r.notes)
    rw = cohens_kappa(["a", "b", "c"], ["b"] * 3, ["a", "b", "c"], weights="quadratic")
    assert rw.status == "single_rater_constant" and rw.value == 0.0


@pytest.mark.parametrize(
    ("a", "b"), [(["x"] * 4, ["x"] * 4), (["x"] * 4, ["y"] * 4)], ids=["same", "different"]
)
def test_both_raters_constant_has_no_value(a: list[str], b: list[str]) -> None:
    r = cohens_kappa(a, b, ["x", "y"])
    assert r.status == "both_raters_constant"
    assert r.value is None and r.se is None


def test_too_few_and_no_pairs() -> None:
    r = cohens_kappa(["x"], ["y"], ["x", "y"])
    assert r.status == "too_few_pairs" and r.value is None and r.n == 1
    r0 = cohens_kappa([None, "x"], ["y", None], ["x", "y"])
    assert r0.status == "no_pairs" and r0.value is None and r0.n == 0 and r0.n_missing == 2
    empty = cohens_kappa([], [], ["x", "y"])
    assert empty.status == "no_pairs" and empty.p_observed is None


def test_perfect_agreement_has_zero_se_and_a_note() -> None:
    r = cohens_kappa(["x", "y", "x"], ["x", "y", "x"], ["x", "y"])
    assert r.value == 1.0 and r.se == 0.0 and r.status == "ok"
    assert any("degenerate" in note for note in r.notes)


def test_never_returns_nan() -> None:
    cases = [(["x"] * 3, ["x"] * 3), ([], []), (["x"], ["y"]), (["x", "y"], ["y", "x"])]
    for a, b in cases:
        d = cohens_kappa(a, b, ["x", "y"]).to_dict()
        for v in d.values():
            assert not (isinstance(v, float) and math.isnan(v))


def test_bad_input_raises_value_error_naming_the_problem() -> None:
    with pytest.raises(ValueError, match="equal lengths"):
        cohens_kappa(["x", "y"], ["x"], ["x", "y"])
    with pytest.raises(ValueError, match=r"b\[2\] = 'maybe'"):
        cohens_kappa(["x", "y", "x"], ["x", "y", "maybe"], ["x", "y"])
    with pytest.raises(ValueError, match="unknown weights 'cubic'"):
        cohens_kappa(["x"], ["x"], ["x", "y"], weights="cubic")
    with pytest.raises(ValueError, match="at least 2"):
        cohens_kappa(["x"], ["x"], ["x"])
    with pytest.raises(ValueError, match="duplicate"):
        cohens_kappa(["x"], ["x"], ["x", "y", "x"])
    with pytest.raises(ValueError, match="sequence"):
        cohens_kappa("xy", "xy", ["x", "y"])


def test_kappa_max() -> None:
    # Paradox table B: marginals 0.90/0.10 and 0.85/0.15 → p_max 0.95, p_e 0.78.
    kmax = kappa_max_from_table(np.array([[80.0, 10.0], [5.0, 5.0]]))
    assert kmax == pytest.approx((0.95 - 0.78) / (1 - 0.78))
    assert kappa_max_from_table(np.zeros((2, 2))) is None


def test_to_dict_is_plain() -> None:
    d = cohens_kappa(["x", "y", "y"], ["x", "y", "x"], ["x", "y"]).to_dict()
    assert d["statistic"] == "cohens_kappa"
    assert d["categories"] == ["x", "y"]
    assert isinstance(d["value"], float) and isinstance(d["n"], int)
