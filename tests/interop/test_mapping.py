"""The mapping file: strict reading, and a value is binned only by a declared rule."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from evalkit.interop import ImportProblems, ScoreMapping, bin_for, load_mapping
from tests.interop.inspect_logs import MAPPING

BINS = ("low", "partial", "high")


@pytest.fixture
def mapping(tmp_path: Path) -> ScoreMapping:
    path = tmp_path / "m.yaml"
    path.write_text(MAPPING, encoding="utf-8")
    return load_mapping(path, BINS)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.0, "low"),
        (0.39, "low"),
        (0.4, "partial"),
        (0.7, "high"),
        (1, "high"),
        (1.0, "high"),
        (1.01, None),  # above max
        (-0.1, None),  # below the lowest threshold
        (math.nan, None),
        (math.inf, None),
        (True, None),  # a boolean is not a number here
        ("0.9", None),  # nor is a string
        (None, None),
        ([0.9], None),
    ],
)
def test_thresholds(mapping: ScoreMapping, value: object, expected: str | None) -> None:
    assert bin_for(mapping.dimensions["helpful"], value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [("C", "high"), ("P", "partial"), ("I", "low"), ("c", None), ("N", None), (1, None)],
)
def test_value_table(mapping: ScoreMapping, value: object, expected: str | None) -> None:
    assert bin_for(mapping.dimensions["correct"], value) == expected


def test_value_table_keys_match_their_own_kind(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    head = "dimensions:\n  d:\n    scorer: s\n    construct: c\n"
    head += "    anchors: {low: a, partial: b, high: c}\n"
    path.write_text(head + "    values: {1: high, 0: low}\n", encoding="utf-8")
    numbers = load_mapping(path, BINS).dimensions["d"]
    assert bin_for(numbers, 1) == "high"
    assert bin_for(numbers, 1.0) == "high"
    assert bin_for(numbers, True) is None  # a boolean never matches a number key
    assert bin_for(numbers, "1") is None
    path.write_text(head + "    values: {true: high, false: low}\n", encoding="utf-8")
    booleans = load_mapping(path, BINS).dimensions["d"]
    assert bin_for(booleans, True) == "high"
    assert bin_for(booleans, False) == "low"
    assert bin_for(booleans, 1) is None
    assert bin_for(booleans, 0) is None


def test_scorers_group_dimensions(mapping: ScoreMapping) -> None:
    assert mapping.scorers() == {"quality": ["helpful", "tone"], "model_graded_qa": ["correct"]}


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (
            (
                "thresholds: {low: 0.0, partial: 0.4, high: 0.7}",
                "thresholds: {low: 0.5, partial: 0.4, high: 0.7}",
            ),
            "thresholds",
        ),
        (
            (
                "thresholds: {low: 0.0, partial: 0.4, high: 0.7}",
                "thresholds: {low: 0.0, high: 0.7}",
            ),
            "thresholds",
        ),
        (
            (
                "thresholds: {low: 0.0, partial: 0.4, high: 0.7}",
                "thresholds: {low: '0', partial: 0.4, high: 0.7}",
            ),
            "thresholds.low",
        ),
        (
            ("values: {C: high, P: partial, I: low}", "values: {C: top, P: partial, I: low}"),
            "values.C",
        ),
        (("      partial: Neutral.\n", ""), "anchors"),
        (("    max: 1.0\n", "    max: 1.0\n    values: {a: low}\n"), None),
        (("    key: tone\n", "    key: tone\n    colour: red\n"), "colour"),
    ],
)
def test_bad_mapping_names_file_dimension_field(
    tmp_path: Path, edit: tuple[str, str], field: str | None
) -> None:
    old, new = edit
    assert old in MAPPING
    path = tmp_path / "bad.yaml"
    path.write_text(MAPPING.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(ImportProblems) as err:
        load_mapping(path, BINS)
    text = str(err.value)
    assert "bad.yaml" in text
    if field is not None:
        assert any(p.field is not None and p.field.endswith(field) for p in err.value.problems), (
            text
        )


def test_duplicate_key_and_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "dup.yaml"
    path.write_text(MAPPING.replace("    key: tone\n", "    key: tone\n    key: tone\n"))
    with pytest.raises(ImportProblems, match=r"dup\.yaml"):
        load_mapping(path, BINS)
    with pytest.raises(ImportProblems, match="no such mapping file"):
        load_mapping(tmp_path / "nope.yaml", BINS)
