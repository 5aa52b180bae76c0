"""The ``anthropic`` judge backend: the Messages API through ``anthropic.AsyncAnthropic``.

(About 400 lines, one concept: one call and its retries; batches, estimates, replies and
HTTP bounds are modules of their own, ``_anthropic_*``.)

* Credentials: ``ANTHROPIC_API_KEY`` (or ``api_key=``); without one the backend
  refuses to run with a :class:`JudgeError` before any request, and the SDK is never
  left to look for other credentials. ``ANTHROPIC_BASE_URL`` is honoured by the SDK.
  The key is scrubbed from every stored response and error message.
* Answers: forced tool use of ``record_scores`` with ``strict: true`` and
  ``tool_choice`` (``mode="tool"``, the default) or JSON-schema structured output
  (``mode="json"``, for models that think before answering). The system part of the
  framing carries ``cache_control`` so the fixed prefix is cached.
* Traffic: every attempt of a direct Messages call waits for its turn in
  :attr:`AnthropicBackend.traffic` (:mod:`evalkit.traffic`: AIMD window, pacing to the
  ``anthropic-ratelimit-*`` headers and the user's limits); a 429 is flow control, sent
  again when its turn comes without using the retry budget, until the run's deadline.
* Retries: the SDK's own retries are off (``max_retries=0``) so that every attempt is
  counted here. 408, 409, 5xx and 529 and timeouts/connection errors (and 429 outside
  the direct call path) are retried up to ``max_retries`` times, waiting what
  ``retry-after``/``retry-after-ms`` says or else exponential backoff (0.5 s doubling,
  capped at 8 s); both with jitter. An attempt that has no complete answer after
  ``call_deadline`` seconds of wall clock (a server trickling bytes so that no read
  timeout fires) is abandoned and retried like a timeout. After
  :data:`~evalkit.judge._base.UNREACHABLE_AFTER` failed connections in a row (refused,
  DNS, connect timeout) :class:`ServerUnreachable` stops the run.
* Usage (a Message is read in :mod:`evalkit.judge._anthropic_reply`): the token
  counts are read strictly (non-negative ints; see
  :func:`~evalkit.judge._base.token_count`). A Message whose usage is missing, null,
  not an object, or holds a count that is negative, fractional, a string or a bool is
  an ``error`` reply naming the field: it cannot be costed, so it is neither final nor
  counted as free; a re-run asks again.
* Bounds (:mod:`evalkit.judge._bounds`): the SDK gets a
  :class:`~evalkit.judge._anthropic_http.BoundedAsyncClient`, which reads every body
  within :data:`~evalkit.judge._bounds.MAX_WIRE_BYTES` on the wire and
  :data:`~evalkit.judge._bounds.MAX_BODY_BYTES` inflated. A body it refuses is an
  ``error`` reply at once (not retried: the server answered, so the call may be billed;
  its cost is unknown). A body nested deeper than
  :data:`~evalkit.judge._bounds.MAX_JSON_DEPTH`, or a Message whose ``model`` is not a
  string of at most :data:`~evalkit.judge._bounds.MAX_MODEL_CHARS`, is an answer with
  a problem (re-asked, then ``unparseable``). A caller-supplied ``http_client`` is used
  as given: its bounds are its owner's (the depth limit still holds).
* Estimates: :meth:`AnthropicBackend.estimate` is local (characters of the system
  text, the transcript and the tool schema / :data:`~evalkit.judge._base.CHARS_PER_TOKEN`)
  and sends nothing; :meth:`AnthropicBackend.exact_estimate` calls
  ``messages.count_tokens`` and is used only once sending is consented to.
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
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anthropic
import httpx2

from evalkit.errors import JudgeError
from evalkit.judge._answer import (
    TOOL_DESCRIPTION,
    TOOL_NAME,
    answer_schema,
)
from evalkit.judge._anthropic_batches import MessageBatches, _Failed
from evalkit.judge._anthropic_estimate import OUTPUT_TOKENS_PER_DIMENSION, CostEstimates
from evalkit.judge._anthropic_http import BoundedAsyncClient
from evalkit.judge._anthropic_reply import MessageReplies
from evalkit.judge._base import (
    CALL_DEADLINE_S,
    CHARS_PER_TOKEN,
    CONNECT_TIMEOUT_S,
    RETRY_STATUSES,
    Reachability,
    Reply,
    ServerUnreachable,
    Usage,
    parse_retry_after,
    retry_delay,
    scrub,
)
from evalkit.judge._bounds import BodyRefused, depth_problem
from evalkit.judge._pricing import (
    BATCH_DISCOUNT,
    PRICES,
    PRICES_CHECKED,
    Price,
    is_pinned,
    price_for,
)
from evalkit.judge._prompt import JudgeParams, JudgeRequest
from evalkit.traffic import Charge, DeadlinePassed, Ticket, TrafficController

T = TypeVar("T")
__all__ = [
    "BATCH_DISCOUNT",
    "OUTPUT_TOKENS_PER_DIMENSION",
    "PRICES",
    "PRICES_CHECKED",
    "AnthropicBackend",
    "Price",
    "ServerUnreachable",
    "is_pinned",
    "price_for",
]


class AnthropicBackend(CostEstimates, MessageBatches, MessageReplies):
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
        call_deadline: float = CALL_DEADLINE_S,
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
        if not call_deadline > 0:
            raise JudgeError(f"anthropic judge: call deadline {call_deadline!r} s is not positive")
        self.call_deadline = call_deadline
        self._client: anthropic.AsyncAnthropic | None = None
        self._reach: Reachability | None = None
        #: The run's traffic controller (the sender replaces it with one per run).
        self.traffic = TrafficController()
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
            timeout = httpx2.Timeout(self._timeout, connect=self._connect_timeout)
            self._client = anthropic.AsyncAnthropic(
                api_key=self._api_key,
                base_url=self._base_url,
                http_client=self._http_client or BoundedAsyncClient(timeout=timeout),
                timeout=timeout,
                max_retries=0,
            )
            self._reach = Reachability(str(self._client.base_url))
        return self._client

    @property
    def _connect_timeout(self) -> float:
        return min(self._timeout, CONNECT_TIMEOUT_S)

    def _scrub(self, text: str) -> str:
        return scrub(text, [self._api_key])

    async def aclose(self) -> None:
        """Close the SDK client (a caller-supplied ``http_client`` is left to its owner)."""
        if self._client is not None and self._http_client is None:
            await self._client.close()
        self._client = None
        self._reach = None

    async def _retrying(
        self,
        fn: Callable[[], Awaitable[Any]],
        deadline: float | None = None,
        *,
        charge: Charge | None = None,
    ) -> tuple[Any, int]:
        """Run ``fn`` with the retry policy; return (result, attempts) or raise the last error.

        ``deadline``: wall-clock seconds per attempt (None: no bound beyond the timeouts).
        Raises :class:`ServerUnreachable` when the dead-server rule trips.

        With ``charge`` (a direct Messages call) every attempt goes through the traffic
        controller: ``fn`` returns the SDK's raw response (headers, then ``parse()``), a
        429 waits for its turn and is sent again without using the ``max_retries``
        budget (which other transient failures use), and the run's deadline ends the
        wait with :class:`_Failed`. The result is then ``(message, ticket)``, or
        ``(problem, ticket)`` when the body is nested too deep to be parsed
        (:func:`~evalkit.judge._bounds.depth_problem`).
        """
        self.client()
        reach = self._reach
        assert reach is not None
        traffic = self.traffic
        attempt = failures = 0
        while True:
            reach.check()
            ticket = None
            if charge is not None:
                try:
                    ticket = await traffic.acquire(charge)
                except DeadlinePassed as exc:
                    raise _Failed(str(exc), attempt) from None
                try:
                    reach.check()  # it may have tripped while this call waited
                except ServerUnreachable:
                    self._release(ticket, None)
                    raise
            attempt += 1
            headers: dict[str, str] | None = None
            try:
                result = await (fn() if deadline is None else asyncio.wait_for(fn(), deadline))
                if ticket is not None:
                    headers = dict(result.headers)
                    too_deep = depth_problem(result.http_response.content)
                    result = (too_deep or await result.parse(), ticket)
            except anthropic.APIStatusError as exc:
                reach.reached()
                headers = dict(exc.response.headers)
                wait = parse_retry_after(headers)
                if ticket is not None and exc.status_code == 429:
                    traffic.rate_limited(ticket, headers, wait)
                    continue  # flow control: wait for the turn, outside the retry budget
                failures += 1
                if exc.status_code not in RETRY_STATUSES or failures > self.max_retries:
                    self._release(ticket, headers)
                    raise _Failed(self._describe(exc), attempt) from None
            except anthropic.APIConnectionError as exc:  # includes APITimeoutError
                self._release(ticket, None)
                if isinstance(exc.__cause__, BodyRefused):  # answered, but not readable
                    reach.reached()
                    raise _Failed(self._scrub(str(exc.__cause__)), attempt, answered=True) from None
                if isinstance(exc.__cause__, (httpx2.ConnectError, httpx2.ConnectTimeout)):
                    reach.failed(self._describe(exc))  # the request never left
                else:
                    reach.reached()
                failures += 1
                if failures > self.max_retries:
                    raise _Failed(self._describe(exc), attempt) from None
                wait = None
            except TimeoutError:  # the wall-clock deadline of the attempt
                self._release(ticket, None)
                reach.reached()
                failures += 1
                if failures > self.max_retries:
                    message = f"no complete answer within the call deadline of {deadline:g} s"
                    raise _Failed(message, attempt) from None
                wait = None
            except anthropic.APIError as exc:  # e.g. a response that does not validate
                self._release(ticket, headers)
                reach.reached()
                raise _Failed(self._describe(exc), attempt) from None
            except RecursionError:  # a body nested too deep for the decoder (not retried)
                self._release(ticket, headers)
                reach.reached()
                raise _Failed(
                    "response nested too deep to decode", attempt, answered=True
                ) from None
            except ValueError as exc:  # a 200 whose body is not JSON: retried like a drop
                self._release(ticket, headers)
                reach.reached()
                failures += 1
                if failures > self.max_retries:
                    raise _Failed(self._scrub(f"malformed response: {exc}"), attempt) from None
                wait = None
            else:
                reach.reached()
                if ticket is not None:
                    traffic.release(ticket, headers, ok=True)
                return result, attempt
            self._release(ticket, headers)
            delay = retry_delay(
                failures, wait, base=self.backoff_base, max_wait=self.max_retry_wait
            )
            try:
                await (traffic.sleep(delay) if charge is not None else asyncio.sleep(delay))
            except DeadlinePassed as exc:
                raise _Failed(str(exc), attempt) from None

    def _release(self, ticket: Ticket | None, headers: dict[str, str] | None) -> None:
        """A failed attempt leaves the controller (its tokens given back); idempotent."""
        if ticket is not None and ticket.open:
            self.traffic.release(ticket, headers, ok=False)

    def _describe(self, exc: anthropic.APIError) -> str:
        if isinstance(exc, anthropic.APIStatusError):
            return self._scrub(f"HTTP {exc.status_code} {type(exc).__name__}: {exc.message}")
        if isinstance(exc.__cause__, httpx2.ConnectTimeout):
            return f"connect timeout after {self._connect_timeout:g} s"
        if isinstance(exc, anthropic.APITimeoutError):
            return f"timeout after {self._timeout:g} s"
        cause = f" ({type(exc.__cause__).__name__}: {exc.__cause__})" if exc.__cause__ else ""
        return self._scrub(f"{type(exc).__name__}: {exc.message}{cause}")

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
        """One logical call (with transport retries); never raises for API errors, only
        :class:`ServerUnreachable` once the server is taken for dead."""
        client = self.client()
        body = self.message_params(request)
        temperature = body.pop("temperature", None)
        extra = {"temperature": temperature} if temperature is not None else None
        charge = Charge(
            input_tokens=self._input_chars(request) // CHARS_PER_TOKEN,
            output_tokens=self.params.max_tokens,
        )
        t0 = time.monotonic()
        try:
            (msg, ticket), attempts = await self._retrying(
                lambda: client.messages.with_raw_response.create(**body, extra_body=extra),
                self.call_deadline,
                charge=charge,
            )
        except _Failed as failed:
            return Reply(
                "error",
                error=failed.message,
                attempts=failed.attempts,
                latency_s=time.monotonic() - t0,
                usage=Usage(cost_usd=None) if failed.answered else Usage(),
            )
        if isinstance(msg, str):  # the body is nested too deep to be read
            latency = time.monotonic() - t0
            problem = f"response body: {msg}"
            usage = Usage(cost_usd=None)  # its usage block cannot be read
            return Reply(
                "answer", problem=problem, attempts=attempts, latency_s=latency, usage=usage
            )
        reply = self.reply_from_message(msg, attempts=attempts, latency_s=time.monotonic() - t0)
        if reply.kind != "error":  # an error reply's usage is unknown: keep the estimate
            # Anthropic's input-tokens-per-minute excludes cache reads (evalkit.traffic).
            counted = reply.usage.input_tokens + reply.usage.cache_creation_tokens
            self.traffic.correct(ticket, counted, reply.usage.output_tokens)
        return reply
