"""Results and charts display natively in a notebook, and in nbconvert's HTML, offline.

One kernel runs a notebook built here that displays a gate verdict, a dimension verdict,
an agreement result, the catalogue and every chart helper; its outputs must be rich
bundles (``text/html`` for records; ``application/vnd.vegalite.v5+json`` with an SVG, or
a PNG, for charts), never the old "Chart: ..." text, and ``jupyter nbconvert --to html``
of it must draw every chart as an ``<svg>`` or ``<img>`` without loading any script.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import nbformat
import pytest

from evalkit._chart import VEGALITE_MIME

REPO = Path(__file__).resolve().parents[2]

SETUP = """
import pandas as pd
import evalkit.report as rp
from evalkit.agreement import cohens_kappa
from evalkit.catalogue import load
from evalkit.gate import DimensionVerdict, GateVerdict, Reason
from evalkit.onset import (incidence_by, incidence_chart, incidence_plot, latency_histogram,
                           swimmer_plot, time_to_event)

bins = ["low", "partial", "high"]
judge = ["low", "high", "low", "partial", "high", "low", "low", "high"]
human = ["low", "high", "partial", "partial", "high", "low", "high", "high"]
reasons = (
    Reason("kappa_below_threshold", "fail",
           "kappa below 0.60 on <script>x</script>", "adr-0003"),
    Reason("recall_regression", "hard_fail", "recall below the frozen minimum", "adr-0002"),
    Reason("note_only", "note", "a note", "adr-0014"),
)
dim = DimensionVerdict("self_harm", "FAIL", 0.22883758606723376, 0.1012345, 0.3567891, 40,
                       reasons, boot_low=0.09, boot_high=0.35, threshold=0.6)
ok = DimensionVerdict("escalation", "PASS", 0.8123456, 0.7, 0.9, 40, (), threshold=0.6)
verdict = GateVerdict("FAIL", {"self_harm": dim, "escalation": ok}, judge={"spec": "baseline"})
confusion = pd.crosstab(pd.Series(judge, name="judge"), pd.Series(human, name="human")).reindex(
    index=bins, columns=bins, fill_value=0)
marg = pd.DataFrame({"bin": bins, "judge_share": [0.5, 0.125, 0.375],
                     "human_share": [0.25, 0.25, 0.5]})
groups = pd.DataFrame({"group": ["en-US", "<b>en-GB</b>"], "n": [40, 3], "kappa": [0.5, 0.2],
                       "ci_low": [0.3, None], "ci_high": [0.7, None],
                       "descriptive": [False, True]})
power = pd.DataFrame({"true_kappa": [0.5, 0.7], "p_pass_point": [0.1, 0.8],
                      "p_pass_lower_bound": [0.0, 0.5]})
shares = pd.DataFrame({"locale": ["en-US", "en-US", "en-GB"], "bin": ["low", "high", "low"],
                       "count": [3, 1, 2], "stratum": ["a", "a", "b"]})
ceiling = pd.DataFrame({"rater": ["labeler-a", "judge"], "kind": ["human", "judge"],
                        "kappa": [0.7, 0.5], "ci_low": [0.6, 0.4], "ci_high": [0.8, 0.6],
                        "n": [30, 30], "status": ["ok", "ok"]})
lanes = {"c1": (0, [1, 3, 5], {1}), "c2": (2, [1, 3, 5, 7], {5}), "c3": (2, [1, 3], set())}
per_turn = pd.DataFrame([
    {"case_id": c, "turn": t, "onset_turn": onset, "routed": t in routed, "stratum": "x",
     "template_family": "f-" + c, "signal": "masked" if t == onset + 1 else "none"}
    for c, (onset, turns, routed) in lanes.items() for t in turns
])
per_turn["onset_turn"] = per_turn["onset_turn"].astype("Int64")
per_turn["acknowledged"] = per_turn["signal_seen"] = per_turn["routed"]
tte = time_to_event(per_turn, "routed")
curves = incidence_by(tte, None, 3).assign(event="routed")
"""

#: (name, code, kind): kind "record" must show as HTML, "vega" as a native Vega-Lite
#: chart with an SVG beside it, "image" as a PNG, "html-chart" as HTML holding an image.
CELLS = [
    ("gate verdict", "verdict", "record"),
    ("dimension verdict", "dim", "record"),
    ("agreement", "cohens_kappa(judge, human, categories=bins)", "record"),
    ("catalogue", f"load({str(REPO / 'catalogues')!r})", "record"),
    ("verdict panel", "rp.verdict_panel(dim)", "record"),
    ("confusion_heatmap", "rp.confusion_heatmap(confusion, 'Confusion')", "vega"),
    ("marginals_chart", "rp.marginals_chart(marg, bins, 'Marginals')", "vega"),
    ("group_kappa_chart", "rp.group_kappa_chart(groups, 'Locale', 0.6, 'By locale')", "vega"),
    ("power_chart", "rp.power_chart(power, 0.6, 40, 'Power')", "vega"),
    (
        "stacked_share_chart",
        "rp.stacked_share_chart(shares, x='locale', color='bin', "
        "facet='stratum', bins=bins, title='Shares', x_title='Locale', color_title='Bin')",
        "vega",
    ),
    ("ceiling_chart", "rp.ceiling_chart(ceiling, 0.6, 'Ceiling')", "vega"),
    ("incidence_chart", "incidence_chart(curves)", "vega"),
    ("chart of a chart", "rp.chart(incidence_chart(curves), 'Re-described')", "vega"),
    ("swimmer_plot", "swimmer_plot(per_turn)", "image"),
    ("incidence_plot", "incidence_plot(curves)", "image"),
    ("latency_histogram", "latency_histogram(tte)", "image"),
    ("figure", "rp.figure(latency_histogram(tte), 'Latency')", "html-chart"),
    (
        "row of charts",
        "rp.row(rp.power_chart(power, 0.6, 40, 'Power'), "
        "rp.marginals_chart(marg, bins, 'Marginals'))",
        "html-chart",
    ),
]


def _notebook() -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(SETUP)] + [
        nbformat.v4.new_code_cell(code) for _, code, _ in CELLS
    ]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    return nb


def _execute(work: Path) -> nbformat.NotebookNode:
    from nbclient import NotebookClient

    nb = _notebook()
    client = NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(work)}}
    )
    client.execute()
    return nb


def _data(nb: nbformat.NotebookNode, name: str) -> dict[str, Any]:
    cell = nb.cells[[n for n, _, _ in CELLS].index(name) + 1]
    errors = [o for o in cell.outputs if o.output_type == "error"]
    assert not errors, (name, errors)
    shown = [o for o in cell.outputs if o.output_type in ("display_data", "execute_result")]
    assert len(shown) == 1, (name, cell.outputs)
    assert "Chart:" not in json.dumps(cell), name
    return dict(shown[0].data)


def _check_bundle(nb: nbformat.NotebookNode, name: str, kind: str) -> None:
    data = _data(nb, name)
    if kind == "record":
        assert "text/html" in data, name
        assert len(data["text/plain"].splitlines()) < 40, name  # one screen
        assert "0.22883758606723376" not in data["text/plain"] + data["text/html"], name
        assert "<script>x" not in data["text/html"], name  # escaped
    elif kind == "vega":
        assert VEGALITE_MIME in data and "$schema" not in data[VEGALITE_MIME], name
        assert data["image/svg+xml"].lstrip().startswith("<svg"), name
        # No HTML in the bundle: JupyterLab would prefer it to its native Vega renderer.
        assert "text/html" not in data, name
    elif kind == "image":
        assert "image/png" in data, name
    else:
        assert "text/html" in data and "<img" in data["text/html"], name


def _check_records(nb: nbformat.NotebookNode) -> None:
    gate = _data(nb, "gate verdict")
    assert "GateVerdict: FAIL" in gate["text/plain"] and "0.229" in gate["text/plain"]
    assert "ek-badge ek-fail" in gate["text/html"] and "ADR-0002" in gate["text/html"]
    dim = _data(nb, "dimension verdict")["text/html"]
    assert "[0.101, 0.357]" in dim and "recall_regression" in dim and "&lt;script&gt;" in dim
    catalogue = _data(nb, "catalogue")
    assert "rubrics in force" in catalogue["text/plain"]
    assert "Cases by stratum and split" in catalogue["text/html"]
    panel = _data(nb, "verdict panel")["text/html"]
    assert 'style="' in panel and "ek-badge ek-fail" in panel  # styled without the report CSS


def _check_nbconvert(nb: nbformat.NotebookNode) -> None:
    from nbconvert import HTMLExporter

    page, _ = HTMLExporter().from_notebook_node(nb)
    empty, _ = HTMLExporter().from_notebook_node(_notebook())  # the template's own scripts
    scripts = re.compile(r"<script[^>]*\bsrc\s*=\s*[\"']?\s*(?:https?:)?//[^>]*>", re.I)
    assert set(scripts.findall(page)) <= set(scripts.findall(empty))
    assert "Chart:" not in page

    def drawn(cells: list[nbformat.NotebookNode]) -> int:
        body, _ = HTMLExporter().from_notebook_node(nbformat.v4.new_notebook(cells=cells))
        return body.count("<svg") + body.count("<img")

    baseline = drawn([])
    for name, _, kind in CELLS:
        if kind != "record":
            cell = nb.cells[[n for n, _, _ in CELLS].index(name) + 1]
            assert drawn([cell]) - baseline >= (2 if name == "row of charts" else 1), name


@pytest.mark.slow
def test_a_notebook_displays_results_and_charts_natively(tmp_path: Path) -> None:
    """One kernel: every display is a rich bundle, and nbconvert's HTML draws the charts."""
    nb = _execute(tmp_path)
    nbformat.write(nb, tmp_path / "display.ipynb")
    for name, _, kind in CELLS:
        _check_bundle(nb, name, kind)
    _check_records(nb)
    _check_nbconvert(nb)
