"""The long CSV ``case_id,dimension,bin,labeler``: in, out, and named errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.catalogue import load
from evalkit.cli import main
from evalkit.interop import ImportProblems, long_csv, long_csv_template, read_long_csv

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
