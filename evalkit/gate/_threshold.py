"""The kappa against the frozen threshold, and what a low kappa means (ADR-0003, ADR-0004).

Below the threshold the reasons say whether a kappa paradox may be at work (a skewed human
marginal: rebalance the corpus, never the constants, with the rebalancing advice) or the
judge's marginal is at fault (balanced humans, kappa_max still under the threshold). At or
above it, whether the interval's lower bound is under the threshold (the pass is not secure).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from evalkit.agreement import AgreementResult
from evalkit.gate._advice import rebalancing_advice
from evalkit.gate._verdict import Reason


def fmt_value(value: float | None) -> str:
    """A statistic to three decimals, or ``n/a``."""
    return "n/a" if value is None else f"{value:.3f}"


def fmt_interval(low: float | None, high: float | None, missing: str = "—") -> str:
    """An interval as ``[low, high]`` to three decimals, or ``missing`` without one: how
    every text the gate prints (table, JUnit, Markdown) shows a kappa's interval."""
    return missing if low is None or high is None else f"[{low:.3f}, {high:.3f}]"


def thin_bins(human: Sequence[str], bins: Sequence[str]) -> list[str]:
    """Bins holding under half an even share (``0.5 / q``) of the human labels.

    A thin bin is what makes the human marginal skewed: the condition under which the
    kappa paradox can hold kappa down although raw agreement is high (ADR-0004).
    """
    if not human:
        return []
    n, q = len(human), len(bins)
    return [b for b in bins if sum(1 for h in human if h == b) / n < 0.5 / q]


def threshold_reasons(
    kappa: AgreementResult,
    human: Sequence[str],
    gated: pd.DataFrame,
    bins: Sequence[str],
    threshold: float,
    diagnostics: dict[str, Any],
) -> tuple[list[Reason], list[dict[str, Any]]]:
    """The reasons kappa raises against ``threshold``, and the rebalancing advice (empty
    unless kappa is below it with a skewed human marginal). Pure."""
    reasons: list[Reason] = []
    advice: list[dict[str, Any]] = []
    diag_dict = diagnostics

    def add(code: str, severity: str, message: str, adr: str) -> None:
        reasons.append(Reason(code, severity, message, adr))  # type: ignore[arg-type]

    if kappa.status != "ok" or kappa.value is None:
        add(
            "kappa_undefined",
            "fail",
            f"kappa is not meaningful here ({kappa.status}, n={kappa.n})",
            "adr-0005",
        )
    elif kappa.value < threshold:
        add(
            "below_threshold",
            "fail",
            f"kappa {kappa.value:.3f} < {threshold:.2f} (p_o {kappa.p_observed:.3f}, "
            f"p_e {kappa.p_expected:.3f})",
            "adr-0003",
        )
        thin = thin_bins(human, bins)
        k_max = diag_dict.get("kappa_max")
        if thin:
            add(
                "skewed_marginal",
                "note",
                f"the human marginal is skewed (bins {', '.join(thin)} hold under half an even "
                "share): kappa is sensitive to prevalence and a kappa paradox may be at work; "
                "the sanctioned response is to rebalance the corpus, never the constants "
                f"(kappa_max {fmt_value(k_max)} is what this judge's use of the bins allows "
                "against these labels, not a ceiling on any judge)",
                "adr-0004",
            )
            advice = rebalancing_advice(gated, bins, threshold)
        elif diag_dict.get("flags", {}).get("gate_unreachable"):
            add(
                "judge_marginal",
                "note",
                f"the human marginal is balanced but kappa_max is {fmt_value(k_max)}: the judge's "
                "marginal departs from the humans', so no judge answering with these "
                "proportions could pass; the fault lies with the judge or the rubric, not "
                "the corpus",
                "adr-0004",
            )
    else:
        add(
            "threshold_met",
            "note",
            f"kappa {kappa.value:.3f} ≥ {threshold:.2f} on {kappa.n} pairs",
            "adr-0003",
        )
        if kappa.ci_low is not None and kappa.ci_low < threshold:
            add(
                "interval_below_threshold",
                "note",
                f"the 95% interval's lower bound {kappa.ci_low:.3f} is under the threshold: "
                "the pass is not secure",
                "adr-0003",
            )
    return reasons, advice
