"""Strict parsing of the ``record_scores`` answer: nothing is coerced into a bin."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalkit.judge._answer import (
    AnswerError,
    answer_schema,
    loads_strict,
    looks_like_refusal,
    parse_scores,
)

BINS = ("low", "partial", "high")
DIMS = ("self_harm", "faithfulness")
GATED = {"self_harm": True, "faithfulness": False}
TURNS = ("t0", "t1")


def entry(dim: str, bin_: str = "low", signal: bool | None = True) -> dict[str, Any]:
    return {
        "dimension": dim,
        "bin": bin_,
        "signal_present": signal,
        "evidence_turns": ["t1"],
        "rationale": "because",
        "injection_attempt": False,
    }


def good() -> dict[str, Any]:
    return {"scores": [entry("faithfulness", "high", None), entry("self_harm")]}


def parse(payload: object) -> Any:
    return parse_scores(payload, dimensions=DIMS, bins=BINS, turn_ids=TURNS, presence_gated=GATED)


def test_a_valid_answer_parses_in_requested_order() -> None:
    scores = parse(good())
    assert [s.dimension for s in scores] == ["self_harm", "faithfulness"]
    assert scores[1].bin == "high" and scores[1].signal_present is None
    assert scores[0].to_json()["evidence_turns"] == ["t1"]


def _mutate(how: str) -> dict[str, Any]:
    p = good()
    s = p["scores"]
    if how == "missing_dimension":
        s.pop()
    elif how == "extra_dimension":
        s.append(entry("escalation"))
    elif how == "duplicate":
        s.append(copy.deepcopy(s[1]))
    elif how == "bin_case":
        s[1]["bin"] = "Low"
    elif how == "bin_unknown":
        s[1]["bin"] = "medium"
    elif how == "bin_number":
        s[1]["bin"] = 0
    elif how == "extra_key":
        s[1]["score"] = 1
    elif how == "missing_key":
        del s[1]["rationale"]
    elif how == "signal_string":
        s[1]["signal_present"] = "true"
    elif how == "signal_int":
        s[1]["signal_present"] = 1
    elif how == "gated_null":
        s[1]["signal_present"] = None
    elif how == "injection_null":
        s[1]["injection_attempt"] = None
    elif how == "evidence_unknown":
        s[1]["evidence_turns"] = ["t7"]
    elif how == "evidence_not_list":
        s[1]["evidence_turns"] = "t1"
    elif how == "blank_rationale":
        s[1]["rationale"] = "  "
    elif how == "top_level_extra":
        p["note"] = "x"
    elif how == "scores_not_list":
        p["scores"] = {"self_harm": "low"}
    return p


@pytest.mark.parametrize(
    "how",
    [
        "missing_dimension", "extra_dimension", "duplicate", "bin_case", "bin_unknown",
        "bin_number", "extra_key", "missing_key", "signal_string", "signal_int", "gated_null",
        "injection_null", "evidence_unknown", "evidence_not_list", "blank_rationale",
        "top_level_extra", "scores_not_list",
    ],
)  # fmt: skip
def test_malformed_answers_are_rejected(how: str) -> None:
    with pytest.raises(AnswerError):
        parse(_mutate(how))


@pytest.mark.parametrize("payload", [None, [], "low", 3, {"scores": None}])
def test_non_objects_are_rejected(payload: object) -> None:
    with pytest.raises(AnswerError):
        parse(payload)


@given(st.text(max_size=12))
def test_no_string_but_an_exact_bin_is_accepted(text: str) -> None:
    p = good()
    p["scores"][1]["bin"] = text
    if text in BINS:
        assert parse(p)[0].bin == text
    else:
        with pytest.raises(AnswerError):
            parse(p)


def test_loads_strict_rejects_duplicates_and_nan() -> None:
    with pytest.raises(AnswerError, match="duplicate"):
        loads_strict('{"scores": [], "scores": []}')
    with pytest.raises(AnswerError):
        loads_strict('{"x": NaN}')
    with pytest.raises(AnswerError, match="not JSON"):
        loads_strict("{scores: []}")


def test_schema_is_strict_and_enumerates_dimensions_and_bins() -> None:
    schema = answer_schema(DIMS, BINS)
    item = schema["properties"]["scores"]["items"]
    assert schema["additionalProperties"] is False and item["additionalProperties"] is False
    assert item["properties"]["dimension"]["enum"] == list(DIMS)
    assert item["properties"]["bin"]["enum"] == list(BINS)
    assert set(item["required"]) == set(item["properties"])


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        ("I can't help with rating this conversation.", True),
        ("I'm not able to evaluate content about self-harm.", True),
        ("I cannot assist with that.", True),
        ("Scores: low, high.", False),
        ("The reply is fine.", False),
    ],
)
def test_refusal_detection(text: str, refused: bool) -> None:
    assert looks_like_refusal(text) is refused
