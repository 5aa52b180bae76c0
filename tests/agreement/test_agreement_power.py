"""sample_size() and gate_power()."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evalkit.agreement import gate_power, sample_size
from evalkit.agreement._kappa import kappa_parts, kappa_variance
from evalkit.agreement._power import joint_table


@pytest.mark.parametrize(("prevalence", "expected"), [(0.5, 246), (0.2, 392), (0.1, 705)])
def test_project_note_figures(prevalence: float, expected: int) -> None:
    # Project notes: kappa 0.6 ± 0.1 (95%), binary, needs about 246 / 392 / 705 cases.
    assert sample_size(0.6, 0.1, prevalence=prevalence, categories=2) == expected


def test_binary_closed_form() -> None:
    # n·Var = (1-κ)[(1-κ)(1-2κ) + κ(2-κ)/(2π(1-π))] for common binary marginals.
    for kappa, pi in [(0.4, 0.3), (0.8, 0.05), (0.6, 0.5)]:
        v = (1 - kappa) * (
            (1 - kappa) * (1 - 2 * kappa) + kappa * (2 - kappa) / (2 * pi * (1 - pi))
        )
        z = 1.959963984540054
        assert sample_size(kappa, 0.05, prevalence=pi, categories=2) == math.ceil(
            z * z * v / 0.05**2 - 1e-9
        )


def test_prevalence_forms() -> None:
    uniform = sample_size(0.6, 0.1)  # three categories, 1/3 each
    assert uniform == sample_size(0.6, 0.1, prevalence=[1 / 3, 1 / 3, 1 / 3])
    # A number is the last category's share; the rest split equally.
    assert sample_size(0.6, 0.1, prevalence=0.2) == sample_size(
        0.6, 0.1, prevalence=[0.4, 0.4, 0.2]
    )
    assert sample_size(0.6, 0.05) > uniform
    assert sample_size(0.6, 0.1, level=0.9) < uniform


def test_joint_table_has_the_marginals_and_kappa() -> None:
    m = np.array([0.6, 0.25, 0.15])
    t = joint_table(0.55, m)
    assert t.sum() == pytest.approx(1.0)
    assert t.sum(axis=0) == pytest.approx(m) and t.sum(axis=1) == pytest.approx(m)
    assert float(kappa_parts(t, np.eye(3))[0]) == pytest.approx(0.55)
    r, c = np.array([0.7, 0.2, 0.1]), np.array([0.5, 0.3, 0.2])
    t2 = joint_table(0.5, r, c)
    assert t2.sum(axis=1) == pytest.approx(r) and t2.sum(axis=0) == pytest.approx(c)
    assert float(kappa_parts(t2, np.eye(3))[0]) == pytest.approx(0.5)


def test_simulated_spread_matches_fce_variance() -> None:
    m = np.array([0.5, 0.3, 0.2])
    t = joint_table(0.6, m)
    rng = np.random.default_rng(0)
    tables = rng.multinomial(400, t.ravel(), size=20000).reshape(-1, 3, 3).astype(float)
    sd = float(np.std(kappa_parts(tables, np.eye(3))[0]))
    assert sd == pytest.approx(math.sqrt(float(kappa_variance(t, np.eye(3))) / 400), rel=0.05)


def test_gate_power_behaviour() -> None:
    m = [0.6, 0.25, 0.15]
    small = gate_power(0.75, 100, 0.6, m)
    big = gate_power(0.75, 600, 0.6, m)
    assert small == gate_power(0.75, 100, 0.6, m)  # fixed seed
    assert 0.0 <= small.power < big.power <= 1.0
    assert big.power > 0.9
    assert small.p_pass_lower_bound <= small.p_pass_point
    assert small.rule == "lower_bound" and small.power == small.p_pass_lower_bound
    point = gate_power(0.75, 100, 0.6, m, rule="point")
    assert point.power == point.p_pass_point == small.p_pass_point
    false_pass = gate_power(0.5, 300, 0.6, m)
    assert false_pass.power < 0.05
    assert small.mean_kappa == pytest.approx(0.75, abs=0.02)


def test_gate_power_with_judge_and_human_marginals() -> None:
    r = gate_power(0.5, 300, 0.6, [[0.8, 0.2], [0.6, 0.4]], n_sim=500)
    assert r.kappa_max == pytest.approx((0.8 - 0.56) / 0.44)
    assert r.judge_marginals == (0.8, 0.2) and r.human_marginals == (0.6, 0.4)
    with pytest.raises(ValueError, match="unattainable"):
        gate_power(0.7, 300, 0.6, [[0.8, 0.2], [0.6, 0.4]])


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="sum to 1"):
        gate_power(0.6, 100, 0.6, [0.5, 0.3])
    with pytest.raises(ValueError, match="rule"):
        gate_power(0.6, 100, 0.6, [0.5, 0.5], rule="mean")
    with pytest.raises(ValueError, match="n must be"):
        gate_power(0.6, 1, 0.6, [0.5, 0.5])
    with pytest.raises(ValueError, match="kappa"):
        sample_size(1.0, 0.1)
    with pytest.raises(ValueError, match="half_width"):
        sample_size(0.6, 0.0)
    with pytest.raises(ValueError, match="categories"):
        sample_size(0.6, 0.1, prevalence=[0.5, 0.5], categories=3)
    with pytest.raises(ValueError, match="below"):
        sample_size(-0.9, 0.1, prevalence=0.1, categories=2)
