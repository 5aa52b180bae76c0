"""Report building blocks: escaping, charts, secrets, ADR pages, rendering, study frames."""

from __future__ import annotations

import json
import re
from pathlib import Path

import altair as alt
import nbformat
import pandas as pd
import pytest

import evalkit.report as rp
from evalkit.catalogue import Catalogue
from evalkit.gate import ADR, evaluate, study_pairs
from evalkit.heldout import template_rows
from evalkit.report._adr import render_adrs
from evalkit.report._charts import Chart
from evalkit.report._execute import read_source
from evalkit.report._frames import adr_href, reasons_frame
from evalkit.report._html import fmt, link, strong, transcript
from evalkit.report._render import OfflineError, remote_references, vega_bundle
from evalkit.report._run import STUDIES
from evalkit.report._secrets import SecretLeakError, check_parameters, scan_files
from tests.report.world import FAKE_KEY, PAYLOADS, build_world

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
STANDARD_PARAMETERS = {"catalogue", "split", "dimensions", "judge", "rubric_versions", "ledger",
                       "seed"}  # fmt: skip


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Catalogue:
    return build_world(tmp_path_factory.mktemp("world") / "catalogues")


# --- escaping -------------------------------------------------------------------------


@pytest.mark.parametrize("payload", PAYLOADS)
def test_every_helper_escapes_text(payload: str) -> None:
    frame = pd.DataFrame({"text": [payload], "n": [1]})
    fragments = [
        rp.table(frame, {"text": payload, "n": "n"}, caption=payload, note=payload),
        transcript([("user", payload), ("assistant", payload)], title=payload,
                   meta={"case": payload}),
        rp.key_values({payload: payload}, caption=payload),
        rp.callout(payload, payload, kind="refusal"),
        rp.paragraph(payload, strong(payload), rp.code(payload)),
        rp.heading(payload, 2, anchor=payload),
        rp.bullets([payload]),
    ]  # fmt: skip
    for fragment in fragments:
        markup = fragment._repr_html_()
        assert payload not in markup
        assert "<script" not in markup.lower()
        assert "<iframe" not in markup.lower()
        assert "onerror=" not in markup.replace("onerror=&quot;", "")


def test_links_stay_relative() -> None:
    assert 'href="adr/0005-x.html"' in link("adr/0005-x.html", "ADR-0005").html
    for bad in ("javascript:alert(1)", "https://cdn.example/x.js", "//evil.example/x",
                " JavaScript:alert(1)", "data:text/html,<b>"):  # fmt: skip
        with pytest.raises(ValueError):
            link(bad, "x")


def test_formatting_of_missing_and_numbers() -> None:
    assert fmt(None) == "—" and fmt(float("nan")) == "—" and fmt(pd.NA) == "—"
    assert fmt(0.12345) == "0.123" and fmt(3) == "3" and fmt(True) == "yes"
    assert fmt("0") == "0" and fmt("v2") == "v2"
    assert rp.pct(0.5) == "50.0%" and rp.interval(0.1, None) == "—"
    assert rp.interval(0.1, 0.2) == "[0.100, 0.200]"


def test_table_marks_numbers_and_descriptive_rows() -> None:
    frame = pd.DataFrame({"group": ["a", "b"], "n": [40, 3]})
    html = rp.table(frame, row_class=lambda r: "descriptive" if r["n"] < 30 else None).html
    assert html.count("ek-num") == 2  # numbers aligned right (a class and its look)
    assert html.count('class="descriptive"') == 1
    assert "No rows." in rp.table(frame.iloc[:0]).html


def test_adr_links_go_to_the_pages_on_a_page_and_to_docs_adr_live_in_lab(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#28: shown live in JupyterLab (a kernel jupyter_server started for a notebook in
    the workspace), the ADR links pointed at pages beside the reports and 404ed."""
    from evalkit.gate import DimensionVerdict, Reason
    from evalkit.report._links import studies_index_link

    md = "0002-recall-over-precision-self-harm.md"
    reason = Reason("recall_regression", "hard_fail", "recall fell", "adr-0002")
    verdict = DimensionVerdict("self_harm", "FAIL", 0.2, 0.1, 0.3, 40, (reason,), threshold=0.6)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)  # papermill, evalkit study
    assert adr_href("adr-0002") == "adr/0002-recall-over-precision-self-harm.html"
    assert studies_index_link() == "index.html"
    files = (("docs/adr", md), ("reports/adr", "index.html"), ("reports", "index.html"))
    for folder, name in files:
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / name).write_text("x", encoding="utf-8")
    monkeypatch.setenv("EVALKIT_PROJECT", str(tmp_path))
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "workspace" / "study.ipynb"))
    assert adr_href("adr-0002") == f"../docs/adr/{md}"  # Lab opens the markdown
    assert f'href="../docs/adr/{md}"' in rp.verdict_panel(verdict).html
    assert adr_href("adr-0099") == "../reports/adr/index.html#adr-0099"
    assert studies_index_link() == "../reports/index.html"
    assert adr_href("adr-0002", "../site/adr/").endswith(".html")  # a base given is obeyed


# --- charts -------------------------------------------------------------------------------


def test_chart_spec_cannot_close_its_script_block() -> None:
    data = pd.DataFrame({"label": ["</script><script>alert(1)</script>", "a & b"], "v": [1, 2]})
    chart = rp.chart(alt.Chart(data).mark_bar().encode(x="label:N", y="v:Q"), "a <b> chart")
    markup = chart._repr_html_()
    body = re.search(r'<script type="application/json"[^>]*>(.*?)</script>', markup, re.S)
    assert body is not None
    assert "<" not in body.group(1) and ">" not in body.group(1)
    spec = json.loads(body.group(1))
    assert "$schema" not in spec
    assert any("</script>" in json.dumps(v) for v in spec.get("datasets", {}).values())
    assert "a &lt;b&gt; chart" in markup
    assert markup.count('class="evalkit-chart-spec"') == 1


def test_chart_builders_make_valid_specs() -> None:
    confusion = pd.DataFrame(
        [[3, 1, 0], [0, 2, 1], [0, 0, 4]],
        index=["low", "partial", "high"],
        columns=["low", "partial", "high"],
    )
    marg = pd.DataFrame({"bin": ["low", "partial", "high"], "judge_share": [0.5, 0.2, 0.3],
                         "human_share": [0.4, 0.3, 0.3]})  # fmt: skip
    groups = pd.DataFrame({"group": ["en-US", "en-GB"], "n": [40, 3], "kappa": [0.5, None],
                           "ci_low": [0.3, None], "ci_high": [0.7, None],
                           "descriptive": [False, True]})  # fmt: skip
    power = pd.DataFrame({"true_kappa": [0.5, 0.7], "p_pass_point": [0.1, 0.8],
                          "p_pass_lower_bound": [0.0, 0.5]})  # fmt: skip
    charts = [
        rp.confusion_heatmap(confusion, "Confusion"),
        rp.marginals_chart(marg, ["low", "partial", "high"], "Marginals"),
        rp.group_kappa_chart(groups, "Locale", 0.6, "By locale"),
        rp.power_chart(power, 0.6, 40, "Power"),
    ]
    import vl_convert

    for chart in charts:
        assert isinstance(chart, Chart)
        assert "datasets" in chart.spec
        compiled = vl_convert.vegalite_to_vega(chart.spec)
        assert compiled["marks"], chart.description
    empty = rp.group_kappa_chart(groups.iloc[1:], "Locale", 0.6, "Empty")
    assert isinstance(empty, rp.Html) and "no group has a kappa" in empty.html


def test_matplotlib_figures_are_embedded_as_data_uris() -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(2, 2))
    fig.add_subplot().plot([0, 1], [1, 0])
    markup = rp.figure(fig, "a <line>")._repr_html_()
    assert 'src="data:image/png;base64,' in markup and "a &lt;line&gt;" in markup


# --- secrets --------------------------------------------------------------------------


def test_parameters_holding_a_secret_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", "local-secret-value-1234")
    check_parameters({"judge": "anthropic:claude-sonnet-4-5-20250929", "seed": 0})
    for params in (
        {"judge": f"anthropic:{FAKE_KEY}"},
        {"api_key": "x"},
        {"note": "local-secret-value-1234"},
        {"extra": ["sk-ant-api03-abcdefghijk"]},
    ):
        with pytest.raises(SecretLeakError):
            check_parameters(params)


def test_scan_finds_planted_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-0123456789abcdef")
    clean, leaky, env_leak = tmp_path / "a.html", tmp_path / "b.html", tmp_path / "c.ipynb"
    clean.write_text("<p>kappa 0.61, seed 0, sha256 " + "ab" * 32 + "</p>")
    leaky.write_text(f"<pre>{FAKE_KEY}</pre>")
    env_leak.write_text('{"text": "tok-0123456789abcdef"}')
    found = scan_files([clean, leaky, env_leak])
    assert {f.path for f in found} == {leaky, env_leak}
    assert all(FAKE_KEY not in f.what for f in found)


# --- ADR pages ----------------------------------------------------------------------------


def test_adrs_render_beside_reports_escaped(tmp_path: Path) -> None:
    src = tmp_path / "adr"
    src.mkdir()
    (src / "0001-first.md").write_text(
        "# ADR-0001: First\n\nSee ADR-0002 and [two](0002-second.md).\n\n"
        "<script>alert(1)</script> [bad](javascript:alert(2)) [worse](javascript:void)\n",
        encoding="utf-8",
    )
    (src / "0002-second.md").write_text("# ADR-0002: Second\n\nBack to ADR-0001.\n")
    pages = render_adrs(src, tmp_path / "out")
    assert [p.number for p in pages] == ["0001", "0002"]
    first = (tmp_path / "out" / "adr" / "0001-first.html").read_text()
    assert "<script>alert" not in first and "&lt;script&gt;" in first
    assert 'href="javascript' not in first.lower()
    assert 'href="0002-second.html"' in first
    assert (tmp_path / "out" / "adr" / "index.html").is_file()
    assert remote_references(first) == []


def test_every_gate_adr_has_a_shipped_page(tmp_path: Path) -> None:
    pages = render_adrs(REPO / "docs" / "adr", tmp_path)
    for adr in ADR:
        assert (tmp_path / adr_href(adr)).is_file(), adr
    assert len(pages) >= 8


# --- rendering ----------------------------------------------------------------------------


def _notebook(outputs: list[nbformat.NotebookNode]) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("## A section\n\nSome prose."),
        nbformat.v4.new_code_cell("import secret_code_marker"),
        nbformat.v4.new_code_cell("display(x)", outputs=outputs),
    ]
    return nb


def test_render_hides_code_and_loads_vega_once() -> None:
    chart = rp.confusion_heatmap(pd.DataFrame([[1, 0], [0, 1]], index=["a", "b"],
                                              columns=["a", "b"]), "Tiny")  # fmt: skip
    outputs = [
        nbformat.v4.new_output("display_data", data={"text/html": chart._repr_html_()}),
        nbformat.v4.new_output("display_data", data={"text/html": chart._repr_html_()}),
        nbformat.v4.new_output("stream", name="stderr", text="a warning\n"),
    ]
    page = rp.render_notebook(_notebook(outputs), "Tiny <study>")
    assert page.charts == 2 and page.stderr == "a warning\n"
    assert page.html.count("window.vegaEmbed=") == 1
    assert "secret_code_marker" not in page.html and "a warning" not in page.html
    assert "Some prose." in page.html and "<title>Tiny &lt;study&gt;</title>" in page.html
    assert remote_references(page.html) == []
    for cdn in ("require", "mathjax", "mermaid", "cdnjs", "jsdelivr"):
        assert cdn not in page.html.lower().replace(vega_bundle().lower(), ""), cdn


def test_page_without_charts_carries_no_bundle() -> None:
    outputs = [nbformat.v4.new_output("display_data", data={"text/html": "<p>hi</p>"})]
    page = rp.render_notebook(_notebook(outputs), "No charts")
    assert page.charts == 0 and "vegaEmbed" not in page.html


def test_remote_references_are_detected() -> None:
    assert remote_references('<script src="https://cdn.jsdelivr.net/npm/vega"></script>')
    assert remote_references("<link href='//fonts.example/x.css'>")
    assert remote_references("<style>@import url(https://x.example/a.css);</style>")
    assert not remote_references('<img src="data:image/png;base64,AAAA"><a href="adr/x.html">')


# --- notebooks ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", [s.name for s in STUDIES])
def test_notebooks_have_a_parameters_cell(name: str) -> None:
    nb = read_source(NOTEBOOKS / f"{name}.ipynb")
    params = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1
    names = set(re.findall(r"^(\w+)\s*(?::[^=]*)?=", params[0].source, re.MULTILINE))
    assert names >= STANDARD_PARAMETERS, STANDARD_PARAMETERS - names
    assert not [n for n in names if re.search(r"key|token|secret|password", n, re.I)]
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "def " not in code and "class " not in code, "logic belongs in evalkit"
    assert "os.environ" not in code


def test_study_command_is_registered() -> None:
    from evalkit.cli import build_parser

    args = build_parser("study").parse_args(["study", "--judge", "baseline", "--out", "x"])
    assert args.command == "study" and args.out == "x" and args.seed == 0


def test_study_parameters_never_hold_secrets(world: Catalogue) -> None:
    for study in STUDIES:
        params = rp._run.study_parameters(study, catalogue=world, catalogue_path="catalogues",
                                          judge="baseline", ledger="ledgers/baseline.sqlite",
                                          seed=0)  # fmt: skip
        assert set(params) >= STANDARD_PARAMETERS
        check_parameters(params)
    assert (
        rp._run.judge_slug("openai:http://127.0.0.1:8080/v1:m") == "openai_http_127.0.0.1_8080_v1_m"
    )


# --- study frames -------------------------------------------------------------------------


def _agreeing(world: Catalogue) -> pd.DataFrame:
    bins = world.constants.bins
    rows = [
        {"request_key": f"k-{lab.case_id}", "case_id": lab.case_id, "dimension": lab.dimension,
         "turn": len(world.case(lab.case_id).turns) - 1, "status": "ok", "bin": lab.bin,
         "signal_present": lab.bin != "low", "judge": "test",
         "rubric_hash": world.rubric(lab.dimension).content_hash(bins),
         "framing_hash": world.framing_hash, "constants_hash": world.constants_hash}
        for lab in world.labels
    ]  # fmt: skip
    return pd.DataFrame(rows)


def test_study_frames_on_an_agreeing_ledger(world: Catalogue) -> None:
    ledger = _agreeing(world)
    verdict = evaluate(ledger, world.labels, world, n_resamples=100)
    pairs = study_pairs(ledger, world.labels, world)
    overview = rp.verdict_overview(verdict)
    assert list(overview["dimension"]) == list(world.constants.gated_dimensions)
    assert set(overview["verdict"]) == {"PASS"}
    bins = list(world.constants.bins)
    table = rp.agreement_frame(pairs, bins, threshold=0.6, n_resamples=100)
    assert set(table["kappa"].astype(float)) == {1.0}
    diag = rp.dimension_diagnosis(pairs, "self_harm", bins, 0.6)
    assert rp.marginals(diag)["judge_n"].sum() == diag.n == 40
    assert "p_o" in " ".join(rp.paradox_summary(diag)["quantity"])
    by_locale = rp.group_agreement(pairs, "self_harm", "locale", world.constants, n_resamples=50)
    assert set(by_locale["group"]) == {"en-US", "en-GB"}
    assert by_locale["descriptive"].all()  # 20 pairs per locale < min_cell_n 30
    assert all("descriptive" in r for r in by_locale["reading"])
    panel = rp.power_panel(diag, threshold=0.6, n_sim=200)
    assert len(panel.curve) > 0 and panel.sizes["pairs_needed"].notna().all()
    reasons = reasons_frame(verdict.dimensions["self_harm"])
    assert all(h.startswith("adr/") for h in reasons["href"])
    assert rp.disagreements(pairs, world, "self_harm") == []


def test_disagreements_carry_conversations(world: Catalogue) -> None:
    ledger = _agreeing(world)
    flip = (ledger["dimension"] == "self_harm") & (ledger["case_id"] == "en-US-0-0")
    ledger.loc[flip, "bin"] = "high"
    pairs = study_pairs(ledger, world.labels, world)
    items = rp.disagreements(pairs, world, "self_harm", limit=5)
    assert [i["case_id"] for i in items] == ["en-US-0-0"]
    assert items[0]["judge"] == "high" and items[0]["human"] == "low"
    assert PAYLOADS[0] in " ".join(text for _, text in items[0]["turns"])
    markup = rp.transcripts(items, "Self-harm").html
    assert PAYLOADS[0] not in markup and "&lt;script&gt;" in markup


def test_heldout_status_refuses_without_a_seal(world: Catalogue) -> None:
    status = rp.heldout_status(world)
    assert not status.sealed and "not sealed" in status.message
    composition = rp.split_composition(world, "heldout")
    assert composition.loc[composition["Stratum"] == "Total", "Total"].item() == 10
    assert len(rp.blind_preview(template_rows(world), limit=3)) == 3


@pytest.mark.parametrize("markup", ["<script>alert(1)</script>", '<img src=x onerror="alert(1)">',
                                    '<svg onload="alert(1)"></svg>'])  # fmt: skip
def test_render_refuses_outputs_that_would_run_markup(markup: str) -> None:
    outputs = [nbformat.v4.new_output("display_data", data={"text/html": f"<p>{markup}</p>"})]
    with pytest.raises(OfflineError, match="would run"):
        rp.render_notebook(_notebook(outputs), "Unsafe")


def test_construct_caveat_only_for_the_baseline() -> None:
    import evalkit.report as rp

    assert "cannot reproduce" in rp.construct_caveat("baseline").html
    assert rp.construct_caveat("anthropic:claude-sonnet-4-5-20250929").html == ""
    assert rp.construct_caveat("replay").html == ""


def test_study_refuses_a_file_as_out_and_a_folder_as_ledger_before_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """#30 hunt: ``--out FILE`` was an internal error (exit 3) and ``--ledger FOLDER`` a
    failed study (exit 1) after every notebook ran; both are exit 2 before any runs."""
    from evalkit.cli import main

    (tmp_path / "page.txt").write_text("x")
    base = ["study", "--catalogue", str(tmp_path / "nothere")]
    assert main([*base, "--out", str(tmp_path / "page.txt")]) == 2
    assert "--out " + str(tmp_path / "page.txt") + ": is a file" in capsys.readouterr().err
    assert main([*base, "--out", str(tmp_path / "r"), "--ledger", str(tmp_path)]) == 2
    assert f"--ledger {tmp_path}: is a folder" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()
