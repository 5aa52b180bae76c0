"""What an ``anthropic`` judge run will cost, before anything is sent.

:class:`CostEstimates` is mixed into :class:`~evalkit.judge.anthropic.AnthropicBackend`:
:meth:`~CostEstimates.estimate` is local (it runs before the user agrees to send), and
:meth:`~CostEstimates.exact_estimate` asks ``messages.count_tokens`` once they have.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from evalkit.judge._anthropic_batches import _Failed
from evalkit.judge._base import (
    CHARS_PER_TOKEN,
    MISSING,
    CostEstimate,
    Usage,
    UsageError,
    dumps_body,
    token_count,
)
from evalkit.judge._prompt import JudgeRequest

if TYPE_CHECKING:
    import anthropic

#: Output tokens assumed per dimension when estimating cost before a run.
OUTPUT_TOKENS_PER_DIMENSION = 200
_LOCAL = f"characters / {CHARS_PER_TOKEN}"


class CostEstimates:
    """Local and counted cost estimates (see the module docstring)."""

    if TYPE_CHECKING:  # provided by AnthropicBackend
        batch_mode: bool
        call_deadline: float | None

        def client(self) -> anthropic.AsyncAnthropic: ...
        def message_params(self, req: JudgeRequest) -> dict[str, Any]: ...
        def cost(self, usage: Usage, *, batch: bool = False) -> float | None: ...
        async def _retrying(
            self, fn: Callable[[], Awaitable[Any]], deadline: float | None = None
        ) -> tuple[Any, int]: ...

    def _input_chars(self, req: JudgeRequest) -> int:
        """Characters the model reads for ``req``: system, transcript and answer schema."""
        body = self.message_params(req)
        schema = body.get("tools") or body.get("output_config")
        return len(req.system) + len(req.user) + len(dumps_body(schema))

    def _costed(self, inp: int, out: int, method: str, *, local: bool) -> CostEstimate:
        usage = Usage(input_tokens=inp, output_tokens=out)
        method += f"; {OUTPUT_TOKENS_PER_DIMENSION} output tokens per dimension; no cache discount"
        return CostEstimate(inp, out, self.cost(usage, batch=self.batch_mode), method, local)

    async def estimate(self, requests: Sequence[JudgeRequest]) -> CostEstimate:
        """A local estimate; nothing is sent (it runs before the user agrees to send).

        Input: characters of the system text, the transcript and the tool schema (or the
        JSON output schema), divided by :data:`~evalkit.judge._base.CHARS_PER_TOKEN`.
        Output: :data:`OUTPUT_TOKENS_PER_DIMENSION` per dimension. No cache discount.
        """
        inp = sum(self._input_chars(r) // CHARS_PER_TOKEN for r in requests)
        out = sum(OUTPUT_TOKENS_PER_DIMENSION * len(r.dimensions) for r in requests)
        return self._costed(inp, out, _LOCAL, local=True)

    async def exact_estimate(self, requests: Sequence[JudgeRequest]) -> CostEstimate:
        """Input tokens counted by ``messages.count_tokens`` on a sample of the requests.

        This sends those requests' transcripts to the counting endpoint: call it only
        once the user has agreed to that. Up to 8 requests spread over the plan are
        counted and their tokens-per-character ratio is applied to all. If counting
        fails, the local :meth:`estimate` is returned, saying why.
        """
        local = await self.estimate(requests)
        if not requests:
            return local
        step = max(1, len(requests) // 8)
        sample = list(requests)[::step][:8]
        client = self.client()
        try:
            counted = 0
            for req in sample:
                body = self.message_params(req)
                body.pop("max_tokens")
                body.pop("temperature", None)
                res, _ = await self._retrying(
                    lambda b=body: client.messages.count_tokens(**b),  # type: ignore[misc]
                    self.call_deadline,
                )
                counted += token_count(getattr(res, "input_tokens", MISSING), "input_tokens")
        except (_Failed, UsageError) as exc:
            reason = exc.message if isinstance(exc, _Failed) else f"malformed count: {exc}"
            method = f"{_LOCAL} (count_tokens failed: {reason})"
            return self._costed(local.input_tokens, local.output_tokens, method, local=True)
        sample_chars = sum(self._input_chars(r) for r in sample)
        chars = sum(self._input_chars(r) for r in requests)
        inp = round(chars * counted / max(sample_chars, 1))
        method = (
            f"messages.count_tokens on {len(sample)} of {len(requests)} request(s), "
            "scaled by characters"
        )
        return self._costed(inp, local.output_tokens, method, local=False)
