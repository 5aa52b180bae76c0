"""Read a catalogue folder into validated records, collecting every problem.

The loader never stops at the first problem and never loads part of a catalogue:
it either returns a whole, valid :class:`Catalogue` or raises
:class:`~evalkit.errors.CatalogueError` listing every problem with its file,
record and field. The label side (label sets, consensus, design) is read by
:mod:`evalkit.catalogue._labels_io`.

Loading is strict (:mod:`evalkit.catalogue._collect`, :mod:`evalkit.catalogue._layout`):
a file the loader would not read, an empty file, a duplicate YAML key, a second
top-level key, a coerced type or a path leaving the catalogue folder is a problem, so
that no case, label or constant is ever dropped or read other than as written.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from evalkit.catalogue._catalogue import Catalogue
from evalkit.catalogue._collect import Collector, list_under, read_text, read_yaml, validate
from evalkit.catalogue._consensus import ConsensusRule, build_consensus
from evalkit.catalogue._labels_io import (
    LABEL_COLUMNS,
    check_consensus_complete,
    load_consensus_rule,
    load_design,
    load_label_sets,
    read_labels,
)
from evalkit.catalogue._layout import check_layout
from evalkit.catalogue._models import (
    CATALOGUE_MAX_TURNS,
    Case,
    FrozenConstants,
    Label,
    LocaleResources,
    Rubric,
)
from evalkit.catalogue._ratify import RATIFIED_FILE, Ratification
from evalkit.catalogue._rules import (
    MinimalPair,
    RuleCase,
    check_repeats,
    load_guide,
    load_pairs,
    load_rule_cases,
    stated_rules,
)
from evalkit.errors import CatalogueError, Problem

__all__ = ["LABEL_COLUMNS", "load", "read_labels"]


def _load_constants(root: Path, col: Collector) -> FrozenConstants | None:
    path = root / "constants.yaml"
    if not path.exists():
        col.add(path, None, None, "missing: every catalogue needs its frozen constants")
        return None
    data = read_yaml(path, col)
    if data is None:
        return None
    constants = validate(FrozenConstants, data, path, None, col)
    if constants is None:
        return None
    framing_path = root / constants.framing_file
    if not framing_path.resolve().is_relative_to(root.resolve()):
        col.add(path, None, "framing_file", f"{constants.framing_file} leaves the catalogue folder")
        return None
    if not framing_path.is_file():
        col.add(path, None, "framing_file", f"cannot read {constants.framing_file}: no such file")
        return None
    framing = read_text(framing_path, col)
    if framing is None:
        return None
    if not framing.strip():
        col.add(framing_path, None, None, "empty: the framing is the text the judge is given")
        return None
    return constants.model_copy(update={"framing": framing})


def _load_ratifications(root: Path, col: Collector) -> tuple[Ratification, ...]:
    """``ratified.yaml`` (optional): the record of ratified constants (ADR-0013)."""
    path = root / RATIFIED_FILE
    if not path.exists():
        return ()
    rows = list_under(read_yaml(path, col), "ratifications", path, col, allow_empty=True)
    out = []
    for i, row in enumerate(rows):
        record = validate(Ratification, row, path, f"ratifications[{i}]", col)
        if record is not None:
            out.append(record)
    return tuple(out)


def _load_resources(root: Path, col: Collector) -> dict[str, LocaleResources]:
    path = root / "resources.yaml"
    if not path.exists():
        col.add(path, None, None, "missing: the locale resources table is required")
        return {}
    rows = list_under(read_yaml(path, col), "locales", path, col, allow_empty=False)
    out: dict[str, LocaleResources] = {}
    for i, row in enumerate(rows):
        rec = row.get("locale", f"locales[{i}]") if isinstance(row, dict) else f"locales[{i}]"
        res = validate(LocaleResources, row, path, str(rec), col)
        if res is None:
            continue
        if res.locale in out:
            col.add(path, res.locale, "locale", "duplicate locale row")
        out[res.locale] = res
    return out


def _load_rubrics(
    root: Path, constants: FrozenConstants | None, col: Collector
) -> dict[tuple[str, str], Rubric]:
    out: dict[tuple[str, str], Rubric] = {}
    folder = root / "rubrics"
    for path in sorted(folder.glob("*.yaml")):
        data = read_yaml(path, col)
        if data is None:
            continue
        rubric = validate(Rubric, data, path, path.stem, col)
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
                name = f"rubrics/{dim}.{version}.yaml"
                why = "is not valid (above)" if (root / name).is_file() else "does not exist"
                col.add(
                    root / "constants.yaml",
                    None,
                    "rubrics_in_force",
                    f"{dim}: {version}, but rubric file {name} {why}",
                )
    return out


def _case_files(root: Path) -> Iterable[Path]:
    return sorted((root / "cases").glob("*/*/*.yaml"))


def _load_cases(
    root: Path,
    resources: dict[str, LocaleResources],
    col: Collector,
    repeats: list[tuple[Path, str, str]] | None = None,
) -> tuple[list[Case], set[str], dict[str, str]]:
    """Valid cases, the ids of records that failed validation (already reported), and the
    file each case came from (relative to the catalogue's parent).

    A case whose final user turn repeats another's is a problem, unless both are halves
    of declared minimal pairs (``design/pairs/``): with ``repeats`` given, such cases
    are appended to it as (file, case, earlier case) for :func:`load` to decide."""
    cases: list[Case] = []
    invalid: set[str] = set()
    seen: dict[str, str] = {}
    final_turns: dict[str, str] = {}
    for path in _case_files(root):
        split_dir, locale_dir = path.parent.parent.name, path.parent.name
        rows = list_under(read_yaml(path, col), "cases", path, col, allow_empty=False)
        for i, row in enumerate(rows):
            rid = row.get("id") if isinstance(row, dict) else None
            record = str(rid) if rid else f"cases[{i}]"
            case = validate(Case, row, path, record, col)
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
                if repeats is not None:
                    repeats.append((path, case.id, final_turns[final]))
                else:
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


def missing_folder(root: Path) -> str:
    """Why ``root`` is not a catalogue folder: the absolute path looked at, the working
    directory a relative path was read from, and what to do (a relative path is read from
    the working directory, the usual trap in a notebook started in ``notebooks/``)."""
    if root.exists():
        return f"not a folder ({root.resolve()}): a catalogue is a folder"
    if root.is_absolute():
        return f"catalogue folder not found (looked for {root}); check the path"
    return (
        f"catalogue folder not found (looked for {root.resolve()} from the working directory "
        f"{Path.cwd()}); run from the project root or pass the catalogue's path (in a "
        "notebook, call evalkit.report.work_from_project_root() first)"
    )


def load(path: str | Path = "catalogues") -> Catalogue:
    """Load and validate the catalogue at ``path``.

    Returns a :class:`Catalogue` with ``.cases``, ``.labels`` (the consensus the gate
    reads), ``.label_sets`` (every labeler's set), ``.rubrics``, ``.constants``,
    ``.resources`` and ``.design`` (author metadata). Raises :class:`~evalkit.errors.CatalogueError`
    listing every problem (file, record, field, message) if anything is wrong; nothing
    is skipped silently and nothing is partly loaded.
    """
    root = Path(path)
    col = Collector(root)
    if not root.is_dir():
        raise CatalogueError([Problem(str(root), None, None, missing_folder(root))])
    constants = _load_constants(root, col)
    check_layout(root, col, framing_file=constants.framing_file if constants else "framing.txt")
    ratifications = _load_ratifications(root, col)
    resources = _load_resources(root, col)
    rubrics = _load_rubrics(root, constants, col)
    repeats: list[tuple[Path, str, str]] = []
    cases, invalid, case_files = _load_cases(root, resources, col, repeats)
    label_sets: dict[str, list[Label]] = {}
    consensus: list[Label] = []
    rule = ConsensusRule()
    if constants is not None:
        label_sets = load_label_sets(root, cases, invalid, constants, col)
        rule = load_consensus_rule(root, label_sets, col)
        consensus = build_consensus(label_sets, constants.bins, rule)
        check_consensus_complete(root, cases, consensus, constants, col)
    design = load_design(root, cases, constants, col)
    guide = None
    rule_cases: list[RuleCase] = []
    pairs: list[MinimalPair] = []
    if constants is not None:
        guide = load_guide(root, constants.gated_dimensions, col)
        stated = stated_rules(guide, rubrics, constants)
        rule_cases = load_rule_cases(root, cases, stated, col)
        pairs = load_pairs(root, cases, stated, col)
    check_repeats(repeats, cases, pairs, col)
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
        ratifications=ratifications,
        guide=guide,
        rule_cases=tuple(rule_cases),
        pairs=tuple(pairs),
    )
