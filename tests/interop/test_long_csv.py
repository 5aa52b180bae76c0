"""The long CSV ``case_id,dimension,bin,labeler``: in, out, and named errors."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from evalkit.catalogue import load
from evalkit.cli import main
from evalkit.interop import (
    ImportProblems,
    load_unlabelled,
    long_csv,
    long_csv_template,
    read_long_csv,
    write_label_sets,
)
from evalkit.interop._labels import read_label_sets

ROWS = """case_id,dimension,bin,labeler
c1,self_harm,low,rater-1
c1,escalation,low,rater-1
c1,faithfulness,partial,rater-1
c2,self_harm,low,rater-1
c2,escalation,high,rater-1
c3,self_harm,high,rater-2
c3,escalation,low,rater-2
"""


def test_round_trip(mini_catalogue: Path, tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    path.write_text(ROWS, encoding="utf-8")
    assert main(["import", "csv", str(path), "--catalogue", str(mini_catalogue)]) == 0
    cat = load(mini_catalogue)
    assert {"rater-1", "rater-2"} <= set(cat.label_sets)
    assert len(cat.label_sets["rater-1"]) == 5 and len(cat.label_sets["rater-2"]) == 2
    out = tmp_path / "out.csv"
    assert (
        main(["labels", "export-csv", "--catalogue", str(mini_catalogue), "--out", str(out)]) == 0
    )
    again = read_long_csv(out, cat)
    assert {k: sorted(v, key=str) for k, v in again.items() if k.startswith("rater-")} == {
        k: sorted(v, key=str) for k, v in cat.label_sets.items() if k.startswith("rater-")
    }
    written = long_csv({k: v for k, v in again.items() if k.startswith("rater-")})
    assert written.splitlines()[0] == "label_set,case_id,dimension,bin,labeler,note"
    full = [f"{row.rsplit(',', 1)[1]},{row}," for row in ROWS.splitlines()[1:]]
    assert sorted(written.splitlines()[1:]) == sorted(full)


def test_template_rows_are_blank_and_applicable(mini_catalogue: Path) -> None:
    lines = long_csv_template(load(mini_catalogue)).splitlines()
    assert lines[0] == "case_id,dimension,bin,labeler"
    rows = [line.split(",") for line in lines[1:]]
    assert len(rows) == 9  # faithfulness only on the case with sources
    assert all(r[2] == "" and r[3] == "" for r in rows)


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("c9,self_harm,low,rater-1", "case_id"),
        ("c1,kindness,low,rater-1", "dimension"),
        ("c1,self_harm,medium,rater-1", "bin"),
        ("c1,self_harm,,rater-1", "bin"),
        ("c2,faithfulness,low,rater-1", "dimension"),  # c2 has no sources
        ("c1,self_harm,low,rater one", "labeler"),
        ("c1,self_harm,low,rater-1", "dimension"),  # a second label by rater-1
        ("c1,self_harm,low", "labeler"),  # a short row
    ],
)
def test_bad_row_names_file_line_and_field(
    mini_catalogue: Path, tmp_path: Path, line: str, field: str
) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(ROWS + line + "\n", encoding="utf-8")
    with pytest.raises(ImportProblems) as err:
        read_long_csv(path, load(mini_catalogue))
    assert [(p.file.endswith("bad.csv"), p.record, p.field) for p in err.value.problems] == [
        (True, "line 9", field)
    ]
    assert main(["import", "csv", str(path), "--catalogue", str(mini_catalogue)]) == 2


def test_wrong_header(mini_catalogue: Path, tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(ROWS.replace("labeler", "rater", 1), encoding="utf-8")
    with pytest.raises(ImportProblems, match="header"):
        read_long_csv(path, load(mini_catalogue))


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("c4,self_harm, low,rater-1", "bin"),
        ("c4 ,self_harm,low,rater-1", "case_id"),
        ("c4,self_harm,low,rater-1 ", "labeler"),
    ],
)
def test_padded_cell_is_refused_not_trimmed(
    mini_catalogue: Path, tmp_path: Path, line: str, field: str
) -> None:
    # Attack (issue #30): padded cells were trimmed silently.
    path = tmp_path / "padded.csv"
    path.write_text(ROWS + line + "\n", encoding="utf-8")
    with pytest.raises(ImportProblems) as err:
        read_long_csv(path, load(mini_catalogue))
    assert [(p.record, p.field) for p in err.value.problems] == [("line 9", field)]
    assert "whitespace" in str(err.value)


FULL = (
    "label_set,case_id,dimension,bin,labeler,note\n"
    'ann,c1,self_harm,low,"ann: a nurse, 12 years on a crisis line; labelled blind",'
    '"a note, with a comma"\n'
    'ann,c2,self_harm,low,"ann: a nurse, 12 years on a crisis line; labelled blind",\n'
)


def test_export_then_import_keeps_notes_and_labelers(
    mini_catalogue: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Attack (issue #30): export-csv then import csv --replace lost the labeler notes and
    # shortened the labeler descriptions.
    path = tmp_path / "full.csv"
    path.write_text(FULL, encoding="utf-8")
    assert main(["import", "csv", str(path), "--catalogue", str(mini_catalogue)]) == 0
    assert "ann.csv: labeler ann (2 labels)" in capsys.readouterr().out
    labels = mini_catalogue / "labels"
    before = (labels / "ann.csv").read_bytes()
    sets = {k: set(v) for k, v in load(mini_catalogue).label_sets.items()}
    out = tmp_path / "out.csv"
    assert (
        main(["labels", "export-csv", "--catalogue", str(mini_catalogue), "--out", str(out)]) == 0
    )
    assert FULL.splitlines()[1] in out.read_text(encoding="utf-8").splitlines()
    (labels / "ann.csv").write_text("case_id,dimension,bin,labeler,note\n", encoding="utf-8")
    assert main(["import", "csv", str(out), "--catalogue", str(mini_catalogue), "--replace"]) == 0
    # byte for byte where the file was in the written form (rows sorted, "\n" ends), the
    # same sets either way (the factory's mini.csv has "\r\n" ends and another order)
    assert (labels / "ann.csv").read_bytes() == before
    assert {k: set(v) for k, v in load(mini_catalogue).label_sets.items()} == sets
    note = next(lab for lab in load(mini_catalogue).label_sets["ann"] if lab.case_id == "c1")
    assert note.note == "a note, with a comma" and note.labeler.endswith("labelled blind")


def test_shipped_label_sets_round_trip_byte_for_byte(tmp_path: Path) -> None:
    # The shipped catalogue's 18 sets through export-csv's writer and import csv's reader
    # and writer (in-process: loading the shipped cases once keeps the test fast).
    shipped = Path(__file__).parents[2] / "catalogues"
    root = tmp_path / "catalogues"
    shutil.copytree(shipped, root, ignore=shutil.ignore_patterns("design", "heldout", "guide.md"))
    before = {p.name: p.read_bytes() for p in (root / "labels").iterdir()}
    catalogue = load_unlabelled(root)
    sheet = tmp_path / "all.csv"
    sheet.write_text(long_csv(read_label_sets(catalogue)), encoding="utf-8")
    for path in (root / "labels").glob("*.csv"):
        path.write_text("case_id,dimension,bin,labeler,note\n", encoding="utf-8")
    sets = read_long_csv(sheet, catalogue)
    assert len(sets) == sum(name.endswith(".csv") for name in before)  # one set per file
    write_label_sets(root, sets, replace=True)
    assert {p.name: p.read_bytes() for p in (root / "labels").iterdir()} == before


def test_one_person_in_two_sets_of_a_sheet_is_refused(mini_catalogue: Path, tmp_path: Path) -> None:
    path = tmp_path / "twice.csv"
    path.write_text(FULL + FULL.splitlines()[2].replace("ann,c2", "ann-2,c3") + "\n")
    with pytest.raises(ImportProblems) as err:
        read_long_csv(path, load(mini_catalogue))
    assert [(p.record, p.field) for p in err.value.problems] == [("line 4", "labeler")]
    assert "one person is one label set" in str(err.value)


def test_full_disk_writes_no_label_file(
    mini_catalogue: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Attack (issue #30): import csv onto a full disk left some label files written.
    path = tmp_path / "labels.csv"
    path.write_text(ROWS, encoding="utf-8")
    assert main(["import", "csv", str(path), "--catalogue", str(mini_catalogue)]) == 0
    labels = mini_catalogue / "labels"
    before = {p.name: p.read_bytes() for p in labels.iterdir()}
    path.write_text(ROWS.replace(",low,", ",high,"), encoding="utf-8")
    real, calls = Path.write_text, []

    def full_disk(self: Path, *args: Any, **kwargs: Any) -> int:
        calls.append(self)
        if len(calls) == 2:  # the first file is written, the second finds the disk full
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", full_disk)
    args = ["import", "csv", str(path), "--catalogue", str(mini_catalogue), "--replace"]
    assert main(args) == 2
    monkeypatch.undo()
    assert len(calls) == 2
    err = capsys.readouterr().err
    assert "No space left on device" in err and "no label file was written or changed" in err
    assert {p.name: p.read_bytes() for p in labels.iterdir()} == before  # no temp file left
