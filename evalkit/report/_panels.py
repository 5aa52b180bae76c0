"""Composite displays of the study notebooks: header, verdicts, agreement and group tables.

Each returns an :class:`~evalkit.report._html.Html` fragment built from escaped parts,
with readable column names for a reader who never saw the code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from evalkit.catalogue import Catalogue, Rubric
from evalkit.gate import DimensionVerdict
from evalkit.report._frames import AGREEMENT_COLUMNS, adr_href, reasons_frame
from evalkit.report._html import (
    Html,
    badge,
    bullets,
    callout,
    code,
    esc,
    fmt,
    heading,
    interval,
    join,
    key_values,
    link,
    paragraph,
    pct,
    table,
    transcript,
)

#: Readable names of the shipped dimensions.
DIMENSION_NAMES = {
    "self_harm": "Self-harm",
    "escalation": "Medical escalation",
    "faithfulness": "Faithfulness to sources",
}


def dimension_name(dimension: str) -> str:
    """A readable name for a dimension id (``self_harm`` → ``Self-harm``)."""
    return DIMENSION_NAMES.get(dimension, dimension.replace("_", " ").capitalize())


def rubric_card(rubric: Rubric, bins: Sequence[str]) -> Html:
    """A rubric's construct, presence gate and anchors, as text."""
    items: dict[str, Any] = {"Construct": rubric.construct_text.strip()}
    if rubric.presence_gated:
        items["Signal absent"] = (rubric.signal_absent_anchor or "").strip()
    for b in bins:
        items[f"Anchor: {b}"] = " ".join(rubric.anchors.get(b, "—").split())
    gate = "presence-gated" if rubric.presence_gated else "not presence-gated"
    return key_values(
        items, caption=f"{dimension_name(rubric.dimension)} rubric {rubric.version} ({gate})"
    )


def judge_kind(judge: str) -> str:
    """``baseline``, ``replay``, ``anthropic``, ``openai`` or ``other``."""
    head = judge.split(":", 1)[0]
    return head if head in ("baseline", "replay", "anthropic", "openai") else "other"


def judge_note(judge: str, adr_base: str = "adr/") -> Html:
    """What the judge of this run is, and how far its verdicts reach."""
    kind = judge_kind(judge)
    adr = link(adr_href("adr-0007", adr_base), "ADR-0007")
    if kind == "baseline":
        return callout(
            "Judge: baseline (an offline floor, not a production judge)",
            paragraph(
                "These results come from the deterministic baseline judge, which scores with "
                "no model and no network so that the study runs anywhere for free (",
                adr,
                "). It is a floor for a real judge to beat: its verdicts describe the "
                "baseline, not a production judge, and must not gate a launch.",
            ),
            kind="warning",
        )
    if kind == "replay":
        return callout(
            f"Judge: {judge} (answers replayed from a recorded ledger)",
            paragraph(
                "Every answer was read from a ledger recorded earlier with a real judge; "
                "nothing was sent to a model for this rendering (",
                adr,
                ").",
            ),
        )
    return callout(
        f"Judge: {judge}",
        paragraph("Answers from a live model, recorded in the ledger named below."),
    )


def construct_caveat(judge: str) -> Html:
    """What a construct comparison can show with this judge (empty for model judges).

    The baseline matches anchors by character n-grams; it does not read rubric prose the
    way a model does, so it cannot be expected to reproduce a construct failure such as
    the one ADR-0006 records. Saying so keeps the page from suggesting otherwise.
    """
    if judge_kind(judge) != "baseline":
        return Html("")
    return callout(
        "What the baseline can and cannot show here",
        paragraph(
            "The baseline matches the reply against the anchors by character n-grams; it "
            "does not read the rubric's prose as a model judge does. Its bins under two versions "
            "show how the two rubric texts differ as data, but they cannot reproduce the "
            "construct failure recorded in ADR-0006, which concerns how a model reads a "
            "rubric without a signal-absent anchor. Run this study with a model judge, or "
            "replay a ledger recorded with one, to see it."
        ),
        kind="warning",
    )


def header(
    title: str,
    lede: str,
    *,
    catalogue: Catalogue,
    judge: str,
    parameters: Mapping[str, Any],
    adr_base: str = "adr/",
) -> Html:
    """Title, one-sentence purpose, the judge and the run's parameters and hashes."""
    rows: dict[str, Any] = {"Judge": code(judge)}
    for name, value in parameters.items():
        if isinstance(value, list | tuple):
            shown: Any = ", ".join(str(v) for v in value) or "—"
        elif isinstance(value, dict):
            shown = ", ".join(f"{k} {v}" for k, v in value.items()) or "in force (constants)"
        elif value is None:
            shown = "—"
        else:
            shown = value
        rows[name.replace("_", " ").capitalize()] = shown
    rows["Constants hash"] = _short_hash(catalogue.constants_hash)
    rows["Framing hash"] = _short_hash(catalogue.framing_hash)
    status = catalogue.ratification
    rows["Constants ratified by"] = status.adr or "NOT RATIFIED"
    rows["Rendered"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    banner: Any = Html("")
    if not status.ratified:
        banner = callout(
            "Constants not ratified: not gate evidence",
            paragraph(status.reason(), " (ADR-0013)."),
            kind="warning",
        )
    return join(
        Html('<div class="ek-header">'),
        Html(
            '<p class="ek-nav"><a href="index.html">All studies</a> · '
            f'<a href="{esc(adr_base)}index.html">Decision records (ADRs)</a></p>'
        ),
        heading(title, 1),
        paragraph(lede, css="ek-lede"),
        banner,
        judge_note(judge, adr_base),
        key_values(rows, caption="This run"),
        Html("</div>"),
    )


def _objects(values: list[Any], index: pd.Index) -> pd.Series:
    return pd.Series(values, index=index, dtype=object)


def _short_hash(digest: str) -> Html:
    return Html(f'<code title="{esc(digest)}">{esc(digest[:16])}…</code>')


def verdict_overview_table(frame: pd.DataFrame) -> Html:
    """The gate verdict of every dimension in one table."""
    rows = frame.assign(verdict=_objects([badge(v) for v in frame["verdict"]], frame.index))
    return table(
        rows,
        {
            "dimension": "Dimension",
            "verdict": "Verdict",
            "kappa": "Cohen's kappa",
            "wald_ci": "95% CI (Wald)",
            "boot_ci": "95% CI (bootstrap)",
            "n": "Pairs",
            "threshold": "Threshold",
            "codes": "Blocking reasons",
        },
        caption="Gate verdict per dimension",
        formats={"threshold": lambda v: f"{float(v):.2f}"},
        row_class=lambda r: "ek-row-fail" if r["blocking"] else "ek-row-pass",
    )


def verdict_panel(verdict: DimensionVerdict, adr_base: str = "adr/") -> Html:
    """One dimension's verdict, its numbers and every reason with a link to its ADR."""
    if verdict.kappa is not None:
        summary = (
            f"kappa {verdict.kappa:.3f}, 95% CI {interval(verdict.ci_low, verdict.ci_high)}"
            f" (bootstrap {interval(verdict.boot_low, verdict.boot_high)}), "
            f"{verdict.n} pairs, threshold {verdict.threshold:.2f}"
        )
    else:
        summary = f"kappa not meaningful ({verdict.kappa_status}), {verdict.n} pairs"
    reasons = reasons_frame(verdict, adr_base)
    links = [link(h, a) for h, a in zip(reasons["href"], reasons["adr"], strict=True)]
    reasons = reasons.assign(adr=_objects(links, reasons.index))
    return join(
        paragraph(strong_text("Verdict: "), badge(verdict.verdict), " ", summary),
        table(
            reasons,
            {"severity": "Severity", "message": "What the gate found", "adr": "Rule (ADR)"},
            caption="Reasons",
            empty="No reason recorded.",
            row_class=lambda r: "ek-row-fail" if r["severity"] != "note" else None,
        ),
    )


def strong_text(text: str) -> Html:
    return Html(f"<strong>{esc(text)}</strong>")


def agreement_display(frame: pd.DataFrame, caption: str = "Agreement statistics") -> Html:
    """The agreement table (kappa with intervals, AC1, alpha, PABAK, p_o/p_e, kappa_max)."""
    return table(
        frame,
        AGREEMENT_COLUMNS,
        caption=caption,
        note="Pairs dropped: rows without a usable judge answer or a human label. "
        "Bootstrap: whole template families resampled.",
    )


def marginals_table(frame: pd.DataFrame) -> Html:
    """Both marginals, counts and shares."""
    return table(
        frame,
        {
            "bin": "Bin",
            "judge_n": "Judge: cases",
            "judge_share": "Judge: share",
            "human_n": "Human: cases",
            "human_share": "Human: share",
        },
        caption="Marginals (how often each rater used each bin)",
        formats={"judge_share": pct, "human_share": pct},
    )


def group_table(frame: pd.DataFrame, group_label: str, min_cell_n: int) -> Html:
    """Per-locale or per-stratum agreement; small cells greyed and marked descriptive."""
    shown = frame.assign(
        ci=[interval(lo, hi) for lo, hi in zip(frame["ci_low"], frame["ci_high"], strict=True)]
    )
    return table(
        shown,
        {
            "group": group_label,
            "n": "Pairs",
            "p_observed": "Observed agreement",
            "kappa": "Cohen's kappa",
            "ci": "95% CI (Wald)",
            "kappa_max": "Max. attainable kappa",
            "ac1": "Gwet's AC1",
            "status": "Status",
            "reading": "How to read",
        },
        caption=f"Agreement per {group_label.lower()}",
        row_class=lambda r: "descriptive" if r["descriptive"] else None,
        note=f"Cells with fewer than {min_cell_n} pairs (greyed, in italics) are descriptive: "
        "they describe, they do not decide (frozen constant gate.min_cell_n).",
    )


def apart_table(frame: pd.DataFrame, bins: Sequence[str]) -> Html:
    """Diagnostic and injection-canary cases: the judge's answers per bin."""
    cols = {"stratum": "Stratum", "n": "Cases"}
    cols.update({f"judge_{b}": f"Judge: {b}" for b in bins})
    cols["judge_above_low"] = "Judge above low"
    return table(
        frame, cols, caption="Reported apart, never in kappa: diagnostic and injection-canary cases"
    )


def quantity_table(frame: pd.DataFrame, caption: str) -> Html:
    """A quantity / value (/ reading) table."""
    cols = {"quantity": "Quantity", "value": "Value"}
    if "reading" in frame.columns:
        cols["reading"] = "How to read it"
    return table(frame, cols, caption=caption)


def transcripts(items: Sequence[Mapping[str, Any]], dimension: str) -> Html:
    """Conversations where judge and human disagree, each turn shown as text."""
    if not items:
        return paragraph("No disagreement to show.")
    parts = []
    for item in items:
        meta = {
            "locale": item["locale"],
            "stratum": item["stratum"],
            "human label": item["human"],
            "judge answer": item["judge"],
        }
        parts.append(
            transcript(
                item["turns"],
                title=f"Case {item['case_id']} ({dimension})",
                meta=meta,
                highlight=len(item["turns"]) - 1,
            )
        )
    return join(*parts)


def adr_list(adrs: Sequence[str], adr_base: str = "adr/") -> Html:
    """Links to the given ADR ids."""
    return bullets(link(adr_href(a, adr_base), a.upper()) for a in adrs)


def number(value: Any) -> str:
    """Short text of a number for prose."""
    return fmt(value)
