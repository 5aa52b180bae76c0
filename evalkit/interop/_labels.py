"""Labels from another tool as catalogue label sets: checked, then written as ``labels/*.csv``.

Both importers (Label Studio, long CSV) reduce their input to :class:`LabelRow` values that
say where each label came from; :func:`label_sets` checks them against the catalogue the
way the catalogue loader will (a known calibration case, a declared dimension that applies
to it, a frozen bin, one label per case, dimension and set) and names the file, record and
field of every problem. One person is one set (ADR-0031): two sets whose ``labeler``
names one person (:func:`~evalkit.catalogue._consensus.labeler_identity`) are refused.
:func:`write_label_sets` writes one file per set in the catalogue's label format
(``case_id,dimension,bin,labeler,note``), all of them or none; the loader reads each as
the set named after its file (``Catalogue.label_sets``).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from evalkit._files import write_all
from evalkit.catalogue import LABEL_COLUMNS, Catalogue, Collector, Label, read_csv
from evalkit.catalogue._consensus import labeler_identity
from evalkit.catalogue._labels_io import hidden_characters, load_label_sets
from evalkit.catalogue._models import is_identifier
from evalkit.errors import CatalogueError, EvalkitError, Problem
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
    note: str | None = None
    set_field: str = "labeler"
    """The field that names the set (``label_set`` in the long CSV's full shape)."""


def label_sets(rows: Sequence[LabelRow], catalogue: Catalogue) -> dict[str, list[Label]]:
    """The rows as label sets (set name → labels), or :class:`ImportProblems` listing every
    problem; nothing is dropped."""
    problems: list[Problem] = []
    bins = catalogue.constants.bins
    dims = catalogue.constants.gated_dimensions
    by_id = {c.id: c for c in catalogue.cases}
    sets: dict[str, list[Label]] = {}
    seen: dict[tuple[str, str, str], str] = {}
    person: dict[str, tuple[str, str]] = {}  # set or labeler -> (the other, first record)
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
            bad(row.set_field, f"{row.label_set!a} names a label set but is not an identifier")
        elif not row.labeler.strip() or hidden_characters(row.labeler):
            bad("labeler", f"{row.labeler!a} is blank or holds invisible characters")
        elif (key := (row.case_id, row.dimension, row.label_set)) in seen:
            bad(row.dimension_field, f"second label by {row.label_set} (first at {seen[key]})")
        elif problem := _second_person(row, person):
            bad("labeler", problem)
        else:
            seen[key] = row.record
            label = Label(
                case_id=row.case_id,
                dimension=row.dimension,
                bin=row.bin,
                labeler=row.labeler,
                note=row.note or None,
            )
            sets.setdefault(row.label_set, []).append(label)
    if problems:
        raise ImportProblems(rows[0].file if rows else "the labels", problems)
    return sets


def _second_person(row: LabelRow, person: dict[str, tuple[str, str]]) -> str | None:
    """Why ``row`` would make one set hold two labelers, or one person two sets (ADR-0031);
    ``None`` when it does neither. ``person`` maps ``set:<name>`` to the set's ``labeler``
    and ``who:<identity>`` to the person's set, each with the first record that said so.
    A set holds one ``labeler`` value: a file holding several is read as several sets."""
    who = labeler_identity(row.labeler)
    has, owns = person.get(f"set:{row.label_set}"), person.get(f"who:{who}")
    if has is not None and has[0] != row.labeler:
        return f"set {row.label_set} already has the labeler {has[0]!a} (at {has[1]})"
    if owns is not None and owns[0] != row.label_set:
        return (
            f"{row.labeler!a} is the labeler of set {owns[0]} too (at {owns[1]}): one person "
            "is one label set (docs/adr/0031)"
        )
    person[f"set:{row.label_set}"] = (row.labeler, row.record)
    person[f"who:{who}"] = (row.label_set, row.record)
    return None


def read_label_sets(catalogue: Catalogue) -> dict[str, list[Label]]:
    """The label sets of ``labels/`` as the catalogue loader reads them, from a catalogue
    read without its label side (:func:`~evalkit.interop.load_unlabelled`), so that a
    partly labelled catalogue's sets can be exported too; a problem of the label files
    (one person in two sets among them) is a :class:`CatalogueError`."""
    col = Collector(catalogue.root)
    cases, constants = list(catalogue.cases), catalogue.constants
    sets = load_label_sets(catalogue.root, cases, set(), constants, col)
    if col.problems:
        raise CatalogueError(col.problems)
    return sets


def label_set_csv(labels: Sequence[Label]) -> str:
    """One label set in the catalogue's label format, rows in case then dimension order."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(LABEL_COLUMNS)
    for lab in sorted(labels, key=lambda x: (x.case_id, x.dimension)):
        writer.writerow([lab.case_id, lab.dimension, lab.bin, lab.labeler, lab.note or ""])
    return buffer.getvalue()


def labeler_shown(labels: Sequence[Label]) -> str:
    """The person a set's labels name, as a message shows it: the ``labeler`` before its
    first ``": "`` (the description after it left out), several joined by ``", "``."""
    return ", ".join(sorted({lab.labeler.split(": ", 1)[0] for lab in labels}))


def _people_on_disk(folder: Path) -> dict[str, Path]:
    """The labeler identity of every label file already in ``folder`` (a file that cannot
    be read is passed over: ``evalkit catalogue check`` reports it)."""
    owners: dict[str, Path] = {}
    for path in sorted(folder.glob("*.csv")):
        for row in read_csv(path, LABEL_COLUMNS, Collector(folder)) or []:
            owners.setdefault(labeler_identity(row.cells["labeler"].strip()), path)
    return owners


def write_label_sets(
    root: Path, sets: Mapping[str, Sequence[Label]], *, replace: bool = False
) -> list[Path]:
    """Write ``labels/<set>.csv`` for each set, all or none (a full disk leaves every label
    file as it was); returns the paths written.

    Refused with :class:`EvalkitError`, nothing written: an existing file unless
    ``replace``; a set whose labeler is already the labeler of another file of
    ``labels/`` (one person, one set: ADR-0031), naming both files.
    """
    paths = {name: root / "labels" / f"{name}.csv" for name in sets}
    if not (root / "constants.yaml").is_file():
        raise EvalkitError(f"{root}: not a catalogue folder (no constants.yaml)")
    clash = [str(p) for p in paths.values() if p.exists()]
    if clash and not replace:
        raise EvalkitError(
            f"label set file(s) already exist: {', '.join(clash)}; pass --replace to overwrite"
        )
    owners = _people_on_disk(root / "labels")
    twice = [
        f"{labeler_shown(sets[name])!a} (set {name}) already labelled {owners[who]}"
        for name, path in paths.items()
        for who in sorted({labeler_identity(lab.labeler) for lab in sets[name]})
        if who in owners and owners[who] != path
    ]
    if twice:
        raise EvalkitError(
            f"one person is one label set (docs/adr/0031): {'; '.join(twice)}; import "
            "under that file's set name with --replace, or remove that file first"
        )
    if paths:
        (root / "labels").mkdir(exist_ok=True)
        write_all({path: label_set_csv(sets[name]) for name, path in paths.items()}, "label file")
    return list(paths.values())
