"""How evalkit's result records show themselves: a short ``repr`` and a small HTML card.

(About 430 lines, one concept: how a result looks, as text and as HTML. The number
formats and the fragments stay together so that each is defined once.)

Every public result type (gate verdicts, agreement results, the catalogue, the onset
study, seal checks...) builds its ``__repr__`` and ``_repr_html_`` from these helpers, so
that all of them read the same way in a terminal and in a notebook:

- numbers are rounded to 3 decimals (``0.22883758606723376`` shows as ``0.229``; a
  non-zero number below 0.001 in scientific form, ``1.20e-05``); ``None``, NaN and
  ``pd.NA`` show as ``—``; DataFrames as their shape, long tuples and mappings cut short,
  so that a ``repr`` fits one screen;
- the HTML carries its look inline (:mod:`evalkit._styles`, the one definition of each
  style, which the report pages' stylesheet is written from), so a card, a table or a
  badge reads the same in JupyterLab, VS Code, nbconvert and on a report page;
- every string is escaped (:func:`esc`): a case id, a judge rationale or a catalogue
  field holding ``<script>`` renders as text. Only :class:`Markup` (built here, from
  escaped parts), or an object with an ``__html__`` method (the report fragments), passes
  through as markup.

The report fragments (:mod:`evalkit.report._html`) are built on the helpers here: one
definition of escaping, missing values, number text, intervals, badges, name/value tables,
tables and paragraphs.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit._styles import FAIL_COLOUR, NEUTRAL_COLOUR, PASS_COLOUR, styled

#: Longest string shown whole in a ``repr``; longer ones end in ``…``.
MAX_TEXT = 90
#: Items of a tuple, list or mapping shown in a ``repr`` before ``…``.
MAX_ITEMS = 6
#: Rows of a table shown in a card before "… N more rows".
MAX_ROWS = 20

__all__ = ["FAIL_COLOUR", "NEUTRAL_COLOUR", "PASS_COLOUR"]  # re-exported colours


class Markup(str):
    """Trusted HTML built by this module from escaped parts; :func:`esc` leaves it as is."""

    __slots__ = ()


def esc(value: Any) -> Markup:
    """``value`` as escaped HTML text (quotes too, so it is safe in an attribute).

    :class:`Markup` and objects with an ``__html__`` method (a report fragment) are
    trusted markup and pass as they are."""
    if isinstance(value, Markup):
        return value
    markup = getattr(value, "__html__", None)
    if callable(markup) and not isinstance(value, type):
        return Markup(markup())
    return Markup(html.escape(str(value), quote=True))


def is_missing(value: Any) -> bool:
    """True for None, pandas NA/NaT, float NaN and numpy's missing scalars; never for a
    container (a list holding NaN is a value)."""
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, str | list | tuple | dict | set) or hasattr(value, "__len__"):
        return False
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def steady(x: float) -> float:
    """``x`` without float noise: 12 significant digits, and anything under 1e-12 in size
    an unsigned ``0.0``. What a page prints must not depend on the machine's summation
    order (a true 0 computed as ``-1.4e-17``, a true 0.0625 as ``0.06250000000000001``)."""
    if not math.isfinite(x):
        return x
    if abs(x) < 1e-12:
        return 0.0
    return float(f"{x:.12g}")


def num(value: Any, digits: int = 3) -> str:
    """A number as short text: ints whole, floats to ``digits`` decimals, ``—`` if missing.

    The one number format of every display (reprs, cards, report tables). A non-zero float
    whose rounding would print as zero is shown in scientific form with three significant
    digits (a p-value of ``1.2e-05`` stays ``1.20e-05``), after :func:`steady` takes the
    float noise off (so below 1e-12 is ``0.000``); a whole float of 1,000 or more
    without decimals (``1200.0`` → ``1200``); infinities as ``inf``/``-inf``. Booleans
    read ``True``/``False``; anything else is ``str(value)``.
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
        x = steady(float(value))
        if math.isnan(x):
            return "—"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        if x != 0 and abs(x) < 0.5 * 10**-digits:
            return f"{x:.2e}"
        if x.is_integer() and abs(x) >= 1000:
            return f"{x:.0f}"
        return f"{x:.{digits}f}"
    return str(value)


def fmt(value: Any, digits: int = 3) -> str:
    """A value as a table cell's plain text: ``yes``/``no`` for booleans, numbers as
    :func:`num` (``—`` when missing), containers as :func:`short`, else ``str(value)``."""
    if isinstance(value, bool) or getattr(getattr(value, "dtype", None), "kind", "") == "b":
        return "yes" if value else "no"
    if isinstance(value, tuple | list | Mapping):
        return short(value)
    return num(value, digits)


def interval(low: Any, high: Any, digits: int = 3) -> str:
    """``[low, high]`` rounded to ``digits`` decimals, or ``—`` when either end is missing."""
    if is_missing(low) or is_missing(high):
        return "—"
    return f"[{num(low, digits)}, {num(high, digits)}]"


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
    """A table cell's content: markup as is, anything else as escaped :func:`fmt` text;
    in a card, a nested record reads as its headline (:func:`nested`)."""
    if isinstance(value, Markup) or callable(getattr(value, "__html__", None)):
        return esc(value)
    if isinstance(value, str):
        return esc(value)
    return esc(nested(value))


def nested(value: Any) -> str:
    """A field's value as a reader's text, not a ``repr``: a record as its headline number
    and interval (``0.619 [0.200, 1.000]``) or p-value (``2.000 (p = 0.368)``), else its
    status; a mapping as ``low 3 · high 4``;
    a list or tuple of plain values joined by commas; anything else as :func:`fmt`."""
    if is_dataclass(value) and not isinstance(value, type):
        number, status = headline(value), getattr(value, "status", None)
        if number == "…" or number.startswith("'"):
            return status if isinstance(status, str) else type(value).__name__
        low, high = getattr(value, "ci_low", None), getattr(value, "ci_high", None)
        if not (is_missing(low) or is_missing(high)):
            number += f" {interval(low, high)}"
        p_value = getattr(value, "p_value", None)
        if isinstance(p_value, int | float) and not is_missing(p_value):
            number += f" (p = {num(p_value)})"
        return number if status in (None, "ok") else f"{number} ({status})"
    if isinstance(value, Mapping):
        if not value:
            return "—"
        return " · ".join(f"{k} {fmt(v)}" for k, v in list(value.items())[: MAX_ITEMS * 2])
    if isinstance(value, tuple | list) and all(
        isinstance(v, str | int | float) or v is None for v in value
    ):
        return ", ".join(fmt(v) for v in value) or "—"
    return fmt(value)


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
    return Markup(f"<span{styled('ek-badge', f'ek-{kind}')}>{esc(text)}</span>")


def key_values(items: Iterable[tuple[str, Any]], caption: str | None = None) -> Markup:
    """A two-column table of names and values."""
    rows = "".join(
        f'<tr><th scope="row"{styled("ek-cell", "ek-rowhead")}>{esc(k)}</th>'
        f"<td{styled('ek-cell', 'ek-num' if _is_number(v) else None)}>{cell(v)}</td></tr>"
        for k, v in items
    )
    return _table(Markup(f"<tbody>{rows}</tbody>"), caption, css="ek-table ek-kv")


#: A row class and the look of the row's first cell (a coloured left border) or its cells.
_ROW_FIRST = {"ek-row-fail": "ek-mark-fail", "ek-row-pass": "ek-mark-pass"}
_ROW_CELLS = {"descriptive": "ek-muted"}


def grid(
    rows: Sequence[Mapping[Any, Any]] | pd.DataFrame,
    columns: Mapping[Any, str],
    *,
    caption: str | None = None,
    row_style: Sequence[str | None] | None = None,
    empty: str = "No rows.",
    css: str = "ek-table",
    row_class: Sequence[str | None] | None = None,
    max_rows: int | None = MAX_ROWS,
    formats: Mapping[Any, Callable[[Any], str]] | None = None,
) -> Markup:
    """A table of ``rows`` (dicts or a frame): ``columns`` maps keys to header labels.

    The one table of every display. Each cell is :func:`cell` of its value, or the
    escaped text of ``formats[column](value)``; a number (before formatting) is aligned
    right. At most ``max_rows`` rows are drawn (None: all), then a line says how many more
    there are. ``row_style`` adds inline CSS to a row's first cell (e.g. a red left
    border on a failing reason); ``row_class`` a class per row: ``ek-row-fail`` /
    ``ek-row-pass`` also mark the first cell, ``descriptive`` greys the row.
    """
    formats = formats or {}
    records: list[Mapping[Any, Any]] = []
    records += rows.to_dict(orient="records") if isinstance(rows, pd.DataFrame) else rows
    head = "".join(
        f'<th scope="col"{styled("ek-cell", "ek-head")}>{esc(label)}</th>'
        for label in columns.values()
    )
    body = []
    shown = records if max_rows is None else records[:max_rows]
    for i, record in enumerate(shown):
        extra = (row_style[i] if row_style else None) or ""
        cls = row_class[i] if row_class and row_class[i] else None
        attr = f' class="{esc(cls)}"' if cls else ""
        cells = []
        for j, c in enumerate(columns):
            value = record.get(c)
            markup = isinstance(value, Markup) or hasattr(value, "__html__")
            text = esc(formats[c](value)) if c in formats and not markup else cell(value)
            look = styled(
                "ek-cell",
                "ek-num" if _is_number(value) else None,
                _ROW_CELLS.get(cls or ""),
                _ROW_FIRST.get(cls or "") if j == 0 else None,
                "ek-stripe" if i % 2 else None,
                extra=extra if j == 0 else "",
            )
            cells.append(f"<td{look}>{text}</td>")
        body.append(f"<tr{attr}>{''.join(cells)}</tr>")
    if not records:
        body.append(
            f'<tr><td colspan="{len(columns)}"{styled("ek-cell", "ek-empty")}>'
            f"{esc(empty)}</td></tr>"
        )
    more = len(records) - len(shown)
    foot = f"<p{styled('ek-table-note')}>… {more} more rows</p>" if more > 0 else ""
    inner = f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody>"
    return Markup(_table(Markup(inner), caption, css) + foot)


def _table(inner: Markup, caption: str | None, css: str) -> Markup:
    cap = f"<caption{styled('ek-caption')}>{esc(caption)}</caption>" if caption else ""
    return Markup(f"<table{styled(*css.split())}>{cap}{inner}</table>")


def paragraph(*parts: Any, css: str | None = None) -> Markup:
    """A paragraph of escaped text and markup parts (None parts skipped); ``css`` adds a
    class of :mod:`evalkit._styles` (``ek-lede``, ``ek-table-note``)."""
    body = "".join(esc(p) for p in parts if p is not None)
    return Markup(f"<p{styled('ek-p', css)}>{body}</p>")


def bullet_list(items: Iterable[Any], css: str | None = None) -> Markup:
    """An unordered list of escaped items (or markup)."""
    body = "".join(f"<li>{esc(item)}</li>" for item in items)
    return Markup(f"<ul{styled('ek-list', css)}>{body}</ul>")


def card(
    title: str,
    *parts: Any,
    verdict: str | None = None,
    subtitle: str = "",
    kind: str | None = None,
) -> Markup:
    """A boxed card: a title line (with a badge when ``verdict`` is given) and ``parts``.

    ``parts`` are markup (tables, lists) or text (escaped into a paragraph); None parts
    are skipped. ``kind`` colours a badge other than PASS / FAIL (:func:`badge`).
    """
    head = f"{badge(verdict, kind)} " if verdict is not None else ""
    sub = f" <span{styled('ek-subtitle')}>{esc(subtitle)}</span>" if subtitle else ""
    body = "".join(
        esc(p) if isinstance(p, Markup) or hasattr(p, "__html__") else paragraph(p)
        for p in parts
        if p is not None
    )
    kind = kind or {"PASS": "pass", "FAIL": "fail"}.get(str(verdict), "neutral")
    return Markup(
        f"<div{styled('ek-card', f'ek-{kind}')}><div{styled('ek-card-title')}>{head}"
        f"{esc(title)}{sub}</div>{body}</div>"
    )


def record_card(title: str, items: Iterable[tuple[str, Any]], *, subtitle: str = "") -> Markup:
    """A card holding a record's fields as a name/value table; notes as a list.

    A field holding a DataFrame is drawn as its own small table under the others, with
    its index when the index is named (a confusion matrix: rows ``judge``, columns
    ``human``). Nested records, mappings and lists read as text (:func:`nested`).
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
    """A DataFrame drawn with :func:`grid`, its columns as headers.

    A named index is kept as the first column. When the columns are named too (a
    cross-table such as a confusion matrix, ``judge`` × ``human``), that header says
    which axis is which: ``judge ↓ · human →``. An unnamed index is dropped.
    """
    named = frame.rename(columns=str)
    index_name, columns_name = frame.index.name, frame.columns.name
    if index_name is None:
        return grid(named, {c: c for c in named.columns}, caption=caption)
    corner = f"{index_name} ↓ · {columns_name} →" if columns_name else str(index_name)
    key = "__index__"
    data = named.rename_axis(index=None, columns=None).reset_index(names=key)
    columns = {key: corner, **{c: c for c in named.columns}}
    return grid(data, columns, caption=caption)
