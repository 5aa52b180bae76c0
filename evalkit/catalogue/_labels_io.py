"""Read label sets, the consensus rule and author design: the catalogue's label side.

Label files (``labels/*.csv``) become named sets (ADR-0012), one person one set (ADR-0031:
:func:`labeler_identity`), ``labels/consensus.yaml`` the rule that combines them, and
``design/*.csv`` the author metadata kept apart from the case files. Every problem is
collected with its file, line and field. CSV files are read by
:func:`evalkit.catalogue._collect.read_csv`: strict UTF-8, the exact header, no short or
long row.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

from evalkit.catalogue._collect import Collector, read_csv, read_yaml, validate
from evalkit.catalogue._consensus import ConsensusRule, labeler_identity
from evalkit.catalogue._models import Case, CaseDesign, FrozenConstants, Label, is_identifier
from evalkit.errors import Problem

LABEL_COLUMNS = ("case_id", "dimension", "bin", "labeler", "note")

#: Unicode categories a labeler's name may not hold: control, format (zero-width),
#: private-use, surrogate and line or paragraph separator characters.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Zl", "Zp"})


def hidden_characters(text: str) -> list[str]:
    """The characters of ``text`` a reader cannot see or that break a line (control,
    zero-width and other format characters), as ``U+XXXX`` codes; ``[]`` when none."""
    if text.isprintable():  # every hidden category is non-printable: the common case, fast
        return []
    return [f"U+{ord(ch):04X}" for ch in text if unicodedata.category(ch) in _HIDDEN_CATEGORIES]


def read_labels(
    path: Path | str,
    cases: dict[str, Case],
    constants: FrozenConstants,
    *,
    root: Path | None = None,
    allow_blank: bool = False,
    invalid_ids: set[str] | frozenset[str] = frozenset(),
) -> tuple[list[Label], list[Problem]]:
    """Read one label CSV (``case_id,dimension,bin,labeler,note``) against a catalogue.

    Returns the labels and the problems found; problems name the file and line. A file may
    hold several labelers (one label per case, dimension and labeler). With
    ``allow_blank`` a blank ``bin`` is skipped (used for partly filled templates);
    otherwise it is a problem. Labels of ``invalid_ids`` (cases whose own problems are
    already reported) are passed over without a second problem. ``labeler`` is free text
    (who labelled and how) but may hold no control or zero-width character.
    """
    path = Path(path)
    col = Collector(root if root is not None else path.parent)
    labels: list[Label] = []
    rows = read_csv(path, LABEL_COLUMNS, col)
    if rows is None:
        return [], col.problems
    seen: set[tuple[str, str, str]] = set()
    for row in rows:
        case_id, dimension, bin_, labeler, note = (row.cells[c].strip() for c in LABEL_COLUMNS)
        where = f"line {row.line}, case {case_id}"
        if case_id in invalid_ids:
            continue
        if case_id not in cases:
            col.add(path, where, "case_id", f"label for an unknown case {case_id!a}")
            continue
        if dimension not in constants.gated_dimensions:
            col.add(path, where, "dimension", f"{dimension!r} is not a declared dimension")
            continue
        if not bin_ and allow_blank:
            continue
        if bin_ not in constants.bins:
            col.add(path, where, "bin", f"{bin_!r} is not one of {list(constants.bins)}")
            continue
        if not labeler:
            col.add(path, where, "labeler", "missing labeler")
            continue
        if hidden := hidden_characters(labeler):
            col.add(path, where, "labeler", f"holds invisible character(s) {', '.join(hidden)}")
            continue
        if (case_id, dimension, labeler) in seen:
            col.add(path, where, "dimension", f"second label for {dimension} by {labeler!r}")
            continue
        if dimension == "faithfulness" and not cases[case_id].has_sources:
            col.add(path, where, "dimension", "faithfulness label on a case with no sources")
            continue
        seen.add((case_id, dimension, labeler))
        labels.append(
            Label(
                case_id=case_id,
                dimension=dimension,
                bin=bin_,
                labeler=labeler,
                note=note or None,
            )
        )
    return labels, col.problems


def load_label_sets(
    root: Path,
    cases: list[Case],
    invalid: set[str],
    constants: FrozenConstants,
    col: Collector,
) -> dict[str, list[Label]]:
    """Every label file under ``labels/``, as named sets (ADR-0012).

    A file whose ``labeler`` column holds one value is one set, named after the file
    stem; a file holding several labelers gives one set per labeler, named by the
    ``labeler`` value, which must then be an identifier (``labeler-a``, not a sentence).
    One person is one set (ADR-0031): a set whose :func:`labeler_identity` another set
    already has is a problem naming both files, and the second set is left out, so that the
    consensus built before the problems are raised never counts that person twice.
    """
    by_id = {c.id: c for c in cases}
    sets: dict[str, list[Label]] = {}
    owners: dict[str, tuple[Path, str]] = {}
    for path in sorted((root / "labels").glob("*.csv")):
        found, problems = read_labels(path, by_id, constants, root=root, invalid_ids=invalid)
        col.problems.extend(problems)
        kept: list[Label] = []
        for label in found:
            if by_id[label.case_id].split != "calibration":
                col.add(
                    path,
                    label.case_id,
                    "case_id",
                    "held-out labels are not kept in labels/; they are sealed apart",
                )
                continue
            kept.append(label)
        labelers = sorted({lab.labeler for lab in kept})
        if len(labelers) <= 1:
            groups = {path.stem: kept}
        else:
            groups = {who: [lab for lab in kept if lab.labeler == who] for who in labelers}
            for who in labelers:
                if not is_identifier(who):
                    col.add(
                        path,
                        None,
                        "labeler",
                        f"{who!a} names a label set (the file holds several labelers) "
                        "but is not an identifier: letters, digits, '_', '.', '-'",
                    )
        for name, labels in groups.items():
            if name in sets:
                col.add(path, None, "labeler", f"label set {name!r} is defined twice")
                continue
            if _second_person(path, name, labels, owners, col):
                continue
            sets[name] = labels
    return sets


def _second_person(
    path: Path,
    name: str,
    labels: list[Label],
    owners: dict[str, tuple[Path, str]],
    col: Collector,
) -> bool:
    """Record the person of set ``name``; when they already own another set, add a problem
    naming both files and return True (the set is then left out)."""
    named = {labeler_identity(lab.labeler): lab.labeler.split(": ", 1)[0] for lab in labels}
    for who in sorted(named):
        if who in owners:
            first, other = owners[who]
            col.add(
                path,
                None,
                "labeler",
                f"labeler {named[who]!a} also labelled {col.rel(first)} (set {other!r}): one "
                "person is one label set, or the consensus counts them twice (docs/adr/0031); "
                "merge the two files or remove one",
            )
            return True
        owners[who] = (path, name)
    return False


def load_consensus_rule(root: Path, sets: dict[str, list[Label]], col: Collector) -> ConsensusRule:
    path = root / "labels" / "consensus.yaml"
    if not path.exists():
        return ConsensusRule()
    data = read_yaml(path, col)
    if data is None:
        return ConsensusRule()
    rule = validate(ConsensusRule, data, path, None, col)
    if rule is None:
        return ConsensusRule()
    if rule.adjudicator is not None and rule.adjudicator not in sets:
        col.add(path, None, "adjudicator", f"no label set named {rule.adjudicator!r}")
    return rule


def check_consensus_complete(
    root: Path,
    cases: list[Case],
    consensus: list[Label],
    constants: FrozenConstants,
    col: Collector,
) -> None:
    have = {(lab.case_id, lab.dimension) for lab in consensus}
    for case in cases:
        if case.split != "calibration":
            continue
        for dim in constants.gated_dimensions:
            if dim == "faithfulness" and not case.has_sources:
                continue
            if (case.id, dim) not in have:
                col.add(root / "labels", case.id, dim, "calibration case has no label")


DESIGN_COLUMNS = tuple(CaseDesign.model_fields)


def load_design(
    root: Path, cases: list[Case], constants: FrozenConstants | None, col: Collector
) -> list[CaseDesign]:
    """Author metadata from ``design/*.csv`` (optional): how each case was written."""
    known = {c.id for c in cases}
    out: list[CaseDesign] = []
    seen: dict[str, str] = {}
    for path in sorted((root / "design").glob("*.csv")):
        rows = read_csv(path, DESIGN_COLUMNS, col)
        for row in rows or []:
            where = f"line {row.line}"
            record: dict[str, str | None] = {k: v.strip() for k, v in row.cells.items()}
            if not record["intended_faithfulness"]:
                record["intended_faithfulness"] = None
            design = validate(CaseDesign, record, path, where, col)
            if design is None:
                continue
            if design.case_id not in known:
                col.add(path, where, "case_id", f"design row for unknown case {design.case_id}")
                continue
            if design.case_id in seen:
                col.add(
                    path, where, "case_id", f"second design row (also in {seen[design.case_id]})"
                )
                continue
            bins = constants.bins if constants is not None else ()
            for name in ("intended_self_harm", "intended_escalation", "intended_faithfulness"):
                value = getattr(design, name)
                if value is not None and bins and value not in bins:
                    col.add(path, where, name, f"{value!r} is not one of {list(bins)}")
            seen[design.case_id] = col.rel(path)
            out.append(design)
    return out
