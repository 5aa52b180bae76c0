"""How evalkit's result records show themselves: a short ``repr`` and a small HTML card.

Every public result type (gate verdicts, agreement results, the catalogue, the onset
study, seal checks...) builds its ``__repr__`` and ``_repr_html_`` from these helpers, so
that all of them read the same way in a terminal and in a notebook:

- numbers are rounded to 3 decimals (``0.22883758606723376`` shows as ``0.229``; a
  non-zero number below 0.001 in scientific form, ``1.20e-05``); ``None``, NaN and
  ``pd.NA`` show as ``—``; DataFrames as their shape, long tuples and mappings cut short,
  so that a ``repr`` fits one screen;
- the HTML uses inline ``style`` attributes only: JupyterLab, VS Code and nbconvert's HTML
  do not load the reports' stylesheet, and JupyterLab's sanitizer drops ``<style>``
  elements of untrusted outputs but keeps inline styles. Colours are theme-neutral
  (translucent greys), so a dark theme stays readable;
- every string is escaped (:func:`esc`): a case id, a judge rationale or a catalogue
  field holding ``<script>`` renders as text. Only :class:`Markup` (built here, from
  escaped parts) passes through as markup.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

import pandas as pd

#: Longest string shown whole in a ``repr``; longer ones end in ``…``.
MAX_TEXT = 90
#: Items of a tuple, list or mapping shown in a ``repr`` before ``…``.
MAX_ITEMS = 6
#: Rows of a table shown in a card before "… N more rows".
MAX_ROWS = 20

PASS_COLOUR = "#1a7f37"
FAIL_COLOUR = "#cf222e"
NEUTRAL_COLOUR = "#59636e"
_LINE = "1px solid rgba(127, 127, 127, 0.35)"
_SOFT = "rgba(127, 127, 127, 0.10)"
_FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, Arial, sans-serif"
_CELL = f"border: {_LINE}; padding: 3px 8px; text-align: left; vertical-align: top;"
_NUM_CELL = f"border: {_LINE}; padding: 3px 8px; text-align: right; vertical-align: top; "
_NUM_CELL += "font-variant-numeric: tabular-nums; white-space: nowrap;"


class Markup(str):
    """Trusted HTML built by this module from escaped parts; :func:`esc` leaves it as is."""

    __slots__ = ()


def esc(value: Any) -> Markup:
    """``value`` as escaped HTML text (quotes too, so it is safe in an attribute)."""
    if isinstance(value, Markup):
        return value
    return Markup(html.escape(str(value), quote=True))


def is_missing(value: Any) -> bool:
    """True for None, pandas NA/NaT and float NaN."""
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    return False


def num(value: Any, digits: int = 3) -> str:
    """A number as short text: ints whole, floats to ``digits`` decimals, ``—`` if missing.

    A non-zero float whose rounding would print as zero is shown in scientific form with
    three significant digits (a p-value of ``1.2e-05`` stays ``1.20e-05``); infinities as
    ``inf``/``-inf``. Booleans read ``True``/``False``; anything else is ``str(value)``.
    """
    if is_missing(value):
        return "—"
    if isinstance(value, bool):
        return str(value)
    kind = getattr(getattr(value, "dtype", None), "kind", "")
    if isinstance(value, int) or kind in ("i", "u"):
        return str(int(value))
    if kind == "b":
        return str(bool(value))
    if isinstance(value, float) or kind == "f":
        x = float(value)
        if math.isnan(x):
            return "—"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        if x != 0 and abs(x) < 0.5 * 10**-digits:
            return f"{x:.2e}"
        return f"{x:.{digits}f}"
    return str(value)


def interval(low: Any, high: Any) -> str:
    """``[low, high]`` rounded, or ``—`` when either end is missing."""
    if is_missing(low) or is_missing(high):
        return "—"
    return f"[{num(low)}, {num(high)}]"


def short(value: Any, depth: int = 0) -> str:
    """``value`` as one short line for a ``repr`` (numbers rounded, containers cut;
    None and pandas NA as ``None``)."""
    if value is None or value is pd.NA:
        return "None"
    if isinstance(value, str):
        text = value if len(value) <= MAX_TEXT else value[: MAX_TEXT - 1] + "…"
        return repr(text)
    if isinstance(value, Path):
        return repr(str(value))
    if isinstance(value, pd.DataFrame):
        return f"<DataFrame {value.shape[0]} rows × {value.shape[1]} columns>"
    if isinstance(value, pd.Series):
        return f"<Series {len(value)} rows>"
    if isinstance(value, Mapping):
        if depth > 0 and value:
            return f"{{…{len(value)} items}}"
        items = [f"{short(k, 1)}: {short(v, 1)}" for k, v in list(value.items())[:MAX_ITEMS]]
        more = f", …{len(value) - MAX_ITEMS} more" if len(value) > MAX_ITEMS else ""
        return "{" + ", ".join(items) + more + "}"
    if isinstance(value, tuple | list):
        if depth > 1 and value:
            return f"(…{len(value)} items)"
        items = [short(v, depth + 1) for v in value[:MAX_ITEMS]]
        more = f", …{len(value) - MAX_ITEMS} more" if len(value) > MAX_ITEMS else ""
        body = ", ".join(items) + more
        return (
            f"[{body}]" if isinstance(value, list) else f"({body}{',' if len(value) == 1 else ''})"
        )
    if is_dataclass(value) and not isinstance(value, type):
        return f"{type(value).__name__}({headline(value)})"
    if hasattr(value, "model_dump"):
        return f"<{type(value).__name__}>"
    return num(value)


#: Fields that carry a record's headline number, in the order they are looked for.
HEADLINE_FIELDS = ("value", "estimate", "power", "statistic", "kappa")


def headline(record: Any) -> str:
    """A nested record in a few characters: its headline number, else its status."""
    for name in HEADLINE_FIELDS:
        value = getattr(record, name, None)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return num(value)
    status = getattr(record, "status", None)
    return repr(status) if isinstance(status, str) else "…"


def _shown(value: Any) -> bool:
    """Empty tuples, lists and mappings are left out of a ``repr`` (they say nothing)."""
    if isinstance(value, tuple | list | Mapping) and not isinstance(value, str):
        return len(value) > 0
    return True


def record_items(record: Any, skip: Sequence[str] = ()) -> list[tuple[str, Any]]:
    """(name, value) of a dataclass's fields, without ``skip``, private and empty ones."""
    return [
        (f.name, getattr(record, f.name))
        for f in fields(record)
        if f.repr and not f.name.startswith("_") and f.name not in skip
        if _shown(getattr(record, f.name))
    ]


def record_repr(name: str, items: Iterable[tuple[str, Any]]) -> str:
    """``Name(a=0.229, b='ok')`` on one line, or one field per line when that is long."""
    parts = [f"{k}={short(v)}" for k, v in items]
    line = f"{name}({', '.join(parts)})"
    if len(line) <= 100:
        return line
    return f"{name}(\n" + "".join(f"    {p},\n" for p in parts) + ")"


# --- HTML -------------------------------------------------------------------------------


def cell(value: Any) -> Markup:
    """A table cell's content: :class:`Markup` as is, numbers rounded, anything else
    escaped (``yes``/``no`` for booleans)."""
    if isinstance(value, Markup):
        return value
    if isinstance(value, bool):
        return Markup("yes" if value else "no")
    if isinstance(value, str):
        return esc(value)
    return esc(short(value) if isinstance(value, tuple | list | Mapping) else num(value))


def _is_number(value: Any) -> bool:
    if isinstance(value, bool | Markup | str):
        return False
    kind = getattr(getattr(value, "dtype", None), "kind", "")
    return isinstance(value, int | float) or kind in ("i", "u", "f")


def badge(verdict: str, kind: str | None = None) -> Markup:
    """A coloured PASS / FAIL badge, classes as in the reports. ``kind`` (``pass``,
    ``fail`` or ``neutral``) colours any other status; by default it is grey."""
    text = str(verdict)
    kind = kind or {"PASS": "pass", "FAIL": "fail"}.get(text.upper(), "neutral")
    colour = {"pass": PASS_COLOUR, "fail": FAIL_COLOUR}.get(kind, NEUTRAL_COLOUR)
    return Markup(
        f'<span class="ek-badge ek-{kind}" style="display: inline-block; padding: 0 9px; '
        f"border-radius: 10px; font-weight: 700; font-size: 12px; line-height: 1.6; "
        f'color: #ffffff; background: {colour};">{esc(text)}</span>'
    )


def key_values(items: Iterable[tuple[str, Any]], caption: str | None = None) -> Markup:
    """A two-column table of names and values."""
    rows = "".join(
        f'<tr><th scope="row" style="{_CELL} background: {_SOFT}; font-weight: 600; '
        f'white-space: nowrap;">{esc(k)}</th>'
        f'<td style="{_NUM_CELL if _is_number(v) else _CELL}">{cell(v)}</td></tr>'
        for k, v in items
    )
    return _table(Markup(rows), caption, css="ek-table ek-kv")


def grid(
    rows: Sequence[Mapping[str, Any]] | pd.DataFrame,
    columns: Mapping[str, str],
    *,
    caption: str | None = None,
    row_style: Sequence[str | None] | None = None,
    empty: str = "No rows.",
    css: str = "ek-table",
    row_class: Sequence[str | None] | None = None,
    max_rows: int | None = MAX_ROWS,
) -> Markup:
    """A table of ``rows`` (dicts or a frame): ``columns`` maps keys to header labels.

    At most ``max_rows`` rows are drawn (None: all), then a line says how many more there
    are. ``row_style`` adds inline CSS per row (e.g. a red left border on a failing reason)
    and ``row_class`` a class per row (styled by the reports' stylesheet).
    """
    records: list[Mapping[Any, Any]] = []
    records += rows.to_dict(orient="records") if isinstance(rows, pd.DataFrame) else rows
    head = "".join(
        f'<th scope="col" style="{_CELL} background: {_SOFT}; font-weight: 600;">{esc(label)}</th>'
        for label in columns.values()
    )
    body = []
    shown = records if max_rows is None else records[:max_rows]
    for i, record in enumerate(shown):
        extra = row_style[i] if row_style and row_style[i] else ""
        cls = row_class[i] if row_class and row_class[i] else None
        attr = f' class="{esc(cls)}"' if cls else ""
        cells = "".join(
            f'<td style="{_NUM_CELL if _is_number(record.get(c)) else _CELL}'
            f'{" " + extra if extra and j == 0 else ""}">{cell(record.get(c))}</td>'
            for j, c in enumerate(columns)
        )
        body.append(f"<tr{attr}>{cells}</tr>")
    if not records:
        body.append(
            f'<tr><td colspan="{len(columns)}" style="{_CELL} font-style: italic;">'
            f"{esc(empty)}</td></tr>"
        )
    more = len(records) - len(shown)
    foot = f'<p style="margin: 2px 0; opacity: 0.75;">… {more} more rows</p>' if more > 0 else ""
    table = _table(Markup(f"<thead><tr>{head}</tr></thead>{''.join(body)}"), caption, css)
    return Markup(table + foot)


def _table(inner: Markup, caption: str | None, css: str) -> Markup:
    cap = (
        f'<caption style="caption-side: top; text-align: left; font-weight: 600; '
        f'padding: 2px 0;">{esc(caption)}</caption>'
        if caption
        else ""
    )
    return Markup(
        f'<table class="{esc(css)}" style="border-collapse: collapse; font-size: 13px; '
        f'margin: 4px 0 8px;">{cap}{inner}</table>'
    )


def paragraph(*parts: Any) -> Markup:
    """A paragraph of escaped text and :class:`Markup` parts."""
    return Markup(f'<p style="margin: 4px 0;">{"".join(esc(p) for p in parts)}</p>')


def bullet_list(items: Iterable[Any]) -> Markup:
    """An unordered list of escaped items (or :class:`Markup`)."""
    body = "".join(f"<li>{esc(item)}</li>" for item in items)
    return Markup(f'<ul style="margin: 2px 0 6px; padding-left: 1.4em;">{body}</ul>')


def card(
    title: str,
    *parts: Any,
    verdict: str | None = None,
    subtitle: str = "",
    kind: str | None = None,
) -> Markup:
    """A boxed card: a title line (with a badge when ``verdict`` is given) and ``parts``.

    ``parts`` are :class:`Markup` (tables, lists) or text (escaped into a paragraph);
    None parts are skipped. ``kind`` colours a badge other than PASS / FAIL (:func:`badge`).
    """
    head = f"{badge(verdict, kind)} " if verdict is not None else ""
    sub = (
        f' <span style="font-weight: 400; opacity: 0.75;">{esc(subtitle)}</span>'
        if subtitle
        else ""
    )
    body = "".join(p if isinstance(p, Markup) else paragraph(p) for p in parts if p is not None)
    kind = kind or {"PASS": "pass", "FAIL": "fail"}.get(str(verdict), "neutral")
    colour = {"pass": PASS_COLOUR, "fail": FAIL_COLOUR}.get(kind, "rgba(127,127,127,0.6)")
    return Markup(
        f'<div class="ek-card" style="font-family: {_FONT}; font-size: 13px; line-height: 1.45; '
        f"border: {_LINE}; border-left: 4px solid {colour}; border-radius: 4px; "
        f'padding: 6px 12px; margin: 4px 0; max-width: 60rem; overflow-x: auto;">'
        f'<div style="font-weight: 700; font-size: 14px; margin: 2px 0 4px;">{head}'
        f"{esc(title)}{sub}</div>{body}</div>"
    )


def record_card(title: str, items: Iterable[tuple[str, Any]], *, subtitle: str = "") -> Markup:
    """A card holding a record's fields as a name/value table; notes as a list.

    A field holding a DataFrame is drawn as its own small table under the others.
    """
    plain, frames, notes = [], [], []
    for name, value in items:
        if isinstance(value, pd.DataFrame):
            frames.append(frame_table(value, caption=name))
        elif name == "notes":
            notes = [str(n) for n in value]
        else:
            plain.append((name, value))
    return card(
        title,
        key_values(plain),
        *frames,
        Markup(f"{paragraph('Notes:')}{bullet_list(notes)}") if notes else None,
        subtitle=subtitle,
    )


def frame_table(frame: pd.DataFrame, caption: str | None = None) -> Markup:
    """A DataFrame drawn with :func:`grid` (its columns as headers, index dropped)."""
    named = frame.rename(columns=str)
    return grid(named, {c: c for c in named.columns}, caption=caption)
