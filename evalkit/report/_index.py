"""``write_index``: the index page of a study run, ``<out>/index.html``.

Each study's row carries its verdict badge and headline numbers, read from the headline
the study itself published (:mod:`._summary`), so the index and the pages show the same
numbers. Nothing on the page depends on when or how fast the run went (ADR-0020): run
times go to the terminal only.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit.catalogue import Catalogue
from evalkit.report._adr import AdrPage
from evalkit.report._exploration import EXPLORATORY, Exploration, exploration_banner
from evalkit.report._html import Html, badge, code, esc, join, link, table
from evalkit.report._provenance import (
    judge_kind,
    judge_label,
    judge_note,
    judges_in_ledger,
    judges_table,
    ledger_frame,
)
from evalkit.report._studies import StudyResult
from evalkit.report._style import page
from evalkit.report._summary import EXPLORATORY_BADGE, NOT_APPLICABLE, Headline
from evalkit.secrets import scrub

#: The file beside each run's index that names its judge (read by a parent index).
RUN_FILE = "run.json"


def other_runs(out: Path) -> str:
    """A section linking the runs rendered into sub-folders of ``out`` (each with its
    ``index.html`` and :data:`RUN_FILE`), such as the recorded reading judge's studies
    beside the baseline's; empty when there are none. Sorted by folder name."""
    rows = []
    for sub in sorted(p for p in out.iterdir() if p.is_dir()):
        meta = sub / RUN_FILE
        if not (sub / "index.html").is_file() or not meta.is_file():
            continue
        try:
            info = json.loads(meta.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        rows.append(
            {
                "run": link(f"{sub.name}/index.html", str(info.get("title") or sub.name)),
                "judge": code(str(info.get("judge", "?"))),
                "studies": ", ".join(map(str, info.get("studies", []))),
            }
        )
    if not rows:
        return ""
    return table(
        pd.DataFrame(rows, columns=["run", "judge", "studies"]),
        {"run": "Run", "judge": "Judge", "studies": "Studies"},
        caption="The same studies with other judges",
    ).html


def write_index(
    out: Path,
    catalogue: Catalogue,
    *,
    judge: str,
    catalogue_path: str,
    ledger: str,
    seed: int,
    results: Sequence[StudyResult],
    adrs: Sequence[AdrPage],
    exploration: Exploration | None = None,
    adr_base: str = "adr/",
) -> Path:
    """Write ``out/index.html``: the run's parameters, every judge recorded in the ledger
    (read from ``ledger``), a link to every study, and the exploratory banner when the run
    (or any of its studies) is exploratory. Each study shows its badge and headline
    (:func:`study_verdict`); the page holds no timestamp and no run time. ``adr_base``
    prefixes the ADR links of its banners (``adrs`` carry their own links)."""
    judges = judges_in_ledger(ledger_frame(ledger))
    rows = []
    for r in results:
        rows.append(
            {
                "study": link(r.href, r.study.title),
                "what": r.study.summary,
                "verdict": study_verdict(r),
                "parameters": Html(
                    "<br>".join(
                        f"{esc(k)}: {esc(_short(v))}"
                        for k, v in r.parameters.items()
                        if k not in ("catalogue", "judge", "ledger", "seed", "adr_base")
                    )
                ),
            }
        )
    studies = table(
        pd.DataFrame(rows, columns=["study", "what", "verdict", "parameters"]),
        {
            "study": "Study",
            "what": "What it shows",
            "verdict": "Verdict and headline",
            "parameters": "Study parameters",
        },
        caption="Studies",
        empty="No study was run.",
    )
    standing = exploration or Exploration()
    if not standing.exploratory:
        standing = next((r.exploration for r in results if r.exploration.exploratory), standing)
    banner = exploration_banner(standing, adr_base).html + judge_note(judge, adr_base, judges).html
    answers = (
        [{"k": "Answers", "v": join("replayed from the ledger (judge spec ", code(judge), ")")}]
        if judge_kind(judge) == "replay"
        else []
    )
    asked = dict(standing.rubric_versions)
    run = table(
        pd.DataFrame(
            [
                {"k": "Judge", "v": code(judge_label(judge, judges))},
                *answers,
                {
                    "k": "Rubrics",
                    "v": ", ".join(f"{d} {v}" for d, v in asked.items()) or "in force",
                },
                {
                    "k": "Kind of run",
                    "v": EXPLORATORY
                    if standing.exploratory
                    else "gate run (the rubrics in force, ratified constants)",
                },
                {"k": "Catalogue", "v": code(catalogue_path)},
                {
                    "k": "Cases",
                    "v": f"{len(catalogue.cases)} ({len(catalogue.split('calibration'))} "
                    f"calibration, {len(catalogue.split('heldout'))} held-out)",
                },
                {"k": "Ledger", "v": code(ledger)},
                {"k": "Seed", "v": str(seed)},
                {"k": "Constants hash", "v": code(catalogue.constants_hash)},
                {"k": "Framing hash", "v": code(catalogue.framing_hash)},
            ]
        ),
        {"k": "Run", "v": "Value"},
        caption="This run",
    )
    adr_items = (
        "".join(f'<li><a href="{esc(a.href)}">{esc(a.title)}</a></li>' for a in adrs)
        or "<li>No decision records were found.</li>"
    )
    failed = [r for r in results if not r.ok]
    status_note = (
        f'<div class="ek-callout ek-refusal"><p class="ek-callout-title">{len(failed)} study(ies) '
        "failed</p><p>Their pages show where they stopped.</p></div>"
        if failed
        else ""
    )
    body = (
        "<h1>evalkit studies</h1>"
        '<p class="ek-lede">Can an LLM judge stand in for human experts on safety-critical '
        "dimensions of a health chat agent? These studies compare the judge with human labels "
        "and decide, with a gate that cannot be gamed, whether it may gate a launch. Each page "
        "below opens offline; the decision records behind every verdict are linked from them."
        f"</p>{banner}{status_note}{studies.html}{other_runs(out)}{run.html}"
        f"{judges_table(judges, catalogue).html}"
        "<h2>Decision records (ADRs)</h2><p>The rules the verdicts cite.</p>"
        f"<ul>{adr_items}</ul>"
    )
    path = out / "index.html"
    path.write_text(scrub(page("evalkit studies", body)), encoding="utf-8")
    return path


def study_verdict(result: StudyResult) -> Html:
    """A study's badge and headline lines for the index.

    A failed study shows ``failed`` and its error; a study that published no headline
    shows ``rendered``; an exploratory study (ADR-0017) never shows PASS or FAIL: its
    badge is ``exploratory`` whatever it computed, unless it did not apply to the
    catalogue (``not applicable``: it computed nothing).
    """
    if not result.ok:
        return join(badge("failed"), " ", str(result.error))
    headline = result.headline or Headline("rendered")
    exploratory = result.exploration.exploratory and headline.badge != NOT_APPLICABLE
    shown = EXPLORATORY_BADGE if exploratory else headline.badge
    lines = "".join(
        f'<li><span class="ek-headline-label">{esc(label)}</span>: {esc(text)}</li>'
        for label, text in headline.lines
    )
    items = f'<ul class="ek-headline">{lines}</ul>' if lines else ""
    return Html(badge(shown).html + items, f"{shown} " + "; ".join(t for _, t in headline.lines))


def _short(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value) or "—"
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items()) or "in force"
    return str(value)
