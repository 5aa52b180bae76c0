"""The judge's error structure (evalkit.gate._departures) on frames whose answer is known."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from evalkit.catalogue import load
from evalkit.errors import GateInputError
from evalkit.gate import departure_direction, departures_by, length_bias, reply_lengths
from evalkit.gate._departures import newcombe_difference, sign_test

BINS = ["low", "partial", "high"]


def frame(rows: list[tuple[str, str | None, str | None]], **extra: list[object]) -> pd.DataFrame:
    """Pairs of one dimension: (case_id, judge, human) plus any metadata columns."""
    out = pd.DataFrame(rows, columns=["case_id", "judge", "human"]).assign(dimension="self_harm")
    return out.assign(**extra)


def test_direction_counts_over_and_under_on_the_ordinal_scale() -> None:
    rows = [
        ("a", "high", "low"),  # over by two bins
        ("b", "partial", "low"),  # over
        ("c", "high", "partial"),  # over
        ("d", "low", "high"),  # under
        ("e", "partial", "partial"),  # agree
        ("f", "low", "low"),  # agree
        ("g", None, "low"),  # failed judge answer: missing
        ("h", "high", None),  # unlabelled: missing
        ("i", "maybe", "low"),  # not a bin: missing
    ]
    out = departure_direction(frame(rows), BINS).iloc[0]
    assert (out["n"], out["n_missing"], out["agree"]) == (6, 3, 2)
    assert (out["departures"], out["over"], out["under"]) == (4, 3, 1)
    assert out["over_share"] == pytest.approx(0.75)
    # exact two-sided sign test, 3 of 4: 2 * (1 + 4) / 16
    assert out["sign_p"] == pytest.approx(10 / 16)
    assert out["ci_low"] < 0.75 < out["ci_high"]


def test_direction_of_a_judge_that_always_scores_higher_is_significant() -> None:
    rows = [(f"c{i}", "high", "low") for i in range(10)] + [("z", "low", "low")]
    out = departure_direction(frame(rows), BINS).iloc[0]
    assert (out["over"], out["under"]) == (10, 0)
    assert out["sign_p"] == pytest.approx(2 / 1024)
    # Wilson interval of 10/10 at 95%: [n / (n + z²), 1]
    assert out["ci_low"] == pytest.approx(10 / (10 + 1.959964**2), abs=1e-5)
    assert out["ci_high"] == pytest.approx(1.0)


def test_direction_without_departures_is_nan_not_zero() -> None:
    out = departure_direction(frame([("a", "low", "low"), ("b", "high", "high")]), BINS).iloc[0]
    assert out["departures"] == 0
    assert math.isnan(out["over_share"]) and math.isnan(out["sign_p"])


def test_sign_test_and_newcombe_pin_published_values() -> None:
    assert sign_test(8, 2) == pytest.approx(112 / 1024)
    assert math.isnan(sign_test(0, 0))
    # Newcombe (1998), Statistics in Medicine 17:873-890, table II, method 10:
    # (a) 56/70 - 48/80 = 0.2000, 0.0524 to 0.3339; (b) 9/10 - 3/10 = 0.6, 0.1705 to 0.8090.
    d, low, high = newcombe_difference(48, 80, 56, 70)
    assert (d, low, high) == pytest.approx((0.2, 0.0524, 0.3339), abs=5e-5)
    d, low, high = newcombe_difference(3, 10, 9, 10)
    assert (d, low, high) == pytest.approx((0.6, 0.1705, 0.8090), abs=5e-5)
    assert all(math.isnan(v) for v in newcombe_difference(0, 0, 3, 10))


def test_cells_by_locale_carry_n_rate_direction_and_descriptive_flag() -> None:
    rows = [(f"g{i}", "high" if i < 3 else "low", "low") for i in range(40)]  # en-GB: 3 over
    rows += [(f"u{i}", "low", "partial" if i < 2 else "low") for i in range(5)]  # en-US: 2 under
    locales = ["en-GB"] * 40 + ["en-US"] * 5
    out = departures_by(frame(rows, locale=locales), BINS, "locale", min_n=30)
    gb, us = out.iloc[0], out.iloc[1]
    assert (gb["locale"], gb["n"], gb["departures"], gb["over"], gb["under"]) == (
        "en-GB",
        40,
        3,
        3,
        0,
    )
    assert gb["departure_rate"] == pytest.approx(3 / 40) and not gb["descriptive"]
    assert (us["locale"], us["n"], us["over"], us["under"]) == ("en-US", 5, 0, 2)
    assert us["departure_rate"] == pytest.approx(0.4) and us["descriptive"]
    assert us["ci_low"] < 0.4 < us["ci_high"]


def test_cells_group_a_missing_value_and_refuse_an_unknown_column() -> None:
    pairs = frame([("a", "low", "low"), ("b", "high", "low")], stratum=["benign", None])
    out = departures_by(pairs, BINS, "stratum", min_n=1)
    assert list(out["stratum"]) == ["None", "benign"]
    with pytest.raises(GateInputError, match="locale"):
        departures_by(pairs, BINS, "locale", min_n=1)


def test_length_bias_finds_departures_only_on_long_replies() -> None:
    # Ten short replies (length 100) all agree; ten long ones (length 900) all depart,
    # eight over-scored and two under-scored.
    rows = [(f"s{i}", "low", "low") for i in range(10)]
    rows += [(f"l{i}", "high" if i < 8 else "low", "low" if i < 8 else "high") for i in range(10)]
    lengths = {f"s{i}": 100 for i in range(10)} | {f"l{i}": 900 for i in range(10)}
    out = length_bias(frame(rows), BINS, lengths).set_index("measure")
    rate = out.loc["departure_rate"]
    assert rate["median_length"] == pytest.approx(500)
    assert (rate["n_short"], rate["n_long"], rate["short"], rate["long"]) == (10, 10, 0.0, 1.0)
    assert rate["difference"] == pytest.approx(1.0)
    assert rate["ci_low"] > 0  # a length effect at 95%
    share = out.loc["over_share"]
    assert (share["n_short"], share["n_long"], share["long"]) == (0, 10, 0.8)
    assert math.isnan(share["short"]) and math.isnan(share["difference"])


def test_length_bias_without_an_effect_has_an_interval_around_zero() -> None:
    rows, lengths = [], {}
    for i in range(40):  # one departure in every four pairs, short and long alike
        rows.append((f"c{i}", "high" if i % 4 == 0 else "low", "low"))
        lengths[f"c{i}"] = 100 if i < 20 else 900
    rate = length_bias(frame(rows), BINS, pd.Series(lengths)).iloc[0]
    assert rate["measure"] == "departure_rate"
    assert rate["short"] == rate["long"] == pytest.approx(0.25)
    assert rate["ci_low"] < 0 < rate["ci_high"]


def test_length_bias_counts_cases_without_a_length_as_missing() -> None:
    rows = [("a", "low", "low"), ("b", "high", "low"), ("c", "low", "low")]
    out = length_bias(frame(rows), BINS, {"a": 10, "b": 20}).iloc[0]
    assert out["n_missing"] == 1 and out["n_short"] + out["n_long"] == 2


def test_equal_lengths_leave_the_long_half_empty() -> None:
    rows = [("a", "low", "low"), ("b", "high", "low")]
    out = length_bias(frame(rows), BINS, {"a": 10, "b": 10}).iloc[0]
    assert (out["n_short"], out["n_long"]) == (2, 0)
    assert math.isnan(out["long"]) and math.isnan(out["difference"])


def test_bad_inputs_are_named_errors() -> None:
    with pytest.raises(GateInputError, match="human"):
        departure_direction(pd.DataFrame({"dimension": ["x"], "judge": ["low"]}), BINS)
    with pytest.raises(GateInputError, match="level"):
        departure_direction(frame([("a", "low", "low")]), BINS, level=1.5)
    with pytest.raises(GateInputError, match="case_id"):
        length_bias(frame([("a", "low", "low")]).drop(columns="case_id"), BINS, {})


def test_reply_lengths_are_the_scored_replies(mini_catalogue: Path) -> None:
    cat = load(mini_catalogue)
    lengths = reply_lengths(cat)
    assert len(lengths) == len(cat.cases) == 4
    for case in cat.cases:
        assert lengths[case.id] == len(case.turns[-1].text)
