"""Several label sets, their consensus (ADR-0012), and author design kept apart."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from evalkit.catalogue import ConsensusRule, Label, build_consensus, labeler_agreement, load
from evalkit.catalogue._consensus import labeler_identity
from evalkit.cli import main
from evalkit.errors import CatalogueError

BINS = ("low", "partial", "high")


def _lab(case: str, bin_: str, who: str, dim: str = "self_harm") -> Label:
    return Label(case_id=case, dimension=dim, bin=bin_, labeler=who)


def _write(root: Path, name: str, rows: list[tuple[str, str, str, str]]) -> None:
    with (root / "labels" / f"{name}.csv").open("w", newline="", encoding="utf-8") as h:
        w = csv.writer(h)
        w.writerow(["case_id", "dimension", "bin", "labeler", "note"])
        for case_id, dim, bin_, who in rows:
            w.writerow([case_id, dim, bin_, who, ""])


def test_majority_and_tie_to_the_lower_bin() -> None:
    sets = {
        "a": [_lab("x", "high", "a"), _lab("y", "high", "a"), _lab("z", "partial", "a")],
        "b": [_lab("x", "high", "b"), _lab("y", "low", "b"), _lab("z", "high", "b")],
        "c": [_lab("y", "low", "c")],  # the adjudicator saw only a disagreement
    }
    got = {lab.case_id: lab for lab in build_consensus(sets, BINS, ConsensusRule())}
    assert got["x"].bin == "high" and got["x"].note == "agree: a, b"
    assert got["y"].bin == "low" and got["y"].note.startswith("majority 2/3")
    assert got["z"].bin == "partial" and "lower bin" in got["z"].note  # tie partial/high
    assert all(lab.labeler == "consensus" for lab in got.values())


def test_adjudicator_rules() -> None:
    sets = {
        "a": [_lab("x", "high", "a")],
        "b": [_lab("x", "low", "b")],
        "judge-c": [_lab("x", "partial", "c")],
    }
    tie = ConsensusRule(on_tie="adjudicator", adjudicator="judge-c")
    assert build_consensus(sets, BINS, tie)[0].bin == "partial"
    lower = ConsensusRule(rule="lower")
    assert build_consensus(sets, BINS, lower)[0].bin == "low"
    with pytest.raises(ValueError, match="adjudicator"):
        ConsensusRule(rule="adjudicator")


def test_a_single_set_is_its_own_consensus(mini_catalogue: Path) -> None:
    cat = load(mini_catalogue)
    assert list(cat.label_sets) == ["mini"]
    assert {(lab.case_id, lab.dimension, lab.bin) for lab in cat.labels} == {
        (lab.case_id, lab.dimension, lab.bin) for lab in cat.label_sets["mini"]
    }


def test_two_files_give_two_sets_and_a_consensus(mini_catalogue: Path) -> None:
    base = list(csv.reader((mini_catalogue / "labels" / "mini.csv").open(encoding="utf-8")))[1:]
    flipped = [(c, d, "low" if (c, d) == ("c3", "self_harm") else b, "b") for c, d, b, _, _ in base]
    _write(mini_catalogue, "second", flipped)
    cat = load(mini_catalogue)
    assert set(cat.label_sets) == {"mini", "second"}
    consensus = {(lab.case_id, lab.dimension): lab for lab in cat.labels}
    assert consensus[("c3", "self_harm")].bin == "low"  # high/low tie -> the lower bin
    assert len(cat.disagreements()) == 1
    table = labeler_agreement(cat)
    assert set(table["dimension"]) == {"self_harm", "escalation", "faithfulness"}


def test_one_file_with_several_labelers(mini_catalogue: Path) -> None:
    path = mini_catalogue / "labels" / "mini.csv"
    rows = list(csv.reader(path.open(encoding="utf-8")))[1:]
    extra = [(c, d, b, "other") for c, d, b, _, _ in rows]
    with path.open("a", newline="", encoding="utf-8") as h:
        csv.writer(h).writerows([[*r, ""] for r in extra])
    cat = load(mini_catalogue)
    assert set(cat.label_sets) == {"test-labeler", "other"}


def test_partial_sets_are_allowed_but_the_consensus_must_be_complete(
    mini_catalogue: Path,
) -> None:
    _write(mini_catalogue, "adjudicator", [("c3", "self_harm", "partial", "c")])
    assert "adjudicator" in load(mini_catalogue).label_sets
    (mini_catalogue / "labels" / "mini.csv").unlink()
    with pytest.raises(CatalogueError, match="calibration case has no label"):
        load(mini_catalogue)


def test_consensus_rule_file_is_validated(mini_catalogue: Path) -> None:
    (mini_catalogue / "labels" / "consensus.yaml").write_text("rule: adjudicator\n")
    with pytest.raises(CatalogueError, match="adjudicator"):
        load(mini_catalogue)
    (mini_catalogue / "labels" / "consensus.yaml").write_text(
        "rule: adjudicator\nadjudicator: nobody\n"
    )
    with pytest.raises(CatalogueError, match="no label set named 'nobody'"):
        load(mini_catalogue)


def test_design_is_read_apart_and_validated(mini_catalogue: Path) -> None:
    design = mini_catalogue / "design"
    design.mkdir()
    header = (
        "case_id,self_harm_design,escalation_design,faithfulness_design,"
        "intended_self_harm,intended_escalation,intended_faithfulness\n"
    )
    (design / "d.csv").write_text(header + "c1,absent_plain,absent,faithful,low,low,high\n")
    cat = load(mini_catalogue)
    frame = cat.cases_frame()
    assert frame.set_index("case_id").loc["c1", "self_harm_design"] == "absent_plain"
    (design / "d.csv").write_text(header + "c9,absent_plain,absent,faithful,low,low,high\n")
    with pytest.raises(CatalogueError, match="unknown case c9"):
        load(mini_catalogue)
    (design / "d.csv").write_text(header + "c1,handled_well,absent,faithful,low,low,high\n")
    with pytest.raises(CatalogueError, match="self_harm_design"):
        load(mini_catalogue)


def test_a_case_file_may_not_carry_design(mini_catalogue: Path) -> None:
    path = mini_catalogue / "cases" / "calibration" / "en-US" / "mini.yaml"
    text = path.read_text()
    text = text.replace("  stratum: benign", "  stratum: benign\n  reply_design: absent", 1)
    path.write_text(text)
    with pytest.raises(CatalogueError, match="reply_design"):
        load(mini_catalogue)


def _copy_as(root: Path, source: str, name: str, labeler: str) -> None:
    """``labels/<name>.csv``: the labels of ``source`` again, under ``labeler``."""
    rows = list(csv.reader((root / "labels" / f"{source}.csv").open(encoding="utf-8")))[1:]
    _write(root, name, [(c, d, b, labeler) for c, d, b, _, _ in rows])


def test_one_labeler_in_two_files_is_refused_naming_both(
    mini_catalogue: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Attack (issue #30): the same person again under another file name counted twice.
    # The labeler is the person (the part before ": ", case and spacing aside).
    _copy_as(mini_catalogue, "mini", "second", "Test-Labeler: the same person, second pass")
    with pytest.raises(CatalogueError) as err:
        load(mini_catalogue)
    message = str(err.value)
    assert "labels/second.csv" in message and "labels/mini.csv" in message
    assert "one person is one label set" in message
    assert main(["catalogue", "check", str(mini_catalogue)]) == 1
    err_text = capsys.readouterr().err
    assert "labels/second.csv" in err_text and "labels/mini.csv" in err_text
    # the gate reads the same loader: exit 2 (unusable input), naming both files
    ledger = mini_catalogue.parent / "no-ledger.jsonl"
    assert main(["gate", "--catalogue", str(mini_catalogue), "--ledger", str(ledger)]) == 2
    assert "labels/second.csv" in capsys.readouterr().err


def test_two_people_in_two_files_still_load(mini_catalogue: Path) -> None:
    _copy_as(mini_catalogue, "mini", "second", "other-labeler: a second person")
    assert set(load(mini_catalogue).label_sets) == {"mini", "second"}


def test_consensus_never_counts_one_person_twice() -> None:
    sets = {
        "a": [_lab("x", "high", "alice: first")],
        "b": [_lab("x", "low", "bob")],
        "a-again": [_lab("x", "high", "Alice")],
    }
    with pytest.raises(ValueError, match="one person, one vote"):
        build_consensus(sets, BINS, ConsensusRule())


def test_labeler_identity() -> None:
    assert labeler_identity("labeler-a: model-assisted annotator; not a clinician") == "labeler-a"
    assert labeler_identity("  Alice\u00a0 Smith ") == "alice smith"
    assert labeler_identity("Label Studio annotator 7") == "label studio annotator 7"


def test_shipped_label_sets_are_distinct_labelers() -> None:
    files = sorted((Path(__file__).parents[2] / "catalogues" / "labels").glob("*.csv"))
    people = set()
    for path in files:
        rows = list(csv.DictReader(path.open(encoding="utf-8")))
        assert len({labeler_identity(r["labeler"]) for r in rows}) == 1, path.name
        assert labeler_identity(rows[0]["labeler"]) == path.stem
        people.add(path.stem)
    assert len(files) == len(people) == 36  # 18 until the issue-26 rewrites added 18 (ADR-0028)
