"""The ``anthropic`` judge backend: the Messages API through ``anthropic.AsyncAnthropic``.

* Credentials: ``ANTHROPIC_API_KEY`` (or ``api_key=``); without one the backend
  refuses to run with a :class:`JudgeError` before any request, and the SDK is never
  left to look for other credentials. ``ANTHROPIC_BASE_URL`` is honoured by the SDK.
  The key is scrubbed from every stored response and error message.
* Answers: forced tool use of ``record_scores`` with ``strict: true`` and
  ``tool_choice`` (``mode="tool"``, the default) or JSON-schema structured output
  (``mode="json"``, for models that think before answering). The system part of the
  framing carries ``cache_control`` so the fixed prefix is cached.
* Retries: the SDK's own retries are off (``max_retries=0``) so that every attempt is
  counted here. 408, 409, 429, 5xx and 529 and timeouts/connection errors are retried
  up to ``max_retries`` times, waiting what ``retry-after``/``retry-after-ms`` says or
  else exponential backoff (0.5 s doubling, capped at 8 s); both with jitter.
* Cost and the pinned-model rule (:func:`is_pinned`, refused floating aliases when
  ``for_gate`` is true) live in :mod:`evalkit.judge._pricing`. Batch results cost half.
* Batches: :meth:`AnthropicBackend.submit_batch` (custom_id = request key),
  :meth:`batch_status`, :meth:`batch_results`; the orchestrator stores the batch id
  in the ledger before polling so a restarted run resumes the same batch.
"""

from __future__ import annotations

import asyncio
import os
import time
import warnings
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import anthropic
import httpx2

from evalkit.errors import JudgeError
from evalkit.judge._answer import (
    TOOL_DESCRIPTION,
    TOOL_NAME,
    AnswerError,
    answer_schema,
    loads_strict,
    looks_like_refusal,
)
from evalkit.judge._base import (
    RETRY_STATUSES,
    CostEstimate,
    Reply,
    Usage,
    char_estimate,
    parse_retry_after,
    retry_delay,
    scrub,
)
from evalkit.judge._pricing import (
    BATCH_DISCOUNT,
    PRICES,
    PRICES_CHECKED,
    Price,
    is_pinned,
    price_for,
)
from evalkit.judge._prompt import JudgeParams, JudgeRequest

T = TypeVar("T")
__all__ = [
    "BATCH_DISCOUNT",
    "PRICES",
    "PRICES_CHECKED",
    "AnthropicBackend",
    "Price",
    "is_pinned",
    "price_for",
]

#: Output tokens assumed per dimension when estimating cost before a run.
OUTPUT_TOKENS_PER_DIMENSION = 200


class AnthropicBackend:
    """Judge through the Anthropic Messages API (see the module docstring)."""

    kind = "anthropic"
    networked = True

    def __init__(
        self,
        model: str,
        *,
        params: JudgeParams | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        http_client: httpx2.AsyncClient | None = None,
        timeout: float = 120.0,
        max_retries: int = 4,
        max_retry_wait: float = 120.0,
        backoff_base: float = 0.5,
        for_gate: bool = False,
        price: Price | None = None,
    ) -> None:
        if not model:
            raise JudgeError("anthropic judge: no model id (use anthropic:MODEL)")
        if for_gate and not is_pinned(model):
            raise JudgeError(
                f"anthropic judge: {model!r} is a floating alias, not a pinned model id; "
                "the gate needs a pinned id such as claude-sonnet-4-5-20250929 or "
                "claude-sonnet-4-6"
            )
        self.model = model
        self.spec = f"anthropic:{model}"
        self.params = params or JudgeParams()
        if self.params.mode not in ("tool", "json"):
            raise JudgeError(f"anthropic judge: unknown mode {self.params.mode!r}")
        self._api_key = api_key if api_key is not None else os.environ.get("ANTHROPIC_API_KEY")
        self._base_url = base_url
        self._http_client = http_client
        self._timeout = timeout
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait
        self.backoff_base = backoff_base
        self.price = price or price_for(model)
        self.batch_mode = False
        self._client: anthropic.AsyncAnthropic | None = None
        if self.price is None:
            warnings.warn(
                f"anthropic judge: no price known for {model!r}; cost_usd will be None",
                stacklevel=2,
            )

    # -- plumbing -----------------------------------------------------------------

    def client(self) -> anthropic.AsyncAnthropic:
        """The SDK client, created on first use; JudgeError if there is no API key."""
        if self._client is None:
            if not (self._api_key or "").strip():
                raise JudgeError(
                    "anthropic judge: no API key; set ANTHROPIC_API_KEY "
                    "(it is read from the environment and never written anywhere)"
                )
            self._client = anthropic.AsyncAnthropic(
                api_key=self._api_key,
                base_url=self._base_url,
                http_client=self._http_client,
                timeout=self._timeout,
                max_retries=0,
            )
        return self._client

    def _scrub(self, text: str) -> str:
        return scrub(text, [self._api_key])

    async def aclose(self) -> None:
        """Close the SDK client (a caller-supplied ``http_client`` is left to its owner)."""
        if self._client is not None and self._http_client is None:
            await self._client.close()
        self._client = None

    async def _retrying(self, fn: Callable[[], Awaitable[T]]) -> tuple[T, int]:
        """Run ``fn`` with the retry policy; return (result, attempts) or raise the last error."""
        attempt = 0
        while True:
            attempt += 1
            try:
                return await fn(), attempt
            except anthropic.APIStatusError as exc:
                if exc.status_code not in RETRY_STATUSES or attempt > self.max_retries:
                    raise _Failed(self._describe(exc), attempt) from None
                wait = parse_retry_after(dict(exc.response.headers))
            except anthropic.APIConnectionError as exc:  # includes APITimeoutError
                if attempt > self.max_retries:
                    raise _Failed(self._describe(exc), attempt) from None
                wait = None
            except anthropic.APIError as exc:  # e.g. a response that does not validate
                raise _Failed(self._describe(exc), attempt) from None
            except ValueError as exc:  # a 200 whose body is not JSON: retried like a drop
                if attempt > self.max_retries:
                    raise _Failed(self._scrub(f"malformed response: {exc}"), attempt) from None
                wait = None
            await asyncio.sleep(
                retry_delay(attempt, wait, base=self.backoff_base, max_wait=self.max_retry_wait)
            )

    def _describe(self, exc: anthropic.APIError) -> str:
        if isinstance(exc, anthropic.APIStatusError):
            return self._scrub(f"HTTP {exc.status_code} {type(exc).__name__}: {exc.message}")
        if isinstance(exc, anthropic.APITimeoutError):
            return f"timeout after {self._timeout:g} s"
        return self._scrub(f"{type(exc).__name__}: {exc.message}")

    def message_params(self, req: JudgeRequest) -> dict[str, Any]:
        """The Messages API body for ``req`` (also the ``params`` of a batch item)."""
        schema = answer_schema(req.dimension_names, req.bins)
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.params.max_tokens,
            "system": [
                {"type": "text", "text": req.system, "cache_control": {"type": "ephemeral"}}
            ],
            "messages": [{"role": "user", "content": req.user}],
        }
        if self.params.mode == "tool":
            body["tools"] = [
                {
                    "name": TOOL_NAME,
                    "description": TOOL_DESCRIPTION,
                    "input_schema": schema,
                    "strict": True,
                }
            ]
            body["tool_choice"] = {
                "type": "tool",
                "name": TOOL_NAME,
                "disable_parallel_tool_use": True,
            }
        else:
            body["output_config"] = {"format": {"type": "json_schema", "schema": schema}}
        if self.params.temperature is not None:
            body["temperature"] = self.params.temperature
        return body

    def cost(self, usage: Usage, *, batch: bool = False) -> float | None:
        if self.price is None:
            return None
        p = self.price
        usd = (
            usage.input_tokens * p.input
            + usage.output_tokens * p.output
            + usage.cache_creation_tokens * p.cache_write
            + usage.cache_read_tokens * p.cache_read
        ) / 1e6
        return usd * (BATCH_DISCOUNT if batch else 1.0)

    # -- calls --------------------------------------------------------------------

    async def call(self, request: JudgeRequest) -> Reply:
        """One logical call (with transport retries); never raises for API errors."""
        client = self.client()
        body = self.message_params(request)
        temperature = body.pop("temperature", None)
        extra = {"temperature": temperature} if temperature is not None else None
        t0 = time.monotonic()
        try:
            msg, attempts = await self._retrying(
                lambda: client.messages.create(**body, extra_body=extra)
            )
        except _Failed as failed:
            return Reply(
                "error",
                error=failed.message,
                attempts=failed.attempts,
                latency_s=time.monotonic() - t0,
            )
        return self.reply_from_message(msg, attempts=attempts, latency_s=time.monotonic() - t0)

    def reply_from_message(
        self, msg: Any, *, attempts: int, latency_s: float, batch: bool = False
    ) -> Reply:
        """Classify a Message (see :meth:`_classify`); never raises. A ``msg`` that is not a
        proper Message (no usage, no content, an error object sent with HTTP 200) becomes
        an ``error`` reply, recorded and counted, so a re-run retries it."""
        try:
            return self._classify(msg, attempts=attempts, latency_s=latency_s, batch=batch)
        except (AttributeError, TypeError, ValueError) as exc:
            error = self._scrub(f"malformed message: {type(exc).__name__}: {exc}")
            return Reply("error", error=error, attempts=attempts, latency_s=latency_s)

    def _classify(
        self, msg: anthropic.types.Message, *, attempts: int, latency_s: float, batch: bool = False
    ) -> Reply:
        """Classify a Message: refusal, an answer payload, or an answer with a problem."""
        raw = self._scrub(msg.model_dump_json())
        u = msg.usage
        usage = Usage(
            input_tokens=u.input_tokens,
            output_tokens=u.output_tokens,
            cache_read_tokens=u.cache_read_input_tokens or 0,
            cache_creation_tokens=u.cache_creation_input_tokens or 0,
        )
        usage.cost_usd = self.cost(usage, batch=batch)
        common: dict[str, Any] = {
            "raw": raw,
            "attempts": attempts,
            "usage": usage,
            "latency_s": latency_s,
            "response_model": msg.model,
        }
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

    async def estimate(self, requests: Sequence[JudgeRequest]) -> CostEstimate:
        """Estimate input tokens with ``messages.count_tokens`` on a sample, else chars/4.

        Up to 8 requests spread over the plan are counted; the tokens-per-character
        ratio they give is applied to all. Output is assumed to be
        :data:`OUTPUT_TOKENS_PER_DIMENSION` per dimension. No cache discount is assumed.
        """
        if not requests:
            return CostEstimate(0, 0, 0.0, "nothing to send")
        chars_in, out = char_estimate(requests, OUTPUT_TOKENS_PER_DIMENSION)
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
                    lambda b=body: client.messages.count_tokens(**b)  # type: ignore[misc]
                )
                counted += res.input_tokens
            sample_chars = sum((len(r.system) + len(r.user)) // 4 for r in sample)
            inp = round(chars_in * counted / max(sample_chars, 1))
            method = (
                f"messages.count_tokens on {len(sample)} of {len(requests)} request(s), "
                "scaled by characters"
            )
        except _Failed as failed:
            inp = chars_in
            method = f"characters / 4 (count_tokens failed: {failed.message})"
        usage = Usage(input_tokens=inp, output_tokens=out)
        method += f"; {OUTPUT_TOKENS_PER_DIMENSION} output tokens per dimension; no cache discount"
        return CostEstimate(inp, out, self.cost(usage, batch=self.batch_mode), method)

    # -- batches ------------------------------------------------------------------

    async def submit_batch(self, requests: Sequence[JudgeRequest]) -> str:
        """Create a Message Batch (custom_id = request key); return its id."""
        client = self.client()
        items: list[Any] = [
            {"custom_id": r.key, "params": self.message_params(r)} for r in requests
        ]
        try:
            batch, _ = await self._retrying(lambda: client.messages.batches.create(requests=items))
        except _Failed as failed:
            raise JudgeError(
                f"anthropic judge: batch submission failed: {failed.message}"
            ) from None
        return batch.id

    async def batch_status(self, batch_id: str) -> str:
        """``in_progress``, ``canceling`` or ``ended``."""
        client = self.client()
        try:
            batch, _ = await self._retrying(lambda: client.messages.batches.retrieve(batch_id))
        except _Failed as failed:
            raise JudgeError(f"anthropic judge: batch {batch_id}: {failed.message}") from None
        return str(batch.processing_status)

    async def batch_results(self, batch_id: str) -> dict[str, Reply]:
        """Replies of an ended batch by custom_id (request key)."""
        client = self.client()
        out: dict[str, Reply] = {}

        async def collect() -> None:
            out.clear()
            decoder = await client.messages.batches.results(batch_id)
            async for item in decoder:
                res = item.result
                if res.type == "succeeded":
                    out[item.custom_id] = self.reply_from_message(
                        res.message, attempts=1, latency_s=0.0, batch=True
                    )
                elif res.type == "errored":
                    detail = self._scrub(res.error.model_dump_json())
                    out[item.custom_id] = Reply("error", error=f"batch item errored: {detail}")
                else:
                    out[item.custom_id] = Reply("error", error=f"batch item {res.type}")

        try:
            await self._retrying(collect)
        except _Failed as failed:
            raise JudgeError(f"anthropic judge: batch {batch_id}: {failed.message}") from None
        return out


class _Failed(Exception):
    """The retry policy gave up; ``message`` is scrubbed."""

    def __init__(self, message: str, attempts: int) -> None:
        super().__init__(message)
        self.message = message
        self.attempts = attempts
