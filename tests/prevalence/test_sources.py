"""The pool and the labelled set come from one judge (issue #30: a pool judged by one
judge corrected with another judge's labelled set was reported ``ok``)."""

from __future__ import annotations

import pandas as pd
import pytest

from evalkit.prevalence import PrevalenceInputError, judges, same_judge


def _ledger(*who: tuple[str, str]) -> pd.DataFrame:
    return pd.DataFrame({"judge": [j for j, _ in who], "model": [m for _, m in who]})


BASELINE = _ledger(("baseline", "baseline-v2"), ("baseline", "baseline-v2"))


def test_one_judge_for_both_is_named() -> None:
    assert judges(BASELINE) == ["baseline (baseline-v2)"]
    assert same_judge(BASELINE, BASELINE, pool_name="p", labelled_name="l") == (
        "baseline (baseline-v2)"
    )


@pytest.mark.parametrize(
    ("pool", "said"),
    [
        (_ledger(("anthropic:claude-x", "claude-x")), "the pool p was judged by anthropic"),
        (_ledger(("baseline", "baseline-v1")), "judged by baseline (baseline-v1)"),
        (_ledger(("baseline", "baseline-v2"), ("other", "m")), "p: answers of 2 judges"),
        (_ledger(), "p: no judge answer"),
    ],
    ids=["other-judge", "other-model", "two-judges", "empty"],
)
def test_a_pool_of_another_judge_is_refused(pool: pd.DataFrame, said: str) -> None:
    with pytest.raises(PrevalenceInputError) as caught:
        same_judge(pool, BASELINE, pool_name="p", labelled_name="l")
    assert said in str(caught.value)
