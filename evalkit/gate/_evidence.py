"""Evidence beside a dimension's verdict: the human ceiling, the alt-test, settledness.

None of this moves the verdict, which stays the frozen point-estimate rule on
judge-versus-consensus kappa (ADR-0003). It says how far the verdict can be trusted:

- **Human ceiling** (ADR-0012): each labeler against the consensus of the other
  labelers, and the judge placed on the same scale, computed the same way
  (:func:`evalkit.agreement.human_ceiling`); the paired judge-minus-human difference
  with a bootstrap interval and a non-inferiority reading at ``margin``
  (:func:`evalkit.agreement.judge_vs_humans`); the alternative-annotator test
  (:func:`evalkit.agreement.alt_test`, accuracy scoring, epsilon 0.2). Label sets that
  label under half of the dimension's gated cases (an adjudicator who saw only the
  disagreements) are left out of the ceiling: their cases are the hard ones by
  selection, and their agreement would read low for that reason alone.
- **Labels limit**: when the mean labeler-labeler kappa is below the gate threshold,
  no judge can be shown to agree with the humans at the threshold; the labels, not the
  judge, limit what can be shown.
- **Settledness**: when the kappa interval straddles the threshold the verdict is
  ``unsettled``. ``further_pairs`` is how many more labelled pairs would settle it if
  the true kappa were the observed one, with the observed marginals: above the
  threshold, the fewest pairs at which :func:`evalkit.agreement.gate_power` gives an 80%
  chance that the Wald lower bound clears the threshold (``settle_method``
  ``gate_power``); below it, where a simulated "pass" cannot express "shown to fail",
  the pairs at which the Wald interval's half-width shrinks (as 1/√n) to the gap
  between kappa and the threshold (``settle_method`` ``wald_width``).
  ``false_pass_rate`` is the share of studies of this size whose point estimate passes
  when the true kappa sits 0.05 under the threshold (``gate_power``, rule ``point``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from evalkit.agreement import alt_test, gate_power, human_ceiling, judge_vs_humans
from evalkit.agreement._results import jsonable
from evalkit.catalogue import Label

#: Non-inferiority margin of the judge-minus-human kappa difference (ADR-0012).
NON_INFERIORITY_MARGIN = 0.10
#: Alternative-annotator test epsilon (Calderon et al. 2025 use 0.2 for expert labelers).
ALT_TEST_EPSILON = 0.2
#: A label set covering less than this share of a dimension's cases stays out of the ceiling.
MIN_CEILING_COVERAGE = 0.5


def human_evidence(
    pairs: pd.DataFrame,
    label_sets: Mapping[str, Sequence[Label]],
    dimension: str,
    bins: Sequence[str],
    threshold: float,
    *,
    n_boot: int = 1000,
    seed: int = 0,
) -> dict[str, Any] | None:
    """Ceiling, paired difference and alt-test for one dimension, or None with < 2 sets.

    ``pairs`` are the gated, complete (judge and consensus) pairs of the dimension, with
    ``case_id`` and ``judge``.
    """
    cases = set(pairs["case_id"])
    if not cases:
        return None
    long = pd.DataFrame(
        [
            (lab.case_id, name, lab.bin)
            for name, labels in label_sets.items()
            for lab in labels
            if lab.dimension == dimension and lab.case_id in cases
        ],
        columns=["unit", "rater", "label"],
    )
    coverage = long.groupby("rater")["unit"].nunique() / len(cases)
    primary = sorted(coverage[coverage >= MIN_CEILING_COVERAGE].index)
    left_out = sorted(set(coverage.index) - set(primary))
    if len(primary) < 2:
        return None
    long = long[long["rater"].isin(primary)]
    judge = pd.Series(list(pairs["judge"]), index=list(pairs["case_id"]))
    ceiling = human_ceiling(long, judge, list(bins), n_boot=n_boot, seed=seed)
    paired = judge_vs_humans(
        long, judge, list(bins), margin=NON_INFERIORITY_MARGIN, n_boot=n_boot, seed=seed
    )
    humans = {
        name: dict(zip(grp["unit"], grp["label"], strict=True))
        for name, grp in long.groupby("rater")
    }
    alt = alt_test(judge.to_dict(), humans, scoring="accuracy", epsilon=ALT_TEST_EPSILON)
    human_rows = ceiling[ceiling["kind"] == "human"]
    mean_human = human_rows["kappa"].dropna().mean() if len(human_rows) else math.nan
    notes = [
        f"{name} labels {coverage[name]:.0%} of the cases (an adjudicator's share): left out "
        "of the ceiling"
        for name in left_out
    ]
    return {
        "labelers": primary,
        "left_out": left_out,
        "ceiling": jsonable(ceiling.to_dict(orient="records")),
        "human_kappa_mean": None if math.isnan(mean_human) else float(mean_human),
        "labels_limit": bool(not math.isnan(mean_human) and mean_human < threshold),
        "judge_vs_humans": jsonable(paired.to_dict()),
        "alt_test": jsonable(alt.to_dict()),
        "margin": NON_INFERIORITY_MARGIN,
        "epsilon": ALT_TEST_EPSILON,
        "notes": notes,
    }


def settledness(
    kappa: float | None,
    ci_low: float | None,
    ci_high: float | None,
    n: int,
    threshold: float,
    judge: Sequence[str],
    human: Sequence[str],
    bins: Sequence[str],
    *,
    seed: int = 0,
) -> dict[str, Any]:
    """Whether the point-estimate verdict is settled by its interval (module docstring)."""
    if kappa is None or ci_low is None or ci_high is None or n < 2:
        return {
            "status": "undetermined",
            "further_pairs": None,
            "settle_method": None,
            "false_pass_rate": None,
        }
    straddles = ci_low < threshold <= ci_high or ci_low <= threshold < ci_high
    marg_j = [sum(1 for v in judge if v == b) / len(judge) for b in bins]
    marg_h = [sum(1 for v in human if v == b) / len(human) for b in bins]
    usable = all(m > 0 for m in marg_j) and all(m > 0 for m in marg_h)
    further: int | None = None
    method: str | None = None
    gap = abs(kappa - threshold)
    if straddles and gap > 0:
        needed = None
        if usable and kappa > threshold:
            needed = _pairs_to_clear(kappa, n, threshold, (marg_j, marg_h), seed)
        if needed is not None:
            further, method = max(0, needed - n), "gate_power"
        else:
            half = max(kappa - ci_low, ci_high - kappa)
            further, method = max(0, math.ceil(n * (half / gap) ** 2) - n), "wald_width"
    false_pass = None
    if usable:
        try:
            result = gate_power(
                threshold - 0.05, n, threshold, (marg_j, marg_h), n_sim=2000, seed=seed,
                rule="point",
            )  # fmt: skip
            false_pass = result.power
        except ValueError:
            false_pass = None
    return {
        "status": "unsettled" if straddles else "settled",
        "further_pairs": further,
        "settle_method": method,
        "false_pass_rate": false_pass,
    }


def _pairs_to_clear(
    kappa: float,
    n: int,
    threshold: float,
    marginals: tuple[list[float], list[float]],
    seed: int,
    *,
    power: float = 0.8,
    largest: int = 50_000,
) -> int | None:
    """Fewest pairs (bisection, at least ``n``) at which a study whose true kappa is
    ``kappa`` clears ``threshold`` by its Wald lower bound with probability ``power``;
    None when even ``largest`` pairs do not, or the marginals cannot hold ``kappa``."""

    def clears(m: int) -> bool:
        return gate_power(kappa, m, threshold, marginals, n_sim=1000, seed=seed).power >= power

    try:
        if clears(n):
            return n
        if not clears(largest):
            return None
        low, high = n, largest
        while high - low > max(1, low // 100):
            mid = (low + high) // 2
            if clears(mid):
                high = mid
            else:
                low = mid
    except ValueError:
        return None
    return high
