"""The look of everything evalkit displays: one definition of each style.

:data:`STYLES` maps a class selector (``ek-badge``, ``ek-badge.ek-pass``) to its CSS
declarations. The same entry serves twice:

- a fragment (a badge, a callout, a transcript turn, a table cell...) carries the
  declarations of every entry its classes match, inline, in its ``style`` attribute
  (:func:`styled`). JupyterLab, VS Code and nbconvert's HTML do not load the reports'
  stylesheet, and JupyterLab's sanitizer drops ``<style>`` elements of untrusted outputs
  (a notebook executed by papermill, then opened) but keeps inline styles;
- the report pages' stylesheet (:mod:`evalkit.report._style`) writes each entry as a
  rule, for markup that carries the classes only.

Values are literal (no CSS variables: an inline style cannot see the page's ``:root``)
and use only properties JupyterLab's sanitizer keeps. Greys are translucent, so a dark
theme stays readable.
"""

from __future__ import annotations

from html import escape

PASS_COLOUR = "#1a7f37"
FAIL_COLOUR = "#cf222e"
NEUTRAL_COLOUR = "#59636e"
WARN_COLOUR = "#9a6700"
INFO_COLOUR = "#0969da"
LINE = "1px solid rgba(127, 127, 127, 0.35)"
SOFT = "rgba(127, 127, 127, 0.10)"
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, Arial, sans-serif"

#: class selector → declarations. Order matters as in CSS: later entries win.
STYLES: dict[str, str] = {
    "ek-badge": (
        "display: inline-block; padding: 0 9px; border-radius: 10px; font-weight: 700; "
        f"font-size: 12px; line-height: 1.6; color: #ffffff; background: {NEUTRAL_COLOUR}"
    ),
    "ek-badge.ek-pass": f"background: {PASS_COLOUR}",
    "ek-badge.ek-fail": f"background: {FAIL_COLOUR}",
    "ek-card": (
        f"font-family: {FONT}; font-size: 13px; line-height: 1.45; border: {LINE}; "
        "border-left: 4px solid rgba(127, 127, 127, 0.6); border-radius: 4px; "
        "padding: 6px 12px; margin: 4px 0; max-width: 60rem; overflow-x: auto"
    ),
    "ek-card.ek-pass": f"border-left-color: {PASS_COLOUR}",
    "ek-card.ek-fail": f"border-left-color: {FAIL_COLOUR}",
    "ek-card-title": "font-weight: 700; font-size: 14px; margin: 2px 0 4px",
    "ek-subtitle": "font-weight: 400; opacity: 0.75",
    "ek-callout": (
        f"border: {LINE}; border-left: 5px solid {INFO_COLOUR}; background: {SOFT}; "
        "padding: 0.4rem 0.9rem; margin: 0.7rem 0; border-radius: 4px; max-width: 60rem"
    ),
    "ek-callout.ek-warning": (
        f"border-left-color: {WARN_COLOUR}; background: rgba(212, 167, 44, 0.15)"
    ),
    "ek-callout.ek-refusal": (
        f"border-left-color: {FAIL_COLOUR}; background: rgba(207, 34, 46, 0.08)"
    ),
    "ek-callout.ek-fail": f"border-left-color: {FAIL_COLOUR}",
    "ek-callout.ek-pass": f"border-left-color: {PASS_COLOUR}",
    "ek-callout-title": "font-weight: 700; margin: 0.3rem 0",
    "ek-p": "margin: 0.3rem 0",
    "ek-lede": "font-size: 1.05rem; opacity: 0.8",
    "ek-table-note": "font-size: 12px; opacity: 0.75; margin: 2px 0",
    "ek-list": "margin: 2px 0 6px; padding-left: 1.4em",
    "ek-code": (
        f"background: {SOFT}; padding: 0 3px; border-radius: 3px; "
        "font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.92em"
    ),
    "ek-table-wrap": "overflow-x: auto; max-width: 100%; margin: 0.6rem 0 1rem",
    "ek-table": "border-collapse: collapse; font-size: 13px; margin: 4px 0 8px",
    "ek-caption": "caption-side: top; text-align: left; font-weight: 600; padding: 2px 0",
    "ek-cell": (
        f"border: {LINE}; padding: 3px 8px; text-align: left; vertical-align: top; "
        "line-height: 1.4; max-width: 36rem"
    ),
    "ek-cell.ek-num": (
        "text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap"
    ),
    "ek-cell.ek-head": f"background: {SOFT}; font-weight: 600",
    "ek-cell.ek-rowhead": f"background: {SOFT}; font-weight: 600; white-space: nowrap",
    "ek-cell.ek-empty": "font-style: italic; opacity: 0.75",
    "ek-cell.ek-muted": "font-style: italic; opacity: 0.7",
    "ek-cell.ek-mark-fail": f"border-left: 4px solid {FAIL_COLOUR}",
    "ek-cell.ek-mark-pass": f"border-left: 4px solid {PASS_COLOUR}",
    "ek-stripe": "background: rgba(127, 127, 127, 0.04)",
    "ek-transcript": (
        f"border: {LINE}; border-radius: 6px; padding: 0.5rem 0.8rem; margin: 0.6rem 0 1rem; "
        "max-width: 60rem"
    ),
    "ek-transcript-title": "font-weight: 600; margin: 0.2rem 0",
    "ek-transcript-meta": "font-size: 12px; opacity: 0.75; margin: 0 0 0.4rem",
    "ek-turn": (
        "display: block; margin: 0.35rem 0; padding: 0.3rem 0.6rem; border-radius: 4px; "
        "border-left: 3px solid rgba(127, 127, 127, 0.6)"
    ),
    "ek-turn.ek-user": (
        "background: rgba(9, 105, 218, 0.07); border-left-color: rgba(9, 105, 218, 0.6); "
        "margin-right: 2.5rem"
    ),
    "ek-turn.ek-assistant": f"background: {SOFT}; margin-left: 2.5rem",
    "ek-turn.ek-highlight": f"outline: 2px solid {WARN_COLOUR}",
    "ek-role": "display: block; font-size: 12px; font-weight: 600; opacity: 0.75",
    "ek-scored": f"color: {WARN_COLOUR}",
    "ek-text": "white-space: pre-wrap; overflow-wrap: anywhere",
    "ek-rationale": (
        f"margin: 0.5rem 0 0.2rem; padding: 0.3rem 0.6rem; border-left: 3px solid {INFO_COLOUR}; "
        "background: rgba(9, 105, 218, 0.06); border-radius: 0 4px 4px 0"
    ),
    "ek-chart-row": "display: flex; flex-wrap: wrap; gap: 2rem; align-items: flex-start",
    "ek-header": (
        "border-bottom: 2px solid rgba(127, 127, 127, 0.35); margin-bottom: 1rem; "
        "padding-bottom: 0.5rem"
    ),
    "ek-nav": "font-size: 14px",
}


def declarations(*classes: str) -> str:
    """The declarations of every :data:`STYLES` entry whose classes are all among
    ``classes``, in table order (``declarations("ek-badge", "ek-pass")`` is the badge's
    look, then its pass colour). Unknown classes add nothing."""
    have = set(classes)
    found = [decl for sel, decl in STYLES.items() if set(sel.split(".")) <= have]
    return "; ".join(found)


def styled(*classes: str | None, extra: str = "") -> str:
    """`` class="…" style="…"``: the attributes of an element with ``classes`` (None
    skipped), its look inline, then ``extra`` declarations."""
    names = [c for c in classes if c]
    decl = "; ".join(d for d in (declarations(*names), extra.strip().rstrip(";")) if d)
    cls = f' class="{escape(" ".join(names), quote=True)}"' if names else ""
    return f'{cls} style="{escape(decl, quote=True)}"' if decl else cls


def stylesheet() -> str:
    """:data:`STYLES` as CSS rules (``.ek-badge.ek-pass { … }``), for the report pages."""
    return "\n".join(f".{sel} {{ {decl}; }}" for sel, decl in STYLES.items())
