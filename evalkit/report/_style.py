"""The look of the reports: one stylesheet shared by the study pages, the index and ADRs."""

from __future__ import annotations

from evalkit.report._html import esc

CSS = """
:root { --ek-ink: #1f2328; --ek-muted: #59636e; --ek-line: #d0d7de; --ek-soft: #f6f8fa;
        --ek-pass: #1a7f37; --ek-fail: #cf222e; --ek-warn: #9a6700; --ek-info: #0969da; }
body { color: var(--ek-ink); font-family: system-ui, -apple-system, "Segoe UI", Roboto,
       "Helvetica Neue", Arial, sans-serif; line-height: 1.5; }
main, body.ek-page { max-width: 1120px; margin: 0 auto; padding: 1.5rem 2rem 4rem; }
body.jp-Notebook { padding: 0; }
.jp-Cell { padding: 0 !important; }
.jp-OutputArea-output, .jp-RenderedHTMLCommon { font-size: 15px; }
.jp-RenderedHTMLCommon h1 { font-size: 1.9rem; margin-top: 0.5rem; }
.jp-RenderedHTMLCommon h2, .ek-page h2 { border-bottom: 1px solid var(--ek-line);
       padding-bottom: 0.3rem; margin-top: 2.2rem; }
.jp-RenderedHTMLCommon h3 { margin-top: 1.6rem; }
.jp-mod-noOutputs { display: none; }
.ek-table-wrap { overflow-x: auto; max-width: 100%; margin: 0.6rem 0 1rem; }
table.ek-table { border-collapse: separate; border-spacing: 0; font-size: 14px; margin: 0; }
table.ek-table caption { caption-side: top; text-align: left; font-weight: 600;
       padding: 0.3rem 0; color: var(--ek-ink); }
table.ek-table th, table.ek-table td { border: 1px solid var(--ek-line) !important;
       padding: 4px 7px !important; text-align: left !important; vertical-align: top !important;
       max-width: 36rem !important; line-height: 1.4 !important; }
table.ek-table td.num { text-align: right !important; font-variant-numeric: tabular-nums;
       white-space: nowrap; }
table.ek-table thead th { background: var(--ek-soft); font-weight: 600; font-size: 13px;
       hyphens: auto; }
table.ek-table tr > :first-child { position: sticky; left: 0; z-index: 1; background: white; }
table.ek-table thead tr > :first-child { background: var(--ek-soft); z-index: 2; }
table.ek-table tbody tr:nth-child(even) > :first-child { background: #fbfcfd; }
table.ek-table th + th, table.ek-table td + td { border-left-width: 0 !important; }
table.ek-table tbody tr > * { border-top-width: 0 !important; }
table.ek-table tbody tr:nth-child(even) { background: #fbfcfd; }
table.ek-table tr.descriptive td { color: var(--ek-muted); font-style: italic; }
table.ek-table tr.ek-row-fail td:first-child { border-left: 4px solid var(--ek-fail) !important; }
table.ek-table tr.ek-row-pass td:first-child { border-left: 4px solid var(--ek-pass) !important; }
table.ek-kv th { background: var(--ek-soft); font-weight: 600; white-space: nowrap; }
.ek-table-note, .ek-source, figcaption { color: var(--ek-muted); font-size: 13px; }
.ek-empty { color: var(--ek-muted); font-style: italic; }
.ek-badge { display: inline-block; padding: 1px 10px; border-radius: 12px; font-weight: 700;
       font-size: 13px; color: white; background: var(--ek-muted); }
.ek-badge.ek-pass { background: var(--ek-pass); }
.ek-badge.ek-fail { background: var(--ek-fail); }
.ek-callout { border: 1px solid var(--ek-line); border-left: 5px solid var(--ek-info);
       background: var(--ek-soft); padding: 0.6rem 1rem; margin: 0.8rem 0; border-radius: 4px; }
.ek-callout p { margin: 0.3rem 0; }
.ek-callout-title { font-weight: 700; }
.ek-callout.ek-warning { border-left-color: var(--ek-warn); background: #fff8c5; }
.ek-callout.ek-refusal { border-left-color: var(--ek-fail); background: #ffebe9; }
.ek-callout.ek-fail { border-left-color: var(--ek-fail); }
.ek-callout.ek-pass { border-left-color: var(--ek-pass); }
figure.ek-chart { display: table; margin: 0.8rem 0 1.2rem; }
figure.ek-chart figcaption { display: table-caption; caption-side: bottom; padding-top: 4px; }
img.ek-figure { max-width: 100%; height: auto; }
.ek-chart-area { min-height: 40px; color: var(--ek-muted); }
.ek-chart-row { display: flex; flex-wrap: wrap; gap: 2rem; align-items: flex-start; }
.ek-transcript { border: 1px solid var(--ek-line); border-radius: 6px; padding: 0.5rem 0.8rem;
       margin: 0.6rem 0 1rem; background: white; }
.ek-transcript-title { font-weight: 600; margin: 0.2rem 0; }
.ek-transcript-meta { color: var(--ek-muted); font-size: 13px; margin: 0 0 0.4rem; }
.ek-turn { margin: 0.35rem 0; padding: 0.3rem 0.6rem; border-radius: 4px; }
.ek-turn.ek-user { background: #eef4ff; }
.ek-turn.ek-assistant { background: var(--ek-soft); }
.ek-turn.ek-highlight { outline: 2px solid var(--ek-warn); }
.ek-role { display: block; font-size: 12px; color: var(--ek-muted); font-weight: 600; }
.ek-rationale { margin: 0.5rem 0 0.2rem; padding: 0.3rem 0.6rem; border-left: 3px solid
       var(--ek-info); background: #f3f8ff; border-radius: 0 4px 4px 0; }
.ek-text, .ek-pre { white-space: pre-wrap; overflow-wrap: anywhere; }
.ek-header { border-bottom: 2px solid var(--ek-line); margin-bottom: 1rem; padding-bottom: 0.5rem; }
.ek-header h1 { margin-bottom: 0.2rem; }
.ek-lede { font-size: 1.05rem; color: var(--ek-muted); }
.ek-nav { font-size: 14px; }
.ek-adr { max-width: 52rem; }
code { background: var(--ek-soft); padding: 0 3px; border-radius: 3px; }
@media print { .ek-chart-area { break-inside: avoid; } }
"""


def page(title: str, body_html: str) -> str:
    """A standalone HTML page (index, ADRs) with the report stylesheet; ``body_html`` is
    trusted markup built from escaped parts."""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1.0">\n'
        f"<title>{esc(title)}</title>\n<style>{CSS}</style>\n</head>\n"
        f'<body class="ek-page">\n{body_html}\n</body>\n</html>\n'
    )
