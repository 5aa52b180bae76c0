"""Gwet's AC1/AC2 and Brennan–Prediger (PABAK): published values and a direct formula."""

from __future__ import annotations

import numpy as np
import pytest

from evalkit.agreement import brennan_prediger, gwet_ac1
from evalkit.agreement._inputs import agreement_weights

ABSTRACTORS = [[13, 0, 0], [0, 20, 7], [0, 4, 56]]
CATS = ["Ectopic", "AIU", "NIU"]


def expand(table: list[list[int]], cats: list[object]) -> tuple[list[object], list[object]]:
    a: list[object] = []
    b: list[object] = []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            a += [cats[i]] * count
            b += [cats[j]] * count
    return a, b


def direct_ac(table: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """AC1/AC2 and its variance written loop-by-loop from Gwet (2014) / irrCAC
    gwet.ac1.table (R/agree.coeff2.r), no finite-population correction."""
    q = table.shape[0]
    n = table.sum()
    p = table / n
    pi = [(p[k, :].sum() + p[:, k].sum()) / 2 for k in range(q)]
    tw = w.sum()
    pa = sum(w[k, l] * p[k, l] for k in range(q) for l in range(q))  # noqa: E741
    pe = tw * sum(pi[k] * (1 - pi[k]) for k in range(q)) / (q * (q - 1))
    ac = (pa - pe) / (1 - pe)
    s = 0.0
    for k in range(q):
        for l in range(q):  # noqa: E741
            s += (
                p[k, l]
                * (w[k, l] - 2 * (1 - ac) * tw * (1 - (pi[k] + pi[l]) / 2) / (q * (q - 1))) ** 2
            )
    var = (s - (pa - 2 * (1 - ac) * pe) ** 2) / (n * (1 - pe) ** 2)
    return ac, var


def test_irrcac_ac1_readme() -> None:
    a, b = expand(ABSTRACTORS, CATS)
    r = gwet_ac1(a, b, CATS)
    # irrCAC README: gwet.ac1.table(cont3x3abstractors) -> 0.8493305, se 0.04321747
    assert r.statistic == "gwet_ac1"
    assert round(r.value, 7) == 0.8493305
    assert round(r.se, 8) == 0.04321747
    assert r.p_observed == pytest.approx(0.89)  # pa2.table: Percent Agreement 0.89


def test_irrcac_ac2_quadratic_vignette() -> None:
    a, b = expand(ABSTRACTORS, CATS)
    r = gwet_ac1(a, b, CATS, weights="quadratic")
    # irrCAC weighting vignette: gwet.ac1.table(..., quadratic.weights(1:3)) ->
    # Gwet's AC2 0.9402369, se 0.01792019; pa2.table weighted: 0.9725
    assert r.statistic == "gwet_ac2"
    assert round(r.value, 7) == 0.9402369
    assert round(r.se, 8) == 0.01792019
    assert r.p_observed == pytest.approx(0.9725)


def test_irrcac_brennan_prediger() -> None:
    a, b = expand(ABSTRACTORS, CATS)
    r = brennan_prediger(a, b, CATS)
    # irrCAC README: bp2.table -> 0.835, se 0.04693346
    assert round(r.value, 3) == 0.835
    assert round(r.se, 8) == 0.04693346
    rq = brennan_prediger(a, b, CATS, weights="quadratic")
    # irrCAC weighting vignette: bp2.table quadratic -> 0.9175, se 0.02346673
    assert round(rq.value, 4) == 0.9175
    assert round(rq.se, 8) == 0.02346673


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_ac_matches_direct_formula(weights: str | None) -> None:
    rng = np.random.default_rng(3)
    cats = [0, 1, 2, 3]
    for _ in range(20):
        t = rng.integers(0, 12, size=(4, 4)) + np.diag(rng.integers(0, 25, size=4))
        a, b = expand(t.tolist(), cats)
        r = gwet_ac1(a, b, cats, weights=weights)
        ac, var = direct_ac(t.astype(float), agreement_weights(4, weights))
        assert r.value == pytest.approx(ac, abs=1e-12)
        assert r.se == pytest.approx(np.sqrt(max(var, 0.0)), abs=1e-12)


def test_pabak_and_byrt_indices_on_paradox_tables() -> None:
    # Byrt, Bishop & Carlin (1993): PABAK = 2 p_o - 1; Feinstein & Cicchetti (1990)
    # tables both have p_o = 0.85, so PABAK = 0.70 for both while kappa is 0.70 vs 0.32.
    for table in ([[40, 9], [6, 45]], [[80, 10], [5, 5]]):
        a, b = expand(table, ["yes", "no"])
        r = brennan_prediger(a, b, ["yes", "no"])
        assert r.value == pytest.approx(0.70)
        assert r.p_expected == 0.5


def test_ac1_stays_defined_with_constant_raters() -> None:
    r = gwet_ac1(["x"] * 10, ["x"] * 9 + ["y"], ["x", "y"])
    assert r.status == "ok" and r.value is not None
    assert any("single category" in note for note in r.notes)
    both = gwet_ac1(["x"] * 4, ["x"] * 4, ["x", "y"])
    assert both.value == pytest.approx(1.0)


def test_ac1_bp_edge_statuses_and_errors() -> None:
    assert gwet_ac1([], [], ["x", "y"]).status == "no_pairs"
    assert brennan_prediger(["x"], ["x"], ["x", "y"]).status == "too_few_pairs"
    r = brennan_prediger(["x", None, "y"], ["x", "y", "y"], ["x", "y"])
    assert r.n == 2 and r.n_missing == 1 and r.value == pytest.approx(1.0)
    with pytest.raises(ValueError, match="unknown weights"):
        gwet_ac1(["x"], ["x"], ["x", "y"], weights="squared")
    with pytest.raises(ValueError, match=r"a\[0\] = 'z'"):
        brennan_prediger(["z"], ["x"], ["x", "y"])
