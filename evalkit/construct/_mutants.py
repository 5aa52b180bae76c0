"""Which mutants a rubric has and which cases each is judged on (ADR-0029; the whole
method is described in :mod:`evalkit.construct._mutate`). Pure: nothing is judged here.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evalkit.catalogue import GATED_STRATA, Case, Catalogue, Rubric
from evalkit.catalogue._models import PRESENCE_GATE, SIGNAL_ABSENT
from evalkit.errors import EvalkitError


@dataclass(frozen=True)
class Mutant:
    """The rubric in force of ``dimension`` without ``rule``."""

    dimension: str
    rule: str
    rubric: Rubric

    @property
    def version(self) -> str:
        return self.rubric.version


def mutants(
    catalogue: Catalogue, dimension: str, rules: Sequence[str] | None = None
) -> list[Mutant]:
    """One mutant per rule the rubric in force states (``signal_absent`` folded into
    ``presence_gate``), in the rubric's order; ``rules`` keeps only those named (an id the
    rubric does not state is a ``ValueError``)."""
    rubric = catalogue.rubric(dimension)
    ids = [r for r in rubric.rule_ids() if r != SIGNAL_ABSENT]
    if rules is not None:
        wanted = [PRESENCE_GATE if r == SIGNAL_ABSENT else r for r in rules]
        unknown = sorted(set(wanted) - set(ids))
        if unknown:
            raise ValueError(
                f"rubric {dimension} {rubric.version} states no rule {', '.join(unknown)} "
                f"(it states {', '.join(ids) or 'none'})"
            )
        ids = [r for r in ids if r in wanted]
    return [Mutant(dimension, r, rubric.without(r)) for r in ids]


def with_mutants(catalogue: Catalogue, found: Sequence[Mutant]) -> Catalogue:
    """The catalogue with the mutants' rubrics added as derived versions (nothing is
    written anywhere)."""
    rubrics = dict(catalogue.rubrics)
    for m in found:
        rubrics[(m.dimension, m.version)] = m.rubric
    return dataclasses.replace(catalogue, rubrics=rubrics)


def _gated_cases(catalogue: Catalogue, dimension: str) -> list[Case]:
    labelled = {lab.case_id for lab in catalogue.labels if lab.dimension == dimension}
    return [
        c
        for c in catalogue.split("calibration")
        if c.stratum in GATED_STRATA and c.id in labelled
        and (dimension != "faithfulness" or c.has_sources)
    ]  # fmt: skip


def rule_case_ids(catalogue: Catalogue, dimension: str, rule: str) -> set[str]:
    """Calibration cases that exercise ``rule`` (``presence_gate`` and ``signal_absent``
    together)."""
    rules = {PRESENCE_GATE, SIGNAL_ABSENT} if rule in (PRESENCE_GATE, SIGNAL_ABSENT) else {rule}
    gated = {c.id for c in _gated_cases(catalogue, dimension)}
    return {
        rc.case_id
        for rc in catalogue.rule_cases
        if rc.dimension == dimension and rc.rule in rules and rc.case_id in gated
    }


def mutation_cases(
    catalogue: Catalogue, dimension: str, rule: str, *, all_cases: bool = False, seed: int = 0
) -> list[Case]:
    """The cases a mutant is judged on: the rule's cases (a seeded sample of
    ``mutation.max_rule_cases`` when there are more) plus the seeded control sample (every
    gated case with ``all_cases``), in catalogue order."""
    gated = _gated_cases(catalogue, dimension)
    if all_cases:
        return gated
    constants = mutation_constants(catalogue)
    rng = random.Random(f"{seed}:{dimension}:{rule}")
    mine = sorted(rule_case_ids(catalogue, dimension, rule))
    if len(mine) > constants.max_rule_cases:
        mine = rng.sample(mine, constants.max_rule_cases)
    chosen = set(mine)
    others = sorted(c.id for c in gated if c.id not in chosen)
    keep = chosen | set(rng.sample(others, min(constants.control_sample, len(others))))
    return [c for c in gated if c.id in keep]


def mutation_constants(catalogue: Catalogue) -> Any:
    rule = catalogue.constants.mutation
    if rule is None:
        raise EvalkitError(
            f"{catalogue.root}/constants.yaml declares no `mutation:` rule (what killed means, "
            "the control sample): declare it with an ADR before mutation testing"
        )
    return rule


def plan(
    catalogue: Catalogue,
    *,
    dimensions: Sequence[str] | None = None,
    rules: Sequence[str] | None = None,
    all_cases: bool = False,
    seed: int = 0,
) -> tuple[list[Mutant], dict[tuple[str, str], list[Case]]]:
    """The mutants and the cases each is judged on (nothing judged)."""
    mutation_constants(catalogue)
    dims = list(dimensions or [d for d in ("self_harm", "escalation")
                               if d in catalogue.constants.gated_dimensions])  # fmt: skip
    found: list[Mutant] = []
    judged: dict[tuple[str, str], list[Case]] = {}
    for dim in dims:
        for m in mutants(catalogue, dim, rules):
            found.append(m)
            judged[(dim, m.rule)] = mutation_cases(
                catalogue, dim, m.rule, all_cases=all_cases, seed=seed
            )
    return found, judged
