"""The shipped catalogue (v2, ADR-0010) measures the construct, not its writing.

The counts below are the ones issue "Catalogue v2" asks for; the audit test runs the
shortcut baselines of ADR-0011 on the shipped catalogue in every `make test`.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest

from evalkit.catalogue import (
    GATED_STRATA,
    IDEATION_STRATA,
    Catalogue,
    audit,
    labeler_agreement,
    load,
    near_duplicates,
)
from evalkit.routing import check_routing
from tests.factory import SHIPPED

LOCALES = ("en-US", "en-GB", "es-ES")
BINS = {"low", "partial", "high"}


@pytest.fixture(scope="module")
def cat() -> Catalogue:
    return load(SHIPPED)


@pytest.fixture(scope="module")
def frame(cat: Catalogue) -> pd.DataFrame:
    """Consensus labels joined to the cases."""
    return cat.labels_frame().merge(cat.cases_frame(), on="case_id")


def _absent(case_stratum: str) -> bool:
    return case_stratum in ("benign", "medical_emergency")


def _over_recognition(cat: Catalogue, split: str) -> pd.Series:
    """Per locale: signal-absent cases whose reply offers the locale's crisis line anyway."""
    rows = [
        c.locale
        for c in cat.split(split)
        if _absent(c.stratum)
        and check_routing(c.turns[-1].text, c.locale, cat.resources).crisis_line
    ]
    return pd.Series(rows, dtype=object).value_counts()


def test_sizes_per_locale(cat: Catalogue) -> None:
    cases = cat.cases_frame()
    for locale in LOCALES:
        mine = cases[cases["locale"] == locale]
        assert (mine["split"] == "calibration").sum() >= 96, locale
        assert (mine["split"] == "heldout").sum() >= 30, locale


def test_every_bin_populated_per_locale_and_gated_dimension(frame: pd.DataFrame) -> None:
    gated = frame[frame["stratum"].isin(GATED_STRATA)]
    for dim in ("self_harm", "escalation", "faithfulness"):
        for locale in LOCALES:
            got = set(gated[(gated["dimension"] == dim) & (gated["locale"] == locale)]["bin"])
            assert got == BINS, (dim, locale, got)


def test_partial_is_a_fifth_of_ideation_rows(frame: pd.DataFrame) -> None:
    ideation = frame[frame["stratum"].isin(IDEATION_STRATA) & (frame["dimension"] == "self_harm")]
    for locale, grp in ideation.groupby("locale"):
        share = (grp["bin"] == "partial").mean()
        assert share >= 0.20, (locale, share)


def test_over_recognition_rows(cat: Catalogue, frame: pd.DataFrame) -> None:
    """Signal absent, reply routes anyway: the rows where rubric v1 and v3 must disagree."""
    cal = _over_recognition(cat, "calibration")
    held = _over_recognition(cat, "heldout")
    for locale in LOCALES:
        assert cal.get(locale, 0) >= 20, (locale, "calibration")
        assert held.get(locale, 0) >= 8, (locale, "heldout")
    gated = frame[frame["stratum"].isin(GATED_STRATA) & (frame["dimension"] == "self_harm")]
    # v2 had 20%; the realism review of v3 cut the rows whose crisis line came from nowhere
    # and their replacements (ambiguous triggers) brought the share back to 19% (ADR-0028)
    assert cal.sum() / len(gated) >= 0.18


def test_signal_absent_cases_are_low_on_self_harm(frame: pd.DataFrame) -> None:
    absent = frame[frame["stratum"].map(_absent) & (frame["dimension"] == "self_harm")]
    share_low = (absent["bin"] == "low").mean()
    assert share_low >= 0.97, share_low  # the consensus may overrule an author, rarely


def test_a_quarter_of_ideation_continues_after_the_onset(cat: Catalogue) -> None:
    """v2 had a third; v3's new handling cases are mostly single replies, so the share is
    29 to 37% per locale (ADR-0028): at least a quarter continues after the onset."""
    for split in ("calibration", "heldout"):
        for locale in LOCALES:
            ideation = [
                c for c in cat.split(split) if c.locale == locale and c.stratum in IDEATION_STRATA
            ]
            later = [
                c
                for c in ideation
                if c.onset_turn is not None
                and sum(1 for t in c.turns[c.onset_turn :] if t.role == "assistant") >= 2
            ]
            assert len(later) * 4 >= len(ideation), (split, locale, len(later), len(ideation))


_MARKDOWN = re.compile(r"(?m)^\s*(?:[-*•]|\d+[.)]|#+)\s|\*\*")
_EMOJI = re.compile("[\U0001f300-\U0001faff\u2600-\u27bf]")


def test_one_writing_style_across_strata(cat: Catalogue) -> None:
    """No markdown, emoji or dashes anywhere; reply length does not follow the stratum."""
    lengths: dict[str, list[int]] = {}
    for case in cat.cases:
        for turn in case.turns:
            assert not _MARKDOWN.search(turn.text), case.id
            assert not _EMOJI.search(turn.text), case.id
            assert "\u2014" not in turn.text and "\u2013" not in turn.text, case.id
        if case.stratum in GATED_STRATA:
            lengths.setdefault(case.stratum, []).append(len(case.turns[-1].text.split()))
    medians = {s: pd.Series(v).median() for s, v in lengths.items()}
    assert max(medians.values()) <= 1.3 * min(medians.values()), medians


def test_case_files_carry_no_design(cat: Catalogue) -> None:
    """Design lives in design/, apart, for calibration only; one case file per split and
    locale. No design row is keyed by a held-out id: the blind sheet's ids must not lead
    a held-out labeler to the intended answers (ADR-0010)."""
    for path in (SHIPPED / "cases").rglob("*.yaml"):
        text = path.read_text(encoding="utf-8")
        assert "reply_design" not in text and "intended_" not in text, path
    files = sorted(p.relative_to(SHIPPED).as_posix() for p in (SHIPPED / "cases").rglob("*.yaml"))
    assert len(files) == 6, files
    designed = {d.case_id for d in cat.design}
    assert designed == {c.id for c in cat.split("calibration")}  # none keyed by held-out ids


def test_every_calibration_case_has_two_blind_labels_and_a_consensus(cat: Catalogue) -> None:
    long = cat.label_sets_frame()
    for case in cat.split("calibration"):
        for dim in cat.constants.gated_dimensions:
            if dim == "faithfulness" and not case.has_sources:
                continue
            got = long[(long["case_id"] == case.id) & (long["dimension"] == dim)]
            assert len(got) >= 2, (case.id, dim)
    assert len(cat.labels) == long.groupby(["case_id", "dimension"]).ngroups
    for name, labels in cat.label_sets.items():
        for lab in labels:
            assert "model-assisted" in lab.labeler and "clinician" in lab.labeler, name


def test_labeler_agreement_is_reported_per_dimension(cat: Catalogue) -> None:
    table = labeler_agreement(cat)
    assert set(table["dimension"]) == set(cat.constants.gated_dimensions)
    ok = table["status"] == "ok"
    assert table.loc[ok, "kappa"].notna().all()
    assert (table.loc[~ok, "kappa"].isna()).all()  # a status, never a fake number


def test_no_shortcut_reaches_the_audit_ceiling(cat: Catalogue) -> None:
    """ADR-0011: reply-only, user-only and surface shortcuts stay under the frozen ceiling."""
    result = audit(cat)
    assert set(result.table["dimension"]) == set(cat.constants.gated_dimensions)
    failures = result.failures[["dimension", "shortcut", "kappa"]].to_dict("records")
    assert result.passed, failures


def test_heldout_is_disjoint_and_blind(cat: Catalogue) -> None:
    heldout, cal = cat.split("heldout"), cat.split("calibration")
    assert not {c.id for c in heldout} & {c.id for c in cal}
    assert not {c.template_family for c in heldout} & {c.template_family for c in cal}
    assert near_duplicates(cat.cases) == []
    for case in cat.cases:
        assert re.fullmatch(r"[ch][0-9a-f]{7}", case.id), case.id  # ids carry no stratum


def test_only_minimal_pairs_share_a_final_user_turn(cat: Catalogue) -> None:
    """Two cases share their final user turn only when declared minimal pairs link them
    (a pair that differs in the reply, or in an earlier turn; ADR-0028)."""
    linked = {frozenset((p.case_a, p.case_b)) for p in cat.pairs}
    by_text: dict[str, list[str]] = {}
    for c in cat.cases:
        by_text.setdefault(" ".join(c.turns[c.latest_user_turn].text.lower().split()), []).append(
            c.id
        )
    groups = [ids for ids in by_text.values() if len(ids) > 1]
    members = {i for p in linked for i in p}
    for ids in groups:
        assert set(ids) <= members, ids


def test_locale_numbers_only(cat: Catalogue) -> None:
    """Every phone-like number in a reply is one of the resources table's numbers."""
    known = {
        n.replace(" ", "")
        for r in cat.resources.values()
        for n in (*r.crisis_numbers, *r.urgent_numbers, r.emergency_number)
    }
    for case in cat.cases:
        for turn in case.turns:
            if turn.role != "assistant":
                continue
            for digits in re.findall(r"\b\d{3}(?: ?\d{3})?\b", turn.text):
                compact = digits.replace(" ", "")
                if len(compact) == 6:
                    assert compact in known, (case.id, digits)


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
