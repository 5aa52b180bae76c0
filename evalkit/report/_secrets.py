"""Keep secrets out of reports: refuse them as parameters, scrub every notebook and page
written, and scan the outputs as a last check.

What a secret is, and how it is scrubbed, is decided in one place:
:mod:`evalkit.secrets`. Keys reach the kernels only through the environment. Before a
run, parameters that look like a secret (by name or by value) are refused. During it,
every save papermill makes of an executed notebook goes through
:func:`scrubbed_output_path` and every page through the same scrubber, so no secret
reaches the disk; what had to be scrubbed is reported (:func:`scrubbed_kinds`) so that
the run can still fail loudly. After it, every file written is scanned, and a file
holding a secret is deleted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

from evalkit.errors import EvalkitError
from evalkit.secrets import find_secrets, is_secret_name, scrubber


class SecretLeakError(EvalkitError):
    """A secret was offered as a parameter or found in an output."""


@dataclass(frozen=True)
class Finding:
    """A secret found in a file: where, and which kind (never the secret itself)."""

    path: Path
    what: str


def scan_text(text: str, environ: Mapping[str, str] | None = None) -> list[str]:
    """Kinds of secret found in ``text`` (:func:`evalkit.secrets.find_secrets`)."""
    return find_secrets(text, environ)


def scan_files(paths: Iterable[Path], environ: Mapping[str, str] | None = None) -> list[Finding]:
    """Scan files (text, read as UTF-8 with replacement) for secrets."""
    findings = []
    for path in paths:
        if not path.is_file():
            continue
        text = path.read_bytes().decode("utf-8", errors="replace")
        findings += [Finding(path, what) for what in scan_text(text, environ)]
    return findings


def check_parameters(
    parameters: Mapping[str, Any], environ: Mapping[str, str] | None = None
) -> None:
    """Refuse parameters that carry a secret: a secret-looking name, a configured
    secret's value, or a key-shaped string. Keys go through the environment only."""
    for name, value in parameters.items():
        if is_secret_name(name):
            raise SecretLeakError(
                f"parameter {name!r} looks like a secret; keys reach the kernels only "
                "through the environment (e.g. ANTHROPIC_API_KEY), never as parameters"
            )
        found = scan_text(repr(value), environ)
        if found:
            raise SecretLeakError(
                f"parameter {name!r} holds a secret ({', '.join(found)}); keys reach the "
                "kernels only through the environment, never as parameters"
            )


def scrub_notebook(nb: nbformat.NotebookNode) -> tuple[nbformat.NotebookNode, list[str]]:
    """``nb`` with every string of its cells and metadata scrubbed, and the kinds of secret
    removed (when it held none: ``nb`` itself and an empty list)."""
    s = scrubber()
    text = nbformat.writes(nb)
    kinds = s.find(text)
    if not kinds:
        return nb, []
    return nbformat.from_dict(s.scrub_value(nb)), kinds


_SCHEME = "evalkit-scrubbed://"


class _ScrubbingIO:
    """papermill I/O for ``evalkit-scrubbed://PATH``: each save of a notebook is scrubbed
    before it is written to ``PATH``; the kinds removed are remembered per path."""

    def __init__(self) -> None:
        self.removed: dict[str, set[str]] = {}

    @staticmethod
    def _local(path: str) -> Path:
        return Path(path[len(_SCHEME) :])

    def read(self, path: str) -> str:
        return self._local(path).read_text(encoding="utf-8")

    def write(self, buf: str, path: str) -> None:
        clean, kinds = scrub_notebook(nbformat.reads(buf, as_version=4))
        self.removed.setdefault(path, set()).update(kinds)
        self._local(path).write_text(nbformat.writes(clean), encoding="utf-8")

    def listdir(self, path: str) -> list[str]:
        return [str(p) for p in self._local(path).iterdir()]

    def pretty_path(self, path: str) -> str:
        return str(self._local(path))


_IO = _ScrubbingIO()


def scrubbed_output_path(path: str | Path) -> str:
    """The papermill output path that writes ``path`` through the scrubber."""
    from papermill.iorw import papermill_io

    if not any(handler is _IO for _, handler in papermill_io._handlers):
        papermill_io.register(_SCHEME, _IO)
    target = _SCHEME + str(Path(path).resolve())
    _IO.removed.pop(target, None)
    return target


def scrubbed_kinds(output_path: str) -> list[str]:
    """Kinds of secret scrubbed from the saves to ``output_path`` (from
    :func:`scrubbed_output_path`), sorted; forgets them."""
    return sorted(_IO.removed.pop(output_path, set()))
