"""How the ``anthropic`` judge backend reads a Message: refusal, answer, or a problem.

:class:`MessageReplies` is mixed into :class:`~evalkit.judge.anthropic.AnthropicBackend`
and used for direct calls and batch results alike. A Message whose usage cannot be
trusted is an ``error`` (its cost is unknown; a re-run asks again); one whose ``model``
is not a string of at most :data:`~evalkit.judge._bounds.MAX_MODEL_CHARS` is an answer
with a problem (it is never written to the ledger as the response model).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import anthropic

from evalkit.judge._answer import TOOL_NAME, AnswerError, loads_strict, looks_like_refusal
from evalkit.judge._base import MISSING, Reply, Usage, UsageError, kind_of, token_count
from evalkit.judge._bounds import MAX_MODEL_CHARS

if TYPE_CHECKING:
    from evalkit.judge._prompt import JudgeParams


class MessageReplies:
    """Classify Messages into :class:`~evalkit.judge._base.Reply` (see the module
    docstring)."""

    if TYPE_CHECKING:  # provided by AnthropicBackend
        params: JudgeParams

        def _scrub(self, text: str) -> str: ...
        def cost(self, usage: Usage, *, batch: bool = False) -> float | None: ...

    def reply_from_message(
        self, msg: Any, *, attempts: int, latency_s: float, batch: bool = False
    ) -> Reply:
        """Classify a Message (see :meth:`_classify`); never raises. A ``msg`` that is not a
        proper Message (no content, an error object sent with HTTP 200, a usage block
        that cannot be trusted) becomes an ``error`` reply, recorded and counted, so a
        re-run retries it."""
        try:
            return self._classify(msg, attempts=attempts, latency_s=latency_s, batch=batch)
        except (AttributeError, TypeError, ValueError) as exc:
            error = self._scrub(f"malformed message: {type(exc).__name__}: {exc}")
            return Reply("error", error=error, attempts=attempts, latency_s=latency_s)

    def _classify(
        self, msg: anthropic.types.Message, *, attempts: int, latency_s: float, batch: bool = False
    ) -> Reply:
        """Classify a Message: refusal, an answer payload, or an answer with a problem."""
        with warnings.catch_warnings():  # a field of the wrong type is reported below
            warnings.simplefilter("ignore")
            raw = self._scrub(msg.model_dump_json())
        try:
            usage = self._usage(msg)
        except UsageError as exc:
            error = self._scrub(f"malformed usage: {exc}")  # tokens and cost unknown
            return Reply(
                "error",
                error=error,
                raw=raw,
                attempts=attempts,
                latency_s=latency_s,
                usage=Usage(cost_usd=None),
            )
        usage.cost_usd = self.cost(usage, batch=batch)
        common: dict[str, Any] = {
            "raw": raw,
            "attempts": attempts,
            "usage": usage,
            "latency_s": latency_s,
        }
        model = msg.model
        if not isinstance(model, str) or len(model) > MAX_MODEL_CHARS:
            what = f"{len(model)} characters" if isinstance(model, str) else kind_of(model)
            return Reply("answer", problem=f"response model is {what}, not a model id", **common)
        common["response_model"] = model
        if msg.stop_reason == "refusal":
            return Reply("refusal", **common)
        texts = "\n".join(b.text for b in msg.content if b.type == "text").strip()
        if self.params.mode == "json":
            try:
                return Reply("answer", payload=loads_strict(texts), **common)
            except AnswerError as exc:
                if looks_like_refusal(texts):
                    return Reply("refusal", **common)
                return Reply("answer", problem=str(exc), **common)
        tools = [b for b in msg.content if b.type == "tool_use"]
        if len(tools) == 1 and tools[0].name == TOOL_NAME:
            return Reply("answer", payload=tools[0].input, **common)
        if not tools:
            if texts and looks_like_refusal(texts):
                return Reply("refusal", **common)
            return Reply("answer", problem=f"no {TOOL_NAME} tool call in the answer", **common)
        names = [t.name for t in tools]
        return Reply("answer", problem=f"expected one {TOOL_NAME} call, got {names}", **common)

    @staticmethod
    def _usage(msg: Any) -> Usage:
        """The token counts of ``msg``, strictly; :class:`UsageError` names the bad field."""
        u = getattr(msg, "usage", None)
        if isinstance(u, dict):
            fields: dict[str, Any] = u
        elif isinstance(u, anthropic.BaseModel):
            fields = {k: getattr(u, k) for k in u.model_fields_set}
            fields.update(u.model_extra or {})
        else:
            raise UsageError(f"usage is {kind_of(u)}, not an object")

        def count(name: str, required: bool = True) -> int:
            return token_count(fields.get(name, MISSING), f"usage.{name}", required=required)

        return Usage(
            input_tokens=count("input_tokens"),
            output_tokens=count("output_tokens"),
            cache_read_tokens=count("cache_read_input_tokens", required=False),
            cache_creation_tokens=count("cache_creation_input_tokens", required=False),
        )
