"""The rules of a construct on the pages: agreement per rule, disagreements grouped by
rule, and how the labelers agree on each rule's cases (ADR-0024, ADR-0028)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pandas as pd

from evalkit.catalogue import Catalogue
from evalkit.gate import DimensionVerdict
from evalkit.report._html import Html, join, paragraph, table


def _rule_cases(catalogue: Catalogue, dimension: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for rc in catalogue.rule_cases:
        if rc.dimension == dimension:
            out.setdefault(rc.rule, set()).add(rc.case_id)
    return out


def rule_disagreements(pairs: pd.DataFrame, catalogue: Catalogue, dimension: str) -> pd.DataFrame:
    """Per rule, the gated pairs of its cases where judge and humans differ: ``rule``,
    ``n``, ``disagreements``, ``judge_higher``, ``judge_lower`` and up to five ``cases``.
    A case that exercises several rules counts under each."""
    bins = list(catalogue.constants.bins)
    rank = {b: i for i, b in enumerate(bins)}
    mine = pairs[(pairs["dimension"] == dimension) & pairs["judge"].isin(bins)
                 & pairs["human"].isin(bins)]  # fmt: skip
    rows = []
    for rule, ids in _rule_cases(catalogue, dimension).items():
        sub = mine[mine["case_id"].isin(ids)]
        wrong = sub[sub["judge"] != sub["human"]]
        up = sum(rank[j] > rank[h] for j, h in zip(wrong["judge"], wrong["human"], strict=True))
        rows.append(
            {
                "rule": rule,
                "n": len(sub),
                "disagreements": len(wrong),
                "judge_higher": up,
                "judge_lower": len(wrong) - up,
                "cases": ", ".join(sorted(wrong["case_id"])[:5]) + (" …" if len(wrong) > 5 else ""),
            }
        )
    return pd.DataFrame(
        rows, columns=["rule", "n", "disagreements", "judge_higher", "judge_lower", "cases"]
    ).sort_values(["disagreements", "rule"], ascending=[False, True], ignore_index=True)


def labeler_rule_agreement(catalogue: Catalogue, dimension: str) -> pd.DataFrame:
    """Per rule, how the label sets agree on the calibration cases that exercise it:
    ``rule``, ``cases``, ``labels_per_case`` (mean), ``unanimous`` (share of cases every set
    put in one bin) and ``majority_share`` (mean share of a case's labelers in its
    majority bin: the item difficulty, 1 when all agree)."""
    by_case: dict[str, list[str]] = {}
    for labels in catalogue.label_sets.values():
        for lab in labels:
            if lab.dimension == dimension:
                by_case.setdefault(lab.case_id, []).append(lab.bin)
    rows = []
    for rule, ids in sorted(_rule_cases(catalogue, dimension).items()):
        votes = [by_case[c] for c in ids if c in by_case]
        if not votes:
            continue
        shares = [Counter(v).most_common(1)[0][1] / len(v) for v in votes]
        rows.append(
            {
                "rule": rule,
                "cases": len(votes),
                "labels_per_case": sum(map(len, votes)) / len(votes),
                "unanimous": sum(s == 1 for s in shares) / len(shares),
                "majority_share": sum(shares) / len(shares),
            }
        )
    return pd.DataFrame(
        rows, columns=["rule", "cases", "labels_per_case", "unanimous", "majority_share"]
    )


def item_difficulty(catalogue: Catalogue, dimension: str) -> pd.DataFrame:
    """How many calibration cases have each share of their labelers in the majority bin
    (``majority_share`` rounded to 2 places, ``cases``): the split cases are the hard
    items, and they stay in the catalogue (ADR-0028)."""
    by_case: dict[str, list[str]] = {}
    for labels in catalogue.label_sets.values():
        for lab in labels:
            if lab.dimension == dimension:
                by_case.setdefault(lab.case_id, []).append(lab.bin)
    shares = Counter(round(Counter(v).most_common(1)[0][1] / len(v), 2) for v in by_case.values())
    return pd.DataFrame(sorted(shares.items()), columns=["majority_share", "cases"])


def rules_panel(
    verdict: DimensionVerdict, pairs: pd.DataFrame, catalogue: Catalogue
) -> Html | None:
    """The rule table of the gate's evidence, the disagreements grouped by rule, and the
    labelers' agreement per rule; None when the catalogue records no rule cases."""
    rules = verdict.rules_frame()
    if rules.empty:
        return None
    dim = verdict.dimension
    pct = "{:.0%}".format
    parts: list[Any] = [
        paragraph(
            "How the judge does on the cases that exercise each rule of the construct "
            "(design/rules/). This explains the verdict; it does not gate. Rules with fewer "
            "cases than the minimum cell size are descriptive."
        ),
        table(
            rules.assign(
                ci=[
                    f"[{lo:.2f}, {hi:.2f}]" if pd.notna(lo) and pd.notna(hi) else "n/a"
                    for lo, hi in zip(rules["ci_low"], rules["ci_high"], strict=True)
                ]
            ),
            {
                "rule": "Rule",
                "n": "Pairs",
                "agreement": "Agreement",
                "ci": "95% CI (Wilson)",
                "kappa": "Cohen's κ",
                "status": "Status",
                "in_rubric": "In the rubric",
            },
            caption="Agreement per rule",
            formats={"agreement": lambda v: "n/a" if pd.isna(v) else pct(v)},
        ),
        table(
            rule_disagreements(pairs, catalogue, dim),
            {
                "rule": "Rule",
                "n": "Pairs",
                "disagreements": "Disagreements",
                "judge_higher": "Judge higher",
                "judge_lower": "Judge lower",
                "cases": "Cases (first five)",
            },
            caption="Where judge and humans disagree, grouped by rule",
        ),
    ]
    labelers = labeler_rule_agreement(catalogue, dim)
    if len(labelers):
        parts.append(
            table(
                labelers,
                {
                    "rule": "Rule",
                    "cases": "Cases",
                    "labels_per_case": "Labels per case",
                    "unanimous": "Unanimous",
                    "majority_share": "Mean share in the majority",
                },
                caption="How the labelers agree on each rule's cases",
                formats={
                    "unanimous": pct,
                    "majority_share": pct,
                    "labels_per_case": "{:.1f}".format,
                },
            )
        )
        parts.append(
            table(
                item_difficulty(catalogue, dim),
                {"majority_share": "Share of labelers in the majority", "cases": "Cases"},
                caption="Item difficulty: cases by share of labelers in the majority",
                formats={"majority_share": pct},
            )
        )
    return join(*parts)


def mutation_chart(table: pd.DataFrame, title: str) -> Any:
    """Per rule, agreement on the rule's own cases under the rubric in force and under the
    mutant without the rule, with 95% Wilson intervals (a mutation study)."""
    import altair as alt

    from evalkit.report._charts import Chart

    rows = []
    for r in table.to_dict("records"):
        if not r["rule_n"]:
            continue
        name = f"{r['dimension']}.{r['rule']}"
        rows.append(
            {
                "rule": name,
                "rubric": "in force",
                "agreement": r["in_force_rule_agreement"],
                "low": r["in_force_ci_low"],
                "high": r["in_force_ci_high"],
                "outcome": r["outcome"],
            }
        )
        rows.append(
            {
                "rule": name,
                "rubric": "mutant (rule removed)",
                "agreement": r["rule_agreement"],
                "low": r["rule_ci_low"],
                "high": r["rule_ci_high"],
                "outcome": r["outcome"],
            }
        )
    if not rows:
        return paragraph(f"{title}: no rule has cases to draw.", css="ek-table-note")
    data = pd.DataFrame(rows)
    for col in ("agreement", "low", "high"):
        data[col] = data[col].astype("float64").round(4)
    y = alt.Y("rule:N", title="Rule", sort=list(dict.fromkeys(data["rule"])))
    offset = alt.YOffset("rubric:N")
    color = alt.Color("rubric:N", title="Rubric")
    bars = (
        alt.Chart(data).mark_rule().encode(y=y, yOffset=offset, x="low:Q", x2="high:Q", color=color)
    )
    points = (
        alt.Chart(data)
        .mark_point(filled=True, size=70)
        .encode(
            y=y,
            yOffset=offset,
            color=color,
            x=alt.X(
                "agreement:Q", title="Agreement on the rule's cases", scale=alt.Scale(domain=[0, 1])
            ),
            tooltip=["rule:N", "rubric:N", alt.Tooltip("agreement:Q", format=".2f"), "outcome:N"],
        )
    )
    spec = alt.layer(bars, points).properties(
        width=420, height=max(80, 34 * data["rule"].nunique()), title=title
    )
    return Chart(
        spec,
        f"{title}: per rule, agreement with the humans on the rule's own cases under the "
        "rubric in force and under the mutant that lacks the rule, with 95% intervals",
    )


def mutation_headline(result: Any) -> Any:
    """The index line of a mutation study: the mutation score per dimension."""
    from evalkit.report._summary import DESCRIPTIVE, Headline

    lines = []
    for dim, score in result.scores.items():
        mine = result.table[result.table["dimension"] == dim]
        killed = int((mine["outcome"] == "killed").sum())
        exercised = int((mine["outcome"] != "not_exercised").sum())
        text = "no rule exercised" if score is None else f"{killed} of {exercised} mutants killed"
        lines.append((f"{dim} mutation score", text))
    return Headline(DESCRIPTIVE, tuple(lines))


def rule_cases_chart(inventory: pd.DataFrame, title: str) -> Any:
    """How many calibration cases exercise each rule (the frame of
    :func:`evalkit.construct._rules.inventory_frame`), one bar per dimension.rule, split by
    locale; guide-only rules left out."""
    import altair as alt

    from evalkit.report._charts import Chart

    cols = [c for c in inventory.columns if c.startswith("calibration ")]
    rows = []
    for r in inventory.to_dict("records"):
        if r["guide"] == "guide-only":
            continue
        for c in cols:
            rows.append({"rule": f"{r['dimension']}.{r['rule']}", "locale": c.split(" ", 1)[1],
                         "cases": int(r[c])})  # fmt: skip
    data = pd.DataFrame(rows, columns=["rule", "locale", "cases"])
    if data.empty or not data["cases"].sum():
        return paragraph(f"{title}: no case exercises a rule.", css="ek-table-note")
    spec = (
        alt.Chart(data)
        .mark_bar()
        .encode(
            y=alt.Y("rule:N", title="Rule", sort=list(dict.fromkeys(data["rule"]))),
            x=alt.X("sum(cases):Q", title="Calibration cases"),
            color=alt.Color("locale:N", title="Locale"),
            tooltip=["rule:N", "locale:N", "cases:Q"],
        )
        .properties(width=420, height=max(80, 16 * data["rule"].nunique()), title=title)
    )
    return Chart(spec, f"{title}: calibration cases exercising each rule, per locale")
