"""Agreement per rule: how the judge does on the cases that exercise each rule (ADR-0024).

This explains a verdict; it never moves it. For every rule of the dimension (those the
guide states, guide-only ones left out, then any the rubric in force states beyond them),
the gated, complete pairs of the cases that exercise it (``design/rules/``) give:

- ``n``, ``agreement`` (share of pairs where judge and consensus bins are equal) and its
  95% Wilson interval ``ci_low``/``ci_high``;
- ``kappa`` over the frozen bins where it is defined (``kappa_status`` says why not:
  on a rule's cases the humans often use one bin, and kappa is then 0 or undefined);
- ``status``: ``ok``; ``descriptive`` below the gate's ``min_cell_n``; ``no_cases``
  when no gated pair exercises the rule;
- ``in_rubric``: whether the rubric the judge read states the rule;
- ``cited_disagreements``: where the judge named the rules it applied (optional in the
  answer), the number of its disagreements on these cases in which it cited this rule.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from evalkit.agreement import cohens_kappa
from evalkit.agreement._proportion import wilson_interval
from evalkit.catalogue import Catalogue

RULE_COLUMNS = ("rule", "n", "agreement", "kappa", "kappa_status", "ci_low", "ci_high",
                "status", "in_rubric", "disagreements", "cited_disagreements")  # fmt: skip


def rule_ids(catalogue: Catalogue, dimension: str, version: str | None = None) -> list[str]:
    """The rules of ``dimension`` in display order: the guide's compared rules, then any
    the rubric (``version``, default in force) states beyond them."""
    rubric_rules = list(catalogue.rubric(dimension, version).rule_ids())
    guide = catalogue.guide
    ids = list(guide.rule_ids(dimension, compared=True)) if guide else []
    return ids + [r for r in rubric_rules if r not in ids]


def rule_agreement(
    pairs: pd.DataFrame,
    catalogue: Catalogue,
    dimension: str,
    *,
    version: str | None = None,
    level: float = 0.95,
) -> list[dict[str, Any]]:
    """One record per rule (columns :data:`RULE_COLUMNS`), in :func:`rule_ids` order.

    ``pairs`` are complete (judge, human) pairs with ``case_id``, ``judge``, ``human``
    and optionally ``rules_cited`` (a list of rule ids, or None). Empty when the
    catalogue records no rule cases.
    """
    if not catalogue.rule_cases:
        return []
    bins = list(catalogue.constants.bins)
    min_n = catalogue.constants.gate.min_cell_n
    stated = set(catalogue.rubric(dimension, version).rule_ids())
    exercised: dict[str, set[str]] = {}
    for rc in catalogue.rule_cases:
        if rc.dimension == dimension:
            exercised.setdefault(rc.rule, set()).add(rc.case_id)
    out = []
    for rule in rule_ids(catalogue, dimension, version):
        mine = pairs[pairs["case_id"].isin(exercised.get(rule, set()))]
        n = len(mine)
        agree = mine["judge"] == mine["human"]
        k = int(agree.sum())
        low, high = wilson_interval(k, n, level)
        kappa = cohens_kappa(list(mine["judge"]), list(mine["human"]), bins) if n else None
        cited = None
        if n and "rules_cited" in mine:
            wrong = mine[~agree]
            cited = int(
                sum(isinstance(c, list | tuple) and rule in c for c in wrong["rules_cited"])
            )
        out.append(
            {
                "rule": rule,
                "n": n,
                "agreement": k / n if n else None,
                "kappa": kappa.value if kappa is not None else None,
                "kappa_status": kappa.status if kappa is not None else "no_pairs",
                "ci_low": low,
                "ci_high": high,
                "status": "no_cases" if n == 0 else ("descriptive" if n < min_n else "ok"),
                "in_rubric": rule in stated,
                "disagreements": n - k,
                "cited_disagreements": cited,
            }
        )
    return out
