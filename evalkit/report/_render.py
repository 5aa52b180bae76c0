"""Render an executed notebook to a standalone, offline HTML page without code cells.

nbconvert's ``lab`` page through the ``evalkit_offline`` template (see
``templates/evalkit_offline/index.html.j2``): no require.js, MathJax, mermaid or widget
scripts from CDNs. Charts (:class:`evalkit.report._charts.Chart`) are drawn by the Vega
bundle of ``vl_convert``, inlined once at the end of a page that holds charts. Code
cells without output (imports, the parameters) are dropped, and so are ``stderr``
streams (returned to the caller to print) and the study's headline (read by the index,
:mod:`._summary`); error outputs stay, so a failed study
shows where it failed.
"""

from __future__ import annotations

import copy
import functools
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat

from evalkit.errors import EvalkitError
from evalkit.report._charts import CHART_LOADER, SPEC_CLASS, charts_as_html
from evalkit.report._html import Html
from evalkit.report._style import CSS
from evalkit.report._summary import HEADLINE_MIME
from evalkit.secrets import scrub

TEMPLATES = Path(__file__).resolve().parent / "templates"
TEMPLATE_NAME = "evalkit_offline"

#: What an offline page must not load: remote src/href, CSS imports, known CDNs.
_REMOTE = re.compile(
    r"""(?:\b(?:src|href)\s*=\s*["']?\s*(?:https?:)?//)"""
    r"""|(?:url\(\s*["']?\s*(?:https?:)?//)"""
    r"""|(?:@import\s+["']?(?:https?:)?//)"""
    r"""|cdnjs\.cloudflare|cdn\.jsdelivr|unpkg\.com|require\.min\.js|mathjax@|MathJax\.js""",
    re.IGNORECASE,
)


class OfflineError(EvalkitError):
    """A rendered page would load something from the network, or runs a script that is
    not one of its own (an output passed markup through unescaped)."""


_SCRIPT_TAG = re.compile(r"<script\b[^>]*>", re.IGNORECASE)
_HANDLER = re.compile(r"<[a-zA-Z][^<>]*?\son[a-zA-Z]+\s*=", re.IGNORECASE)


def _is_spec_tag(tag: str) -> bool:
    return f'class="{SPEC_CLASS}"' in tag and 'type="application/json"' in tag


@functools.cache
def vega_bundle() -> str:
    """The Vega, Vega-Lite and vega-embed bundle of ``vl_convert`` (computed once)."""
    import altair as alt
    import vl_convert

    wanted = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    version = wanted if wanted in vl_convert.get_vegalite_versions() else None
    # The default snippet (no argument) assigns vegaEmbed, vega and vegaLite to window.
    bundle: str = vl_convert.javascript_bundle(vl_version=version)  # type: ignore[call-arg]
    # Inline-script safety: the bundle must not close its own <script> element.
    return re.sub(r"</(script)", r"<\\/\1", bundle, flags=re.IGNORECASE)


def remote_references(html_text: str) -> list[str]:
    """Snippets of ``html_text`` that would reach the network (empty when offline-clean).

    The inlined Vega bundle is skipped: its code names URLs in strings it never loads
    with the options the reports use (no actions menu, no remote data).
    """
    bundle = vega_bundle() if "window.vegaEmbed=" in html_text else ""
    text = html_text.replace(bundle, "") if bundle else html_text
    return [text[max(m.start() - 40, 0) : m.end() + 40] for m in _REMOTE.finditer(text)]


def foreign_scripts(html_text: str) -> list[str]:
    """Script tags and inline event handlers of ``html_text`` that the report did not put
    there: anything but the chart specs, the Vega bundle and the chart loader."""
    bundle = vega_bundle() if "window.vegaEmbed=" in html_text else ""
    text = html_text.replace(bundle, "") if bundle else html_text
    if bundle:
        text = text.replace(CHART_LOADER, "")
    tags = [t for t in _SCRIPT_TAG.findall(text) if not _is_spec_tag(t)]
    own = 2 if bundle else 0  # the bundle's and the loader's bare <script> tags
    bare = [t for t in tags if t.lower() == "<script>"]
    found = [t for t in tags if t.lower() != "<script>"] + bare[own:]
    found += [m.group(0)[:80] for m in _HANDLER.finditer(text)]
    return found


_CHART_ID = re.compile(r"\bek-chart-(?:[0-9a-f]{6,64}-)?\d+\b")


def stable_chart_ids(html_text: str) -> str:
    """``html_text`` with every chart id renamed ``ek-chart-<n>``, ``n`` its place on the
    page (order of first appearance), so that an id depends neither on how many charts
    the kernel drew before nor on the chart's content (ADR-0020): the kernel's ids carry
    a digest of the spec, and a spec is only as stable as its numbers. An id and the
    ``data-target`` naming it stay equal."""
    order: dict[str, str] = {}

    def renumber(m: re.Match[str]) -> str:
        key = m.group(0)
        if key not in order:
            order[key] = f"ek-chart-{len(order) + 1}"
        return order[key]

    return _CHART_ID.sub(renumber, html_text)


@dataclass(frozen=True)
class Rendered:
    """A rendered page: its HTML, whether it holds charts, and the stderr text removed."""

    html: str
    charts: int
    stderr: str


def _strip(nb: nbformat.NotebookNode) -> tuple[nbformat.NotebookNode, str]:
    nb = copy.deepcopy(nb)
    removed: list[str] = []
    cells = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            kept = []
            for out in cell.get("outputs", []):
                if out.get("output_type") == "stream" and out.get("name") == "stderr":
                    removed.append(str(out.get("text", "")))
                    continue
                if HEADLINE_MIME in out.get("data", {}):  # read by the index, not shown
                    continue
                kept.append(out)
            cell.outputs = kept
            if not kept:
                continue
        cells.append(cell)
    nb.cells = cells
    return nb, "".join(removed)


def render_notebook(nb: nbformat.NotebookNode, title: str, banner: Html | None = None) -> Rendered:
    """HTML of an executed notebook, input cells hidden, charts drawn offline.

    ``banner`` (escaped markup, e.g. the exploratory-run banner of ADR-0017) is placed at
    the top of the page, above every output, so that no reader of any page can miss it.
    Raises :class:`OfflineError` if the page would still reference the network.
    """
    from nbconvert import HTMLExporter

    clean, stderr = _strip(nb)
    clean = charts_as_html(clean)  # notebook chart bundles → report markup
    clean.metadata["title"] = title
    exporter = HTMLExporter(
        template_name=TEMPLATE_NAME,
        extra_template_basedirs=[str(TEMPLATES)],
        exclude_input=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
    )
    body_probe = nbformat.writes(clean)
    charts = body_probe.count(f'class=\\"{SPEC_CLASS}\\"')
    resources = {
        "evalkit_css": CSS,
        "evalkit_vega_bundle": vega_bundle() if charts else "",
        "evalkit_chart_loader": CHART_LOADER if charts else "",
        "evalkit_banner": banner.html if banner is not None else "",
    }
    html_text, _ = exporter.from_notebook_node(clean, resources=resources)
    html_text = stable_chart_ids(html_text)
    found = remote_references(html_text)
    if found:
        raise OfflineError(f"{title}: the page still references the network: {found[:3]}")
    foreign = foreign_scripts(html_text)
    if foreign:
        raise OfflineError(f"{title}: an output carries markup that would run: {foreign[:3]}")
    return Rendered(html_text, charts, stderr)


def write_page(rendered: Rendered, path: str | Path) -> Path:
    """Write a rendered page as UTF-8, every secret scrubbed (:mod:`evalkit.secrets`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(scrub(rendered.html), encoding="utf-8")
    return path
