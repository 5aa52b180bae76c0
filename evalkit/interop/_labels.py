"""Labels from another tool as catalogue label sets: checked, then written as ``labels/*.csv``.

Both importers (Label Studio, long CSV) reduce their input to :class:`LabelRow` values that
say where each label came from; :func:`label_sets` checks them against the catalogue the
way the catalogue loader will (a known calibration case, a declared dimension that applies
to it, a frozen bin, one label per case, dimension and set) and names the file, record and
field of every problem. :func:`write_label_sets` writes one file per set in the catalogue's
label format (``case_id,dimension,bin,labeler,note``); the loader reads each as the set
named after its file (``Catalogue.label_sets``).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from evalkit.catalogue import LABEL_COLUMNS, Catalogue, Label
from evalkit.catalogue._labels_io import hidden_characters
from evalkit.catalogue._models import is_identifier
from evalkit.errors import EvalkitError, Problem
from evalkit.heldout._template import applies
from evalkit.interop._problems import ImportProblems


@dataclass(frozen=True)
class LabelRow:
    """One label as another tool gave it, with where it was found."""

    file: str
    record: str
    """Where in the file: ``line 3`` or ``task 17 annotation 2``."""
    case_id: str
    dimension: str
    bin: str
    label_set: str
    labeler: str
    dimension_field: str = "dimension"
    bin_field: str = "bin"


def label_sets(rows: Sequence[LabelRow], catalogue: Catalogue) -> dict[str, list[Label]]:
    """The rows as label sets (set name → labels), or :class:`ImportProblems` listing every
    problem; nothing is dropped."""
    problems: list[Problem] = []
    bins = catalogue.constants.bins
    dims = catalogue.constants.gated_dimensions
    by_id = {c.id: c for c in catalogue.cases}
    sets: dict[str, list[Label]] = {}
    seen: dict[tuple[str, str, str], str] = {}
    for row in rows:

        def bad(field: str, message: str, row: LabelRow = row) -> None:
            problems.append(Problem(row.file, row.record, field, message))

        case = by_id.get(row.case_id)
        if case is None:
            bad("case_id", f"{row.case_id!a} is not a case of the catalogue")
        elif case.split != "calibration":
            bad("case_id", "a held-out case: its labels are sealed apart (evalkit heldout)")
        elif row.dimension not in dims:
            bad(row.dimension_field, f"{row.dimension!r} is not one of {list(dims)}")
        elif not applies(case, row.dimension):
            bad(row.dimension_field, f"{row.dimension} does not apply to this case (no sources)")
        elif row.bin not in bins:
            bad(row.bin_field, f"{row.bin!r} is not one of {list(bins)}")
        elif not is_identifier(row.label_set):
            bad("labeler", f"{row.label_set!a} names a label set but is not an identifier")
        elif not row.labeler.strip() or hidden_characters(row.labeler):
            bad("labeler", f"{row.labeler!a} is blank or holds invisible characters")
        elif (key := (row.case_id, row.dimension, row.label_set)) in seen:
            bad(row.dimension_field, f"second label by {row.label_set} (first at {seen[key]})")
        else:
            seen[key] = row.record
            label = Label(
                case_id=row.case_id, dimension=row.dimension, bin=row.bin, labeler=row.labeler
            )
            sets.setdefault(row.label_set, []).append(label)
    if problems:
        raise ImportProblems(rows[0].file if rows else "the labels", problems)
    return sets


def label_set_csv(labels: Sequence[Label]) -> str:
    """One label set in the catalogue's label format, rows in case then dimension order."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(LABEL_COLUMNS)
    for lab in sorted(labels, key=lambda x: (x.case_id, x.dimension)):
        writer.writerow([lab.case_id, lab.dimension, lab.bin, lab.labeler, lab.note or ""])
    return buffer.getvalue()


def write_label_sets(
    root: Path, sets: Mapping[str, Sequence[Label]], *, replace: bool = False
) -> list[Path]:
    """Write ``labels/<set>.csv`` for each set; an existing file is an error (nothing is
    written) unless ``replace``. Returns the paths written."""
    paths = {name: root / "labels" / f"{name}.csv" for name in sets}
    if not (root / "constants.yaml").is_file():
        raise EvalkitError(f"{root}: not a catalogue folder (no constants.yaml)")
    clash = [str(p) for p in paths.values() if p.exists()]
    if clash and not replace:
        raise EvalkitError(
            f"label set file(s) already exist: {', '.join(clash)}; pass --replace to overwrite"
        )
    for name, path in paths.items():
        path.parent.mkdir(exist_ok=True)
        path.write_text(label_set_csv(sets[name]), encoding="utf-8")
    return list(paths.values())
