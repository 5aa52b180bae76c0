"""Each interval covers the true share at its nominal level, in simulation.

Scenarios (``_sim.py``): a good judge, a poor over-scoring judge, and a skewed bin
(5% high, mostly missed by the judge); pool N = 2000, labelled n = 200. A draw whose
estimator returns a status (a refused confusion) counts as a miss. The slow test runs
2,000 draws per scenario (a few seconds: everything is vectorised over draws).
"""

from __future__ import annotations

import pytest

from tests.prevalence._sim import SCENARIOS, Scenario, coverage, plan_versus_random

CORRECTED = ("ppi++", "inversion", "labels_only")


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_quick_coverage(scenario: Scenario) -> None:
    result = coverage(scenario, draws=150, seed=11)
    for name in CORRECTED:
        assert result[name][0] >= 0.85, (name, result[name])


@pytest.mark.slow
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_coverage_at_nominal_level(scenario: Scenario) -> None:
    result = coverage(scenario, draws=2000, seed=12)
    for name in CORRECTED:
        assert result[name][0] >= 0.93, (name, result[name])


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_judge_only_under_covers_a_biased_judge(scenario: Scenario) -> None:
    result = coverage(scenario, draws=300, seed=13)
    assert result["judge_only"][0] < 0.8, result["judge_only"]
    # ...and it is narrow: the pool is large, the bias is not in the interval.
    assert result["judge_only"][1] < result["ppi++"][1]


def test_ppi_is_narrower_than_labels_alone_with_a_good_judge() -> None:
    result = coverage(SCENARIOS[0], draws=300, seed=14)
    assert result["ppi++"][1] < 0.8 * result["labels_only"][1]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_plan_is_narrower_than_random_labelling(scenario: Scenario) -> None:
    result = plan_versus_random(scenario, budget=100, draws=300, seed=15)
    assert result["planned"][1] < result["random"][1], result
    assert result["planned"][0] >= 0.85, result


@pytest.mark.slow
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_planned_estimate_covers_the_pool_share(scenario: Scenario) -> None:
    result = plan_versus_random(scenario, budget=100, draws=2000, seed=16)
    assert result["planned"][0] >= 0.92, result
    assert result["planned"][1] < result["random"][1], result
