"""What a mutation run found: the mutant table, each outcome with its reason, and the
mutation score (ADR-0029; the method is described in :mod:`evalkit.construct._mutate`).
Pure: reads the answers from a ledger frame.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape as html_escape
from typing import Any

import pandas as pd

from evalkit._display import Markup, card, frame_table, key_values
from evalkit.agreement import cohens_kappa
from evalkit.agreement._proportion import wilson_interval
from evalkit.catalogue import Case, Catalogue
from evalkit.construct._mutants import Mutant, mutation_constants, rule_case_ids, with_mutants

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

    rule = mutation_constants(catalogue)
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
