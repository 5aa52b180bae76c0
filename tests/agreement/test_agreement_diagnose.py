"""diagnose(): the paradox tables, indices, tests, flags and JSON output."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from evalkit.agreement import Diagnosis, diagnose


def expand(table: list[list[int]], cats: list[object]) -> tuple[list[object], list[object]]:
    a: list[object] = []
    b: list[object] = []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            a += [cats[i]] * count
            b += [cats[j]] * count
    return a, b


def test_kappa_paradox_table_b() -> None:
    # Feinstein & Cicchetti (1990) table B; indices of Byrt, Bishop & Carlin (1993),
    # derived by hand: PI = |80 - 5| / 100 = 0.75, BI = |10 - 5| / 100 = 0.05.
    a, b = expand([[80, 10], [5, 5]], ["yes", "no"])
    d = diagnose(a, b, ["yes", "no"])
    assert isinstance(d, Diagnosis)
    assert d.p_observed == pytest.approx(0.85) and d.p_expected == pytest.approx(0.78)
    assert round(d.kappa.value, 2) == 0.32
    assert d.kappa_max == pytest.approx((0.95 - 0.78) / 0.22)
    assert d.kappa_over_kappa_max == pytest.approx(d.kappa.value / d.kappa_max)
    assert d.brennan_prediger.value == pytest.approx(0.70)  # PABAK
    assert d.prevalence_index == pytest.approx(0.75)
    assert d.bias_index == pytest.approx(0.05)
    assert d.judge_counts == {"yes": 90, "no": 10}
    assert d.human_counts == {"yes": 85, "no": 15}
    assert d.human_proportions == {"yes": 0.85, "no": 0.15}
    assert d.specific_agreement["yes"] == pytest.approx(160 / 175)
    assert d.specific_agreement["no"] == pytest.approx(10 / 25)
    # Stuart–Maxwell on a 2 × 2 table is McNemar without correction: (10-5)^2/(10+5).
    assert d.marginal_homogeneity.statistic == pytest.approx(25 / 15)
    assert d.marginal_homogeneity.df == 1 and d.marginal_homogeneity.status == "ok"
    assert d.symmetry.statistic == pytest.approx(25 / 15)
    assert d.flags == {
        "single_class_collapse": False,
        "all_high": False,
        "all_low": False,
        "gate_unreachable": False,
    }
    assert d.krippendorff_alpha.value is not None and d.gwet_ac1.value > d.kappa.value


def test_paradox_table_a_indices() -> None:
    a, b = expand([[40, 9], [6, 45]], ["yes", "no"])
    d = diagnose(a, b, ["yes", "no"])
    assert d.prevalence_index == pytest.approx(0.05)
    assert d.bias_index == pytest.approx(0.03)
    assert d.prevalence_index_by_category == pytest.approx({"yes": 0.05, "no": 0.05})


def test_three_categories_confusion_and_per_category_indices() -> None:
    cats = ["low", "partial", "high"]
    a, b = expand([[30, 5, 0], [4, 10, 0], [1, 0, 0]], cats)
    d = diagnose(a, b, cats, threshold=0.8)
    assert d.prevalence_index is None and d.bias_index is None
    assert set(d.bias_index_by_category) == set(cats)
    assert d.bias_index_by_category["high"] == pytest.approx(1 / 50)
    assert d.specific_agreement["high"] == 0.0
    assert isinstance(d.confusion, pd.DataFrame)
    assert list(d.confusion.index) == cats and list(d.confusion.columns) == cats
    assert d.confusion.index.name == "judge" and d.confusion.columns.name == "human"
    assert d.confusion.loc["partial", "low"] == 4 and d.confusion.to_numpy().sum() == 50
    assert d.marginal_homogeneity.categories_used == ("low", "partial", "high")


def test_unused_category_is_dropped_from_the_homogeneity_test_only() -> None:
    cats = ["low", "partial", "high"]
    d = diagnose(["low", "high", "low", "high"], ["low", "high", "high", "high"], cats)
    assert d.confusion.shape == (3, 3)
    assert d.specific_agreement["partial"] is None
    assert d.marginal_homogeneity.categories_used == ("low", "high")


def test_flags_collapse_all_high_all_low_gate() -> None:
    cats = ["low", "partial", "high"]
    d = diagnose(["high"] * 6, ["high", "high", "low", "partial", "high", "high"], cats)
    assert d.status == "single_rater_constant"
    assert d.flags["single_class_collapse"] and d.flags["all_high"]
    assert not d.flags["all_low"]
    assert d.flags["gate_unreachable"] and d.kappa_max == pytest.approx(0.0)
    assert d.kappa_over_kappa_max is None
    assert d.active_flags == ("single_class_collapse", "all_high", "gate_unreachable")
    low = diagnose(["low", "partial", "low"], ["low"] * 3, cats)
    assert low.flags["all_low"] and low.flags["single_class_collapse"]


def test_gate_unreachable_from_marginals() -> None:
    # Judge says "yes" 90%, human 60%: kappa_max = (0.70 - 0.58) / 0.42 ≈ 0.286 < 0.6.
    a = ["yes"] * 90 + ["no"] * 10
    b = ["yes"] * 60 + ["no"] * 40
    d = diagnose(a, b, ["yes", "no"], threshold=0.6)
    assert d.kappa_max == pytest.approx(0.12 / 0.42)
    assert d.flags["gate_unreachable"]
    assert not diagnose(a, b, ["yes", "no"], threshold=0.25).flags["gate_unreachable"]


def test_perfect_agreement_homogeneity_is_singular_not_a_crash() -> None:
    d = diagnose(["x", "y", "z", "x"], ["x", "y", "z", "x"], ["x", "y", "z"])
    assert d.kappa.value == 1.0
    assert d.marginal_homogeneity.status == "singular"
    assert d.marginal_homogeneity.statistic is None


def test_empty_and_missing_inputs() -> None:
    d = diagnose([None, "x"], ["y", None], ["x", "y"])
    assert d.n == 0 and d.n_missing == 2 and d.status == "no_pairs"
    assert d.kappa_max is None and d.flags["gate_unreachable"]
    assert d.marginal_homogeneity.status == "not_applicable"
    json.dumps(d.to_dict())


def test_to_dict_is_json_serialisable_with_numpy_inputs() -> None:
    a = np.array([1, 2, 3, 1, 2, 3, 1, 1], dtype=np.int64)
    b = np.array([1, 2, 2, 1, 3, 3, 1, np.nan], dtype=object)
    d = diagnose(a, b, [1, 2, 3])
    out = d.to_dict()
    text = json.dumps(out, allow_nan=False)
    back = json.loads(text)
    assert back["n"] == 7 and back["n_missing"] == 1
    assert back["confusion"]["index"] == [1, 2, 3]
    assert back["confusion"]["data"][0][0] == 3
    assert back["kappa"]["statistic"] == "cohens_kappa"
    assert back["flags"]["gate_unreachable"] in (True, False)


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="equal lengths"):
        diagnose(["x"], [], ["x", "y"])
    with pytest.raises(ValueError, match="threshold"):
        diagnose(["x"], ["x"], ["x", "y"], threshold=float("nan"))
