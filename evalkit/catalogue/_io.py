"""Read a catalogue folder into validated records, collecting every problem.

The loader never stops at the first problem and never loads part of a catalogue:
it either returns a whole, valid :class:`Catalogue` or raises
:class:`~evalkit.errors.CatalogueError` listing every problem with its file,
record and field.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from evalkit.catalogue._catalogue import Catalogue
from evalkit.catalogue._consensus import ConsensusRule, build_consensus
from evalkit.catalogue._models import (
    CATALOGUE_MAX_TURNS,
    Case,
    CaseDesign,
    FrozenConstants,
    Label,
    LocaleResources,
    Rubric,
)
from evalkit.errors import CatalogueError, Problem

M = TypeVar("M", bound=BaseModel)

LABEL_COLUMNS = ("case_id", "dimension", "bin", "labeler", "note")


class _Collector:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.problems: list[Problem] = []

    def rel(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.root.parent))
        except ValueError:
            return str(path)

    def add(self, path: Path, record: str | None, field: str | None, message: str) -> None:
        self.problems.append(Problem(self.rel(path), record, field, message))

    def add_validation(self, path: Path, record: str | None, err: ValidationError) -> None:
        for e in err.errors():
            loc = ".".join(str(p) for p in e["loc"]) or None
            msg = e["msg"].removeprefix("Value error, ")
            if e["type"] == "extra_forbidden":
                msg = "unknown field"
            elif e["type"] == "missing":
                msg = "missing field"
            elif e["type"] == "literal_error":
                msg = f"{msg}; got {e.get('input')!r}"
            self.add(path, record, loc, msg)


def _read_yaml(path: Path, col: _Collector) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        col.add(path, None, None, f"cannot read: {exc}")
        return None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else None
        problem = getattr(exc, "problem", None) or str(exc)
        col.add(path, where, None, f"malformed YAML: {problem}")
        return None


def _validate(
    model: type[M], data: Any, path: Path, record: str | None, col: _Collector
) -> M | None:
    if not isinstance(data, dict):
        col.add(path, record, None, f"expected a mapping, got {type(data).__name__}")
        return None
    try:
        return model.model_validate(data)
    except ValidationError as err:
        col.add_validation(path, record, err)
        return None


def _load_constants(root: Path, col: _Collector) -> FrozenConstants | None:
    path = root / "constants.yaml"
    if not path.exists():
        col.add(path, None, None, "missing: every catalogue needs its frozen constants")
        return None
    data = _read_yaml(path, col)
    if data is None:
        return None
    constants = _validate(FrozenConstants, data, path, None, col)
    if constants is None:
        return None
    framing_path = root / constants.framing_file
    try:
        framing = framing_path.read_text(encoding="utf-8")
    except OSError as exc:
        col.add(path, None, "framing_file", f"cannot read {constants.framing_file}: {exc}")
        return None
    return constants.model_copy(update={"framing": framing})


def _load_resources(root: Path, col: _Collector) -> dict[str, LocaleResources]:
    path = root / "resources.yaml"
    if not path.exists():
        col.add(path, None, None, "missing: the locale resources table is required")
        return {}
    data = _read_yaml(path, col)
    rows = data.get("locales") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        if data is not None:
            col.add(path, None, "locales", "expected a list under `locales`")
        return {}
    out: dict[str, LocaleResources] = {}
    for i, row in enumerate(rows):
        rec = row.get("locale", f"locales[{i}]") if isinstance(row, dict) else f"locales[{i}]"
        res = _validate(LocaleResources, row, path, str(rec), col)
        if res is None:
            continue
        if res.locale in out:
            col.add(path, res.locale, "locale", "duplicate locale row")
        out[res.locale] = res
    return out


def _load_rubrics(
    root: Path, constants: FrozenConstants | None, col: _Collector
) -> dict[tuple[str, str], Rubric]:
    out: dict[tuple[str, str], Rubric] = {}
    folder = root / "rubrics"
    for path in sorted(folder.glob("*.yaml")):
        data = _read_yaml(path, col)
        if data is None:
            continue
        rubric = _validate(Rubric, data, path, path.stem, col)
        if rubric is None:
            continue
        if path.name != f"{rubric.dimension}.{rubric.version}.yaml":
            col.add(
                path,
                path.stem,
                None,
                f"file name must be {rubric.dimension}.{rubric.version}.yaml",
            )
        if constants is not None:
            if rubric.dimension not in constants.gated_dimensions:
                col.add(path, path.stem, "dimension", f"{rubric.dimension!r} is not declared")
            missing = [b for b in constants.bins if b not in rubric.anchors]
            extra = [b for b in rubric.anchors if b not in constants.bins]
            if missing:
                col.add(path, path.stem, "anchors", f"no anchor for bin(s) {missing}")
            if extra:
                col.add(path, path.stem, "anchors", f"anchor(s) for unknown bin(s) {extra}")
            for j, ex in enumerate(rubric.examples):
                if ex.bin not in constants.bins:
                    col.add(path, path.stem, f"examples.{j}.bin", f"{ex.bin!r} is not a bin")
        out[(rubric.dimension, rubric.version)] = rubric
    if constants is not None:
        for dim, version in constants.rubrics_in_force.items():
            if (dim, version) not in out:
                col.add(
                    root / "constants.yaml",
                    None,
                    "rubrics_in_force",
                    f"no rubric file rubrics/{dim}.{version}.yaml",
                )
    return out


def _case_files(root: Path) -> Iterable[Path]:
    return sorted((root / "cases").glob("*/*/*.yaml"))


def _load_cases(
    root: Path, resources: dict[str, LocaleResources], col: _Collector
) -> tuple[list[Case], set[str], dict[str, str]]:
    """Valid cases, the ids of records that failed validation (already reported), and the
    file each case came from (relative to the catalogue's parent)."""
    cases: list[Case] = []
    invalid: set[str] = set()
    seen: dict[str, str] = {}
    final_turns: dict[str, str] = {}
    for path in _case_files(root):
        split_dir, locale_dir = path.parent.parent.name, path.parent.name
        data = _read_yaml(path, col)
        if data is None:
            continue
        rows = data.get("cases") if isinstance(data, dict) else None
        if not isinstance(rows, list):
            col.add(path, None, "cases", "expected a mapping with a list under `cases`")
            continue
        for i, row in enumerate(rows):
            rid = row.get("id") if isinstance(row, dict) else None
            record = str(rid) if rid else f"cases[{i}]"
            case = _validate(Case, row, path, record, col)
            if case is None:
                if rid:
                    invalid.add(str(rid))
                continue
            if case.id in seen:
                col.add(path, case.id, "id", f"duplicate case id (also in {seen[case.id]})")
                continue
            seen[case.id] = col.rel(path)
            if len(case.turns) > CATALOGUE_MAX_TURNS:
                col.add(
                    path,
                    case.id,
                    "turns",
                    f"{len(case.turns)} turns; a catalogue case holds 2 to {CATALOGUE_MAX_TURNS}",
                )
            if case.split != split_dir:
                col.add(path, case.id, "split", f"{case.split!r} but file is under {split_dir}/")
            if case.locale != locale_dir:
                col.add(path, case.id, "locale", f"{case.locale!r} but file is under {locale_dir}/")
            if case.locale not in resources:
                col.add(path, case.id, "locale", f"no resources row for {case.locale!r}")
            final = " ".join(case.turns[case.latest_user_turn].text.lower().split())
            if final in final_turns:
                col.add(
                    path,
                    case.id,
                    "turns",
                    f"final user turn repeats that of case {final_turns[final]}",
                )
            else:
                final_turns[final] = case.id
            cases.append(case)
    return cases, invalid, seen


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
    already reported) are passed over without a second problem.
    """
    path = Path(path)
    col = _Collector(root if root is not None else path.parent)
    labels: list[Label] = []
    try:
        handle = path.open(encoding="utf-8", newline="")
    except OSError as exc:
        col.add(path, None, None, f"cannot read: {exc}")
        return [], col.problems
    with handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if header is None or tuple(h.strip() for h in header) != LABEL_COLUMNS:
            col.add(path, "line 1", None, f"header must be {','.join(LABEL_COLUMNS)}; got {header}")
            return [], col.problems
        seen: set[tuple[str, str, str]] = set()
        for lineno, row in enumerate(reader, start=2):
            where = f"line {lineno}"
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(LABEL_COLUMNS):
                col.add(path, where, None, f"expected {len(LABEL_COLUMNS)} columns, got {len(row)}")
                continue
            case_id, dimension, bin_, labeler, note = (c.strip() for c in row)
            where = f"line {lineno}, case {case_id}"
            if case_id in invalid_ids:
                continue
            if case_id not in cases:
                col.add(path, where, "case_id", "label for an unknown case")
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


def _load_label_sets(
    root: Path,
    cases: list[Case],
    invalid: set[str],
    constants: FrozenConstants,
    col: _Collector,
) -> dict[str, list[Label]]:
    """Every label file under ``labels/``, as named sets (ADR-0012).

    A file whose ``labeler`` column holds one value is one set, named after the file
    stem; a file holding several labelers gives one set per labeler, named by the
    ``labeler`` value.
    """
    by_id = {c.id: c for c in cases}
    sets: dict[str, list[Label]] = {}
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
        for name, labels in groups.items():
            if name in sets:
                col.add(path, None, "labeler", f"label set {name!r} is defined twice")
                continue
            sets[name] = labels
    return sets


def _load_consensus_rule(
    root: Path, sets: dict[str, list[Label]], col: _Collector
) -> ConsensusRule:
    path = root / "labels" / "consensus.yaml"
    if not path.exists():
        return ConsensusRule()
    data = _read_yaml(path, col)
    if data is None:
        return ConsensusRule()
    rule = _validate(ConsensusRule, data, path, None, col)
    if rule is None:
        return ConsensusRule()
    if rule.adjudicator is not None and rule.adjudicator not in sets:
        col.add(path, None, "adjudicator", f"no label set named {rule.adjudicator!r}")
    return rule


def _check_consensus_complete(
    root: Path,
    cases: list[Case],
    consensus: list[Label],
    constants: FrozenConstants,
    col: _Collector,
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


def _load_design(
    root: Path, cases: list[Case], constants: FrozenConstants | None, col: _Collector
) -> list[CaseDesign]:
    """Author metadata from ``design/*.csv`` (optional): how each case was written."""
    known = {c.id for c in cases}
    out: list[CaseDesign] = []
    seen: dict[str, str] = {}
    for path in sorted((root / "design").glob("*.csv")):
        try:
            handle = path.open(encoding="utf-8", newline="")
        except OSError as exc:
            col.add(path, None, None, f"cannot read: {exc}")
            continue
        with handle:
            reader = csv.reader(handle)
            header = next(reader, None)
            if header is None or tuple(h.strip() for h in header) != DESIGN_COLUMNS:
                col.add(path, "line 1", None, f"header must be {','.join(DESIGN_COLUMNS)}")
                continue
            for lineno, row in enumerate(reader, start=2):
                if not any(cell.strip() for cell in row):
                    continue
                where = f"line {lineno}"
                if len(row) != len(DESIGN_COLUMNS):
                    col.add(path, where, None, f"expected {len(DESIGN_COLUMNS)} columns")
                    continue
                record = dict(zip(DESIGN_COLUMNS, (c.strip() for c in row), strict=True))
                if not record["intended_faithfulness"]:
                    record["intended_faithfulness"] = None  # type: ignore[assignment]
                design = _validate(CaseDesign, record, path, where, col)
                if design is None:
                    continue
                if design.case_id not in known:
                    col.add(path, where, "case_id", f"design row for unknown case {design.case_id}")
                    continue
                if design.case_id in seen:
                    col.add(
                        path,
                        where,
                        "case_id",
                        f"second design row (also in {seen[design.case_id]})",
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


def load(path: str | Path = "catalogues") -> Catalogue:
    """Load and validate the catalogue at ``path``.

    Returns a :class:`Catalogue` with ``.cases``, ``.labels`` (the consensus the gate
    reads), ``.label_sets`` (every labeler's set), ``.rubrics``, ``.constants``,
    ``.resources`` and ``.design`` (author metadata). Raises :class:`~evalkit.errors.CatalogueError`
    listing every problem (file, record, field, message) if anything is wrong; nothing
    is skipped silently and nothing is partly loaded.
    """
    root = Path(path)
    col = _Collector(root)
    if not root.is_dir():
        raise CatalogueError([Problem(str(root), None, None, "catalogue folder not found")])
    constants = _load_constants(root, col)
    resources = _load_resources(root, col)
    rubrics = _load_rubrics(root, constants, col)
    cases, invalid, case_files = _load_cases(root, resources, col)
    label_sets: dict[str, list[Label]] = {}
    consensus: list[Label] = []
    rule = ConsensusRule()
    if constants is not None:
        label_sets = _load_label_sets(root, cases, invalid, constants, col)
        rule = _load_consensus_rule(root, label_sets, col)
        consensus = build_consensus(label_sets, constants.bins, rule)
        _check_consensus_complete(root, cases, consensus, constants, col)
    design = _load_design(root, cases, constants, col)
    if col.problems or constants is None:
        raise CatalogueError(col.problems)
    return Catalogue(
        root=root,
        cases=tuple(cases),
        labels=tuple(consensus),
        rubrics=rubrics,
        constants=constants,
        resources=resources,
        label_sets={name: tuple(labels) for name, labels in label_sets.items()},
        consensus_rule=rule,
        design=tuple(design),
        case_files=case_files,
    )
