"""Labels as a plain long CSV: ``case_id,dimension,bin,labeler``, one label a row.

The spreadsheet shape every tool can write. ``labeler`` names the label set (it must be
an identifier, ``alice`` or ``rater-2``), so one file may hold several labelers; the
catalogue file it becomes says who labelled in its ``labeler`` column. Read strictly
(:func:`evalkit.catalogue.read_csv`: UTF-8, exactly this header, no short or long row);
a blank bin is an error, never "not labelled": a row that is not a label is deleted, not
left blank. :func:`long_csv` writes every label set of a catalogue in the same shape
(``labeler`` the set's name), so a file read back gives the same sets;
:func:`long_csv_template` writes the blank rows (one per calibration case and applicable
dimension, in blind order) a labeler fills in.
"""

from __future__ import annotations

import csv
import hashlib
import io
from collections.abc import Mapping, Sequence
from pathlib import Path

from evalkit.catalogue import Catalogue, Collector, Label, read_csv
from evalkit.errors import Problem
from evalkit.heldout._template import applies
from evalkit.interop._labels import LabelRow, label_sets
from evalkit.interop._problems import ImportProblems

LONG_COLUMNS = ("case_id", "dimension", "bin", "labeler")


def read_long_csv(path: str | Path, catalogue: Catalogue) -> dict[str, list[Label]]:
    """The label sets of a long CSV, by labeler; :class:`ImportProblems` naming the file,
    line and field of every problem."""
    p = Path(path)
    col = Collector(Path("."))
    rows = read_csv(p, LONG_COLUMNS, col) if p.is_file() else None
    if rows is None:
        problems = col.problems or [Problem(str(p), None, None, "no such file")]
        raise ImportProblems(str(p), problems)
    found = []
    for row in rows:
        case_id, dimension, bin_, labeler = (row.cells[c].strip() for c in LONG_COLUMNS)
        where = f"line {row.line}"
        found.append(LabelRow(str(p), where, case_id, dimension, bin_, labeler, labeler))
    try:
        sets = label_sets(found, catalogue)
    except ImportProblems as exc:  # with the short or long rows read_csv found
        raise ImportProblems(str(p), [*col.problems, *exc.problems]) from None
    if col.problems:
        raise ImportProblems(str(p), col.problems)
    return sets


def _write(rows: Sequence[Sequence[str]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(LONG_COLUMNS)
    writer.writerows(rows)
    return buffer.getvalue()


def long_csv(sets: Mapping[str, Sequence[Label]]) -> str:
    """Every label of ``sets`` as a long CSV, ``labeler`` the set's name."""
    return _write(
        [
            (lab.case_id, lab.dimension, lab.bin, name)
            for name, labels in sets.items()
            for lab in sorted(labels, key=lambda x: (x.case_id, x.dimension))
        ]
    )


def long_csv_template(catalogue: Catalogue) -> str:
    """Blank rows (bin and labeler empty) for every calibration case and applicable
    dimension, cases in blind order (sha256 of the id)."""
    cases = sorted(
        catalogue.split("calibration"), key=lambda c: hashlib.sha256(c.id.encode()).digest()
    )
    dims = catalogue.constants.gated_dimensions
    return _write([(c.id, d, "", "") for c in cases for d in dims if applies(c, d)])
