"""Backends by name: a judge spec (``anthropic:MODEL``, ``openai:URL:MODEL``,
``recorded:NAME``, ``baseline``, ``replay``) to the backend that answers it.

Each backend module is imported only when its spec is asked for, so building a plan or
reading ``--help`` loads no HTTP client.
"""

from __future__ import annotations

import importlib
import re
from typing import TYPE_CHECKING, Any

from evalkit.errors import JudgeError

if TYPE_CHECKING:
    from evalkit.catalogue import Catalogue
    from evalkit.judge._base import Backend
    from evalkit.judge._prompt import JudgeParams


#: The module of each backend kind (``replay`` has none: the ledger answers).
BACKEND_MODULES = {
    "anthropic": "evalkit.judge.anthropic",
    "openai": "evalkit.judge.openai",
    "recorded": "evalkit.judge.recorded",
    "baseline": "evalkit.judge.baseline",
}


def import_backend(spec: str) -> None:
    """Import the module of the backend ``spec`` names, so that a caller chooses when its
    import is paid (the Anthropic SDK takes over a second); nothing for ``replay`` or an
    unknown kind, which :func:`make_backend` refuses."""
    module = BACKEND_MODULES.get(spec.partition(":")[0])
    if module is not None:
        importlib.import_module(module)


def judge_slug(judge: str) -> str:
    """A file-name-safe form of a judge spec (``anthropic:claude-x`` → ``anthropic_claude-x``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", judge).strip("_") or "judge"


def make_backend(
    spec: str,
    catalogue: Catalogue,
    *,
    for_gate: bool = False,
    params: JudgeParams | None = None,
    call_deadline: float | None = None,
) -> Backend | None:
    """The backend named by ``spec``; None for ``replay`` (answered from the ledger).

    ``call_deadline``: wall-clock seconds per HTTP attempt of a networked backend (None:
    :data:`~evalkit.judge._base.CALL_DEADLINE_S`).
    """
    kind, _, rest = spec.partition(":")
    net: dict[str, Any] = {"params": params, "for_gate": for_gate}
    if call_deadline is not None:
        net["call_deadline"] = call_deadline
    if kind == "baseline" and not rest:
        from evalkit.judge.baseline import BaselineBackend

        return BaselineBackend(catalogue.rubrics, catalogue.resources, params=params)
    if kind == "anthropic":
        from evalkit.judge.anthropic import AnthropicBackend

        return AnthropicBackend(rest, **net)
    if kind == "openai":
        from evalkit.judge.openai import OpenAIBackend, parse_openai_spec

        url, model = parse_openai_spec(rest)
        return OpenAIBackend(url, model, **net)
    if kind == "recorded":
        from evalkit.judge.recorded import RecordedBackend

        return RecordedBackend(rest, params=params)
    if kind == "replay":
        return None
    raise JudgeError(
        f"unknown judge {spec!r}; use anthropic:MODEL, openai:URL:MODEL, recorded:NAME, "
        "replay or baseline"
    )
