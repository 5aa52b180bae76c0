"""Which files a catalogue folder may hold: anything the loader would not read is an error.

The loader reads files by where they are (``cases/<split>/<locale>/*.yaml``,
``labels/*.csv``, ...). A file elsewhere, or with another extension (``cases.yml``), or a
folder nested where none is expected, would be passed over without a word, and a case
in it would silently drop out of the catalogue. So every entry of the folder must be one
the layout below expects:

``constants.yaml``, ``resources.yaml``, ``ratified.yaml``, ``guide.md`` and the framing
file named by ``framing_file`` at the top; ``cases/calibration|heldout/<locale>/<name>.yaml``;
``rubrics/<name>.yaml``; ``labels/<name>.csv`` and ``labels/consensus.yaml``;
``design/<name>.csv``, ``design/rules/<name>.csv`` and ``design/pairs/<name>.csv``;
``heldout/*.csv`` and ``heldout/*.json`` (the blind template, filled sheets and the
seals registry the held-out protocol writes, under any name that
is not hidden). ``README*.md`` and ``.gitkeep`` are allowed in every folder. Any other
hidden file (``.DS_Store``) is an error. Names outside ``heldout/`` are
``[A-Za-z0-9][A-Za-z0-9_.-]*``; locale folders are locale codes (``en-GB``).

A symbolic link must stay inside the catalogue folder (a link to a file or folder
outside it is an error, as is a broken link); a link that stays inside is judged as what
it points to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.catalogue._collect import Collector

_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]*"
_LOCALE = r"[a-z]{2,3}(-[A-Z]{2})?"
_ANYWHERE = (r"README[A-Za-z0-9_.-]*\.md", r"\.gitkeep")


@dataclass(frozen=True)
class _Folder:
    """What one folder may hold: files matching ``files``, folders matching a key of
    ``folders``; ``expects`` says it in words for the problem message."""

    expects: str
    files: tuple[str, ...] = ()
    folders: dict[str, _Folder] = field(default_factory=dict)


_LOCALE_FOLDER = _Folder("case files <name>.yaml", files=(rf"{_NAME}\.yaml",))
_SPLIT_FOLDER = _Folder("locale folders (en-GB, ...)", folders={_LOCALE: _LOCALE_FOLDER})


def _layout(framing_file: str) -> _Folder:
    return _Folder(
        "constants.yaml, resources.yaml, ratified.yaml, the framing file and the folders "
        "cases/, rubrics/, labels/, design/, heldout/",
        files=(
            r"constants\.yaml",
            r"resources\.yaml",
            r"ratified\.yaml",
            r"guide\.md",
            re.escape(framing_file),
        ),
        folders={
            "cases": _Folder(
                "the split folders calibration/ and heldout/",
                folders={"calibration": _SPLIT_FOLDER, "heldout": _SPLIT_FOLDER},
            ),
            "rubrics": _Folder("rubric files <dimension>.<version>.yaml", (rf"{_NAME}\.yaml",)),
            "labels": _Folder(
                "label files <set>.csv and consensus.yaml", (rf"{_NAME}\.csv", r"consensus\.yaml")
            ),
            "design": _Folder(
                "design files <name>.csv and the folders rules/ and pairs/",
                (rf"{_NAME}\.csv",),
                folders={
                    "rules": _Folder("rule-case files <name>.csv", (rf"{_NAME}\.csv",)),
                    "pairs": _Folder("minimal-pair files <name>.csv", (rf"{_NAME}\.csv",)),
                },
            ),
            "heldout": _Folder(
                "the template, filled sheets (*.csv) and the seals registry (*.json)",
                (r"[^.].*\.csv", r"[^.].*\.json"),
            ),
        },
    )


def check_layout(root: Path, col: Collector, *, framing_file: str = "framing.txt") -> None:
    """Add a problem for every entry of the catalogue folder ``root`` that the layout does
    not expect, every symbolic link that leaves it or is broken, and every folder that
    cannot be listed. ``framing_file`` is the framing file the constants name."""
    _walk(root, _layout(framing_file), root.resolve(), col)


def _walk(folder: Path, spec: _Folder, real_root: Path, col: Collector) -> None:
    try:
        entries = sorted(folder.iterdir())
    except OSError as exc:
        col.add(folder, None, None, f"cannot list the folder: {exc}")
        return
    for entry in entries:
        name = entry.name
        if entry.is_symlink():
            try:
                target = entry.resolve()
            except (OSError, RuntimeError) as exc:  # a loop of links
                col.add(entry, None, None, f"unreadable symbolic link: {exc}")
                continue
            if not target.is_relative_to(real_root):
                col.add(entry, None, None, f"symbolic link leaves the catalogue folder ({target})")
                continue
            if not target.exists():
                col.add(entry, None, None, f"broken symbolic link ({target})")
                continue
        if entry.is_dir():
            sub = next((f for pat, f in spec.folders.items() if re.fullmatch(pat, name)), None)
            if sub is None:
                col.add(entry, None, None, _unexpected("folder", name, spec))
                continue
            _walk(entry, sub, real_root, col)
        elif not entry.is_file():
            col.add(entry, None, None, "not a regular file or folder")
        elif not any(re.fullmatch(pat, name) for pat in (*spec.files, *_ANYWHERE)):
            col.add(entry, None, None, _unexpected("file", name, spec))


def _unexpected(kind: str, name: str, spec: _Folder) -> str:
    if name.startswith("."):
        return f"hidden {kind}: a catalogue holds no hidden files (only .gitkeep); remove it"
    return (
        f"unexpected {kind}: the loader would not read it (this folder holds {spec.expects}); "
        "move or remove it"
    )
