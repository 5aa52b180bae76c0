"""The ADRs beside the reports: ``docs/adr/*.md`` rendered to ``<out>/adr/*.html``.

Markdown is converted with mistune (shipped with nbconvert) with raw HTML escaped and
unsafe link schemes dropped, so an ADR renders as text and links only. Mentions of
``ADR-NNNN`` become links to the other rendered ADRs; links to ``*.md`` files among
the ADRs point at their ``.html`` pages. A run that links the pages another run rendered
(``evalkit study --adr-base``) lists them with :func:`list_adrs` and writes nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import mistune

from evalkit.report._html import esc
from evalkit.report._style import page

_MENTION = re.compile(r"\bADR-(\d{4})\b")
_MD_LINK = re.compile(r"\]\((?:\.{0,2}/)?(?:docs/adr/)?(\d{4}-[A-Za-z0-9_-]+)\.md\)")
_TITLE = re.compile(r"^#\s+(.+)$", re.MULTILINE)


@dataclass(frozen=True)
class AdrPage:
    """One rendered ADR: its number, title, source and page (relative to the out folder)."""

    number: str
    title: str
    source: Path
    href: str


def markdown_to_html(text: str) -> str:
    """Safe markdown → HTML: raw HTML in the source is escaped, not passed through."""
    render = mistune.create_markdown(escape=True, plugins=["table", "strikethrough"])
    out = render(text)
    assert isinstance(out, str)
    return out


def _link_mentions(text: str, pages: dict[str, str], own: str) -> str:
    def repl(m: re.Match[str]) -> str:
        number = m.group(1)
        target = pages.get(number)
        if target is None or number == own:
            return m.group(0)
        return f"[ADR-{number}]({target})"

    lines = []
    for line in text.splitlines():
        lines.append(line if line.startswith("#") else _MENTION.sub(repl, line))
    return "\n".join(lines)


def _sources(source_dir: str | Path) -> list[Path]:
    src = Path(source_dir)
    return sorted(src.glob("[0-9][0-9][0-9][0-9]-*.md")) if src.is_dir() else []


def _title(path: Path, text: str) -> str:
    match = _TITLE.search(text)
    return match.group(1).strip() if match else path.stem


def list_adrs(source_dir: str | Path, base: str = "adr/") -> list[AdrPage]:
    """The ADR pages of ``source_dir`` as rendered elsewhere: ``href`` is ``base`` + the
    page's file name (``base`` as given, e.g. ``../adr/`` for a run in a sub-folder of
    the folder whose ``adr/`` holds them). Writes nothing; in number order; an absent
    folder gives no pages."""
    return [
        AdrPage(p.name[:4], _title(p, p.read_text(encoding="utf-8")), p, f"{base}{p.stem}.html")
        for p in _sources(source_dir)
    ]


def render_adrs(source_dir: str | Path, out_dir: str | Path) -> list[AdrPage]:
    """Render every ``NNNN-*.md`` of ``source_dir`` to ``out_dir/adr/``, plus an index.

    Returns the pages in number order; ``href`` is relative to ``out_dir``. An absent
    source folder gives an index saying so and no pages.
    """
    dest = Path(out_dir) / "adr"
    dest.mkdir(parents=True, exist_ok=True)
    sources = _sources(source_dir)
    stems = {p.name[:4]: p.stem + ".html" for p in sources}
    pages = []
    for path in sources:
        text = path.read_text(encoding="utf-8")
        number = path.name[:4]
        title = _title(path, text)
        text = _MD_LINK.sub(lambda m: f"]({m.group(1)}.html)", text)
        body = markdown_to_html(_link_mentions(text, stems, number))
        nav = (
            '<p class="ek-nav"><a href="index.html">All decision records</a> · '
            '<a href="../index.html">All studies</a></p>'
        )
        note = (
            f'<p class="ek-source">Source: <code>{esc(_display_path(path))}</code>. '
            "Rendered beside the reports so their citations open offline.</p>"
        )
        html_text = page(title, nav + f'<article class="ek-adr">{body}</article>' + note)
        (dest / stems[number]).write_text(html_text, encoding="utf-8")
        pages.append(AdrPage(number, title, path, f"adr/{stems[number]}"))
    items = (
        "".join(
            f'<li id="adr-{esc(p.number)}"><a href="{esc(p.href.removeprefix("adr/"))}">'
            f"{esc(p.title)}</a></li>"
            for p in pages
        )
        or "<li>No decision records were found.</li>"
    )
    index = page(
        "Architecture decision records",
        '<p class="ek-nav"><a href="../index.html">All studies</a></p>'
        "<h1>Architecture decision records</h1>"
        "<p>The rules behind every verdict in the studies. Each record says what was "
        "decided, why, and what follows from it.</p>"
        f"<ul>{items}</ul>",
    )
    (dest / "index.html").write_text(index, encoding="utf-8")
    return pages


def _display_path(path: Path) -> str:
    parts = path.parts
    if "docs" in parts:
        return "/".join(parts[parts.index("docs") :])
    return path.name
