"""Repeated answers: no cherry-picking, and how stable a verdict is across samples.

ADR-0027. A judge is a sampler; ``--samples K`` asks each request K times. The gate reads
every answer of one judge to one case and dimension together (:func:`gated_answers`:
modal bin, ties to the lower bin). Two things follow from the repeats:

- :func:`cherry_picked_repeats`: a ledger whose repeats concentrate on the cases where
  the judge's *first* answer disagreed with the humans is a hard fail. Repeat samples
  ask every case the same number of times and never trip it; re-asking only the
  disagreements until the judge agrees does. The test: cases answered more than once,
  among those whose first answer disagreed against those whose first answer agreed,
  one-sided Fisher exact test at :data:`CHERRY_PICK_ALPHA`, and a repeat-rate gap of at
  least :data:`CHERRY_PICK_GAP`.
- :func:`stability`: with K > 1 samples, the kappa of each sample alone against the
  threshold (``PASS`` when it reaches it), the share of samples whose verdict matches the
  gated one, and the judge's agreement with itself across samples (Fleiss' kappa over
  cases, the share of cases where every sample gave the same bin).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from evalkit.agreement import cohens_kappa, fleiss_kappa
from evalkit.agreement._distributions import fisher_exact_greater

#: One-sided Fisher exact p-value under which repeats concentrate on disagreements.
CHERRY_PICK_ALPHA = 0.01
#: ... and the least gap in repeat rates (disagreeing minus agreeing first answers).
CHERRY_PICK_GAP = 0.2


def _first_answers(rows: pd.DataFrame) -> pd.DataFrame:
    ordered = rows.sort_values("created_at", kind="stable") if "created_at" in rows else rows
    return ordered.drop_duplicates(["case_id", "dimension"], keep="first")


def cherry_picked_repeats(
    rows: pd.DataFrame, labels: Any, dimension: str, bins: Sequence[str]
) -> str | None:
    """The hard-fail message when repeats concentrate on first-answer disagreements, else
    None. ``rows`` are one dimension's final-turn ledger rows (any order)."""
    from evalkit.gate._pairs import final_turn_rows, labels_frame

    final = final_turn_rows(rows[rows["dimension"] == dimension])
    if final.empty:
        return None
    counts = final.groupby("case_id").size()
    if counts.nunique() <= 1:  # every case asked equally often: samples, not picks
        return None
    first = _first_answers(final)[["case_id", "bin", "status"]]
    human = labels_frame(labels)
    human = human[human["dimension"] == dimension][["case_id", "bin"]]
    joined = first.merge(human, on="case_id", suffixes=("", "_human"))
    joined = joined[(joined["status"] == "ok") & joined["bin"].isin(list(bins))]
    if joined.empty:
        return None
    repeated = joined["case_id"].map(counts) > 1
    wrong = joined["bin"] != joined["bin_human"]
    a, b = int((repeated & wrong).sum()), int((~repeated & wrong).sum())
    c, d = int((repeated & ~wrong).sum()), int((~repeated & ~wrong).sum())
    if a + b == 0 or c + d == 0:
        return None
    gap = a / (a + b) - c / (c + d)
    p = fisher_exact_greater(a, b, c, d)
    if p < CHERRY_PICK_ALPHA and gap >= CHERRY_PICK_GAP:
        return (
            f"the judge was asked again on {a} of {a + b} cases where its first answer "
            f"disagreed with the humans but on {c} of {c + d} where it agreed (Fisher "
            f"p={p:.1e}): repeats that concentrate on disagreements can pick the answer "
            "that agrees; re-run every case the same number of times (--samples)"
        )
    return None


def stability(
    rows: pd.DataFrame,
    pairs: pd.DataFrame,
    bins: Sequence[str],
    threshold: float,
    gated_verdict: str,
) -> dict[str, Any] | None:
    """Verdict stability across repeat samples (None with fewer than 2 samples).

    ``rows``: the dimension's final-turn ledger rows with a ``sample`` column; ``pairs``:
    its gated, complete pairs (``case_id``, ``human``) of the gated answers.
    """
    if "sample" not in rows.columns or rows["sample"].nunique() < 2:
        return None
    human = dict(zip(pairs["case_id"], pairs["human"], strict=True))
    ok = rows[(rows["status"] == "ok") & rows["case_id"].isin(human)]
    per_sample = []
    for s, grp in ok.groupby("sample", sort=True):
        grp = _first_answers(grp)
        kappa = cohens_kappa(list(grp["bin"]), [human[c] for c in grp["case_id"]], bins)
        verdict = "PASS" if kappa.value is not None and kappa.value >= threshold else "FAIL"
        per_sample.append(
            {"sample": int(str(s)), "n": kappa.n, "kappa": kappa.value, "verdict": verdict}
        )
    wide = (
        _first_answers_by_sample(ok).pivot_table(
            index="case_id", columns="sample", values="bin", aggfunc="first"
        )
        if len(ok)
        else pd.DataFrame()
    )
    within = fleiss_kappa(wide.to_numpy(dtype=object), list(bins)) if wide.shape[1] >= 2 else None
    complete = wide.dropna()
    same = float((complete.nunique(axis=1) == 1).mean()) if len(complete) else None
    matching = sum(r["verdict"] == gated_verdict for r in per_sample)
    return {
        "samples": len(per_sample),
        "rule": "modal bin across samples, ties to the lower bin (ADR-0027)",
        "per_sample": per_sample,
        "share_matching_gated_verdict": matching / len(per_sample) if per_sample else None,
        "within_judge_kappa": within.value if within is not None else None,
        "within_judge_status": within.status if within is not None else "no_pairs",
        "share_cases_all_samples_agree": same,
    }


def _first_answers_by_sample(rows: pd.DataFrame) -> pd.DataFrame:
    ordered = rows.sort_values("created_at", kind="stable") if "created_at" in rows else rows
    return ordered.drop_duplicates(["case_id", "sample"], keep="first")
