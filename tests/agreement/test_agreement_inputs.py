"""Input checking of the agreement statistics: vectorised encoding, and what it now rejects."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

from evalkit.agreement import (
    cohens_kappa,
    diagnose,
    fleiss_kappa,
    krippendorff_alpha,
    multi_rater,
)
from evalkit.agreement._inputs import encode, is_missing

CATS = ["low", "partial", "high"]


def reference_codes(values: list[Any], cats: list[Any]) -> list[int]:
    """The per-element encoding the vectorised one replaced (dict lookup, -1 missing)."""
    index = {c: i for i, c in enumerate(cats)}
    return [-1 if is_missing(v) else index[v] for v in values]


@pytest.mark.parametrize(
    ("values", "cats"),
    [
        (["low", None, "high", float("nan"), "partial", pd.NA], CATS),
        ([1, 2.0, np.int64(3), np.float64(1.0), None, np.nan], [1, 2, 3]),
        ([("a", 1), ("b", 2), None, ("a", 1)], [("a", 1), ("b", 2)]),
        ([True, False, None, np.bool_(True)], [False, True]),
        (np.array([1.0, np.nan, 3.0]), [1, 2, 3]),
        (np.array(["x", "y", "x"]), ["x", "y"]),
        (pd.Series(["x", None, "y"], dtype="string"), ["x", "y"]),
        (pd.Series(pd.Categorical(["x", None, "y"])), ["x", "y"]),
    ],
)
def test_vectorised_encoding_matches_the_per_element_one(values: Any, cats: list[Any]) -> None:
    got = encode(values, tuple(cats), "a").tolist()
    assert got == reference_codes(list(values), cats)


def test_error_names_the_first_bad_position_in_a_long_input() -> None:
    a = ["low"] * 100_000
    b = ["low"] * 100_000
    b[76_543] = "unsure"
    b[99_000] = "other"
    with pytest.raises(ValueError, match=r"b\[76543\] = 'unsure' is not one of the categories"):
        cohens_kappa(a, b, CATS)
    arr = np.array(b)  # numpy strings: the message shows the plain value
    with pytest.raises(ValueError, match=r"b\[76543\] = 'unsure' is not"):
        cohens_kappa(np.array(a), arr, CATS)
    with pytest.raises(ValueError, match=r"a\[1\] = \[1\] is not one of the categories"):
        cohens_kappa(["low", [1]], ["low", "low"], CATS)


def test_large_input_gives_the_same_kappa_as_a_small_table() -> None:
    rng = np.random.default_rng(0)
    a = rng.choice(CATS, size=100_000)
    b = np.where(rng.random(100_000) < 0.7, a, rng.choice(CATS, size=100_000))
    r_arr = cohens_kappa(a, b, CATS)
    r_list = cohens_kappa(list(a), list(b), CATS)
    r_series = cohens_kappa(pd.Series(a), pd.Series(b, dtype="string"), CATS)
    assert r_arr.value == r_list.value == r_series.value and r_arr.n == 100_000


@pytest.mark.parametrize("unordered", [{"low", "high"}, frozenset({"low", "high"})])
def test_a_set_is_not_a_sequence_of_ratings(unordered: Any) -> None:
    with pytest.raises(ValueError, match="ordered sequence"):
        cohens_kappa(unordered, ["low", "high"], CATS)
    with pytest.raises(ValueError, match="ordered sequence"):
        diagnose(["low", "high"], unordered, CATS)
    with pytest.raises(ValueError, match="ordered row"):
        fleiss_kappa([unordered, unordered], CATS)
    with pytest.raises(ValueError, match="ordered row"):
        krippendorff_alpha([unordered, unordered], "nominal", CATS)
    with pytest.raises(ValueError, match="ordered sequence"):
        cohens_kappa({"x": "low", "y": "high"}, ["low", "high"], CATS)


def test_booleans_never_match_numbers() -> None:
    # True == 1 and hash(True) == hash(1): a dict lookup used to accept it silently
    with pytest.raises(ValueError, match=r"a\[2\] = True matches category 1 only because"):
        cohens_kappa([0, 1, True], [0, 1, 1], [0, 1])
    with pytest.raises(ValueError, match=r"b\[0\] = 1 matches category True"):
        cohens_kappa([True, False], [1, 0], [False, True])
    with pytest.raises(ValueError, match=r"b\[0\] = True matches category 1"):
        cohens_kappa(np.array([0, 1]), np.array([True, False]), [0, 1])
    with pytest.raises(ValueError, match=r"data\[0\]\[1\] = True"):
        fleiss_kappa([[1, True], [0, 0]], [0, 1])
    with pytest.raises(ValueError, match=r"data\[1\]\[0\] = np.True_|data\[1\]\[0\] = True"):
        krippendorff_alpha([[1, 0], [np.bool_(True), 0]], "nominal", [0, 1])
    with pytest.raises(ValueError, match="mix booleans and numbers"):
        cohens_kappa([True], [True], [True, 2])
    with pytest.raises(ValueError, match="mix booleans and numbers"):
        krippendorff_alpha([[True, 2], [True, 2]], "nominal")
    # booleans against boolean categories, and 1.0 against 1, are fine
    assert cohens_kappa([True, False], [True, True], [False, True]).n == 2
    assert cohens_kappa([1.0, 0.0], [1, 0], [0, 1]).value == 1.0


@pytest.mark.parametrize("level", ["interval", "ratio"])
def test_infinite_values_in_interval_and_ratio_alpha(level: str) -> None:
    with pytest.raises(ValueError, match=r"data\[1\]\[2\] = inf is not a finite float"):
        krippendorff_alpha([[1, 2, 3], [1, 2, math.inf]], level)
    with pytest.raises(ValueError, match=r"data\[0\]\[0\] = 100000000000…\(401 digits\)"):
        krippendorff_alpha([[10**400, 2], [1, 2]], level)
    with pytest.raises(ValueError, match=r"categories\[2\] = inf"):
        krippendorff_alpha([[1, 2], [1, 2]], level, categories=[1, 2, math.inf])
    with pytest.raises(ValueError, match="not a finite float"):
        krippendorff_alpha(np.array([[1.0, -np.inf], [1.0, 2.0]]), level)


def test_overflowing_values_in_interval_alpha() -> None:
    # (1e200)^2 overflows float64: alpha used to come out as a bare NaN with status "ok"
    with pytest.raises(ValueError, match="interval alpha overflows float64"):
        krippendorff_alpha([[1e200, 2.0, 3.0], [1.0, 2.0, 3.0]], "interval")
    with pytest.raises(ValueError, match="ratio alpha overflows float64"):
        krippendorff_alpha([[1e308, 1.7e308], [1.7e308, 1e308]], "ratio")
    # large but representable values stay fine, and ratio alpha of 1e200 is finite
    assert krippendorff_alpha([[1e150, 2.0, 3.0], [1e150, 2.0, 4.0]], "interval").status == "ok"
    assert krippendorff_alpha([[1e200, 2.0], [1.0, 2.0]], "ratio").status == "ok"


@pytest.mark.parametrize(
    "data", [[1, 2, 3], np.array([1, 2, 3]), ["low", "high"], (1, 2), pd.Series([1, 2])]
)
def test_one_dimensional_input_to_a_multi_rater_function(data: Any) -> None:
    cats = [1, 2, 3] if not isinstance(data, list) or data[0] != "low" else CATS
    for call in (
        lambda: fleiss_kappa(data, cats),
        lambda: krippendorff_alpha(data, "nominal", cats),
        lambda: multi_rater(data, cats),
    ):
        with pytest.raises(ValueError, match=r"2-dimensional|matrix"):
            call()


def test_other_bad_tables_raise_value_error() -> None:
    for data in (None, "abc", 5, {"a": 1}):
        with pytest.raises(ValueError):
            fleiss_kappa(data, CATS)
        with pytest.raises(ValueError):
            krippendorff_alpha(data, "nominal", CATS)
    with pytest.raises(ValueError, match="ordered row"):
        fleiss_kappa([["low", "high"], 3], CATS)
    with pytest.raises(ValueError, match="unhashable"):
        krippendorff_alpha([[1, [2]], [1, 2]], "nominal")
