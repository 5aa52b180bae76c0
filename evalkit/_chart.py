"""A Vega-Lite chart that draws itself offline: natively in a notebook, and in the reports.

**In a notebook** (JupyterLab 4, VS Code, papermill/nbclient) a :class:`Chart` displays
as one output bundle:

- ``application/vnd.vegalite.v5+json``: the spec. JupyterLab 4 ships Vega-Lite 5 (5.6)
  and renders this mime type natively, offline. altair 6 writes Vega-Lite 6 specs and,
  by default, HTML that loads Vega from a CDN; neither draws in an offline JupyterLab 4.
  The spec is the altair spec without its ``$schema``; the charts evalkit builds use
  nothing Vega-Lite 5 lacks, and :attr:`Chart.svg` checks it, since it is drawn with
  the oldest Vega-Lite 5 that ``vl_convert`` has;
- ``image/svg+xml``: the same chart drawn by ``vl_convert``, for viewers without a
  Vega renderer (``jupyter nbconvert --to html``, GitHub);
- ``text/plain``: the description.

The bundle holds no ``text/html``: JupyterLab ranks its HTML renderer above its Vega
renderer, so an HTML fallback would hide the live chart. IPython would add one from
``_repr_html_``, so :meth:`Chart._ipython_display_` publishes the bundle itself.

**In an HTML fragment or a report page** (:meth:`Chart._repr_html_`, used when a chart is
placed inside ``evalkit.report.row`` or ``section``), a chart is a placeholder ``<div>``,
its spec in a ``<script type="application/json">`` block (``<``, ``>`` and ``&`` escaped as
JSON unicode escapes, so no text in the data can close the block) and the static chart
as an ``<img>`` (SVG data URI: it shows where no script draws, and runs nothing). A report
page loads the Vega bundle of ``vl_convert`` once, at its end, and :data:`CHART_LOADER`
draws every spec with vega-embed (SVG renderer, no actions menu), removing the static
image of each chart it drew: no CDN is involved. The report renderer turns the notebook
bundle of each chart output back into this markup with :func:`charts_as_html`.

**The same bytes on every machine** (ADR-0020): a :class:`Chart` keeps its spec in
:func:`canonical_spec` form, so float noise (BLAS kernels, summation order, libm) and the
order rows happened to arrive in reach neither the spec, nor the SVG drawn from it, nor
the page. A report page numbers its chart ids by their place on the page
(:func:`evalkit.report._render.stable_chart_ids`).
"""

from __future__ import annotations

import base64
import copy
import functools
import hashlib
import itertools
import json
import math
import re
from typing import Any

import altair as alt

from evalkit._display import esc

#: The mime type of a chart's spec in a notebook output (what JupyterLab 4 renders).
VEGALITE_MIME = "application/vnd.vegalite.v5+json"
#: Output metadata key holding the chart's description (read back by the report renderer).
METADATA_KEY = "evalkit"
#: CSS class of the JSON blocks holding chart specs (read by :data:`CHART_LOADER`).
SPEC_CLASS = "evalkit-chart-spec"
#: CSS class of the static image shown until the chart is drawn.
STATIC_CLASS = "ek-chart-static"

#: Significant digits kept of a non-integral number written into a chart spec: a
#: millionth of the value is far below a pixel and below any tooltip's format, and far
#: above the float noise (about 1e-16 relative) that differs between machines.
SPEC_DIGITS = 6

# Only makes ids unique within one live notebook; a report page renumbers them.
_counter = itertools.count(1)

#: Draws every chart spec on the page once the Vega bundle has loaded.
CHART_LOADER = """
(function () {
  function draw() {
    var specs = document.querySelectorAll('script.SPEC_CLASS');
    for (var i = 0; i < specs.length; i++) {
      var el = specs[i];
      var target = document.getElementById(el.getAttribute('data-target'));
      if (!target) { continue; }
      var still = el.parentNode.querySelector('.STATIC_CLASS');
      var spec;
      try { spec = JSON.parse(el.textContent); } catch (err) {
        target.textContent = 'This chart could not be read.'; continue;
      }
      target.textContent = '';
      window.vegaEmbed(target, spec, {renderer: 'svg', actions: false})
        .then(function (img) { return function () { if (img) { img.remove(); } }; }(still))
        .catch(function (err) {
          target.textContent = 'This chart could not be drawn: ' + err;
          console.error(err);
        });
    }
  }
  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', draw);
  } else { draw(); }
})();
""".replace("SPEC_CLASS", SPEC_CLASS).replace("STATIC_CLASS", STATIC_CLASS)


def spec_json(spec: dict[str, Any]) -> str:
    """``spec`` as JSON safe inside a ``<script>`` element."""
    text = json.dumps(spec, ensure_ascii=True, sort_keys=True, allow_nan=False, default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def stable_number(value: float, digits: int = SPEC_DIGITS) -> float:
    """``value`` rounded to ``digits`` significant digits, the same on every machine.

    Whole numbers (counts, however large) and non-finite values are kept as they are;
    ``-0.0`` becomes ``0.0`` (noise around zero must not flip a sign into the bytes).
    ``0.7198581560283688`` gives ``0.719858``; ``0.30000000000000004`` gives ``0.3``.
    """
    x = float(value)
    if not math.isfinite(x) or x.is_integer():
        return x + 0.0
    return float(f"{x:.{digits}g}") + 0.0


def _rounded(node: Any, digits: int) -> Any:
    if isinstance(node, float):
        return stable_number(node, digits)
    if isinstance(node, dict):
        return {k: _rounded(v, digits) for k, v in node.items()}
    if isinstance(node, list | tuple):
        return [_rounded(v, digits) for v in node]
    return node


def _row_key(row: Any) -> str:
    return json.dumps(row, sort_keys=True, ensure_ascii=True, default=str)


def _sorted_rows(rows: Any) -> Any:
    """``rows`` in a canonical order when it is a list of records, else as it is."""
    if isinstance(rows, list) and all(isinstance(r, dict) for r in rows):
        return sorted(rows, key=_row_key)
    return rows


def _renamed(node: Any, names: dict[str, str]) -> Any:
    if isinstance(node, str):
        return names.get(node, node)
    if isinstance(node, dict):
        return {k: _renamed(v, names) for k, v in node.items()}
    if isinstance(node, list):
        return [_renamed(v, names) for v in node]
    return node


def _sort_inline_values(node: Any) -> Any:
    if isinstance(node, dict):
        out = {k: _sort_inline_values(v) for k, v in node.items()}
        data = out.get("data")
        if isinstance(data, dict) and "values" in data:
            out["data"] = {**data, "values": _sorted_rows(data["values"])}
        return out
    if isinstance(node, list):
        return [_sort_inline_values(v) for v in node]
    return node


def canonical_spec(spec: dict[str, Any], digits: int = SPEC_DIGITS) -> dict[str, Any]:
    """A copy of Vega-Lite ``spec`` whose bytes depend only on what it draws.

    - every float is rounded to ``digits`` significant digits (:func:`stable_number`);
    - the rows of each data set (``datasets`` and inline ``data.values``) are sorted by
      their content: no evalkit chart gives row order a meaning (lines and areas are
      drawn in x order, stacks follow ``order`` or the colour field, nominal axes their
      own sort), so sorting changes only the order of the SVG marks, and makes it fixed;
    - each named data set is renamed ``data-<digest of its rounded rows>`` (altair names
      it from the unrounded values, so the name carried the noise) and every reference
      to it follows.

    Idempotent: the canonical form of a canonical spec is itself.
    """
    out: dict[str, Any] = _sort_inline_values(_rounded(spec, digits))
    datasets = out.get("datasets")
    if isinstance(datasets, dict):
        rows = {name: _sorted_rows(values) for name, values in datasets.items()}
        names = {
            name: "data-" + hashlib.sha256(_row_key(values).encode()).hexdigest()[:32]
            for name, values in rows.items()
        }
        out = _renamed({k: v for k, v in out.items() if k != "datasets"}, names)
        out["datasets"] = {names[n]: rows[n] for n in sorted(rows, key=names.__getitem__)}
    return out


_SVG_ID = re.compile(r"\b(gradient_|clip|pattern_)(\d+)\b")


def stable_svg(svg: str) -> str:
    """``svg`` with its generated ids (``gradient_<n>``, ``clip<n>``, ``pattern_<n>``)
    renumbered by order of first appearance in it, every reference following.

    ``vl_convert`` numbers them with counters that live as long as the process, so the
    same chart drawn after another one would otherwise come out with other bytes.
    """
    order: dict[str, str] = {}

    def renumber(m: re.Match[str]) -> str:
        key = m.group(0)
        if key not in order:
            order[key] = f"{m.group(1)}{sum(k.startswith(m.group(1)) for k in order)}"
        return order[key]

    return _SVG_ID.sub(renumber, svg)


@functools.cache
def notebook_vegalite() -> str:
    """The oldest Vega-Lite 5 version ``vl_convert`` has (closest to JupyterLab 4's 5.6)."""
    import vl_convert

    fives = [v for v in vl_convert.get_vegalite_versions() if v.startswith("5.")]
    if not fives:  # pragma: no cover - depends on the installed vl_convert
        raise RuntimeError("vl_convert has no Vega-Lite 5: charts cannot be drawn for JupyterLab")
    return min(fives, key=lambda v: tuple(int(p) for p in v.split(".")))


class Chart:
    """A Vega-Lite chart displayed offline in a notebook and in the rendered report.

    ``spec`` is an altair chart, a Vega-Lite dict or another :class:`Chart`;
    ``description`` is the chart's accessible label and caption, and its plain-text form.
    The spec is kept in :func:`canonical_spec` form (numbers rounded, rows sorted).
    """

    def __init__(self, spec: dict[str, Any] | alt.TopLevelMixin | Chart, description: str) -> None:
        if isinstance(spec, Chart):
            spec = spec.spec
        elif not isinstance(spec, dict):
            spec = spec.to_dict()
        self.spec: dict[str, Any] = canonical_spec(
            {k: v for k, v in spec.items() if k != "$schema"}
        )
        self.description = description

    def to_dict(self) -> dict[str, Any]:
        """A copy of the Vega-Lite spec (without ``$schema``)."""
        return copy.deepcopy(self.spec)

    @functools.cached_property
    def svg(self) -> str:
        """The chart drawn as SVG by ``vl_convert`` (Vega-Lite 5; computed once), its
        generated ids numbered within it (:func:`stable_svg`)."""
        import vl_convert

        return stable_svg(vl_convert.vegalite_to_svg(self.spec, vl_version=notebook_vegalite()))

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        data = {
            VEGALITE_MIME: self.to_dict(),
            "image/svg+xml": self.svg,
            "text/plain": repr(self),
        }
        return data, {METADATA_KEY: {"description": self.description}}

    def _ipython_display_(self) -> None:
        from IPython.display import display

        data, metadata = self._repr_mimebundle_()
        display(data, metadata=metadata, raw=True)

    def _repr_html_(self) -> str:
        body = spec_json(self.spec)
        digest = hashlib.sha256(body.encode()).hexdigest()[:10]
        target = f"ek-chart-{digest}-{next(_counter)}"
        image = base64.b64encode(self.svg.encode("utf-8")).decode("ascii")
        return (
            f'<figure class="ek-chart" style="margin: 0.6rem 0 1rem;">'
            f'<div id="{target}" class="ek-chart-area" role="img" '
            f'aria-label="{esc(self.description)}"></div>'
            f'<img class="{STATIC_CLASS}" src="data:image/svg+xml;base64,{image}" '
            f'alt="{esc(self.description)}" style="max-width: 100%; height: auto;">'
            f'<script type="application/json" class="{SPEC_CLASS}" data-target="{target}">'
            f"{body}</script><figcaption>{esc(self.description)}</figcaption></figure>"
        )

    def __repr__(self) -> str:
        return f"Chart({self.description!r})"


def charts_as_html(nb: Any) -> Any:
    """A copy of notebook ``nb`` whose chart outputs hold their report markup instead.

    Each output holding :data:`VEGALITE_MIME` becomes ``text/html`` (the placeholder,
    spec and static image of :meth:`Chart._repr_html_`) plus its ``text/plain``; the SVG
    already in the output is reused. Other outputs are left as they are.
    """
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if VEGALITE_MIME not in data:
                continue
            meta = out.get("metadata", {}).get(METADATA_KEY, {})
            description = str(meta.get("description") or data.get("text/plain", "Chart"))
            chart = Chart(dict(data[VEGALITE_MIME]), description)
            if isinstance(data.get("image/svg+xml"), str):
                chart.__dict__["svg"] = stable_svg(data["image/svg+xml"])
            out["data"] = {"text/html": chart._repr_html_(), "text/plain": repr(chart)}
    return nb
