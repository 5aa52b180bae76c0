"""Rubric mutation testing (ADR-0029) with a judge that follows exactly the rules it is sent.

The rule-following judge (test code; it may peek at the case id, which no real judge
sees) answers the consensus bin of the case unless the rubric it was sent lacks a rule
the case exercises (``design/rules/``); then it answers another bin. So every mutant whose
rule enough cases exercise must be killed, and a rule with no cases is "not exercised".
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from evalkit.agreement._proportion import wilson_interval
from evalkit.catalogue import Catalogue, load
from evalkit.cli import main
from evalkit.construct._mutate import cases_to_separate, explain, mutate
from evalkit.judge._base import CostEstimate, Reply
from evalkit.judge._prompt import JudgeParams, JudgeRequest
from tests.factory import SHIPPED

_RULE = re.compile(r"^- `([a-z0-9_]+)`:", re.M)
_ABSENT = "### Signal-absent anchor (`signal_absent`)"


class RuleFollower:
    """An offline judge that obeys exactly the rules present in the rubric it reads."""

    kind = "anthropic"
    model = "claude-sonnet-4-6"
    spec = "anthropic:claude-sonnet-4-6"
    networked = False
    batch_mode = False

    def __init__(self, catalogue: Catalogue) -> None:
        self.params = JudgeParams()
        self.labels = {(lab.case_id, lab.dimension): lab.bin for lab in catalogue.labels}
        self.rules: dict[tuple[str, str], set[str]] = {}
        for rc in catalogue.rule_cases:
            self.rules.setdefault((rc.case_id, rc.dimension), set()).add(rc.rule)
        self.bins = list(catalogue.constants.bins)
        self.calls = 0

    async def call(self, request: JudgeRequest) -> Reply:
        self.calls += 1
        stated = set(_RULE.findall(request.system))
        if _ABSENT in request.system:
            stated.add("signal_absent")
        scores = []
        for dim in request.dimension_names:
            truth = self.labels[(request.case_id, dim)]
            lacking = self.rules.get((request.case_id, dim), set()) - stated
            given = truth if not lacking else self.bins[(self.bins.index(truth) + 1) % 3]
            scores.append(
                {
                    "dimension": dim,
                    "bin": given,
                    "signal_present": given != "low",
                    "evidence_turns": [request.scored_turn_id],
                    "rationale": "rules followed",
                    "injection_attempt": False,
                }
            )
        return Reply("answer", payload={"scores": scores}, response_model=self.model)

    async def estimate(self, requests: Sequence[JudgeRequest]) -> CostEstimate:
        return CostEstimate(0, 0, 0.0, "none")

    async def aclose(self) -> None:
        return None


@pytest.fixture(scope="module")
def shipped() -> Catalogue:
    return load(SHIPPED)


@pytest.mark.slow
def test_each_exercised_mutant_is_killed_and_a_rule_without_cases_is_not_exercised(
    shipped: Catalogue, tmp_path: Path
) -> None:
    # a copy of the catalogue in which no case exercises self_harm.bare_number
    cat = dataclasses.replace(
        shipped,
        rule_cases=tuple(
            r for r in shipped.rule_cases
            if (r.dimension, r.rule) != ("self_harm", "bare_number")
        ),
    )  # fmt: skip
    judge = RuleFollower(cat)
    rules = ["presence_gate", "look_back", "another_person", "bare_number"]
    kw: dict[str, Any] = {
        "judge": judge.spec,
        "ledger": tmp_path / "m.sqlite",
        "dimensions": ["self_harm"],
        "rules": rules,
        "backend": judge,
    }
    result = mutate(cat, **kw)
    outcome = dict(zip(result.table["rule"], result.table["outcome"], strict=True))
    assert outcome == {
        "presence_gate": "killed",
        "another_person": "killed",
        "look_back": "killed",
        "bare_number": "not_exercised",
    }
    assert result.score("self_harm") == 1.0
    row = result.table.set_index("rule").loc["presence_gate"]
    assert row["version"] == "v3-without-presence_gate"
    assert row["in_force_rule_agreement"] == 1.0 and row["rule_agreement"] == 0.0
    assert "v3-without-presence_gate" not in repr(result) or "killed" in repr(result)
    sent = judge.calls
    again = mutate(cat, **kw)  # a re-run sends nothing
    assert judge.calls == sent
    assert again.table.equals(result.table)


def test_a_mutant_the_judge_does_not_notice_survives(shipped: Catalogue, tmp_path: Path) -> None:
    class Deaf(RuleFollower):
        async def call(self, request: JudgeRequest) -> Reply:
            request = dataclasses.replace(request, system=request.system + "\n- `look_back`: x")
            return await super().call(request)

    judge = Deaf(shipped)
    result = mutate(shipped, judge=judge.spec, ledger=tmp_path / "d.sqlite", backend=judge,
                    dimensions=["self_harm"], rules=["look_back"])  # fmt: skip
    assert list(result.table["outcome"]) == ["survived"]
    assert result.score("self_harm") == 0.0
    row = result.table.iloc[0]
    assert row["rule_changed"] == 0 and row["reason"] == "judge_knows_rule"
    assert f"all {row['rule_n']} of the rule's cases" in row["why"]
    assert "applies the rule unaided" in result._repr_html_()


def test_a_mutant_without_a_kappa_still_says_why() -> None:
    reason, why = explain(
        "killed", by_gate=True, rule_n=4, changed=4, mutant=0.0, in_force=1.0, level=0.95,
        kappa=None, kappa_in_force=0.8, threshold=0.6,
    )  # fmt: skip
    assert reason == "gate" and "n/a (no kappa)" in why


def test_the_cases_that_would_separate_two_agreements() -> None:
    level = 0.95
    n = cases_to_separate(0.9, 1.0, level)
    assert n is not None
    _, m_hi = wilson_interval(round(0.9 * n), n, level)
    f_lo, _ = wilson_interval(n, n, level)
    assert m_hi is not None and f_lo is not None and m_hi < f_lo
    _, m_hi = wilson_interval(round(0.9 * (n - 1)), n - 1, level)
    f_lo, _ = wilson_interval(n - 1, n - 1, level)
    assert m_hi is not None and f_lo is not None and m_hi >= f_lo
    assert cases_to_separate(1.0, 0.9, level) is None  # no drop: nothing to separate
    assert cases_to_separate(0.999, 1.0, level) is None  # beyond what is sought


@pytest.mark.parametrize(
    ("outcome", "by_gate", "changed", "mutant", "reason"),
    [
        ("killed", True, 9, 0.5, "gate"),
        ("killed", False, 9, 0.5, "rule_interval"),
        ("survived", False, 0, 1.0, "judge_knows_rule"),
        ("survived", False, 3, 0.9, "too_few_cases"),
        ("survived", False, 3, 1.0, "no_drop"),
        ("not_exercised", False, 0, None, "not_exercised"),
    ],
)
def test_each_outcome_says_why(
    outcome: str, by_gate: bool, changed: int, mutant: float | None, reason: str
) -> None:
    got, why = explain(
        outcome, by_gate=by_gate, rule_n=30, changed=changed, mutant=mutant, in_force=1.0,
        level=0.95, kappa=0.4, kappa_in_force=0.8, threshold=0.6,
    )  # fmt: skip
    assert got == reason
    if reason == "too_few_cases":
        assert f"about {cases_to_separate(0.9, 1.0, 0.95)} rule cases" in why
    if outcome != "not_exercised":
        assert f"{changed} of 30" in why or "all 30" in why


def test_the_cli_lists_each_mutant_in_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["construct", "mutate", "--judge", "baseline", "--catalogue", str(SHIPPED),
                 "--ledger", str(tmp_path / "b.sqlite"), "--dimension", "self_harm",
                 "--rules", "another_person,bare_number", "--json"])  # fmt: skip
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    for m in out["mutants"]:
        fields = {"rule", "rubric_hash", "n", "kappa", "rule_agreement", "verdict", "outcome"}
        assert fields <= set(m)
    bad = ["construct", "mutate", "--judge", "baseline", "--catalogue", str(SHIPPED),
           "--ledger", str(tmp_path / "b.sqlite"), "--rules", "no_such_rule"]  # fmt: skip
    assert main(bad) == 2
