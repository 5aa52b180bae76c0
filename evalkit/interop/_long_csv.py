"""Labels as a plain long CSV, one label a row, in one of two shapes.

``case_id,dimension,bin,labeler`` (:data:`LONG_COLUMNS`) is the spreadsheet shape every
tool can write: ``labeler`` names the label set and the person (it must be an identifier,
``alice`` or ``rater-2``), so one file may hold several labelers. ``label_set,case_id,
dimension,bin,labeler,note`` (:data:`FULL_COLUMNS`) is the catalogue's own label format
with the set named in front: ``labeler`` and ``note`` are written into the set's file as
they stand (``labeler-a: model-assisted annotator ...``). :func:`long_csv` writes every
label set of a catalogue in the full shape, so that a file read back gives the same sets,
notes and labeler descriptions, byte for byte once written (``evalkit labels export-csv``
then ``evalkit import csv --replace``). :func:`long_csv_template` writes the blank rows
(one per calibration case and applicable dimension, in blind order) a labeler fills in.

Read strictly (:func:`evalkit.catalogue.read_csv`: UTF-8, exactly one of the two headers,
no short or long row); a blank bin is an error, never "not labelled": a row that is not a
label is deleted, not left blank. A cell with leading or trailing whitespace is refused,
naming its line and column, rather than trimmed silently: what is imported is what the
file says. One person is one label set (ADR-0031).
"""

from __future__ import annotations

import csv
import hashlib
import io
from collections.abc import Mapping, Sequence
from pathlib import Path

from evalkit.catalogue import LABEL_COLUMNS, Catalogue, Collector, Label, read_csv
from evalkit.errors import Problem
from evalkit.heldout._template import applies
from evalkit.interop._labels import LabelRow, label_sets
from evalkit.interop._problems import ImportProblems

LONG_COLUMNS = ("case_id", "dimension", "bin", "labeler")
FULL_COLUMNS = ("label_set", *LABEL_COLUMNS)


def _columns(path: Path) -> tuple[str, ...]:
    """:data:`FULL_COLUMNS` when the file's first line is that header, else
    :data:`LONG_COLUMNS` (whose reading then reports any other header)."""
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            header = next(csv.reader([handle.readline()]), [])
    except (OSError, UnicodeDecodeError, csv.Error):
        return LONG_COLUMNS
    return FULL_COLUMNS if [h.strip() for h in header] == list(FULL_COLUMNS) else LONG_COLUMNS


def read_long_csv(path: str | Path, catalogue: Catalogue) -> dict[str, list[Label]]:
    """The label sets of a long CSV, by set; :class:`ImportProblems` naming the file,
    line and field of every problem (a padded cell is one)."""
    p = Path(path)
    col = Collector(Path("."))
    columns = _columns(p) if p.is_file() else LONG_COLUMNS
    rows = read_csv(p, columns, col) if p.is_file() else None
    if rows is None:
        problems = col.problems or [Problem(str(p), None, None, "no such file")]
        raise ImportProblems(str(p), problems)
    found = []
    for row in rows:
        where = f"line {row.line}"
        for name in columns:
            if (cell := row.cells[name]) != cell.strip():
                message = f"{cell!a} has leading or trailing whitespace: remove it"
                col.problems.append(Problem(str(p), where, name, message))
        cells = {name: row.cells[name].strip() for name in columns}
        labeler = cells["labeler"]
        found.append(
            LabelRow(
                str(p),
                where,
                cells["case_id"],
                cells["dimension"],
                cells["bin"],
                cells.get("label_set", labeler),
                labeler,
                note=cells.get("note") or None,
                set_field="label_set" if "label_set" in cells else "labeler",
            )
        )
    try:
        sets = label_sets(found, catalogue)
    except ImportProblems as exc:  # with the short or long rows read_csv found
        raise ImportProblems(str(p), [*col.problems, *exc.problems]) from None
    if col.problems:
        raise ImportProblems(str(p), col.problems)
    return sets


def _write(rows: Sequence[Sequence[str]], columns: Sequence[str] = LONG_COLUMNS) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    return buffer.getvalue()


def long_csv(sets: Mapping[str, Sequence[Label]]) -> str:
    """Every label of ``sets`` as a long CSV in the full shape (:data:`FULL_COLUMNS`):
    the set's name, then the label as its catalogue file holds it, sets in the given
    order, labels in case then dimension order."""
    return _write(
        [
            (name, lab.case_id, lab.dimension, lab.bin, lab.labeler, lab.note or "")
            for name, labels in sets.items()
            for lab in sorted(labels, key=lambda x: (x.case_id, x.dimension))
        ],
        FULL_COLUMNS,
    )


def long_csv_template(catalogue: Catalogue) -> str:
    """Blank rows (bin and labeler empty) for every calibration case and applicable
    dimension, cases in blind order (sha256 of the id)."""
    cases = sorted(
        catalogue.split("calibration"), key=lambda c: hashlib.sha256(c.id.encode()).digest()
    )
    dims = catalogue.constants.gated_dimensions
    return _write([(c.id, d, "", "") for c in cases for d in dims if applies(c, d)])
