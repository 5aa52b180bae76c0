"""The look of the reports: one stylesheet shared by the study pages, the index and ADRs.

The fragments' own look (badges, callouts, tables, transcripts) is defined once, in
:mod:`evalkit._styles`, and written here as rules; the fragments carry it inline too.
"""

from __future__ import annotations

from evalkit._display import esc
from evalkit._styles import stylesheet

#: Rules of the page itself (layout, nbconvert's cells, headings, charts); the look of
#: every fragment is :data:`evalkit._styles.STYLES`, written after them.
PAGE_CSS = """
body { color: #1f2328; font-family: system-ui, -apple-system, "Segoe UI", Roboto,
       "Helvetica Neue", Arial, sans-serif; line-height: 1.5; }
main, body.ek-page { max-width: 1120px; margin: 0 auto; padding: 1.5rem 2rem 4rem; }
body.jp-Notebook { padding: 0; }
.jp-Cell { padding: 0 !important; }
.jp-OutputArea-output, .jp-RenderedHTMLCommon { font-size: 15px; }
.jp-RenderedHTMLCommon h1 { font-size: 1.9rem; margin-top: 0.5rem; }
.jp-RenderedHTMLCommon h2, .ek-page h2 { border-bottom: 1px solid #d0d7de;
       padding-bottom: 0.3rem; margin-top: 2.2rem; }
.jp-RenderedHTMLCommon h3 { margin-top: 1.6rem; }
.jp-mod-noOutputs { display: none; }
.ek-table-wrap .ek-table tr > :first-child { position: sticky; left: 0; z-index: 1;
       background-color: white; }
.ek-table-wrap .ek-table thead tr > :first-child { z-index: 2; }
.ek-source, figcaption { color: #59636e; font-size: 13px; }
figure.ek-chart { display: table; margin: 0.8rem 0 1.2rem; }
figure.ek-chart figcaption { display: table-caption; caption-side: bottom; padding-top: 4px; }
img.ek-figure { max-width: 100%; height: auto; }
.ek-chart-area { min-height: 40px; color: #59636e; }
.ek-header h1 { margin-bottom: 0.2rem; }
.ek-adr { max-width: 52rem; }
code { background: #f6f8fa; padding: 0 3px; border-radius: 3px; }
@media print { .ek-chart-area { break-inside: avoid; } }
"""

#: The reports' stylesheet: the page's rules, then one rule per style of the fragments.
CSS = PAGE_CSS + stylesheet() + "\n"


def page(title: str, body_html: str) -> str:
    """A standalone HTML page (index, ADRs) with the report stylesheet; ``body_html`` is
    trusted markup built from escaped parts."""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1.0">\n'
        f"<title>{esc(title)}</title>\n<style>{CSS}</style>\n</head>\n"
        f'<body class="ek-page">\n{body_html}\n</body>\n</html>\n'
    )
