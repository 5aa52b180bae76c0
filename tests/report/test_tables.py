"""Report tables a reviewer reads without help: reader headers, integers, rationales, fit."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalkit.catalogue import Catalogue
from evalkit.gate import study_pairs
from evalkit.report import agreement_display, agreement_frame, disagreements, table, transcripts
from evalkit.report._html import integer_columns, readable, transcript
from evalkit.report._names import header_name, locale_name
from evalkit.report._style import page
from tests.factory import build_balanced


def _headers(html: str) -> list[str]:
    return re.findall(r'<th scope="col"[^>]*>([^<]*)</th>', html)


def _cells(html: str) -> list[str]:
    return re.findall(r"<td[^>]*>([^<]*)</td>", html)


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("ci_low", "95% CI low"),
        ("k_half", "Half-penalty point (user turns)"),
        ("erde", "ERDE"),
        ("c_fp", "False-positive cost"),
        ("tp", "True positives"),
        ("label_set", "Label set"),
        ("self_harm", "Self-harm"),
        ("de", "German (de)"),
        ("en-GB", "English, UK (en-GB)"),
        ("es-ES", "Spanish, Spain (es-ES)"),
        ("xx-YY", "Xx-yy"),  # not a locale evalkit can name: never guessed
        ("n_turns", "Turns"),
        ("some_new_column", "Some new column"),
    ],
)
def test_header_names(raw: str, shown: str) -> None:
    assert header_name(raw) == shown


def test_locale_names_never_guess() -> None:
    assert locale_name("en-US") == "English, US (en-US)"
    assert locale_name("en-QQ") == "en-QQ"
    assert locale_name("tlh") == "tlh"


def test_a_table_without_column_labels_gets_reader_headers() -> None:
    frame = pd.DataFrame({"label_set": ["a"], "self_harm": [3], "en-GB": [1], "ci_low": [0.1]})
    assert _headers(table(frame).html) == [
        "Label set",
        "Self-harm",
        "English, UK (en-GB)",
        "95% CI low",
    ]
    assert readable(frame, {"ci_low": "Lower"})["ci_low"] == "Lower"


def test_whole_numbers_print_as_integers_but_statistics_keep_decimals() -> None:
    frame = pd.DataFrame(
        {
            "latency": [1.0, 2.0, np.nan],  # a float column only because of the NaN
            "o": [2.0, 2.0, 2.0],
            "kappa": [1.0, 0.0, 1.0],
            "share": [1.0, 1.0, 0.0],
            "mixed": [1.0, 1.5, 2.0],
        }
    )
    assert integer_columns(frame, frame.columns) == {"latency", "o"}
    cells = _cells(table(frame).html)
    assert cells[:5] == ["1", "2", "1.000", "1.000", "1.000"]
    assert cells[10:15] == ["—", "2", "1.000", "0.000", "2.000"]
    # an explicit format still wins
    assert _cells(table(frame, ["latency"], formats={"latency": str}).html)[0] == "1.0"


def test_locale_column_cells_are_named() -> None:
    frame = pd.DataFrame({"locale": ["es-ES", None], "add": [3, 4]})
    assert _cells(table(frame).html)[::2] == ["Spanish, Spain (es-ES)", "—"]


def test_rationale_is_escaped_and_shown_even_when_absent() -> None:
    turns = [("user", "hi"), ("assistant", "hello")]
    shown = transcript(turns, rationale="<script>x()</script> routed to 988").html
    assert "Judge's rationale" in shown
    assert "&lt;script&gt;x()&lt;/script&gt; routed to 988" in shown and "<script>" not in shown
    assert "none recorded" in transcript(turns, rationale=None).html
    assert "rationale" not in transcript(turns).html  # not asked for: not shown


@pytest.fixture
def world(tmp_path: Path) -> tuple[Catalogue, pd.DataFrame]:
    return build_balanced(tmp_path / "catalogues")


def test_disagreement_examples_carry_the_judge_s_rationale(
    world: tuple[Catalogue, pd.DataFrame],
) -> None:
    cat, ledger = world
    ledger = ledger.copy()
    sh = ledger["dimension"] == "self_harm"
    flip = sh & (ledger["bin"] == "high")
    ledger.loc[flip, "bin"] = "low"
    ledger["rationale"] = [f"why {c} <b>" for c in ledger["case_id"]]
    pairs = study_pairs(ledger, cat.labels, cat)
    items = disagreements(pairs, cat, "self_harm", limit=3)
    assert len(items) == 3
    for item in items:
        assert item["rationale"] == f"why {item['case_id']} <b>"
    html = transcripts(items, "self_harm").html
    assert html.count("Judge's rationale") == 3 and "why" in html and "<b>" not in html
    assert "(Self-harm)" in html


def _agreement_page(world: tuple[Catalogue, pd.DataFrame]) -> str:
    cat, ledger = world
    ledger = ledger.copy()
    ledger.loc[ledger.index[::7], "bin"] = "partial"  # imperfect agreement: real numbers
    pairs = study_pairs(ledger, cat.labels, cat)
    frame = agreement_frame(pairs, cat.constants.bins, threshold=0.6, n_resamples=50)
    frame["flags"] = "single_class_collapse, gate_unreachable"  # the longest cell text
    return page("Agreement", f"<main>{agreement_display(frame).html}</main>")


@pytest.mark.slow
def test_agreement_table_fits_a_1400px_page_or_scrolls_in_its_box(
    world: tuple[Catalogue, pd.DataFrame], tmp_path: Path
) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    if not Path("/usr/bin/chromium").exists():
        pytest.skip("no Chromium at /usr/bin/chromium")
    path = tmp_path / "agreement.html"
    path.write_text(_agreement_page(world), encoding="utf-8")
    args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
    probe = """() => {
        const wrap = document.querySelector('.ek-table-wrap');
        const first = wrap.querySelector('tbody td');
        const before = first.getBoundingClientRect().left;
        wrap.scrollLeft = 10000;
        return {page: document.documentElement.scrollWidth, view: window.innerWidth,
                wrap: wrap.clientWidth, table: wrap.scrollWidth,
                overflow: getComputedStyle(wrap).overflowX,
                scrolled: wrap.scrollLeft, moved: first.getBoundingClientRect().left - before};
    }"""
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=args)
        try:
            found = {}
            for width in (1400, 700):
                tab = browser.new_page(viewport={"width": width, "height": 900})
                tab.goto(path.as_uri())
                found[width] = tab.evaluate(probe)
                tab.close()
        finally:
            browser.close()
    wide, narrow = found[1400], found[700]
    # on a 1,400 px page the table fits its box: nothing to scroll, the page never overflows
    assert wide["table"] <= wide["wrap"] and wide["page"] <= wide["view"], wide
    # on a narrow page it scrolls inside its box, the page itself does not, and the first
    # column (the dimension) stays where it was
    assert narrow["page"] <= narrow["view"], narrow
    assert narrow["overflow"] == "auto" and narrow["scrolled"] > 0, narrow
    assert narrow["moved"] == pytest.approx(0, abs=1), narrow


def test_rule_of_three_is_shown_only_with_zero_misses() -> None:
    """#28: "rule of three 2.9%" was printed under 54 misses. 3/n bounds a rate only when
    zero events are seen: 0 misses in 100 answered rows gives 3/100 = 3.0%; with 54 misses
    in 103 the row is left out (the exact bound above it is the one to read)."""
    from evalkit.report import recall_frame

    none_missed = {"rows_checked": 100, "false_negatives": 0, "unverified": 0,
                   "miss_rate_upper_95": 0.0362, "rule_of_three_upper_95": 3 / 100}  # fmt: skip
    rows = dict(recall_frame(none_missed).itertuples(index=False))
    assert rows["Rule of three (≈ 3/n, zero misses)"] == "3.0%"
    missed = {**none_missed, "rows_checked": 103, "false_negatives": 54,
              "miss_rate_upper_95": 0.62, "rule_of_three_upper_95": 3 / 103}  # fmt: skip
    shown = recall_frame(missed)
    assert not shown["quantity"].str.contains("three").any()
    assert "2.9%" not in set(shown["value"])
