"""Displays of who labelled, whether the catalogue can be passed without the construct,
and where the judge stands among the labelers (ADR-0011, ADR-0012)."""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd

from evalkit._display import steady
from evalkit.catalogue import AuditResult, Catalogue, labeler_agreement, labeler_coverage
from evalkit.gate import DimensionVerdict
from evalkit.report._charts import Chart
from evalkit.report._html import Html, callout, join, key_values, paragraph, table

SHORTCUT_NAMES = {
    "reply_text": "Reply text only (TF-IDF + logistic regression)",
    "user_text": "User turns only (TF-IDF + logistic regression)",
    "latest_user_text": "Latest user turn only (TF-IDF + logistic regression)",
    "surface": "Surface features (decision tree)",
    "number_rule": "Phone-number rule (fixed)",
    "two_sided_fitted": "Both sides, shallow (user side: present?; reply: bin; fitted)",
    "two_sided_keywords": "Both sides, keywords (user-side words; the line in the reply)",
    "two_sided_outside": "Both sides, an outsider's keywords (lists written from the guide alone)",
    "baseline_judge": "Baseline judge (reference, reads turn and reply)",
}


def labelers_panel(catalogue: Catalogue) -> Html:
    """The label sets, how the consensus was built, coverage and labeler-labeler kappa."""
    sets = catalogue.label_sets
    who = {name: labels[0].labeler if labels else "" for name, labels in sets.items()}
    n_dis = len(catalogue.disagreements())
    intro = paragraph(
        f"{len(sets)} label set(s). The gate reads their consensus: "
        f"{catalogue.consensus_rule.describe()}. {n_dis} case-dimension pair(s) on which the "
        "sets disagree keep every set's bin visible in the label files."
    )
    parts: list[Any] = [intro, key_values(who, caption="Who labelled (as recorded)")]
    if len(sets) > 1:
        coverage = labeler_coverage(catalogue).reset_index()
        parts.append(table(coverage, caption="Labels given per label set and dimension"))
        agreement = labeler_agreement(catalogue)
        parts.append(
            table(
                agreement,
                {
                    "dimension": "Dimension",
                    "set_a": "Label set",
                    "set_b": "Other set",
                    "n": "Cases both labelled",
                    "raw_agreement": "Raw agreement",
                    "kappa": "Cohen's κ",
                    "ci_low": "95% CI low",
                    "ci_high": "95% CI high",
                },
                caption="Labeler-labeler agreement (Wald interval, clipped to [-1, 1])",
            )
        )
    return join(*parts)


def audit_panel(result: AuditResult) -> Html:
    """The catalogue audit's table and verdict (ADR-0011)."""
    frame = result.table.copy()
    frame["shortcut"] = frame["shortcut"].map(lambda s: SHORTCUT_NAMES.get(s, s))
    frame["reading"] = [
        "reference" if ref else ("below the ceiling" if ok else "REACHES THE CEILING")
        for ref, ok in zip(frame["reference"], frame["passed"], strict=True)
    ]
    verdict = (
        f"No shortcut reaches the audit ceiling κ {result.ceiling:.2f} on any gated dimension: "
        "the labels cannot be reached from the reply alone, the user's side alone or the "
        "surface of the text."
        if result.passed
        else "A shortcut reaches the audit ceiling: this catalogue can be passed without the "
        "construct, and no kappa computed on it measures a judge."
    )
    return join(
        callout("Audit verdict", paragraph(verdict), kind="info" if result.passed else "warning"),
        table(
            frame,
            {
                "dimension": "Dimension",
                "shortcut": "Shortcut",
                "kappa": "κ",
                "ci_low": "95% CI low",
                "ci_high": "95% CI high",
                "n": "Rows",
                "rows_right": "Right outside the modal bin",
                "reading": "Reading",
            },
            caption=f"Shortcut baselines, {result.n_splits}-fold cross-validation grouped by "
            "template family",
            row_class=lambda r: "ek-row-fail" if r["reading"] == "REACHES THE CEILING" else None,
        ),
    )


def ceiling_frame(verdict: DimensionVerdict) -> pd.DataFrame:
    """One row per labeler and the judge: ``rater``, ``kind``, ``kappa``, ``ci_low``,
    ``ci_high``, ``n`` (empty without several labelers)."""
    humans = verdict.evidence.get("humans")
    cols = ["rater", "kind", "kappa", "ci_low", "ci_high", "n", "status"]
    if not humans:
        return pd.DataFrame(columns=cols)
    return pd.DataFrame(humans["ceiling"], columns=cols)


def ceiling_chart(frame: pd.DataFrame, threshold: float, title: str) -> Chart | Html:
    """Each rater's kappa against the others (bootstrap 95% interval), the judge among them."""
    data = frame[frame["kappa"].notna()].copy()
    if data.empty:
        return paragraph(f"{title}: no rater has a kappa to draw.", css="ek-table-note")
    for col in ("kappa", "ci_low", "ci_high"):
        data[col] = data[col].astype("float64")
    y = alt.Y("rater:N", title="Rater", sort=list(data["rater"]))
    points = (
        alt.Chart(data)
        .mark_point(size=90, filled=True)
        .encode(
            y=y,
            x=alt.X("kappa:Q", title="Cohen's kappa against the other labelers"),
            color=alt.Color("kind:N", title="Rater"),
            tooltip=[
                alt.Tooltip("rater:N"),
                alt.Tooltip("kind:N"),
                alt.Tooltip("kappa:Q", format=".3f"),
                alt.Tooltip("n:Q", title="Cases"),
            ],
        )
    )
    bars = (
        alt.Chart(data.dropna(subset=["ci_low", "ci_high"]))
        .mark_rule()
        .encode(y=y, x="ci_low:Q", x2="ci_high:Q", color=alt.Color("kind:N"))
    )
    line = (
        alt.Chart(pd.DataFrame({"threshold": [threshold]}))
        .mark_rule(strokeDash=[4, 4], color="firebrick")
        .encode(x="threshold:Q")
    )
    spec = alt.layer(bars, points, line).properties(
        width=420, height=max(60, 30 * len(data)), title=title
    )
    return Chart(
        spec,
        f"{title}: each rater's kappa against the consensus of the others, with a bootstrap "
        "95% interval; dashed line: gate threshold",
    )


def human_evidence_panel(verdict: DimensionVerdict) -> Html:
    """The paired judge-minus-human difference, the alt-test and settledness, in words."""
    ev = verdict.evidence
    settled = ev.get("settledness", {})
    items: dict[str, Any] = {}
    if settled.get("status") == "unsettled":
        how = (
            "for an 80% chance that the interval clears the threshold, were the true kappa "
            "the observed one"
            if settled.get("settle_method") == "gate_power"
            else "for the interval to shrink to the gap, at the observed kappa"
        )
        items["Settled?"] = (
            f"unsettled: the interval straddles the threshold; about "
            f"{settled.get('further_pairs')} more labelled pairs would settle it ({how})"
        )
    elif settled.get("status") == "settled":
        items["Settled?"] = "settled: the interval lies on one side of the threshold"
    if settled.get("false_pass_rate") is not None:
        items["False-pass risk"] = (
            f"{settled['false_pass_rate']:.0%} of studies this size pass the point-estimate rule "
            f"when the true kappa is {verdict.threshold - 0.05:.2f}"
        )
    humans = ev.get("humans")
    if humans:
        paired = humans["judge_vs_humans"]
        if paired.get("difference") is not None:
            items["Judge minus human"] = (
                f"{steady(paired['difference']):+.3f} (95% CI {steady(paired['ci_low']):+.3f} to "
                f"{steady(paired['ci_high']):+.3f}); "
                f"non-inferior at margin {humans['margin']:.2f}: "
                f"{'yes' if paired['non_inferior'] else 'no'}"
            )
        alt_res = humans["alt_test"]
        if alt_res.get("winning_rate") is not None:
            items["Alternative-annotator test"] = (
                f"winning rate {alt_res['winning_rate']:.2f}, advantage probability "
                f"{alt_res['advantage_probability']:.2f} at ε {humans['epsilon']:.2f}: "
                f"{'passes' if alt_res['passed'] else 'does not pass'} (could replace a labeler)"
            )
        if humans.get("labels_limit"):
            items["Labels limit"] = (
                f"labeler-labeler kappa {humans['human_kappa_mean']:.3f} is below the threshold: "
                "the labels, not the judge, limit what can be shown (ADR-0012)"
            )
        for note in humans.get("notes", []):
            items.setdefault("Note", note)
    if not items:
        return Html("")
    return key_values(items, caption="How settled, and the judge among the labelers")


def reference_bins(rows: pd.DataFrame, judge: str) -> dict[tuple[str, str], str] | None:
    """The baseline judge's bins by (case, dimension), as the audit's reference row.

    Only for the ``baseline`` judge: the audit's reference row is the offline floor, and a
    study of another judge shows its own agreement further down.
    """
    if judge != "baseline" or rows.empty:
        return None
    ok = rows[rows["status"] == "ok"]
    return {(str(r.case_id), str(r.dimension)): str(r.bin) for r in ok.itertuples()}
