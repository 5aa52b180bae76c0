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

import dataclasses
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape as html_escape
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit._display import Markup, card, frame_table, key_values
from evalkit.agreement import cohens_kappa
from evalkit.agreement._proportion import wilson_interval
from evalkit.catalogue import GATED_STRATA, Case, Catalogue, Rubric
from evalkit.catalogue._models import PRESENCE_GATE, SIGNAL_ABSENT
from evalkit.errors import EvalkitError

#: Columns of :attr:`MutationResult.table`.
MUTANT_COLUMNS = (
    "dimension", "rule", "version", "rubric_hash", "n", "kappa", "kappa_in_force",
    "rule_n", "rule_agreement", "rule_ci_low", "rule_ci_high", "in_force_rule_agreement",
    "in_force_ci_low", "in_force_ci_high", "verdict", "verdict_in_force", "outcome",
    "rule_changed", "reason", "why",
)  # fmt: skip

#: Largest number of rule cases :func:`cases_to_separate` looks for.
MAX_CASES_SOUGHT = 2000


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
    constants = _constants(catalogue)
    rng = random.Random(f"{seed}:{dimension}:{rule}")
    mine = sorted(rule_case_ids(catalogue, dimension, rule))
    if len(mine) > constants.max_rule_cases:
        mine = rng.sample(mine, constants.max_rule_cases)
    chosen = set(mine)
    others = sorted(c.id for c in gated if c.id not in chosen)
    keep = chosen | set(rng.sample(others, min(constants.control_sample, len(others))))
    return [c for c in gated if c.id in keep]


def _constants(catalogue: Catalogue) -> Any:
    rule = catalogue.constants.mutation
    if rule is None:
        raise EvalkitError(
            f"{catalogue.root}/constants.yaml declares no `mutation:` rule (what killed means, "
            "the control sample): declare it with an ADR before mutation testing"
        )
    return rule


@dataclass(frozen=True)
class MutationResult:
    """The mutant table and the mutation score per dimension (see the module docstring)."""

    judge: str
    table: pd.DataFrame
    threshold: float
    level: float

    def score(self, dimension: str) -> float | None:
        """Killed over exercised for ``dimension``; None when no mutant is exercised."""
        mine = self.table[self.table["dimension"] == dimension]
        exercised = mine[mine["outcome"] != "not_exercised"]
        if exercised.empty:
            return None
        return float((exercised["outcome"] == "killed").mean())

    @property
    def scores(self) -> dict[str, float | None]:
        return {str(d): self.score(str(d)) for d in dict.fromkeys(self.table["dimension"])}

    def to_dict(self) -> dict[str, Any]:
        rows = self.table.astype(object).where(self.table.notna(), None).to_dict("records")
        return {
            "judge": self.judge,
            "threshold": self.threshold,
            "scores": self.scores,
            "mutants": [{**r, "rule_agreement": r["rule_agreement"]} for r in rows],
        }

    def __repr__(self) -> str:
        def f(v: Any) -> str:
            return "n/a" if v is None or pd.isna(v) else f"{float(v):.2f}"

        lines = [f"MutationResult(judge {self.judge!r}; threshold {self.threshold:.2f})"]
        for dim, score in self.scores.items():
            lines.append(f"  {dim}: mutation score {f(score)}")
        for r in self.table.itertuples():
            lines.append(
                f"    {r.rule:<20} {r.outcome:<13} kappa {f(r.kappa)} (in force "
                f"{f(r.kappa_in_force)}), rule cases {r.rule_n}: agreement "
                f"{f(r.rule_agreement)} (in force {f(r.in_force_rule_agreement)})"
            )
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        score_items = [(f"Mutation score, {d}", _pct(s)) for d, s in self.scores.items()]
        shown = self.table.drop(columns=["rubric_hash"]).copy()
        for col in shown.columns:
            if shown[col].dtype.kind == "f":
                shown[col] = shown[col].round(3)
        shown = shown.drop(columns=["why"])
        survived = self.table[self.table["outcome"] != "killed"]
        notes = [
            html_escape(f"{r.dimension}.{r.rule} {str(r.outcome).replace('_', ' ')}: {r.why}")
            for r in survived.itertuples()
        ]
        parts: list[Any] = [key_values([("Judge", self.judge), *score_items]), frame_table(shown)]
        if notes:
            parts.append(Markup("<p>" + "<br>".join(notes) + "</p>"))
        return card("Would this catalogue catch a missing rule?", *parts)


def _pct(value: float | None) -> str:
    return "n/a (no rule exercised)" if value is None else f"{value:.0%}"


def mutation_table(
    frame: pd.DataFrame,
    catalogue: Catalogue,
    found: Sequence[Mutant],
    judged: dict[tuple[str, str], list[Case]],
) -> pd.DataFrame:
    """The mutant table from a ledger ``frame`` holding the mutants' and the in-force
    single-dimension answers (pure; see the module docstring for the columns' meaning)."""
    from evalkit.gate import complete_rows, study_pairs

    rule = _constants(catalogue)
    bins = list(catalogue.constants.bins)
    threshold = catalogue.constants.gate.threshold
    derived = with_mutants(catalogue, found)
    rows = []
    for m in found:
        cases = {c.id for c in judged[(m.dimension, m.rule)]}
        mine = rule_case_ids(catalogue, m.dimension, m.rule) & cases
        out: dict[str, Any] = {
            "dimension": m.dimension,
            "rule": m.rule,
            "version": m.version,
            "rubric_hash": m.rubric.content_hash(bins),
        }
        for tag, version in (("m", m.version), ("f", None)):
            asked = {m.dimension: version} if version else None
            pairs = study_pairs(
                frame, derived.labels, derived, rubric_versions=asked, dimensions=[m.dimension]
            )
            pairs = complete_rows(pairs[pairs["case_id"].isin(cases)], bins)
            k = cohens_kappa(list(pairs["judge"]), list(pairs["human"]), bins)
            on_rule = pairs[pairs["case_id"].isin(mine)]
            agree = int((on_rule["judge"] == on_rule["human"]).sum())
            low, high = wilson_interval(agree, len(on_rule), rule.interval_level)
            out[f"{tag}_n"], out[f"{tag}_kappa"] = k.n, k.value
            out[f"{tag}_rule"] = (len(on_rule), agree / len(on_rule) if len(on_rule) else None)
            out[f"{tag}_answers"] = on_rule.set_index("case_id")["judge"]
            out[f"{tag}_ci"] = (low, high)
        rule_n, m_agree = out.pop("m_rule")
        _, f_agree = out.pop("f_rule")
        (m_lo, m_hi), (f_lo, f_hi) = out.pop("m_ci"), out.pop("f_ci")
        kappa_m, kappa_f = out.pop("m_kappa"), out.pop("f_kappa")
        out["n"] = out.pop("m_n")
        out.pop("f_n")

        m_ans, f_ans = out.pop("m_answers"), out.pop("f_answers")
        both = m_ans.index.intersection(f_ans.index)
        changed = int((m_ans[both] != f_ans[both]).sum())

        def verdict(k: float | None) -> str:
            return "PASS" if k is not None and k >= threshold else "FAIL"

        by_gate = verdict(kappa_m) == "FAIL" and verdict(kappa_f) == "PASS"
        by_interval = m_hi is not None and f_lo is not None and m_hi < f_lo
        if not mine:
            outcome = "not_exercised"
        elif by_gate or by_interval:
            outcome = "killed"
        else:
            outcome = "survived"
        reason, why = explain(
            outcome, by_gate=by_gate, rule_n=rule_n, changed=changed, mutant=m_agree,
            in_force=f_agree, level=rule.interval_level, kappa=kappa_m,
            kappa_in_force=kappa_f, threshold=threshold,
        )  # fmt: skip
        out.update(
            kappa=kappa_m, kappa_in_force=kappa_f, rule_n=rule_n, rule_agreement=m_agree,
            rule_ci_low=m_lo, rule_ci_high=m_hi, in_force_rule_agreement=f_agree,
            in_force_ci_low=f_lo, in_force_ci_high=f_hi, verdict=verdict(kappa_m),
            verdict_in_force=verdict(kappa_f), outcome=outcome, rule_changed=changed,
            reason=reason, why=why,
        )  # fmt: skip
        rows.append(out)
    return pd.DataFrame(rows, columns=list(MUTANT_COLUMNS))


def cases_to_separate(mutant: float, in_force: float, level: float) -> int | None:
    """The fewest rule cases at which agreements ``mutant`` and ``in_force`` (shares, the
    mutant's lower) give Wilson intervals that no longer overlap; None when even
    :data:`MAX_CASES_SOUGHT` cases would not (or the mutant's agreement is not lower)."""
    if mutant >= in_force:
        return None
    n = 1
    while n <= MAX_CASES_SOUGHT:
        _, m_hi = wilson_interval(round(mutant * n), n, level)
        f_lo, _ = wilson_interval(round(in_force * n), n, level)
        if m_hi is not None and f_lo is not None and m_hi < f_lo:
            return n
        n += 1 if n < 100 else 10
    return None


def explain(
    outcome: str,
    *,
    by_gate: bool,
    rule_n: int,
    changed: int,
    mutant: float | None,
    in_force: float | None,
    level: float,
    kappa: float | None,
    kappa_in_force: float | None,
    threshold: float,
) -> tuple[str, str]:
    """``(reason, why)`` of one mutant's outcome, from its figures (pure; see the module
    docstring for the reasons)."""

    def pct(v: float | None) -> str:
        return "n/a" if v is None else f"{v:.0%}"

    def num(v: float | None) -> str:
        return "n/a (no kappa)" if v is None else f"{v:.2f}"

    if outcome == "not_exercised":
        return "not_exercised", "no calibration case exercises this rule: write cases for it"
    moved = f"{changed} of {rule_n} answers on the rule's cases changed"
    if outcome == "killed":
        if by_gate:
            return "gate", (
                f"without the rule kappa falls to {num(kappa)}, under the threshold "
                f"{threshold:.2f} that the rubric in force reaches ({num(kappa_in_force)}); {moved}"
            )
        return "rule_interval", (
            f"{moved}; agreement on them fell from {pct(in_force)} to {pct(mutant)}, "
            "further than chance"
        )
    if changed == 0:
        return "judge_knows_rule", (
            f"this judge gave the same answer on all {rule_n} of the rule's cases with and "
            "without the rule's text: it applies the rule unaided. The catalogue could "
            "defend the rule only with cases that a reading without the rule gets wrong"
        )
    if mutant is not None and in_force is not None and mutant < in_force:
        need = cases_to_separate(mutant, in_force, level)
        more = (
            f"about {need} rule cases at these agreements would separate the intervals"
            if need is not None
            else f"not even {MAX_CASES_SOUGHT} rule cases at these agreements would "
            "separate the intervals"
        )
        return "too_few_cases", (
            f"{moved}; agreement fell from {pct(in_force)} to {pct(mutant)}, within chance "
            f"on {rule_n} cases: {more}"
        )
    return "no_drop", (
        f"{moved}, but agreement did not fall ({pct(in_force)} in force, {pct(mutant)} "
        "without): the rule's text does not move this judge toward the labels"
    )


def plan(
    catalogue: Catalogue,
    *,
    dimensions: Sequence[str] | None = None,
    rules: Sequence[str] | None = None,
    all_cases: bool = False,
    seed: int = 0,
) -> tuple[list[Mutant], dict[tuple[str, str], list[Case]]]:
    """The mutants and the cases each is judged on (nothing judged)."""
    _constants(catalogue)
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
    rule = _constants(catalogue)
    return MutationResult(judge, table, catalogue.constants.gate.threshold, rule.interval_level)
