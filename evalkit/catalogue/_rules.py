"""The rules of each construct as the catalogue states them (ADR-0024).

A construct is a short list of rules with stable ids. The labeling guide (``guide.md``
at the top of the catalogue folder) states each rule a human labeler follows and marks it
in the text as ``[rule: DIMENSION.RULE_ID]``. A rule the guide states for labelers only
(how to treat a case the judge is never asked about) is declared in the guide's front
matter under ``guide_only`` with the reason, and is then listed, never compared::

    ---
    guide_only:
      faithfulness.not_applicable: the judge is never asked about such a case
    ---

The design files say which cases exercise which rule (``design/rules/*.csv``, columns
``case_id,dimension,rule,form``; ``form`` is ``plain`` or ``hard``, a rule in its hard
form). A case exercises a rule when the rule's condition holds in it, so that a labeler
applies the rule to reach the bin. Like the rest of ``design/``, no judge or labeler
sees them.

Everything here is read strictly: an unknown dimension, a malformed id, a guide-only rule
the text never marks, a rule-case row for an unknown case or a rule nobody states is a
problem naming the file and the line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import yaml

from evalkit.catalogue._collect import Collector, parse_yaml, read_csv, read_text
from evalkit.catalogue._models import RULE_ID_PATTERN, Case, FrozenConstants, Rubric

#: The guide's file name, at the top of the catalogue folder.
GUIDE_FILE = "guide.md"
#: Columns of a rule-case file in ``design/rules/``.
RULE_CASE_COLUMNS = ("case_id", "dimension", "rule", "form")
_MARK = re.compile(r"\[rule:\s*([^\]\s]*)\s*\]")
_RULE_ID = re.compile(RULE_ID_PATTERN)
_QUALIFIED = re.compile(r"^([a-z][a-z0-9_]*)\.([a-z][a-z0-9_]*)$")

Form = Literal["plain", "hard"]


@dataclass(frozen=True)
class Guide:
    """The labeling guide of a catalogue: its text and the rules it marks.

    ``rules`` maps each dimension to its rule ids in the order the guide first marks
    them, with the line of that first mark; ``guide_only`` maps ``(dimension, rule)``
    to the declared reason.
    """

    path: Path
    text: str
    """The guide as labelers read it (the front matter removed)."""
    rules: dict[str, dict[str, int]] = field(default_factory=dict)
    guide_only: dict[tuple[str, str], str] = field(default_factory=dict)

    def rule_ids(self, dimension: str, *, compared: bool = False) -> tuple[str, ...]:
        """The rule ids the guide states for ``dimension``; with ``compared`` only those
        a rubric in force must state (guide-only rules left out)."""
        ids = tuple(self.rules.get(dimension, {}))
        if compared:
            ids = tuple(r for r in ids if (dimension, r) not in self.guide_only)
        return ids


@dataclass(frozen=True)
class RuleCase:
    """One case exercising one rule of one dimension (design metadata)."""

    case_id: str
    dimension: str
    rule: str
    form: Form = "plain"


def load_guide(root: Path, dimensions: Iterable[str], col: Collector) -> Guide | None:
    """The guide at ``root/guide.md``, or ``None`` when the catalogue has none.

    ``dimensions`` are the dimensions a mark may name (the gated ones). Problems (a
    malformed mark or front matter, an unknown dimension, a guide-only rule never marked)
    are added to ``col``.
    """
    path = root / GUIDE_FILE
    if not path.is_file():
        return None
    raw = read_text(path, col)
    if raw is None:
        return None
    known = set(dimensions)
    body, front, offset = _split_front_matter(raw, path, col)
    rules: dict[str, dict[str, int]] = {}
    for number, line in enumerate(body.splitlines(), start=1 + offset):
        for mark in _MARK.finditer(line):
            qualified = _qualified(mark.group(1), path, f"line {number}", known, col)
            if qualified is not None:
                dim, rule = qualified
                rules.setdefault(dim, {}).setdefault(rule, number)
    guide_only: dict[tuple[str, str], str] = {}
    for key, reason in _guide_only(front, path, col).items():
        qualified = _qualified(key, path, "front matter", known, col)
        if qualified is None:
            continue
        if qualified[1] not in rules.get(qualified[0], {}):
            col.add(path, "front matter", key, "a guide-only rule the text never marks")
            continue
        guide_only[qualified] = reason
    return Guide(path=path, text=body, rules=rules, guide_only=guide_only)


def _split_front_matter(raw: str, path: Path, col: Collector) -> tuple[str, str, int]:
    """(body, front matter text, lines before the body)."""
    if not raw.startswith("---\n"):
        return raw, "", 0
    end = raw.find("\n---\n", 3)
    if end < 0:
        col.add(path, "line 1", None, "front matter opened with --- is never closed")
        return raw, "", 0
    front = raw[4:end]
    body = raw[end + 5 :]
    return body, front, raw[: end + 5].count("\n")


def _guide_only(front: str, path: Path, col: Collector) -> dict[str, str]:
    if not front.strip():
        return {}
    try:
        data = parse_yaml(front)
    except (yaml.YAMLError, RecursionError) as exc:
        col.add(path, "front matter", None, f"malformed YAML: {exc}")
        return {}
    if data is None:
        return {}
    if not isinstance(data, dict) or set(data) - {"guide_only"}:
        col.add(path, "front matter", None, "the front matter holds `guide_only` only")
        return {}
    only = data.get("guide_only") or {}
    if not isinstance(only, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in only.items()
    ):
        col.add(path, "front matter", "guide_only", "a mapping of DIMENSION.RULE to a reason")
        return {}
    return {k: " ".join(v.split()) for k, v in only.items()}


def _qualified(
    text: str, path: Path, where: str, known: set[str], col: Collector
) -> tuple[str, str] | None:
    match = _QUALIFIED.match(text)
    if match is None:
        col.add(path, where, None, f"rule mark {text!a} is not DIMENSION.RULE_ID")
        return None
    dim, rule = match.groups()
    if dim not in known:
        col.add(path, where, None, f"rule mark {text}: {dim!r} is not a gated dimension")
        return None
    return dim, rule


def load_rule_cases(
    root: Path,
    cases: list[Case],
    stated: dict[str, set[str]],
    col: Collector,
) -> list[RuleCase]:
    """Rows of ``design/rules/*.csv``: which case exercises which rule.

    ``stated`` maps each dimension to every rule id the guide or any rubric states; a row
    naming another rule, an unknown case or dimension, a bad ``form`` or a repeated
    (case, dimension, rule) is a problem.
    """
    folder = root / "design" / "rules"
    known = {c.id for c in cases}
    out: list[RuleCase] = []
    seen: dict[tuple[str, str, str], str] = {}
    for path in sorted(folder.glob("*.csv")) if folder.is_dir() else []:
        for row in read_csv(path, RULE_CASE_COLUMNS, col) or []:
            where = f"line {row.line}"
            case_id, dim, rule, form = (row.cells[c].strip() for c in RULE_CASE_COLUMNS)
            if case_id not in known:
                col.add(path, where, "case_id", f"unknown case {case_id!a}")
                continue
            if dim not in stated:
                col.add(path, where, "dimension", f"{dim!a} is not a gated dimension")
                continue
            if not _RULE_ID.fullmatch(rule) or rule not in stated[dim]:
                col.add(
                    path, where, "rule", f"{rule!a} is no rule of {dim} in the guide or a rubric"
                )
                continue
            if form not in ("plain", "hard"):
                col.add(path, where, "form", f"{form!a} is neither plain nor hard")
                continue
            key = (case_id, dim, rule)
            if key in seen:
                col.add(path, where, None, f"{case_id} {dim}.{rule} again (also {seen[key]})")
                continue
            seen[key] = f"{col.rel(path)} {where}"
            out.append(RuleCase(case_id, dim, rule, form))  # type: ignore[arg-type]
    return out


def stated_rules(
    guide: Guide | None, rubrics: dict[tuple[str, str], Rubric], constants: FrozenConstants
) -> dict[str, set[str]]:
    """Every rule id stated for each gated dimension, by the guide or by any rubric."""
    out: dict[str, set[str]] = {d: set() for d in constants.gated_dimensions}
    for dim in out:
        if guide is not None:
            out[dim].update(guide.rule_ids(dim))
    for (dim, _), rubric in rubrics.items():
        if dim in out:
            out[dim].update(rubric.rule_ids())
    return out


#: Columns of ``design/pairs/*.csv``.
PAIR_COLUMNS = ("pair_id", "case_a", "case_b", "rule", "differs")


@dataclass(frozen=True)
class MinimalPair:
    """Two cases that differ only where one rule acts (design metadata).

    ``differs`` is ``user`` (only the user's side differs; the final reply is the same
    text) or ``reply`` (only the final reply differs; everything before it is the same).
    """

    pair_id: str
    case_a: str
    case_b: str
    dimension: str
    rule: str
    differs: Literal["user", "reply"]


def load_pairs(
    root: Path, cases: list[Case], stated: dict[str, set[str]], col: Collector
) -> list[MinimalPair]:
    """Rows of ``design/pairs/*.csv`` (optional), each checked against the cases: the two
    halves exist, share a split and a locale, and really differ only where ``differs``
    says (the final reply byte-identical for ``user``; every turn before the final reply
    identical, and the final reply not, for ``reply``)."""
    folder = root / "design" / "pairs"
    by_id = {c.id: c for c in cases}
    out: list[MinimalPair] = []
    seen: set[str] = set()
    rows = [
        (path, row)
        for path in (sorted(folder.glob("*.csv")) if folder.is_dir() else [])
        for row in read_csv(path, PAIR_COLUMNS, col) or []
    ]
    for path, row in rows:
        where = f"line {row.line}"
        pid, a, b, qualified, differs = (row.cells[c].strip() for c in PAIR_COLUMNS)
        if pid in seen:
            col.add(path, where, "pair_id", f"{pid!a} again")
            continue
        seen.add(pid)
        match = _QUALIFIED.match(qualified)
        if (
            match is None
            or match.group(1) not in stated
            or match.group(2) not in stated[match.group(1)]
        ):
            col.add(path, where, "rule", f"{qualified!a} is no DIMENSION.RULE stated anywhere")
            continue
        missing = [x for x in (a, b) if x not in by_id]
        if missing or a == b:
            col.add(path, where, "case_a", f"unknown or identical case(s) {missing or [a]}")
            continue
        ca, cb = by_id[a], by_id[b]
        if (ca.split, ca.locale) != (cb.split, cb.locale):
            col.add(path, where, "case_b", "the two halves differ in split or locale")
            continue
        if differs == "user":
            ok = ca.turns[-1].text == cb.turns[-1].text and [
                t.text for t in ca.turns if t.role == "user"
            ] != [t.text for t in cb.turns if t.role == "user"]
            why = "the final replies differ, or the user turns do not"
        elif differs == "reply":
            ok = [t.text for t in ca.turns[:-1]] == [t.text for t in cb.turns[:-1]] and (
                ca.turns[-1].text != cb.turns[-1].text
            )
            why = "the turns before the final reply differ, or the final replies do not"
        else:
            col.add(path, where, "differs", f"{differs!a} is neither user nor reply")
            continue
        if not ok:
            col.add(path, where, "differs", f"{differs}: {why}")
            continue
        out.append(MinimalPair(pid, a, b, match.group(1), match.group(2), differs))  # type: ignore[arg-type]
    return out


def check_repeats(
    repeats: list[tuple[Path, str, str]],
    cases: list[Case],
    pairs: list[MinimalPair],
    col: Collector,
) -> None:
    """A case whose final user turn repeats another's is a problem unless the two are
    linked through declared minimal pairs (the same connected group of pairs)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.get(x, x) != x:
            x = parent[x]
        return x

    for p in pairs:
        parent[find(p.case_a)] = find(p.case_b)
    for path, case, earlier in repeats:
        if find(case) != find(earlier):
            col.add(path, case, "turns", f"final user turn repeats that of case {earlier}")
