"""Composite displays of the study notebooks: header, verdicts, agreement and group tables.

Each returns an :class:`~evalkit.report._html.Html` fragment built from escaped parts,
with readable column names for a reader who never saw the code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit._styles import styled
from evalkit.catalogue import Catalogue, Rubric
from evalkit.report._exploration import (
    Exploration,
    exploration_of,
    exploration_text,
)
from evalkit.report._frames import AGREEMENT_COLUMNS, adr_href
from evalkit.report._html import (
    Html,
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
from evalkit.report._links import adr_link, studies_index_link
from evalkit.report._names import dimension_name, locale_name
from evalkit.report._provenance import (
    judge_kind,
    judge_label,
    judge_note,
    judges_in_ledger,
    judges_table,
    ledger_frame,
)


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
    ledger: str | Path | None = None,
    exploration: Exploration | None = None,
) -> Html:
    """Title, one-sentence purpose, the judge, the run's parameters and hashes, and every
    judge recorded in the ledger.

    The ``explore`` parameter is shown as the run's standing, row "Exploratory": ``yes:``
    and every reason (a rubric version asked for, unratified constants, ``--explore``),
    or ``no (gate evidence)``; never the bare flag, which reads "no" on a page that is
    exploratory for another reason. The standing is ``exploration``, else computed from
    ``parameters`` as the page's banner is (:func:`~evalkit.report._exploration.exploration_of`).

    The ledger is ``ledger``, else ``parameters["ledger"]``; it is read here (the one file
    a panel reads) so that a replayed run names the model, backend and parameters that
    produced its answers (:func:`evalkit.report.judges_in_ledger`). A ledger that does not
    exist yet lists no judge.
    """
    path = ledger if ledger is not None else parameters.get("ledger")
    judges = judges_in_ledger(ledger_frame(path)) if path else None
    rows: dict[str, Any] = {
        "Judge": code(judge_label(judge, judges) if judges is not None else judge)
    }
    if judge_kind(judge) == "replay":
        rows["Answers"] = join("replayed from the ledger (judge spec ", code(judge), ")")
    for name, value in parameters.items():
        if name == "explore":
            standing = exploration or exploration_of(catalogue, parameters)
            rows["Exploratory"] = exploration_text(standing)
            continue
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
    banner: Any = Html("")
    if not status.ratified:
        banner = callout(
            "Constants not ratified: not gate evidence",
            paragraph(status.reason(), " (ADR-0013)."),
            kind="warning",
        )
    return join(
        Html(f"<div{styled('ek-header')}>"),
        Html(
            f'<p{styled("ek-nav")}><a href="{esc(studies_index_link())}">All studies</a> · '
            f'<a href="{esc(adr_link(None, adr_base))}">Decision records (ADRs)</a></p>'
        ),
        heading(title, 1),
        paragraph(lede, css="ek-lede"),
        banner,
        judge_note(judge, adr_base, judges),
        key_values(rows, caption="This run"),
        judges_table(judges, catalogue, counts=False) if judges is not None else None,
        Html("</div>"),
    )


def _short_hash(digest: str) -> Html:
    return Html(f'<code title="{esc(digest)}">{esc(digest[:16])}…</code>')


#: The agreement table's two halves: kappa and what bounds it, then the other coefficients.
_KAPPA_COLUMNS = (
    "dimension",
    "n",
    "n_missing",
    "kappa",
    "wald_ci",
    "boot_ci",
    "kappa_max",
    "kappa_over_kappa_max",
    "status",
    "flags",
)
_OTHER_COLUMNS = ("dimension", "p_observed", "p_expected", "ac1", "bp", "alpha")


def agreement_display(frame: pd.DataFrame, caption: str = "Agreement statistics") -> Html:
    """The agreement table (frame of :func:`~evalkit.report.agreement_frame`) as two tables
    that each fit a report page: kappa with both intervals, kappa_max, status and flags
    (``caption``), then p_o/p_e, AC1, PABAK and alpha (``caption`` + ": other
    coefficients"). Every column of one table in a row would not fit 1,400 px."""
    flags = {"flags": lambda v: str(v).replace("_", " ") or "—"}
    return join(
        table(
            frame,
            {c: AGREEMENT_COLUMNS[c] for c in _KAPPA_COLUMNS},
            caption=caption,
            formats=flags,
            note="Pairs dropped: rows without a usable judge answer or a human label. "
            "Bootstrap: whole template families resampled.",
        ),
        table(
            frame,
            {c: AGREEMENT_COLUMNS[c] for c in _OTHER_COLUMNS},
            caption=f"{caption}: other coefficients",
            note="The same pairs. These explain a kappa; they never replace it.",
        ),
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
    if group_label == "Locale":
        shown = shown.assign(group=[locale_name(g) for g in shown["group"]])
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
    """Conversations where judge and human disagree, each turn shown as text, the judge's
    rationale for its bin under the scored reply (escaped; "none recorded" when the ledger
    holds none)."""
    if not items:
        return paragraph("No disagreement to show.")
    parts = []
    for item in items:
        meta = {
            "locale": locale_name(item["locale"]),
            "stratum": item["stratum"],
            "human label": item["human"],
            "judge answer": item["judge"],
        }
        parts.append(
            transcript(
                item["turns"],
                title=f"Case {item['case_id']} ({dimension_name(dimension)})",
                meta=meta,
                highlight=len(item["turns"]) - 1,
                rationale=item.get("rationale"),
            )
        )
    return join(*parts)


def adr_list(adrs: Sequence[str], adr_base: str = "adr/") -> Html:
    """Links to the given ADR ids."""
    return bullets(link(adr_href(a, adr_base), a.upper()) for a in adrs)


def number(value: Any) -> str:
    """Short text of a number for prose."""
    return fmt(value)
