"""Messages of ``evalkit catalogue`` and ``constants`` say what the user wrote, in sentences
(issue #30's minor findings, #28's ratify hint): no ``None`` for YAML's ``null``, no pandas
or dataclass repr, hints that work when run as printed."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.catalogue import load
from evalkit.catalogue._check import NearDuplicate
from evalkit.catalogue._scaffold import init_catalogue
from evalkit.cli import main
from evalkit.errors import CatalogueError


@pytest.fixture
def root(tmp_path: Path) -> Path:
    init_catalogue(tmp_path / "mine")
    return tmp_path / "mine"


def _problems(root: Path) -> str:
    with pytest.raises(CatalogueError) as err:
        load(root)
    return str(err.value)


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_yaml_null_and_booleans_are_quoted_as_yaml_writes_them(root: Path) -> None:
    _edit(root / "constants.yaml", "threshold: 0.60", "threshold: null")
    _edit(root / "constants.yaml", "bins: [low, partial, high]", "bins: [low, ~, high]")
    cases = root / "cases" / "calibration" / "en-US" / "examples.yaml"
    _edit(cases, "onset_turn: 0", "onset_turn: yes")
    text = _problems(root)
    assert "gate.threshold: Input should be a valid number; got null" in text
    assert "bins.1: Input should be a valid string; got null" in text
    assert "onset_turn: Input should be a valid integer; got true" in text
    assert "None" not in text and "True" not in text


def test_a_null_record_is_named_null_not_nonetype(root: Path) -> None:
    (root / "ratified.yaml").write_text("ratifications: [null, [1]]\n", encoding="utf-8")
    text = _problems(root)
    assert "[ratifications[0]]: expected a mapping, got null" in text
    assert "[ratifications[1]]: expected a mapping, got a list" in text
    assert "NoneType" not in text


def _two_disjoint_label_sets(root: Path) -> None:
    lines = (root / "labels" / "example.csv").read_text(encoding="utf-8").splitlines()
    header, rows = lines[0], lines[1:]
    for name, part in (("alice", rows[:3]), ("bob", rows[3:])):
        body = [r.replace("example: written with the cases by evalkit catalogue init", name)
                for r in part]  # fmt: skip
        (root / "labels" / f"{name}.csv").write_text("\n".join([header, *body]) + "\n")
    (root / "labels" / "example.csv").unlink()


def test_check_says_in_a_sentence_when_no_two_label_sets_share_a_case(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _two_disjoint_label_sets(root)
    assert main(["catalogue", "check", str(root)]) == 0
    out = capsys.readouterr().out
    assert "Empty DataFrame" not in out and "Columns:" not in out
    assert "none: no two label sets label the same case on any dimension" in out


def test_a_near_copy_reads_as_a_sentence() -> None:
    leak = NearDuplicate("h1", 0, "c1", 2, 0.781)
    assert str(leak) == (
        "held-out case h1 turns[0] nearly copies calibration case c1 turns[2] (similarity 0.78)"
    )


def test_the_ratify_hint_names_the_catalogue_and_works_as_printed(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """#28: the hint dropped ``--catalogue``; run as printed from the project root it
    ratified (or found "already ratified") the default ``catalogues`` instead."""
    monkeypatch.chdir(tmp_path)
    adr = tmp_path / "docs" / "adr" / "0001-our-constants.md"
    adr.parent.mkdir(parents=True)
    adr.write_text("# 1. Our constants\n", encoding="utf-8")
    assert main(["constants", "status", "--catalogue", "mine"]) == 1
    out = capsys.readouterr().out
    hint = out.split("`")[1]
    assert hint == "evalkit constants ratify --catalogue mine --adr docs/adr/NNNN-....md"
    argv = hint.split()[1:]
    argv[argv.index("docs/adr/NNNN-....md")] = "docs/adr/0001-our-constants.md"
    assert main(argv) == 0
    assert "in mine/ratified.yaml" in capsys.readouterr().out
    assert main(["constants", "status", "--catalogue", "mine"]) == 0
    assert main(argv) == 0
    assert "mine: already constants ratified by ADR-0001" in capsys.readouterr().out


def test_check_of_no_catalogue_folder_is_exit_2_naming_where_it_looked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """#30 hunt: ``check`` of a missing folder or of a file exited 1 (a catalogue with
    problems) and said "not found" for a file; exit 2, the absolute path and the working
    directory (the notebook trap of #28)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("mine")
    assert main(["catalogue", "check", "nothere"]) == 2
    err = capsys.readouterr().err
    assert f"nothere: catalogue folder not found (looked for {tmp_path / 'nothere'} from" in err
    assert main(["catalogue", "check", "notes.txt"]) == 2
    assert f"notes.txt: not a folder ({tmp_path / 'notes.txt'})" in capsys.readouterr().err


def test_ratify_with_a_folder_as_the_adr_says_so(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["constants", "ratify", "--catalogue", str(root), "--adr", str(root)]) == 2
    assert f"{root}: a folder, not an ADR file" in capsys.readouterr().err


def test_an_unknown_dimension_is_a_sentence_not_its_bare_name(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """#30 hunt: ``judge --dimensions nope`` printed "evalkit judge: nope"."""
    argv = ["judge", "--catalogue", str(root), "--judge", "baseline", "--dimensions", "nope"]
    assert main([*argv, "--ledger", str(tmp_path / "l.sqlite")]) == 2
    err = capsys.readouterr().err
    assert "no rubric in force for dimension 'nope'" in err
    assert "(its dimensions: self_harm, escalation, faithfulness)" in err


def test_validation_problems_are_in_yaml_words(root: Path) -> None:
    """#30 hunt: "a valid dictionary" / "a valid tuple" are Python's words."""
    _edit(root / "rubrics" / "escalation.v1.yaml", "rules:", "rules: null\nxrules:")
    _edit(root / "constants.yaml", "bins: [low, partial, high]", "bins: null")
    text = _problems(root)
    assert "escalation.v1] rules: Input should be a mapping; got null" in text
    assert "bins: Input should be a list; got null" in text
    assert "dictionary" not in text and "tuple" not in text


def test_an_in_force_rubric_that_is_invalid_is_not_called_missing(root: Path) -> None:
    """#30 hunt: an invalid rubric file in force was also reported as "no rubric file"."""
    _edit(root / "rubrics" / "escalation.v1.yaml", "version: v1", "version: null")
    text = _problems(root)
    assert "rubric file rubrics/escalation.v1.yaml is not valid (above)" in text
    assert "no rubric file" not in text
    (root / "rubrics" / "escalation.v1.yaml").unlink()
    assert "rubric file rubrics/escalation.v1.yaml does not exist" in _problems(root)


def test_an_empty_framing_file_is_refused(root: Path) -> None:
    """#30 hunt: an empty framing.txt loaded silently: the judge would get no framing."""
    (root / "framing.txt").write_text(" \n", encoding="utf-8")
    assert "framing.txt: empty: the framing is the text the judge is given" in _problems(root)


def test_a_yaml_file_holding_only_null_is_not_called_empty(root: Path) -> None:
    """#30 hunt: ``~`` (or ``null``) alone was reported as "empty file (or only comments)"."""
    (root / "resources.yaml").write_text("# locales\n~\n", encoding="utf-8")
    assert "resources.yaml: holds only null: it must hold its records" in _problems(root)
    (root / "resources.yaml").write_text("# locales\n---\n", encoding="utf-8")
    assert "resources.yaml: empty file (or only comments)" in _problems(root)


def test_init_below_a_file_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """#30 hunt: ``catalogue init FILE/sub`` was an internal error (NotADirectoryError)."""
    (tmp_path / "notes.txt").write_text("mine")
    assert main(["catalogue", "init", str(tmp_path / "notes.txt" / "sub")]) == 2
    assert f"{tmp_path / 'notes.txt'} is a file, not a folder" in capsys.readouterr().err
