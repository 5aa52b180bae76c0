"""Offline targets (a Python callable, a replay of recorded turns) and target specs."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from evalkit.catalogue import Case
from evalkit.runner._types import (
    Message,
    RunnerError,
    Target,
    TargetCallError,
    TargetReply,
    TurnContext,
    fingerprint_of,
)

ReplyLike = str | TargetReply
TargetFunction = Callable[[list[Message]], ReplyLike | Awaitable[ReplyLike]]


class CallableTarget:
    """A Python function as the agent: ``fn(messages) -> str`` (sync or async).

    ``messages`` is a fresh list of ``{"role", "content"}`` dicts, alternating, starting
    with the user and ending with the user turn to answer. ``fn`` may return a string
    or a :class:`TargetReply` (to report token counts), directly or as an awaitable.

    A sync ``fn`` runs on the event loop (one call at a time) unless ``threads=True``,
    which runs it in worker threads so that ``concurrency`` applies; use that only if
    ``fn`` is thread-safe. Any exception ``fn`` raises is recorded on the turn as
    ``"ExcType: message"`` and the conversation is left unfinished (no retries).

    ``name`` identifies the target in transcripts and in the resume key; it defaults
    to ``callable:module.qualname``. Give a new name when the function's behaviour
    changes, or stored conversations of the old one will be reused.
    """

    def __init__(
        self, fn: TargetFunction, *, name: str | None = None, threads: bool = False
    ) -> None:
        if not callable(fn):
            raise RunnerError(f"callable target: {fn!r} is not callable")
        self._fn = fn
        qual = getattr(fn, "__qualname__", type(fn).__name__)
        self.spec = name or f"callable:{getattr(fn, '__module__', '?')}.{qual}"
        self._threads = threads

    @property
    def fingerprint(self) -> str:
        return fingerprint_of({"spec": self.spec})

    async def reply(self, messages: Sequence[Message], context: TurnContext) -> TargetReply:
        msgs: list[Message] = [{"role": m["role"], "content": m["content"]} for m in messages]
        try:
            if self._threads and not inspect.iscoroutinefunction(self._fn):
                result: Any = await asyncio.to_thread(self._fn, msgs)
            else:
                result = self._fn(msgs)
            if inspect.isawaitable(result):
                result = await result
        except Exception as exc:
            raise TargetCallError(f"{type(exc).__name__}: {exc}") from None
        if isinstance(result, TargetReply):
            return result
        if isinstance(result, str):
            return TargetReply(text=result)
        raise TargetCallError(
            f"callable target returned {type(result).__name__}, expected str or TargetReply"
        )

    async def aclose(self) -> None:
        return None


class ReplayTarget:
    """Replays the catalogue's recorded assistant turns: the agent of the catalogue.

    With the scripted user, the transcript is identical to the case. If the user side
    has diverged from the recorded user turns (a simulated user), or the conversation
    runs past the recorded turns, the call fails with a :class:`TargetCallError`
    naming the turn: replay has nothing honest to say there.
    """

    spec = "replay"

    @property
    def fingerprint(self) -> str:
        return fingerprint_of({"spec": "replay"})

    async def reply(self, messages: Sequence[Message], context: TurnContext) -> TargetReply:
        case: Case = context.case
        turn = context.turn
        if turn >= len(case.turns) or case.turns[turn].role != "assistant":
            raise TargetCallError(f"replay: case {case.id} has no recorded assistant turn {turn}")
        for i, m in enumerate(messages):
            recorded = case.turns[i]
            if m["role"] != recorded.role or m["content"] != recorded.text:
                raise TargetCallError(
                    f"replay: case {case.id} diverged from the recorded conversation at turn {i}"
                )
        return TargetReply(text=case.turns[turn].text)

    async def aclose(self) -> None:
        return None


def make_target(
    spec: str | Target | TargetFunction,
    *,
    system: str | None = None,
    **kwargs: Any,
) -> Target:
    """A target from a spec string, a target object, or a Python callable.

    Specs: ``replay``, ``anthropic:MODEL``, ``openai:URL:MODEL``. ``system`` is the
    system prompt of a model target (ignored by ``replay``); other keyword arguments
    go to the adapter (``max_tokens``, ``temperature``, ``timeout``, ``max_retries``,
    ...). An object with ``reply`` and ``fingerprint`` is returned as is; any other
    callable becomes a :class:`CallableTarget`. Raises :class:`RunnerError` for an
    unknown spec or a missing API key.
    """
    if not isinstance(spec, str):
        if hasattr(spec, "reply") and hasattr(spec, "fingerprint"):
            return spec  # type: ignore[return-value]
        if callable(spec):
            return CallableTarget(spec, **kwargs)
        raise RunnerError(f"target: cannot use {spec!r}")
    if spec == "replay":
        return ReplayTarget()
    kind, _, rest = spec.partition(":")
    if kind == "anthropic":
        from evalkit.runner._anthropic import AnthropicTarget

        return AnthropicTarget(rest, system=system, **kwargs)
    if kind == "openai":
        from evalkit.runner._openai import OpenAITarget, parse_openai_spec

        url, model = parse_openai_spec(rest)
        return OpenAITarget(url, model, system=system, **kwargs)
    raise RunnerError(
        f"target: unknown spec {spec!r}; use replay, anthropic:MODEL or openai:URL:MODEL"
    )
