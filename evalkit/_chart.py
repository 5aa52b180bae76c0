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
"""

from __future__ import annotations

import base64
import copy
import functools
import hashlib
import itertools
import json
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
    """

    def __init__(self, spec: dict[str, Any] | alt.TopLevelMixin | Chart, description: str) -> None:
        if isinstance(spec, Chart):
            spec = spec.spec
        elif not isinstance(spec, dict):
            spec = spec.to_dict()
        self.spec: dict[str, Any] = {k: v for k, v in spec.items() if k != "$schema"}
        self.description = description

    def to_dict(self) -> dict[str, Any]:
        """A copy of the Vega-Lite spec (without ``$schema``)."""
        return copy.deepcopy(self.spec)

    @functools.cached_property
    def svg(self) -> str:
        """The chart drawn as SVG by ``vl_convert`` (Vega-Lite 5; computed once)."""
        import vl_convert

        svg: str = vl_convert.vegalite_to_svg(self.spec, vl_version=notebook_vegalite())
        return svg

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
                chart.__dict__["svg"] = data["image/svg+xml"]
            out["data"] = {"text/html": chart._repr_html_(), "text/plain": repr(chart)}
    return nb
