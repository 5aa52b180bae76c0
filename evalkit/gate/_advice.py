"""Rebalancing advice: the smallest corpus additions that lift kappa_max over the gate.

ADR-0004 makes corpus rebalancing the only sanctioned response to a kappa paradox.
This module says how much: starting from the observed judge and human marginals, it
adds cases one at a time to the bin that raises the maximum attainable kappa most,
assuming the judge agrees with the human on each added case (the best case: fewer
additions can never suffice), until ``kappa_max`` reaches the threshold. The additions
for a bin are then spread over the locales that hold the fewest human labels in it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd


def kappa_max(judge_counts: np.ndarray, human_counts: np.ndarray) -> float | None:
    """Maximum Cohen's kappa attainable with these marginal counts (Cohen 1960).

    ``p_max = Σ_k min(p_k·, p_·k)``, ``kappa_max = (p_max − p_e) / (1 − p_e)``. None when
    chance agreement is 1 (both raters in one bin) or there are no rows.
    """
    n = judge_counts.sum()
    if n == 0:
        return None
    pj, ph = judge_counts / n, human_counts / n
    p_e = float(pj @ ph)
    if p_e >= 1.0:
        return None
    p_max = float(np.minimum(pj, ph).sum())
    return (p_max - p_e) / (1.0 - p_e)


def _spread(total: int, have: dict[str, int]) -> dict[str, int]:
    """Give ``total`` additions to the locales with the fewest rows, one at a time."""
    if not have:
        return {"any": total}
    counts, added = dict(have), dict.fromkeys(have, 0)
    for _ in range(total):
        locale = min(counts, key=lambda k: (counts[k], k))
        counts[locale] += 1
        added[locale] += 1
    return {k: v for k, v in added.items() if v}


def rebalancing_advice(
    pairs: pd.DataFrame, bins: Sequence[str], threshold: float, max_additions: int = 2000
) -> list[dict[str, Any]]:
    """Cases to add per bin and locale so that kappa_max clears ``threshold``.

    ``pairs`` has ``judge``, ``human`` and ``locale`` columns (one dimension);
    only complete pairs count. Returns rows ``{bin, locale, add, human_labels_now}``;
    empty when kappa_max already clears the threshold, and a single row with
    ``add: None`` when ``max_additions`` cases would not be enough.
    """
    complete = pairs[pairs["judge"].notna() & pairs["human"].notna()]
    bins = list(bins)
    judge = complete["judge"].value_counts().reindex(bins, fill_value=0).to_numpy(float)
    human = complete["human"].value_counts().reindex(bins, fill_value=0).to_numpy(float)
    current = kappa_max(judge, human)
    if current is not None and current >= threshold:
        return []
    added = np.zeros(len(bins))
    for _ in range(max_additions):
        best, best_k = -np.inf, 0
        for k in range(len(bins)):
            step = np.eye(len(bins))[k]
            value = kappa_max(judge + added + step, human + added + step)
            if value is not None and value > best:
                best, best_k = value, k
        added[best_k] += 1
        if best >= threshold:
            break
    else:
        return [
            {
                "bin": None,
                "locale": None,
                "add": None,
                "human_labels_now": int(human.sum()),
                "note": f"more than {max_additions} cases would be needed",
            }
        ]
    rows = []
    for k, b in enumerate(bins):
        if not added[k]:
            continue
        in_bin = complete[complete["human"] == b]
        locales = sorted(pairs["locale"].dropna().unique()) if "locale" in pairs else []
        have = {loc: int((in_bin["locale"] == loc).sum()) for loc in locales}
        for locale, n in _spread(int(added[k]), have).items():
            rows.append(
                {
                    "bin": b,
                    "locale": locale,
                    "add": n,
                    "human_labels_now": have.get(locale, len(in_bin)),
                }
            )
    return rows


def label_balance(pairs: pd.DataFrame, bins: Sequence[str]) -> pd.DataFrame:
    """Human labels per dimension × locale × bin (rows dimension, locale; columns bins)."""
    labelled = pairs[pairs["human"].notna()]
    table = labelled.pivot_table(
        index=["dimension", "locale"],
        columns="human",
        values="case_id",
        aggfunc="count",
        fill_value=0,
    )
    return table.reindex(columns=list(bins), fill_value=0)
