"""A blind labeling page: the held-out template as one offline HTML file.

:func:`label_page_html` turns the blind template (:mod:`evalkit.heldout._template`) into a
single self-contained page: one conversation at a time, drawn as a chat, the labeling
guide's section for each dimension beside it, the frozen bins as buttons with keyboard
shortcuts, a progress bar, autosave in the browser's ``localStorage`` and an export that
writes exactly the filled sheet ``evalkit heldout seal`` accepts (same columns, same
conversation text, ``n/a`` where the template has it, a labeler on every row).

The page shows what the blind template shows and nothing more: case id, turns, sources,
and which slots are ``n/a``; no stratum, family, locale or intended bin. Beside it, the
labeling guide (the catalogue's ``guide.md``), not the judge's rubrics: labelers work from
the sheet and the guide only, and the labels must not follow the rubrics (ADR-0010).

Safety: the data travels as JSON in a ``<script type="application/json">`` block with
``<``, ``>``, ``&``, U+2028 and U+2029 escaped, and the page's script writes it with
``textContent`` only, so a conversation holding markup or script shows as text. A
Content-Security-Policy allows only the page's own inline script and style (by hash)
and no network at all.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from evalkit._files import write_whole
from evalkit.catalogue import Catalogue
from evalkit.errors import CatalogueError, Problem, SealError
from evalkit.heldout._registry import TEMPLATE, sheet_id
from evalkit.heldout._template import (
    NOT_APPLICABLE,
    applies,
    template_columns,
    template_csv,
    template_rows,
)

#: The guide's file name in a catalogue folder (ADR-0024: a catalogue carries its own guide).
DEFAULT_GUIDE = Path("guide.md")
_ASSETS = "assets"
_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028"}
_JSON_ESCAPES["\u2029"] = "\\u2029"


@dataclass(frozen=True)
class LabelingGuide:
    """The labeling guide cut for the page: its opening text and one section per dimension.

    ``intro`` is everything before the first ``## `` heading (bins, locale numbers) plus
    every section that names no gated dimension (``## Notes``); ``sections`` maps each
    gated dimension to ``(heading, body)`` of the section headed ``## <dimension>: …``.
    """

    source: str
    intro: str
    sections: dict[str, tuple[str, str]]


_BLOCK_START = re.compile(r"^\s*(?:[-*] |\d+\. |\|)")


def plain_text(markdown: str) -> str:
    """Markdown as the page shows it (as text, never as markup): ``**`` and backticks
    dropped, hard-wrapped lines of a paragraph joined; list items and table rows keep
    their own lines, blank lines between paragraphs stay."""
    out: list[str] = []
    for line in markdown.replace("**", "").replace("`", "").splitlines():
        text = line.strip()
        if out and out[-1] and text and not _BLOCK_START.match(line):
            out[-1] += " " + text
        else:
            out.append(text if not _BLOCK_START.match(line) else line.rstrip())
    return "\n".join(out).strip()


def parse_guide(text: str, dimensions: list[str] | tuple[str, ...], source: str) -> LabelingGuide:
    """Cut a Markdown labeling guide into its intro and one section per gated dimension.

    Text comes out as :func:`plain_text`. A section belongs to a dimension when its
    ``## `` heading is the dimension's name, alone or followed by ``:``. A gated dimension
    with no section, or with two, is a :class:`CatalogueError` naming the guide and the
    dimension: a labeler must never be shown another dimension's rules, or none.
    """
    title = re.compile(r"^# .*$")
    chunks: list[tuple[str, list[str]]] = [("", [])]
    for line in text.splitlines():
        if line.startswith("## "):
            chunks.append((line[3:].strip(), []))
        elif not (len(chunks) == 1 and title.match(line)):
            chunks[-1][1].append(line)
    sections: dict[str, tuple[str, str]] = {}
    problems: list[Problem] = []
    intro = [plain_text("\n".join(chunks[0][1]))]
    for heading, body in chunks[1:]:
        name = heading.split(":", 1)[0].strip()
        if name not in dimensions:
            intro.append(f"{heading}\n\n" + plain_text("\n".join(body)))
        elif name in sections:
            problems.append(Problem(source, name, "section", "two sections for this dimension"))
        else:
            sections[name] = (heading, plain_text("\n".join(body)))
    for dim in dimensions:
        if dim not in sections:
            problems.append(
                Problem(source, dim, "section", f"no section headed '## {dim}: ...' for it")
            )
    if problems:
        raise CatalogueError(problems)
    return LabelingGuide(source, "\n\n".join(t for t in intro if t), sections)


def read_guide(path: str | Path, catalogue: Catalogue) -> LabelingGuide:
    """:func:`parse_guide` on a UTF-8 file; an unreadable file is a :class:`CatalogueError`."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogueError(
            [Problem(str(path), None, None, f"cannot read the labeling guide: {exc}; pass --guide")]
        ) from None
    if text.startswith("---\n") and "\n---\n" in text[3:]:  # front matter (guide_only)
        text = text[text.index("\n---\n", 3) + 5 :]
    return parse_guide(text, catalogue.constants.gated_dimensions, str(path))


def check_template(catalogue: Catalogue, path: str | Path | None = None) -> Path:
    """The blind template file (default ``<catalogue>/heldout/template.csv``), checked to
    be the template of the held-out cases as they are now.

    A missing or unreadable file, or one that differs (a case changed or was added after
    it was written), is a :class:`SealError`: labels given on it would not seal.
    """
    target = Path(path) if path is not None else catalogue.root / TEMPLATE
    try:
        text = target.read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise SealError(
            f"{target}: no readable blind template ({exc}); write it with "
            "`evalkit heldout template`"
        ) from None
    if text != template_csv(catalogue):
        raise SealError(
            f"{target}: not the blind template of the held-out cases as they are now (a case "
            "changed, or was added, after it was written); labels given on it would not "
            "seal. Write it again with `evalkit heldout template`"
        )
    return target


def page_data(catalogue: Catalogue, template_sha256: str, guide: LabelingGuide) -> dict[str, Any]:
    """What the page embeds: the template rows with their turns and sources, the bins,
    the guide, and the ``localStorage`` key (held-out set id + template sha256, so that
    labels given on one template never fill another's page)."""
    dims = list(catalogue.constants.gated_dimensions)
    cases = []
    for row in template_rows(catalogue):
        case = catalogue.case(row["case_id"])
        cases.append(
            {
                "case_id": case.id,
                "conversation": row["conversation"],
                "turns": [
                    {"role": "user" if t.role == "user" else "agent", "text": t.text.strip()}
                    for t in case.turns
                ],
                "sources": [{"id": s.id, "title": s.title, "text": s.text} for s in case.sources],
                "applies": {d: applies(case, d) for d in dims},
            }
        )
    sheet = sheet_id(catalogue)
    return {
        "storage_key": f"evalkit-label-page/{sheet}/{template_sha256}",
        "template_sha256": template_sha256,
        "columns": template_columns(catalogue),
        "bins": list(catalogue.constants.bins),
        "not_applicable": NOT_APPLICABLE,
        "dimensions": [
            {"name": d, "heading": guide.sections[d][0], "guide": guide.sections[d][1]}
            for d in dims
        ],
        "guide_intro": guide.intro,
        "guide_source": guide.source,
        "cases": cases,
    }


def embed_json(data: Any) -> str:
    """JSON safe inside a ``<script>`` block: ``<``, ``>``, ``&``, U+2028/9 as escapes, so
    no ``</script>``, ``<!--`` or line separator can end or bend the block."""
    text = json.dumps(data, ensure_ascii=False, sort_keys=True)
    return re.sub("[<>&\u2028\u2029]", lambda m: _JSON_ESCAPES[m.group(0)], text)


def _asset(name: str) -> str:
    return (resources.files("evalkit.heldout") / _ASSETS / name).read_text(encoding="utf-8")


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def label_page_html(data: dict[str, Any]) -> str:
    """The page for :func:`page_data`'s ``data``. Pure; the only data in the markup is the
    escaped JSON block."""
    script, style = _asset("label_page.js"), _asset("label_page.css")
    csp = (
        f"default-src 'none'; script-src {_csp_hash(script)}; style-src {_csp_hash(style)}; "
        "img-src 'none'; connect-src 'none'; form-action 'none'; base-uri 'none'"
    )
    return "".join(
        [
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
            f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n',
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
            "<title>evalkit: blind held-out labeling</title>\n",
            f"<style>{style}</style>\n</head>\n<body>\n",
            "<noscript>This page needs JavaScript (it runs offline, in this file only)."
            "</noscript>\n",
            '<script type="application/json" id="evalkit-data">',
            embed_json(data),
            "</script>\n",
            f"<script>{script}</script>\n</body>\n</html>\n",
        ]
    )


def write_label_page(
    catalogue: Catalogue,
    out: str | Path,
    *,
    template: str | Path | None = None,
    guide: str | Path | None = None,
) -> Path:
    """Check the template (:func:`check_template`), read the guide (default: the
    catalogue's own ``guide.md``), write the page.

    Writes nothing when either is unusable (a :class:`SealError` or
    :class:`CatalogueError`), or when the catalogue holds no held-out case (a
    :class:`CatalogueError`). The page is written whole or not at all
    (:func:`~evalkit._files.write_whole`: a full disk leaves no half page).
    Returns the path written.
    """
    if not catalogue.split("heldout"):
        raise CatalogueError(
            [Problem(str(catalogue.root), None, "split", "no held-out case: nothing to label")]
        )
    template_path = check_template(catalogue, template)
    sha = hashlib.sha256(template_path.read_bytes()).hexdigest()
    if guide is None:
        guide = catalogue.root / DEFAULT_GUIDE
    html = label_page_html(page_data(catalogue, sha, read_guide(guide, catalogue)))
    return write_whole(out, html.encode("utf-8"), "label page")
