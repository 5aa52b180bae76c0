"""Krippendorff's alpha: Krippendorff's (2011) worked example at four levels, and more."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalkit.agreement import krippendorff_alpha

N = None
# Krippendorff, K. (2011). Computing Krippendorff's Alpha-Reliability. 4 coders × 12 units
# with missing values (also in the `krippendorff` PyPI package tests and irrCAC's
# cac.raw4raters, transposed).
K2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
    [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
]

# Wikipedia "Krippendorff's alpha", computational example: 3 coders × 15 units.
nan = np.nan
WIKI = [
    [nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3],
    [1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan],
    [nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4],
]


@pytest.mark.parametrize(
    ("level", "expected"),
    # Krippendorff (2011): nominal 0.743, ordinal 0.815, interval 0.849, ratio 0.797
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_krippendorff_2011_example(level: str, expected: float) -> None:
    r = krippendorff_alpha(K2011, level)
    assert round(r.value, 3) == expected
    assert r.status == "ok"
    assert r.n_units == 12 and r.n_pairable_units == 11 and r.n_skipped_units == 1
    assert r.n_values == 40


def test_irrcac_five_decimals() -> None:
    # irrCAC README: krippen.alpha.raw(cac.raw4raters) -> 0.74342 (same data, units × raters)
    assert round(krippendorff_alpha(K2011, "nominal").value, 5) == 0.74342


def test_wikipedia_example() -> None:
    # Wikipedia / `krippendorff` package tests: nominal 0.691358, interval 0.810845
    assert round(krippendorff_alpha(WIKI, "nominal").value, 6) == 0.691358
    assert round(krippendorff_alpha(WIKI, "interval").value, 6) == 0.810845


def test_two_rater_table_matches_irrcac() -> None:
    # irrCAC: krippen2.table(cont3x3abstractors) -> 0.7972585 (README); with quadratic
    # weights 0.8926487 (weighting vignette), which is interval alpha on scores 1, 2, 3.
    table = [[13, 0, 0], [0, 20, 7], [0, 4, 56]]
    a: list[int] = []
    b: list[int] = []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            a += [i + 1] * count
            b += [j + 1] * count
    assert round(krippendorff_alpha([a, b], "nominal").value, 7) == 0.7972585
    assert round(krippendorff_alpha([a, b], "interval").value, 7) == 0.8926487


def test_ordinal_with_string_labels_uses_category_order() -> None:
    labels = {1: "very low", 2: "low", 3: "mid", 4: "high", 5: "very high"}
    data = [[labels[v] if v is not None else None for v in row] for row in K2011]
    order = ["very low", "low", "mid", "high", "very high"]
    r = krippendorff_alpha(data, "ordinal", categories=order)
    assert round(r.value, 3) == 0.815
    assert r.categories == tuple(order)
    # Alphabetical order would be wrong for ordinal data; categories= fixes the ranks.
    assert krippendorff_alpha(data, "ordinal").value != pytest.approx(r.value)


def test_unused_category_in_domain_does_not_change_alpha() -> None:
    base = krippendorff_alpha(K2011, "ordinal").value
    wider = krippendorff_alpha(K2011, "ordinal", categories=[1, 2, 3, 4, 5, 6]).value
    assert wider == pytest.approx(base)


def test_accepts_numpy_and_dataframe() -> None:
    arr = np.array([[np.nan if v is None else v for v in row] for row in K2011], dtype=float)
    assert krippendorff_alpha(arr, "interval").value == pytest.approx(0.849, abs=5e-4)
    frame = pd.DataFrame(K2011)
    assert krippendorff_alpha(frame, "nominal").value == pytest.approx(0.743, abs=5e-4)


def test_degenerate_inputs_have_a_status() -> None:
    r = krippendorff_alpha([[1, None, 2], [None, 3, None]], "nominal")
    assert r.status == "no_pairs" and r.value is None and r.n_skipped_units == 3
    same = krippendorff_alpha([["a", "a"], ["a", "a"]], "nominal", categories=["a", "b"])
    assert same.status == "no_variation" and same.value is None
    assert krippendorff_alpha([[None, None]], "nominal").status == "no_pairs"


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="unknown level 'cardinal'"):
        krippendorff_alpha(K2011, "cardinal")
    with pytest.raises(ValueError, match="same number of units"):
        krippendorff_alpha([[1, 2], [1]], "nominal")
    with pytest.raises(ValueError, match=r"data\[1\]\[0\] = 7"):
        krippendorff_alpha([[1, 2], [7, 2]], "nominal", categories=[1, 2])
    with pytest.raises(ValueError, match="numeric"):
        krippendorff_alpha(
            [["low", "high"], ["low", "low"]], "interval", categories=["low", "high"]
        )
    with pytest.raises(ValueError, match="sorted"):
        krippendorff_alpha([[1, "a"], [1, "a"]], "ordinal")
