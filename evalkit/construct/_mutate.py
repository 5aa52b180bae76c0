"""Would this catalogue catch a missing rule? Rubric mutation testing (ADR-0029).

For each rule the rubric in force states, a *mutant* is that rubric without the rule's
text (:meth:`evalkit.catalogue.Rubric.without`; the presence gate's mutant also loses the
signal-absent anchor, which is the same rule from the other side, so ``signal_absent``
has no mutant of its own). Each mutant is a derived rubric version with its own hash and
a name that says what it lacks (``v3-without-look_back``); the judge is not told (the
prompt shows it as ``v3``). It is judged through the ledger like any run, for the
dimension under test alone, on the calibration cases that exercise the rule
(``design/rules/``; a seeded sample of ``mutation.max_rule_cases`` of them when there are
more) plus a seeded control sample of the other gated cases (``mutation.control_sample``;
every gated case with ``all_cases``). The rubric in force is read on the same cases from
the judge's in-force answers (the calibration run's requests, judged if missing), so a
mutation run adds only the mutants' requests.

Per mutant: kappa on the judged cases under the mutant and under the rubric in force;
agreement with the consensus on the rule's own cases under each, with Wilson intervals;
the kappa verdict against the gate threshold; and the **outcome**, by the frozen rule
``mutation.kill`` (``gate_or_rule_interval``):

- ``killed``: the mutant's kappa is under the threshold while the rubric in force reaches
  it on the same cases, **or** on the rule's own cases the mutant's agreement interval
  lies wholly under the in-force agreement interval (the drop is more than chance);
- ``survived``: the rule has cases, and neither happened: the catalogue cannot tell this
  judge with the rule from this judge without it;
- ``not_exercised``: no calibration case exercises the rule. Never "survived".

Each row also says **why** (columns ``rule_changed``, ``reason``, ``why``), from the
answers themselves: ``rule_changed`` counts the rule's cases on which the mutant's answer
differs from the in-force answer. A killed mutant is ``gate`` or ``rule_interval``. A
survivor is ``judge_knows_rule`` when no answer changed (this judge applies the rule
without its text; the catalogue could defend it only with cases an unaided reading gets
wrong), ``too_few_cases`` when answers changed and agreement fell but the intervals still
overlap (with how many rule cases at the same agreements would separate them), or
``no_drop`` when answers changed without agreement falling.

The mutation score of a dimension is killed over exercised. A survivor says what to do:
add cases that exercise the rule (or its hard form), not touch the rubric. With the key-less
baseline the table is a floor (it does not read rules); with a judge that reads it is the
real measurement.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from evalkit.catalogue import Case, Catalogue
from evalkit.construct._mutants import (
    Mutant,
    mutants,
    mutation_cases,
    mutation_constants,
    plan,
    rule_case_ids,
    with_mutants,
)
from evalkit.construct._mutation_table import (
    MUTANT_COLUMNS,
    MutationResult,
    cases_to_separate,
    explain,
    mutation_table,
)

__all__ = [
    "MUTANT_COLUMNS", "Mutant", "MutationResult", "cases_to_separate", "explain", "mutants",
    "mutate", "mutation_cases", "mutation_requests", "mutation_table", "plan",
    "rule_case_ids", "with_mutants",
]  # fmt: skip


def mutation_requests(
    catalogue: Catalogue,
    found: Sequence[Mutant],
    judged: dict[tuple[str, str], list[Case]],
    identity: Any,
    salt: bytes,
) -> list[Any]:
    """Every request of a mutation run: each mutant on its cases, one dimension per
    request, and the rubric in force on the same cases as the calibration run asks it
    (every gated dimension in one call)."""
    from evalkit.judge._requests import build_requests

    derived = with_mutants(catalogue, found)
    out: dict[str, Any] = {}
    union: dict[str, Case] = {}
    for m in found:
        cases = judged[(m.dimension, m.rule)]
        union.update((c.id, c) for c in cases)
        asked = {m.dimension: m.version}
        for req in build_requests(
            derived, cases, [m.dimension], identity, salt, rubric_versions=asked
        ):
            out.setdefault(req.key, req)
    gated = list(catalogue.constants.gated_dimensions)
    for req in build_requests(catalogue, list(union.values()), gated, identity, salt):
        out.setdefault(req.key, req)
    return list(out.values())


def mutate(
    catalogue: Catalogue,
    *,
    judge: str,
    ledger: str | Path,
    dimensions: Sequence[str] | None = None,
    rules: Sequence[str] | None = None,
    all_cases: bool = False,
    seed: int = 0,
    progress: bool = False,
    confirm: Callable[[Any], bool] | None = None,
    backend: Any = None,
) -> MutationResult:
    """Judge every mutant (and the rubric in force on the same cases, as the calibration
    run asks it) through ``ledger``
    and return the :class:`MutationResult`. Nothing already in the ledger is asked again;
    a networked judge asks ``confirm`` with the plan first (see
    :func:`evalkit.judge.judge_cases`)."""
    from evalkit.judge import judge_cases, load_ledger

    found, judged = plan(
        catalogue, dimensions=dimensions, rules=rules, all_cases=all_cases, seed=seed
    )
    derived = with_mutants(catalogue, found)
    union: dict[str, Case] = {}
    for m in found:
        cases = judged[(m.dimension, m.rule)]
        union.update((c.id, c) for c in cases)
        judge_cases(
            derived, cases, [m.dimension], judge=judge, ledger=ledger,
            rubric_versions={m.dimension: m.version}, progress=progress, confirm=confirm,
            backend=backend,
        )  # fmt: skip
    judge_cases(  # the rubric in force, as the calibration run asks it
        catalogue, list(union.values()), None, judge=judge, ledger=ledger, progress=progress,
        confirm=confirm, backend=backend,
    )  # fmt: skip
    frame = load_ledger(ledger)
    table = mutation_table(frame, catalogue, found, judged)
    rule = mutation_constants(catalogue)
    return MutationResult(judge, table, catalogue.constants.gate.threshold, rule.interval_level)
