"""Escaped HTML fragments for report outputs: headings, prose, tables, callouts, transcripts.

Every helper escapes the text it is given; only :class:`Html` values pass through as
markup. Conversation text, case ids, rationales and any other catalogue or judge text
therefore always render as text, whatever markup or script they contain.

The fragments are built on :mod:`evalkit._display` (escaping, missing values, number
text, intervals, badges, tables and paragraphs are defined there, once) and carry their
look inline (:mod:`evalkit._styles`), so a study displayed in JupyterLab, where the report
stylesheet is not loaded, reads as its page does.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from evalkit import _display as display
from evalkit._display import esc, fmt, interval, is_missing, steady  # noqa: F401  (defined once there)
from evalkit._styles import styled
from evalkit.report._names import header_name, is_fraction_column, locale_name

Formatter = Callable[[Any], str]


class Html:
    """A fragment of trusted HTML, displayed as ``text/html`` by Jupyter.

    Build it with the helpers of this module, which escape their text arguments;
    ``Html("…")`` with a literal is for fixed markup only.
    """

    __slots__ = ("html", "text")

    def __init__(self, markup: str, text: str = "") -> None:
        self.html = markup
        self.text = text

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return self.text or "(HTML fragment: open the rendered report)"

    def __str__(self) -> str:
        return self.html

    def __html__(self) -> str:
        """Trusted markup for :mod:`evalkit._display` (the markupsafe protocol)."""
        return self.html

    def __add__(self, other: Html) -> Html:
        return Html(self.html + other.html, " ".join(t for t in (self.text, other.text) if t))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Html) and other.html == self.html

    def __hash__(self) -> int:
        return hash(self.html)


def pct(value: Any, digits: int = 1) -> str:
    """A proportion as a percentage, ``—`` when missing."""
    if is_missing(value):
        return "—"
    return f"{steady(100.0 * float(value)):.{digits}f}%"


def _part(part: Any) -> str:
    if isinstance(part, Html):
        return part.html
    if part is None:
        return ""
    return esc(part)


def join(*parts: Any, sep: str = "") -> Html:
    """Concatenate parts: :class:`Html` as is, anything else escaped."""
    return Html(esc(sep).join(_part(p) for p in parts))


def heading(text: str, level: int = 2, anchor: str | None = None) -> Html:
    """A heading (``<h2>`` by default) with an optional anchor id."""
    level = min(max(level, 1), 6)
    ident = f' id="{esc(slug(anchor))}"' if anchor else ""
    return Html(f"<h{level}{ident}>{esc(text)}</h{level}>", text)


def paragraph(*parts: Any, css: str | None = None) -> Html:
    """A paragraph of escaped text and :class:`Html` parts."""
    return Html(display.paragraph(*(Html(_part(p)) for p in parts), css=css))


def strong(text: Any) -> Html:
    return Html(f"<strong>{_part(text)}</strong>")


def code(text: Any) -> Html:
    return Html(f"<code{styled('ek-code')}>{esc(text)}</code>")


def link(href: str, text: Any, title: str | None = None) -> Html:
    """A link; ``href`` must be relative or an in-page anchor (reports stay offline)."""
    if re.match(r"^\s*([a-z][a-z0-9+.-]*:|//)", href, re.IGNORECASE):
        raise ValueError(f"report links must be relative, got {href!r}")
    tip = f' title="{esc(title)}"' if title else ""
    return Html(f'<a href="{esc(href)}"{tip}>{_part(text)}</a>')


def bullets(items: Iterable[Any], css: str | None = None) -> Html:
    """An unordered list."""
    return Html(display.bullet_list((Html(_part(item)) for item in items), css=css))


def badge(verdict: str) -> Html:
    """A coloured PASS / FAIL (or any short status) badge."""
    return Html(display.badge(verdict), str(verdict))


def callout(title: str, *body: Any, kind: str = "info") -> Html:
    """A boxed note. ``kind``: info, warning, refusal, pass or fail."""
    if kind not in ("info", "warning", "refusal", "pass", "fail"):
        raise ValueError(f"unknown callout kind {kind!r}")
    inner = "".join(
        b.html if isinstance(b, Html) else display.paragraph(b) for b in body if b is not None
    )
    return Html(
        f'<div{styled("ek-callout", f"ek-{kind}")} role="note"><p{styled("ek-callout-title")}>'
        f"{esc(title)}</p>{inner}</div>",
        title,
    )


def slug(text: str) -> str:
    """An id-safe slug of ``text``."""
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-") or "section"


def key_values(items: Mapping[str, Any], caption: str | None = None) -> Html:
    """A two-column table of names and values (values escaped, or :class:`Html`)."""
    return Html(display.key_values(items.items(), caption))


def _is_number(value: Any) -> bool:
    if isinstance(value, bool | Html | str):
        return False
    kind = getattr(getattr(value, "dtype", None), "kind", "")
    return isinstance(value, int | float) or kind in ("i", "u", "f")


def readable(
    frame: pd.DataFrame,
    labels: Mapping[str, str] | None = None,
    *,
    drop: Sequence[str] = (),
) -> dict[str, str]:
    """Column → header label for every column of ``frame`` (less ``drop``).

    ``labels`` names some columns; the others get their reader name
    (:func:`~evalkit.report._names.header_name`: ``ci_low`` → ``95% CI low``, ``de`` →
    ``German (de)``, else the id with spaces, capitalised).
    """
    labels = labels or {}
    return {str(c): labels.get(str(c), header_name(c)) for c in frame.columns if str(c) not in drop}


def integer_columns(frame: pd.DataFrame, columns: Iterable[str]) -> set[str]:
    """The ``columns`` of ``frame`` whose values are all whole numbers (at least one, the
    others missing), so they print as integers: a float column of latencies ``1.0, 2.0``
    reads ``1, 2``, not ``1.000, 2.000``. Columns of fractions or statistics by their id
    (:func:`~evalkit.report._names.is_fraction_column`: a kappa of exactly 1) keep their
    decimals."""
    out = set()
    for col in columns:
        if col not in frame.columns or is_fraction_column(col):
            continue
        values = [v for v in frame[col].tolist() if not is_missing(v)]
        if values and all(_is_whole(v) for v in values):
            out.add(col)
    return out


def _is_whole(value: Any) -> bool:
    if not _is_number(value):
        return False
    number = float(value)
    return math.isfinite(number) and number.is_integer()


def _locale_cell(value: Any) -> str:
    return "—" if is_missing(value) else locale_name(value)


def integer(value: Any) -> str:
    """A whole number as an integer (``1.0`` → ``1``), ``—`` when missing."""
    return "—" if is_missing(value) else str(int(float(value)))


def table(
    frame: pd.DataFrame,
    columns: Mapping[str, str] | Sequence[str] | None = None,
    *,
    caption: str | None = None,
    formats: Mapping[str, Formatter] | None = None,
    row_class: Callable[[Mapping[Any, Any]], str | None] | None = None,
    index: bool = False,
    note: str | None = None,
    empty: str = "No rows.",
) -> Html:
    """A table of ``frame`` with readable column names; every cell is escaped.

    ``columns`` maps frame columns to header labels (in display order) or lists the
    columns to keep (default: every column, headed by its reader name, :func:`readable`).
    ``formats`` maps a column to a function giving its cell text (default :func:`fmt`,
    :func:`integer` for a column of whole numbers, :func:`integer_columns`, and the locale's
    name for a ``locale`` column, ``en-GB`` → ``English, UK (en-GB)``).
    ``row_class`` gives a CSS class per row (e.g. ``descriptive`` for cells too small to
    read as more than description). ``note`` is printed under the table. The first column
    stays in view when a wide table scrolls inside its box (``ek-table-wrap``).
    """
    data = frame.reset_index() if index else frame
    if columns is None:
        mapping = readable(data)
    elif isinstance(columns, Mapping):
        mapping = dict(columns)
    else:
        mapping = {c: c for c in columns}
    missing = [c for c in mapping if c not in data.columns]
    if missing:
        raise KeyError(f"table: no column(s) {missing} in {list(data.columns)}")
    formats = {
        **{c: integer for c in integer_columns(data, mapping) if c in data.columns},
        **({"locale": _locale_cell} if "locale" in mapping else {}),
        **(formats or {}),
    }
    records: list[Mapping[Any, Any]] = list(data.to_dict(orient="records"))
    table_markup = display.grid(
        records,
        mapping,
        caption=caption,
        empty=empty,
        max_rows=None,
        formats=formats,
        row_class=[row_class(r) for r in records] if row_class else None,
    )
    foot = display.paragraph(note, css="ek-table-note") if note else ""
    return Html(f"<div{styled('ek-table-wrap')}>{table_markup}{foot}</div>", caption or "")


def transcript(
    turns: Sequence[tuple[str, str]],
    *,
    title: str | None = None,
    meta: Mapping[str, Any] | None = None,
    highlight: int | None = None,
    rationale: Any = ...,
) -> Html:
    """A conversation, turn by turn, as escaped text.

    ``turns`` are ``(role, text)`` pairs, each drawn as its own block headed by its
    speaker and turn number (``User · turn 0``); ``highlight`` marks one turn (by index),
    e.g. the reply that was scored, with an outline and the words "scored reply" in its
    heading, so the mark survives where colours do not. ``meta`` is shown as a line of
    name: value pairs. ``rationale``, when given, is the judge's reason for its bin, shown
    right under the conversation (missing or empty: "none recorded").
    """
    parts = [f"<div{styled('ek-transcript')}>"]
    if title:
        parts.append(f"<p{styled('ek-transcript-title')}>{esc(title)}</p>")
    if meta:
        items = " · ".join(f"{esc(k)}: {display.cell(v)}" for k, v in meta.items())
        parts.append(f"<p{styled('ek-transcript-meta')}>{items}</p>")
    for i, (role, text) in enumerate(turns):
        who = "User" if role == "user" else "Agent" if role == "assistant" else str(role)
        scored = highlight is not None and i == highlight
        mark = f" · <span{styled('ek-scored')}>scored reply</span>" if scored else ""
        look = styled("ek-turn", f"ek-{slug(role)}", "ek-highlight" if scored else None)
        parts.append(
            f"<div{look}><span{styled('ek-role')}>{esc(who)} · turn {i}{mark}</span>"
            f"<div{styled('ek-text')}>{esc(text)}</div></div>"
        )
    if rationale is not ...:
        said = "" if is_missing(rationale) else str(rationale).strip()
        parts.append(
            f"<div{styled('ek-rationale')}><span{styled('ek-role')}>Judge's rationale</span>"
            f"<div{styled('ek-text')}>{esc(said) if said else '<em>none recorded</em>'}"
            "</div></div>"
        )
    parts.append("</div>")
    return Html("".join(parts), title or "")


def section(*parts: Any) -> Html:
    """Several fragments (or charts: anything with ``_repr_html_``) displayed as one output."""
    return Html("".join(_markup(p) for p in parts))


def row(*parts: Any) -> Html:
    """Fragments or charts side by side (wrapping on narrow pages)."""
    cells = "".join(f"<div>{_markup(p)}</div>" for p in parts)
    return Html(f"<div{styled('ek-chart-row')}>{cells}</div>")


def _markup(part: Any) -> str:
    if isinstance(part, Html):
        return part.html
    repr_html = getattr(part, "_repr_html_", None)
    if callable(repr_html):
        return str(repr_html())
    return esc(part)
