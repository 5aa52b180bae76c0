"""The shipped catalogue meets the balance the studies need (issue: synthetic catalogue)."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from evalkit.catalogue import Catalogue, load, near_duplicates
from tests.factory import SHIPPED

LOCALES = ("en-US", "en-GB", "es-ES")
CALIBRATION_MINIMUM = {
    "benign": 16,
    "medical_emergency": 24,
    "masked_ideation": 24,
    "explicit_ideation": 24,
    "diagnostic": 4,
    "injection_canary": 4,
}


@pytest.fixture(scope="module")
def cat() -> Catalogue:
    return load(SHIPPED)


@pytest.fixture(scope="module")
def frame(cat: Catalogue) -> pd.DataFrame:
    labels = cat.labels_frame().merge(cat.cases_frame(), on="case_id")
    return labels


def test_calibration_counts_per_locale_and_stratum(cat: Catalogue) -> None:
    cases = cat.cases_frame()
    cal = cases[cases["split"] == "calibration"]
    counts = cal.groupby(["locale", "stratum"]).size()
    for locale in LOCALES:
        for stratum, minimum in CALIBRATION_MINIMUM.items():
            assert counts.get((locale, stratum), 0) >= minimum, (locale, stratum)
        assert counts[locale].sum() >= 96


def test_every_bin_populated_per_dimension_and_locale(frame: pd.DataFrame) -> None:
    for (dim, locale), grp in frame.groupby(["dimension", "locale"]):
        assert set(grp["bin"]) == {"low", "partial", "high"}, (dim, locale)


def test_ideation_replies_span_handled_partial_missed(frame: pd.DataFrame) -> None:
    ideation = frame[
        frame["stratum"].isin(["masked_ideation", "explicit_ideation"])
        & (frame["dimension"] == "self_harm")
    ]
    for locale, grp in ideation.groupby("locale"):
        counts = grp["bin"].value_counts()
        assert counts["high"] >= 12 and counts["partial"] >= 12 and counts["low"] >= 18, locale


def test_absent_strata_are_low_on_self_harm(frame: pd.DataFrame) -> None:
    absent = frame[
        frame["stratum"].isin(["benign", "medical_emergency", "diagnostic", "injection_canary"])
        & (frame["dimension"] == "self_harm")
    ]
    assert set(absent["bin"]) == {"low"}


def test_canaries_are_low_and_address_an_evaluator(cat: Catalogue, frame: pd.DataFrame) -> None:
    canaries = frame[frame["stratum"] == "injection_canary"]
    assert set(canaries[canaries["dimension"] != "faithfulness"]["bin"]) == {"low"}
    pattern = re.compile(
        r"grader|evaluat|assessor|review|marking|marks|rate|nota|puntú|puntuación|califi|score",
        re.I,
    )
    for case in cat.cases:
        if case.stratum == "injection_canary":
            assert any(pattern.search(t.text) for t in case.turns), case.id


def test_sources_and_faithfulness(cat: Catalogue) -> None:
    assert sum(c.has_sources for c in cat.split("calibration")) >= 150


def test_conversations_and_onsets(cat: Catalogue) -> None:
    lengths = [len(c.turns) for c in cat.cases]
    assert min(lengths) >= 2 and max(lengths) <= 12
    early = [
        c
        for c in cat.split("calibration")
        if c.onset_turn is not None and c.onset_turn < c.latest_user_turn
    ]
    assert len(early) >= 30  # onsets before the last user turn, for the onset study


def test_locale_routing_numbers_are_the_locales_own(cat: Catalogue) -> None:
    """Handled ideation replies name their own locale's crisis line."""
    for case in cat.split("calibration"):
        if case.reply_design == "handled":
            reply = case.turns[-1].text
            numbers = cat.resources[case.locale].crisis_numbers
            assert any(n in reply for n in numbers), case.id


def test_template_families_recorded(cat: Catalogue) -> None:
    families = pd.Series([c.template_family for c in cat.cases]).value_counts()
    assert (families > 1).sum() >= 18  # variants of one template share a family


def test_heldout_is_disjoint_and_balanced(cat: Catalogue) -> None:
    heldout = cat.split("heldout")
    if not heldout:
        pytest.skip("no held-out cases in this checkout")
    cal = cat.split("calibration")
    assert not {c.id for c in heldout} & {c.id for c in cal}
    assert not {c.template_family for c in heldout} & {c.template_family for c in cal}
    assert near_duplicates(cat.cases) == []
    frame = pd.DataFrame([(c.locale, c.stratum) for c in heldout], columns=["locale", "stratum"])
    for locale in LOCALES:
        sub = frame[frame["locale"] == locale]["stratum"].value_counts()
        absent = sub.get("benign", 0) + sub.get("medical_emergency", 0)
        assert absent >= 10 and sub.get("masked_ideation", 0) >= 10, locale
        assert sub.get("explicit_ideation", 0) >= 10, locale
    assert all(c.reply_design is None for c in heldout)  # no intended answers


def test_no_two_cases_share_a_final_user_turn(cat: Catalogue) -> None:
    finals = [" ".join(c.turns[c.latest_user_turn].text.lower().split()) for c in cat.cases]
    assert len(finals) == len(set(finals))


def test_shipped_blind_template_is_current_and_blank(cat: Catalogue) -> None:
    from evalkit.heldout import template_csv

    path = SHIPPED / "heldout" / "template.csv"
    assert path.read_bytes().decode("utf-8-sig") == template_csv(cat), (
        "regenerate with `evalkit heldout template`"
    )
    frame = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    for dim in ("self_harm", "escalation", "faithfulness", "labeler"):
        assert set(frame[dim]) <= {"", "n/a"}, dim
    assert not (SHIPPED / "heldout" / "seals.json").exists()
