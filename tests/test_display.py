"""Short reprs and HTML cards of the result records (evalkit._display), and chart bundles."""

from __future__ import annotations

import base64
import math
import re

import altair as alt
import nbformat
import numpy as np
import pandas as pd

import evalkit.report as rp
from evalkit import _display as d
from evalkit._chart import VEGALITE_MIME, Chart, charts_as_html
from evalkit.agreement import bootstrap_interval, cohens_kappa, diagnose
from evalkit.gate import DimensionVerdict, GateVerdict, Reason
from evalkit.report import _html

PAYLOAD = '<script>alert(1)</script><img src=x onerror="alert(2)">'
BINS = ["low", "partial", "high"]
JUDGE = ["low", "high", "low", "partial", "high", "low", "low", "high"]
HUMAN = ["low", "high", "partial", "partial", "high", "low", "high", "high"]


def _verdict(text: str = "a reason", dimension: str = "self_harm") -> DimensionVerdict:
    reasons = (
        Reason("kappa_below_threshold", "fail", text, "adr-0003"),
        Reason("recall_regression", "hard_fail", "recall fell", "adr-0002"),
    )
    return DimensionVerdict(
        dimension, "FAIL", 0.22883758606723376, 0.10123, 0.35678, 40, reasons, threshold=0.6
    )


# --- numbers ----------------------------------------------------------------------------


def test_numbers_are_rounded_to_three_decimals() -> None:
    assert d.num(0.22883758606723376) == "0.229"
    assert d.num(0.7) == "0.700" and d.num(-0.0004) == "-4.00e-04"
    assert d.num(1.2e-05) == "1.20e-05" and d.num(0.0) == "0.000"
    assert d.num(np.float64(0.12345)) == "0.123" and d.num(np.int64(40)) == "40"
    assert d.num(float("inf")) == "inf" and d.num(True) == "True"
    for missing in (None, float("nan"), pd.NA, np.float64("nan")):
        assert d.num(missing) == "—"
    assert d.interval(0.10123, 0.35678) == "[0.101, 0.357]" and d.interval(0.1, None) == "—"


def test_short_cuts_containers_and_names_frames() -> None:
    assert d.short(tuple(range(10))) == "(0, 1, 2, 3, 4, 5, …4 more)"
    assert d.short((0.5,)) == "(0.500,)" and d.short(None) == "None"
    assert d.short(pd.DataFrame({"a": [1, 2]})) == "<DataFrame 2 rows × 1 columns>"
    assert d.short("x" * 200).endswith("…'") and len(d.short("x" * 200)) < 100


def test_agreement_results_repr_rounded_and_short() -> None:
    result = cohens_kappa(JUDGE, HUMAN, categories=BINS)
    text = repr(result)
    assert text.startswith("AgreementResult(") and "value=0.619" in text
    assert "se=0.214" in text and str(result.value) not in text
    assert len(text.splitlines()) < 20
    boot = bootstrap_interval(JUDGE, HUMAN, categories=BINS, n_resamples=50, seed=1)
    assert re.search(r"estimate=0\.\d{3}[,)]", repr(boot))
    diag = repr(diagnose(JUDGE, HUMAN, BINS))
    assert "kappa=AgreementResult(0.619)" in diag and "confusion=<DataFrame 3 rows" in diag
    assert len(diag.splitlines()) < 40
    assert all(len(line) < 140 for line in diag.splitlines())


def test_agreement_html_is_a_card_with_the_headline() -> None:
    markup = cohens_kappa(JUDGE, HUMAN, categories=BINS)._repr_html_()
    assert "AgreementResult: cohens_kappa" in markup and "= 0.619, 95% CI [0.200, 1.000]" in markup
    assert "<style" not in markup and 'style="' in markup  # inline styles only


def test_verdict_repr_and_html() -> None:
    dim = _verdict()
    text = repr(dim)
    assert text.splitlines()[0] == "DimensionVerdict self_harm: FAIL"
    assert "kappa 0.229, 95% CI [0.101, 0.357]" in text and "(ADR-0002)" in text
    gate = GateVerdict("FAIL", {"self_harm": dim}, judge={"spec": "baseline"})
    assert repr(gate).startswith("GateVerdict: FAIL (judge baseline)")
    assert "blocking: kappa_below_threshold, recall_regression" in repr(gate)
    html = dim._repr_html_()
    assert "ek-badge ek-fail" in html and "Hard fails:" in html and "recall_regression" in html
    assert 'title="docs/adr/0002-recall-over-precision-self-harm.md"' in html
    assert "ek-badge ek-fail" in gate._repr_html_()


# --- escaping -------------------------------------------------------------------------------


def _assert_escaped(markup: str) -> None:
    assert "<script" not in markup.lower() and "<img src=x" not in markup
    assert "&lt;script&gt;" in markup


def test_every_record_escapes_catalogue_and_judge_text() -> None:
    dim = _verdict(PAYLOAD, dimension=PAYLOAD)
    _assert_escaped(dim._repr_html_())
    _assert_escaped(GateVerdict("FAIL", {PAYLOAD: dim}, judge={"spec": PAYLOAD})._repr_html_())
    _assert_escaped(
        cohens_kappa([PAYLOAD, "b", "b"], ["b", "b", PAYLOAD], [PAYLOAD, "b"])._repr_html_()
    )
    frame = pd.DataFrame({PAYLOAD: [PAYLOAD], "n": [1]})
    _assert_escaped(d.frame_table(frame, caption=PAYLOAD))
    _assert_escaped(d.card(PAYLOAD, PAYLOAD, verdict=PAYLOAD, subtitle=PAYLOAD))
    _assert_escaped(d.key_values([(PAYLOAD, PAYLOAD)], caption=PAYLOAD))
    _assert_escaped(rp.verdict_panel(_verdict(PAYLOAD)).html)


def test_markup_passes_only_when_built_as_markup() -> None:
    assert d.esc(d.Markup("<b>x</b>")) == "<b>x</b>"
    assert d.esc("<b>x</b>") == "&lt;b&gt;x&lt;/b&gt;"
    assert d.cell("<b>") == "&lt;b&gt;" and d.cell(d.Markup("<b>")) == "<b>"


def test_grid_draws_at_most_max_rows() -> None:
    frame = pd.DataFrame({"i": range(25)})
    assert "… 5 more rows" in d.frame_table(frame)
    full = d.grid(frame, {"i": "i"}, max_rows=None)
    assert "more rows" not in full and full.count("<tr>") == 26


# --- one definition, one look (#28, #29) -------------------------------------------------


def test_the_report_fragments_use_the_display_helpers_not_copies() -> None:
    from evalkit.report import _html

    for name in ("esc", "fmt", "interval", "is_missing"):
        assert getattr(_html, name) is getattr(d, name), name
    assert _html.badge("FAIL").html == d.badge("FAIL")
    assert rp.key_values({"a": 0.5}).html == d.key_values([("a", 0.5)])
    assert rp.paragraph("x", css="ek-lede").html == d.paragraph("x", css="ek-lede")
    assert _html.fmt(1200.0) == d.num(1200.0) == "1200" and _html.fmt(True) == "yes"
    assert _html.fmt(1.2e-05) == "1.20e-05" and _html.interval(0.1, 0.2, 2) == "[0.10, 0.20]"
    assert d.is_missing(np.datetime64("NaT")) and not d.is_missing([float("nan")])


def _styles_of(markup: str, cls: str) -> list[str]:
    """The style attribute of every element whose class list is exactly ``cls``."""
    return re.findall(rf'class="{cls}" style="([^"]*)"', markup)


def test_fragments_carry_their_look_inline_from_the_one_stylesheet() -> None:
    """JupyterLab shows a notebook's outputs without the report stylesheet and drops
    their <style> elements: badges, callouts, tables and transcripts style themselves,
    with the very declarations the report pages' stylesheet holds."""
    from evalkit._styles import STYLES, declarations
    from evalkit.report._style import CSS

    callout = rp.callout("Note", "text", kind="warning").html
    table = rp.table(pd.DataFrame({"a": ["x"], "n": [3]})).html
    turns = _html.transcript([("user", "hi"), ("assistant", "hello")], highlight=1).html
    found = {
        "ek-badge ek-fail": _styles_of(_html.badge("FAIL").html, "ek-badge ek-fail"),
        "ek-callout ek-warning": _styles_of(callout, "ek-callout ek-warning"),
        "ek-callout-title": _styles_of(callout, "ek-callout-title"),
        "ek-cell ek-num": _styles_of(table, "ek-cell ek-num"),
        "ek-turn ek-user": _styles_of(turns, "ek-turn ek-user"),
        "ek-turn ek-assistant ek-highlight": _styles_of(turns, "ek-turn ek-assistant ek-highlight"),
    }
    for cls, styles in found.items():
        assert styles == [declarations(*cls.split()).replace("'", "&#x27;")], cls
    assert "<style" not in callout + table + turns
    for sel in ("ek-badge.ek-fail", "ek-callout.ek-warning", "ek-turn.ek-highlight"):
        assert f".{sel} {{ {STYLES[sel]}; }}" in CSS, sel  # the page's rule, same table


def test_a_transcript_shows_each_turn_as_a_block_and_marks_the_scored_reply() -> None:
    turns = [("user", "first"), ("assistant", "one"), ("user", "second"), ("assistant", "two")]
    html = _html.transcript(turns, highlight=3).html
    blocks = re.findall(r'<div class="ek-turn [^"]*" style="[^"]*display: block[^"]*">', html)
    assert len(blocks) == 4
    assert re.findall(r"(User|Agent) · turn (\d)", html) == [
        ("User", "0"), ("Agent", "1"), ("User", "2"), ("Agent", "3"),
    ]  # fmt: skip
    assert html.count("scored reply") == 1 and html.index("scored reply") > html.index("turn 3")


def test_the_diagnosis_card_labels_the_confusion_axes_and_nests_no_reprs() -> None:
    html = diagnose(JUDGE, HUMAN, BINS)._repr_html_()
    assert "judge ↓ · human →" in html  # which axis is which
    caption = html.index(">confusion</caption>")
    rows = re.findall(r"<tr><td[^>]*>(\w+)</td>", html[caption:])
    assert rows == BINS  # each row names the judge's bin
    for raw in ("AgreementResult(", "HomogeneityTest(", "AlphaResult(", "{'low'", "('low'"):
        assert raw not in html, raw
    assert "0.619 [" in html  # the nested kappa as its value and interval


# --- charts ---------------------------------------------------------------------------------


def _chart(label: str = "a") -> Chart:
    data = pd.DataFrame({"label": [label, "b"], "v": [1, 2]})
    return Chart(alt.Chart(data).mark_bar().encode(x="label:N", y="v:Q"), f"bars of {label}")


def test_chart_bundle_is_native_vegalite_with_an_svg_and_no_html() -> None:
    data, meta = _chart()._repr_mimebundle_()
    assert set(data) == {VEGALITE_MIME, "image/svg+xml", "text/plain"}
    assert "$schema" not in data[VEGALITE_MIME] and data["image/svg+xml"].startswith("<svg")
    assert "Chart:" not in data["text/plain"] and meta["evalkit"]["description"] == "bars of a"


def test_chart_text_in_the_svg_and_html_is_escaped() -> None:
    chart = _chart(PAYLOAD)
    assert "<script" not in chart.svg and "&lt;script&gt;" in chart.svg
    markup = chart._repr_html_()
    outside_spec = re.sub(r'<script type="application/json"[^>]*>.*?</script>', "", markup)
    _assert_escaped(outside_spec)
    image = re.search(r'src="data:image/svg\+xml;base64,([^"]+)"', markup)
    assert image is not None and base64.b64decode(image.group(1)).decode() == chart.svg


def test_report_renderer_turns_chart_bundles_into_embedded_charts() -> None:
    chart = rp.confusion_heatmap(
        pd.DataFrame([[1, 0], [0, 1]], index=["a", "b"], columns=["a", "b"]), "Tiny"
    )
    bundle, meta = chart._repr_mimebundle_()
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "x", outputs=[nbformat.v4.new_output("display_data", data=bundle, metadata=meta)]
        )
    ]
    converted = charts_as_html(nb)
    html = converted.cells[0].outputs[0].data["text/html"]
    assert 'class="evalkit-chart-spec"' in html and chart.svg not in html  # as a data URI
    assert VEGALITE_MIME in nb.cells[0].outputs[0].data  # the input is left alone
    page = rp.render_notebook(nb, "Tiny")
    assert page.charts == 1 and page.html.count("window.vegaEmbed=") == 1


def test_chart_specs_draw_under_vega_lite_5() -> None:
    """JupyterLab 4 draws with Vega-Lite 5: the spec must compile there, not only in 6."""
    import vl_convert

    from evalkit._chart import notebook_vegalite

    assert notebook_vegalite().startswith("5.")
    marks = vl_convert.vegalite_to_vega(_chart().spec, vl_version=notebook_vegalite())["marks"]
    assert marks and not math.isnan(len(marks))


def test_float_noise_does_not_reach_the_printed_number() -> None:
    """A true 0 computed as ±1.4e-17 prints as 0 on every machine, and a true 0.0625
    computed as 0.0625 plus one ulp rounds as 0.0625 does (worked by hand: 12 significant
    digits, then 3 decimals, Python's round-half-even on the exact binary 0.0625)."""
    assert d.num(1.3877787807814457e-17) == d.num(-1.3877787807814457e-17) == "0.000"
    assert d.num(0.06250000000000001) == d.num(0.0625) == "0.062"
    assert d.steady(-1e-17) == 0.0 and str(d.steady(-1e-17)) == "0.0"
    assert d.num(1.2e-05) == "1.20e-05"  # a real small value keeps its scientific form
    assert _html.pct(0.12345) == "12.3%"


def test_a_chart_with_nothing_to_draw_says_so_in_a_styled_escaped_note() -> None:
    """The sentence that replaces an empty chart reads as a table note in Lab too (inline
    style), and the title it names is escaped like every other text."""
    from evalkit.report._charts import group_kappa_chart

    empty = pd.DataFrame(columns=["group", "n", "kappa", "ci_low", "ci_high", "descriptive"])
    note = group_kappa_chart(empty, "locale", 0.6, "<b>By locale</b>")
    assert isinstance(note, _html.Html) and 'style="' in note.html
    assert "&lt;b&gt;By locale&lt;/b&gt;: no group has a kappa to draw." in note.html
