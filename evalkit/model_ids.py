"""Which model ids name one fixed model: the pinned-model rule, defined once (ADR-0023).

The judge refuses to run for the gate with an unpinned id, the gate hard-fails rows
answered under one, and the reports say which it was; all three call :func:`is_pinned`.

Anthropic (checked 2026-12 against the models table of the Claude API documentation,
platform.claude.com/docs/en/about-claude/models/overview):

* a dated snapshot ``claude-...-YYYYMMDD`` with a real calendar date is pinned
  (``claude-sonnet-4-5-20250929``, ``claude-3-5-sonnet-20241022``);
* from the 4.6 generation on, the dateless id *is* the pinned API id:
  ``claude-{family}-{major}[-{minor}]`` with (major, minor) >= (4, 6) is pinned
  (``claude-opus-4-6``, ``claude-sonnet-4-6``, ``claude-opus-5``);
* a dateless id of an earlier generation (``claude-sonnet-4-5``, ``claude-opus-4-1``)
  is an alias that moves to the next snapshot, so it is not pinned;
* ``...-latest`` and every other shape (``sonnet``, ``claude-mythos-preview``) are not.

Digits are ASCII only: ``\\d`` in Python also matches Arabic-Indic digits, which no
model id contains. An id ends where its last character does (``\\Z``): ``$`` would also
match before a trailing newline and pin ``"claude-sonnet-4-6\\n"``. Other backends' ids
cannot be told apart by their shape; only a ``latest`` suffix (``:latest`` or
``-latest``) is known to float there, and the gate's ``response_model`` check does the
rest.
"""

from __future__ import annotations

import re
from datetime import date

__all__ = ["is_floating_alias", "is_pinned"]

_DATED = re.compile(r"^claude-[a-z0-9-]+-([0-9]{8})\Z", re.ASCII)
_DATELESS = re.compile(r"^claude-([a-z]+)-([0-9]+)(?:-([0-9]{1,2}))?\Z", re.ASCII)
_LATEST = re.compile(r"[:-]latest\s*\Z", re.ASCII)
#: The first generation whose dateless ids are pinned API ids.
FIRST_DATELESS_PINNED = (4, 6)


def is_pinned(model: str | None, backend: str = "anthropic") -> bool:
    """Whether ``model`` names one fixed model on ``backend`` (rule in the module docstring).

    An empty or missing id is never pinned. For a backend other than ``anthropic`` an id
    is taken as pinned unless it ends in ``latest``.
    """
    if not model or not isinstance(model, str):
        return False
    if _LATEST.search(model) or model == "latest":
        return False
    if backend != "anthropic":
        return True
    dated = _DATED.match(model)
    if dated:
        stamp = dated.group(1)
        try:
            date(int(stamp[:4]), int(stamp[4:6]), int(stamp[6:]))
        except ValueError:
            return False
        return True
    dateless = _DATELESS.match(model)
    if dateless is None:
        return False
    major, minor = int(dateless.group(2)), int(dateless.group(3) or 0)
    return (major, minor) >= FIRST_DATELESS_PINNED


def is_floating_alias(backend: str | None, model: str | None) -> bool:
    """The negation of :func:`is_pinned` for the backend that answered (``None``: anthropic
    rules do not apply, only ``latest`` floats)."""
    return not is_pinned(model, backend or "")
