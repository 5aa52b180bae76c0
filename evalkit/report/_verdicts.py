"""The gate's verdict as the study pages show it: the overall line, the table of every
dimension, and each dimension's panel of reasons with their ADRs. For an exploratory run,
no PASS / FAIL badge: each kappa against the threshold in words (ADR-0017).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from evalkit import _display as display
from evalkit._styles import styled
from evalkit.gate import DimensionVerdict, GateVerdict
from evalkit.report._exploration import EXPLORATORY, Exploration, threshold_reading
from evalkit.report._frames import reasons_frame
from evalkit.report._html import Html, badge, esc, link, paragraph, strong, table


def _objects(values: list[Any], index: pd.Index) -> pd.Series:
    return pd.Series(values, index=index, dtype=object)


def verdict_overview_table(frame: pd.DataFrame, exploration: Exploration | None = None) -> Html:
    """The gate verdict of every dimension in one table (frame of ``verdict_overview``).

    For an exploratory run, only the dimensions asked for, each kappa against the
    threshold in words instead of a PASS / FAIL badge (ADR-0017).
    """
    columns = {
        "dimension": "Dimension",
        "verdict": "Verdict",
        "kappa": "Cohen's kappa",
        "wald_ci": "95% CI (Wald)",
        "boot_ci": "95% CI (bootstrap)",
        "n": "Pairs",
        "threshold": "Threshold",
        "codes": "Blocking reasons",
    }
    formats = {"threshold": lambda v: f"{float(v):.2f}"}
    if exploration is not None and exploration.exploratory:
        rows = frame[frame["dimension"].isin(exploration.dimensions)]
        readings = [
            threshold_reading(k if isinstance(k, float) else None, float(t), str(k))
            for k, t in zip(rows["kappa"], rows["threshold"], strict=True)
        ]
        return table(
            rows.assign(verdict=readings),
            {**columns, "verdict": "Against the threshold", "codes": "What the gate's rules find"},
            caption=f"Kappa per dimension asked for ({EXPLORATORY.lower()})",
            formats=formats,
        )
    rows = frame.assign(verdict=_objects([badge(v) for v in frame["verdict"]], frame.index))
    return table(
        rows,
        columns,
        caption="Gate verdict per dimension",
        formats=formats,
        row_class=lambda r: "ek-row-fail" if r["blocking"] else "ek-row-pass",
    )


def overall_verdict(
    verdict: GateVerdict, threshold: float, exploration: Exploration | None = None
) -> Html:
    """The line above the verdict table: the gate's overall badge, or for an exploratory
    run the statement that no gate verdict is given."""
    if exploration is not None and exploration.exploratory:
        return paragraph(
            strong(f"{EXPLORATORY}: "),
            "no gate verdict is given. Each dimension asked for is shown against the "
            f"threshold (kappa ≥ {threshold:.2f} on the point estimate); the reasons say what "
            "the gate's rules find on these rows.",
        )
    return paragraph(
        "Overall: ",
        badge(verdict.overall),
        " — the gate passes only if every gated dimension passes "
        f"(threshold: kappa ≥ {threshold:.2f} on the point estimate).",
    )


def verdict_panel(
    verdict: DimensionVerdict, adr_base: str = "adr/", exploration: Exploration | None = None
) -> Html:
    """One dimension's verdict, its numbers and every reason with a link to its ADR.

    Styled inline (:mod:`evalkit._display`), so it looks the same in a notebook, where the
    reports' stylesheet is not loaded, as on a report page. For an exploratory run: no
    PASS / FAIL badge, the kappa against the threshold in words, and the reasons as what
    the gate's rules find (ADR-0017).
    """
    exploring = exploration is not None and exploration.exploratory
    summary = verdict.summary()
    reasons = reasons_frame(verdict, adr_base)
    rows = [
        {"severity": sev, "message": msg, "adr": display.Markup(link(href, adr).html)}
        for sev, msg, adr, href in zip(
            reasons["severity"], reasons["message"], reasons["adr"], reasons["href"], strict=True
        )
    ]
    blocking = [r["severity"] != "note" and not exploring for r in rows]
    if exploring:
        reading = threshold_reading(verdict.kappa, verdict.threshold, verdict.kappa_status)
        line = display.paragraph(
            display.Markup(f"<strong>{esc(EXPLORATORY)}: </strong>"), f"{summary}; {reading}."
        )
    else:
        line = display.paragraph(
            display.Markup("<strong>Verdict: </strong>"), display.badge(verdict.verdict), " ",
            summary,
        )  # fmt: skip
    table_markup = display.grid(
        rows,
        {"severity": "Severity", "message": "What the gate found", "adr": "Rule (ADR)"},
        caption="What the gate's rules find (not a verdict)" if exploring else "Reasons",
        empty="No reason recorded.",
        max_rows=None,
        row_style=["border-left: 4px solid #cf222e;" if b else None for b in blocking],
        row_class=["ek-row-fail" if b else None for b in blocking],
    )
    wrapped = f"<div{styled('ek-table-wrap')}>{table_markup}</div>"
    return Html(f'<div class="ek-verdict-panel">{line}{wrapped}</div>', summary)
