"""Where each rule of a construct is stated and exercised, and how two versions differ.

Pure functions over a loaded :class:`~evalkit.catalogue.Catalogue` (ADR-0024).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import pandas as pd

from evalkit.catalogue import Catalogue, Rubric

#: The name that stands for the labeling guide in :func:`diff_rules`.
GUIDE = "guide"
Change = Literal["added", "removed", "reworded", "same"]


def rule_inventory(catalogue: Catalogue) -> dict[str, Any]:
    """Per gated dimension, every rule the guide or a rubric states, in the guide's order
    (then any rule only rubrics state), with where it is stated and how many cases
    exercise it per split and locale.

    Shape (the JSON of ``evalkit construct rules``)::

        {"dimensions": {DIM: {"in_force": VERSION, "rules": [
            {"id", "in_guide", "guide_only", "guide_line", "in_rubrics": [versions],
             "in_force", "cases": {split: {locale: n}}, "hard": n, "below_min_cell_n": bool}
        ]}}}

    ``below_min_cell_n`` is true when the rule's calibration cases are fewer than the
    gate's ``min_cell_n``: its agreement is then descriptive.
    """
    guide = catalogue.guide
    constants = catalogue.constants
    exercised = catalogue.rule_cases_frame()
    splits = sorted({c.split for c in catalogue.cases})
    locales = sorted({c.locale for c in catalogue.cases})
    out: dict[str, Any] = {}
    for dim in constants.gated_dimensions:
        versions = sorted(v for d, v in catalogue.rubrics if d == dim)
        ids = list(guide.rule_ids(dim)) if guide else []
        for version in versions:
            ids += [r for r in catalogue.rubric(dim, version).rule_ids() if r not in ids]
        in_force = constants.rubrics_in_force.get(dim)
        rules = []
        for rule in ids:
            mine = exercised[(exercised["dimension"] == dim) & (exercised["rule"] == rule)]
            cases = {
                split: {
                    loc: int(((mine["split"] == split) & (mine["locale"] == loc)).sum())
                    for loc in locales
                }
                for split in splits
            }
            stated_in = [v for v in versions if rule in catalogue.rubric(dim, v).rule_ids()]
            rules.append(
                {
                    "id": rule,
                    "in_guide": bool(guide and rule in guide.rule_ids(dim)),
                    "guide_only": bool(guide and (dim, rule) in guide.guide_only),
                    "guide_line": (guide.rules.get(dim, {}).get(rule) if guide else None),
                    "in_rubrics": stated_in,
                    "in_force": in_force in stated_in,
                    "cases": cases,
                    "hard": int((mine["form"] == "hard").sum()),
                    "below_min_cell_n": not (guide and (dim, rule) in guide.guide_only)
                    and int((mine["split"] == "calibration").sum()) < constants.gate.min_cell_n,
                }
            )
        out[dim] = {"in_force": in_force, "rules": rules}
    return {"dimensions": out}


def inventory_frame(inventory: dict[str, Any]) -> pd.DataFrame:
    """:func:`rule_inventory` as one row per (dimension, rule): ``dimension``, ``rule``,
    ``guide`` (yes / guide-only / no), ``rubrics``, ``in_force``, then one column per
    ``split locale`` with its case count, ``hard`` and ``descriptive``."""
    rows = []
    for dim, body in inventory["dimensions"].items():
        for r in body["rules"]:
            row: dict[str, Any] = {
                "dimension": dim,
                "rule": r["id"],
                "guide": "guide-only" if r["guide_only"] else ("yes" if r["in_guide"] else "no"),
                "rubrics": " ".join(r["in_rubrics"]) or "-",
                "in_force": "yes" if r["in_force"] else "no",
            }
            for split, per in r["cases"].items():
                for locale, n in per.items():
                    row[f"{split} {locale}"] = n
            row["hard"] = r["hard"]
            row["descriptive"] = "yes" if r["below_min_cell_n"] else ""
            rows.append(row)
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class RuleDiff:
    """The rules of one dimension in two statements of its construct (``a`` then ``b``).

    ``table`` has one row per rule: ``rule``, ``change`` (``added``: only ``b`` states
    it; ``removed``: only ``a``; ``reworded``: both, in other words; ``same``), ``a``
    and ``b`` (each side's text, ``None`` where it states none, the guide's line for
    the guide).
    """

    dimension: str
    a: str
    b: str
    table: pd.DataFrame

    def changes(self, change: Change) -> list[str]:
        """The rule ids with this change."""
        return [str(r) for r in self.table.loc[self.table["change"] == change, "rule"]]

    def __repr__(self) -> str:
        parts = [f"RuleDiff {self.dimension}: {self.a} -> {self.b}"]
        for change in ("added", "removed", "reworded"):
            ids = self.changes(change)
            parts.append(f"  {change}: {', '.join(ids) if ids else '-'}")
        parts.append(f"  same: {len(self.changes('same'))}")
        return "\n".join(parts)


def _statement(catalogue: Catalogue, dimension: str, name: str) -> dict[str, str | None]:
    if name == GUIDE:
        guide = catalogue.guide
        if guide is None:
            raise ValueError(f"catalogue {catalogue.root} has no guide.md")
        lines = guide.rules.get(dimension, {})
        return {
            r: f"guide.md line {line}"
            for r, line in lines.items()
            if (dimension, r) not in guide.guide_only
        }
    from evalkit.construct._compare import rubric_version

    rubric: Rubric = catalogue.rubric(dimension, rubric_version(catalogue, dimension, name))
    return {r: " ".join(rubric.rule_text(r).split()) for r in rubric.rule_ids()}


def diff_rules(catalogue: Catalogue, dimension: str, a: str, b: str) -> RuleDiff:
    """The rules added, removed and reworded from ``a`` to ``b``: rubric versions (or
    their hashes) of ``dimension``, or ``"guide"`` for the labeling guide (whose rules
    have no rubric text, so against the guide a rule is only added, removed or kept).

    ``ValueError`` for an unknown version or a catalogue without a guide.
    """
    if dimension not in catalogue.constants.gated_dimensions:
        raise ValueError(f"{dimension!r} is not a gated dimension of {catalogue.root}")
    left, right = _statement(catalogue, dimension, a), _statement(catalogue, dimension, b)
    versus_guide = GUIDE in (a, b)
    rows = []
    for rule in [*left, *(r for r in right if r not in left)]:
        ta, tb = left.get(rule), right.get(rule)
        if ta is None:
            change: Change = "added"
        elif tb is None:
            change = "removed"
        elif versus_guide or ta == tb:
            change = "same"
        else:
            change = "reworded"
        rows.append({"rule": rule, "change": change, "a": ta, "b": tb})
    table = pd.DataFrame(rows, columns=["rule", "change", "a", "b"])
    return RuleDiff(dimension, a, b, table)
