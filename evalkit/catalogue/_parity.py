"""Rule parity: the guide and each rubric in force state the same rules (ADR-0024).

The founding record's failure was a rule the human label followed and the judge's rubric
did not state; the faithfulness rubric contradicting the guide was the same failure
again. Both were free texts nobody compared. Here they are compared by rule id:

- a rule the guide states for a gated dimension (not declared guide-only) that the
  rubric in force does not state is a problem (``missing_in_rubric``);
- a rule the rubric in force states that the guide does not is a problem
  (``not_in_guide``);
- a rule id in any rubric version that the guide does not know for its dimension is a
  problem (``unknown_rule``): a typo would otherwise read as a new rule.

Guide-only rules are listed as notes with their reason. A catalogue without a guide is
not compared (a note says so). Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from evalkit.catalogue._catalogue import Catalogue
from evalkit.catalogue._rules import GUIDE_FILE

ParityKind = Literal["missing_in_rubric", "not_in_guide", "unknown_rule"]


@dataclass(frozen=True)
class RuleProblem:
    """One rule the guide and a rubric disagree on."""

    dimension: str
    rule: str
    kind: ParityKind
    rubric_file: str
    guide_file: str

    def __str__(self) -> str:
        what = {
            "missing_in_rubric": "the guide states it and the rubric in force does not",
            "not_in_guide": "the rubric in force states it and the guide does not",
            "unknown_rule": "the rubric states a rule the guide does not know",
        }[self.kind]
        return f"{self.dimension}.{self.rule}: {what} ({self.rubric_file}, {self.guide_file})"


@dataclass(frozen=True)
class Parity:
    """Problems (each fails ``catalogue check``) and notes (listed, never failing)."""

    problems: tuple[RuleProblem, ...]
    notes: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def rule_parity(catalogue: Catalogue) -> Parity:
    """Compare the guide's rules with every rubric of the catalogue's gated dimensions."""
    guide = catalogue.guide
    if guide is None:
        return Parity((), (f"no {GUIDE_FILE} in the catalogue: rule parity not checked",))
    guide_file = f"{catalogue.root / GUIDE_FILE}"
    problems: list[RuleProblem] = []
    notes = [
        f"{d}.{r} is guide-only: {reason}" for (d, r), reason in sorted(guide.guide_only.items())
    ]
    for dim in catalogue.constants.gated_dimensions:
        known = set(guide.rule_ids(dim))
        in_force = catalogue.constants.rubrics_in_force.get(dim)
        for (d, version), rubric in sorted(catalogue.rubrics.items()):
            if d != dim:
                continue
            file = f"{catalogue.root / 'rubrics' / f'{d}.{version}.yaml'}"
            for rule in rubric.rule_ids():
                if rule not in known:
                    kind: ParityKind = "not_in_guide" if version == in_force else "unknown_rule"
                    problems.append(RuleProblem(dim, rule, kind, file, guide_file))
            if version == in_force:
                stated = set(rubric.rule_ids())
                for rule in guide.rule_ids(dim, compared=True):
                    if rule not in stated:
                        problems.append(
                            RuleProblem(dim, rule, "missing_in_rubric", file, guide_file)
                        )
    return Parity(tuple(problems), tuple(notes))
