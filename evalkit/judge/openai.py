"""The ``openai`` judge backend: any OpenAI-compatible chat-completions server.

Spec ``openai:URL:MODEL``, e.g. ``openai:http://127.0.0.1:8080/v1:qwen2.5-7b-instruct``
(llama.cpp, vLLM, Ollama). The URL is ``scheme://host[:port][/path]`` and the model is
everything after the next colon, so model names may contain colons
(``openai:http://localhost:11434/v1:llama3.1:8b``).

Each request is ``POST {URL}/chat/completions`` with a system and a user message and
``response_format={"type": "json_schema", "json_schema": {"name": "record_scores",
"strict": true, "schema": ...}}``; the message content is parsed strictly as JSON.
A ``refusal`` field in the message or ``finish_reason == "content_filter"`` is a
refusal. ``OPENAI_API_KEY`` is sent as a bearer token if set (local servers need
none) and scrubbed from everything stored. Retries, timeouts, the per-attempt call
deadline, the dead-server rule and attempt counting follow the same policy as the
Anthropic backend, and a 429 is flow control of the traffic controller
(:mod:`evalkit.traffic`), not a failure. The ``usage`` block is read strictly: ``prompt_tokens`` and
``completion_tokens`` must be non-negative ints (not bools), an optional
``prompt_tokens_details.cached_tokens`` too and no more than ``prompt_tokens``; a
usage block that is missing, null, not an object or breaks one of these rules makes
the call an ``error`` naming the field (re-run to retry), never a crash and never a
negative cost. The estimate is local (characters / 4). Cost is None unless a
``price=(input, output)`` in USD per million tokens is given: local servers are free
and there is no reliable price table for remote ones. The request key holds the model
name, not the URL: the same model served elsewhere reuses the ledger.

Bounds (:mod:`evalkit.judge._bounds`): the response is streamed and read within
:data:`~evalkit.judge._bounds.MAX_WIRE_BYTES` on the wire and
:data:`~evalkit.judge._bounds.MAX_BODY_BYTES` inflated (only gzip and deflate are asked
for); a 200 whose body is refused is an ``error`` at once, of unknown cost. A body
that is not UTF-8, JSON nested deeper than :data:`~evalkit.judge._bounds.MAX_JSON_DEPTH`
(the body or the content) or a ``model`` that is not a string of at most
:data:`~evalkit.judge._bounds.MAX_MODEL_CHARS` is an answer with a problem (re-asked,
then ``unparseable``), with its usage kept.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import Sequence
from typing import Any

import httpx

from evalkit.errors import JudgeError
from evalkit.judge._answer import TOOL_NAME, AnswerError, answer_schema, loads_strict
from evalkit.judge._answer import looks_like_refusal as _looks_like_refusal
from evalkit.judge._base import (
    CALL_DEADLINE_S,
    CHARS_PER_TOKEN,
    CONNECT_TIMEOUT_S,
    MISSING,
    RETRY_STATUSES,
    CostEstimate,
    Reachability,
    Reply,
    Usage,
    UsageError,
    char_estimate,
    kind_of,
    parse_retry_after,
    retry_delay,
    scrub,
    token_count,
)
from evalkit.judge._bounds import ACCEPT_ENCODING, MAX_MODEL_CHARS, BodyRefused, read_response
from evalkit.judge._prompt import JudgeParams, JudgeRequest
from evalkit.model_ids import is_pinned
from evalkit.traffic import Charge, DeadlinePassed, Ticket, TrafficController

_SPEC = re.compile(r"^(https?://(?:[^/@\s]*@)?[^/:@\s]+(?::\d+)?(?:/[^:\s]*)?):(\S+)$")


def parse_openai_spec(rest: str) -> tuple[str, str]:
    """Split ``URL:MODEL`` (the part after ``openai:``); JudgeError if malformed."""
    m = _SPEC.match(rest)
    if m is None:
        raise JudgeError(
            f"openai judge: cannot read {rest!r}; expected openai:URL:MODEL, "
            "e.g. openai:http://127.0.0.1:8080/v1:my-model"
        )
    return m.group(1).rstrip("/"), m.group(2)


class OpenAIBackend:
    """Judge through an OpenAI-compatible ``/chat/completions`` endpoint."""

    kind = "openai"
    networked = True

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        params: JudgeParams | None = None,
        api_key: str | None = None,
        http_client: httpx.AsyncClient | None = None,
        timeout: float = 120.0,
        max_retries: int = 4,
        max_retry_wait: float = 120.0,
        backoff_base: float = 0.5,
        for_gate: bool = False,
        price: tuple[float, float] | None = None,
        call_deadline: float = CALL_DEADLINE_S,
    ) -> None:
        if for_gate and not is_pinned(model, "openai"):
            raise JudgeError(f"openai judge: {model!r} is a floating tag; pin a model version")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.spec = f"openai:{self.base_url}:{model}"
        self.params = params or JudgeParams(temperature=0.0, mode="json")
        self._api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self._client = http_client
        self._own_client = http_client is None
        self._timeout = timeout
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait
        self.backoff_base = backoff_base
        self.price = price
        self.batch_mode = False
        if not call_deadline > 0:
            raise JudgeError(f"openai judge: call deadline {call_deadline!r} s is not positive")
        self.call_deadline = call_deadline
        self._reach = Reachability(self.base_url)
        #: The run's traffic controller (the sender replaces it with one per run).
        self.traffic = TrafficController()

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self._timeouts)
        return self._client

    @property
    def _timeouts(self) -> httpx.Timeout:
        return httpx.Timeout(self._timeout, connect=min(self._timeout, CONNECT_TIMEOUT_S))

    async def aclose(self) -> None:
        self._reach.reset()
        if self._client is not None and self._own_client:
            await self._client.aclose()
            self._client = None

    def _scrub(self, text: str) -> str:
        return scrub(text, [self._api_key])

    def body(self, req: JudgeRequest) -> dict[str, Any]:
        """The chat-completions request body for ``req``."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": req.system},
                {"role": "user", "content": req.user},
            ],
            "response_format": {
                "type": "json_schema",
                "json_schema": {
                    "name": TOOL_NAME,
                    "strict": True,
                    "schema": answer_schema(req.dimension_names, req.bins),
                },
            },
            "max_tokens": self.params.max_tokens,
        }
        if self.params.temperature is not None:
            body["temperature"] = self.params.temperature
        return body

    def cost(self, usage: Usage) -> float | None:
        if self.price is None:
            return None
        return (usage.input_tokens * self.price[0] + usage.output_tokens * self.price[1]) / 1e6

    async def call(self, request: JudgeRequest) -> Reply:
        """One logical call with transport retries; never raises for HTTP failures, only
        :class:`~evalkit.judge._base.ServerUnreachable` once the server is taken for dead.

        Every attempt waits for its turn in :attr:`traffic`; a 429 is sent again when
        its turn comes, without using the ``max_retries`` budget (see
        :mod:`evalkit.traffic`), until the run's deadline passes."""
        headers = {"Accept-Encoding": ACCEPT_ENCODING}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        body = self.body(request)
        inp, _ = char_estimate([request])
        charge = Charge(input_tokens=inp, output_tokens=self.params.max_tokens)
        t0 = time.monotonic()
        attempt = failures = 0

        def failed(error: str) -> Reply:
            return Reply("error", error=error, attempts=attempt, latency_s=time.monotonic() - t0)

        while True:
            wait: float | None = None
            self._reach.check()
            try:
                ticket = await self.traffic.acquire(charge)
            except DeadlinePassed as exc:
                return failed(str(exc))
            attempt += 1
            seen: dict[str, str] | None = None
            try:
                self._reach.check()
                post = self._post(body, headers)
                resp, data, refused = await asyncio.wait_for(post, self.call_deadline)
            except httpx.ConnectTimeout:
                error = f"connect timeout after {min(self._timeout, CONNECT_TIMEOUT_S):g} s"
                self._release(ticket, None)
                self._reach.failed(error)
            except httpx.ConnectError as exc:  # refused, DNS: the request never left
                error = self._scrub(f"{type(exc).__name__}: {exc}")
                self._release(ticket, None)
                self._reach.failed(error)
            except httpx.TimeoutException:
                error = f"timeout after {self._timeout:g} s"
                self._reach.reached()
            except httpx.TransportError as exc:
                error = self._scrub(f"{type(exc).__name__}: {exc}")
                self._reach.reached()
            except TimeoutError:
                error = f"no complete answer within the call deadline of {self.call_deadline:g} s"
                self._reach.reached()
            except BaseException:
                self._release(ticket, None)
                raise
            else:
                self._reach.reached()
                seen = dict(resp.headers)
                if resp.status_code == 200 and refused is not None:  # answered: maybe billed
                    self.traffic.release(ticket, seen, ok=True)
                    latency = time.monotonic() - t0
                    usage = Usage(cost_usd=None)
                    return Reply("error", error=refused, attempts=attempt, latency_s=latency,
                                 usage=usage)  # fmt: skip
                if resp.status_code == 200:
                    self.traffic.release(ticket, seen, ok=True)
                    reply = self._reply(data, attempt, time.monotonic() - t0)
                    if reply.kind != "error":  # counted as OpenAI counts TPM: every prompt token
                        u = reply.usage
                        self.traffic.correct(
                            ticket, u.input_tokens + u.cache_read_tokens, u.output_tokens
                        )
                    return reply
                shown = refused or data[:500].decode("utf-8", "replace")
                error = self._scrub(f"HTTP {resp.status_code}: {shown}")
                wait = parse_retry_after(seen)
                if resp.status_code == 429:
                    self.traffic.rate_limited(ticket, seen, wait)
                    continue  # flow control: wait for the turn, outside the retry budget
                if resp.status_code not in RETRY_STATUSES:
                    self._release(ticket, seen)
                    return failed(error)
            self._release(ticket, seen)
            failures += 1
            if failures > self.max_retries:
                return failed(error)
            delay = retry_delay(
                failures, wait, base=self.backoff_base, max_wait=self.max_retry_wait
            )
            try:
                await self.traffic.sleep(delay)
            except DeadlinePassed as exc:
                return failed(str(exc))

    def _release(self, ticket: Ticket, headers: dict[str, str] | None) -> None:
        if ticket.open:
            self.traffic.release(ticket, headers, ok=False)

    async def _post(
        self, body: dict[str, Any], headers: dict[str, str]
    ) -> tuple[httpx.Response, bytes, str | None]:
        """POST ``body``; the response, its body read within the bounds of
        :mod:`evalkit.judge._bounds`, and why the body was refused (None: it was read)."""
        client = self._http()
        url = f"{self.base_url}/chat/completions"
        request = client.build_request(
            "POST", url, json=body, headers=headers, timeout=self._timeouts
        )
        resp = await client.send(request, stream=True)
        try:
            data = await read_response(resp)
        except BodyRefused as exc:
            return resp, b"", self._scrub(str(exc))
        finally:
            await resp.aclose()
        return resp, data, None

    def _reply(self, data: bytes, attempts: int, latency_s: float) -> Reply:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:  # JSON exchanged between systems is UTF-8
            raw = self._scrub(data.decode("utf-8", "replace"))
            problem = f"response body is not UTF-8 (byte {exc.start})"
            return Reply("answer", problem=problem, raw=raw, attempts=attempts,
                         latency_s=latency_s)  # fmt: skip
        return self.reply_from_body(text, attempts=attempts, latency_s=latency_s)

    def reply_from_body(self, text: str, *, attempts: int = 1, latency_s: float = 0.0) -> Reply:
        """Classify a chat-completions response body (a live answer, or the ``body`` of a
        batch output line); never raises."""
        raw = self._scrub(text)
        common: dict[str, Any] = {"raw": raw, "attempts": attempts, "latency_s": latency_s}
        try:
            data = loads_strict(text)
        except AnswerError as exc:
            return Reply("answer", problem=f"response body: {exc}", **common)
        if not isinstance(data, dict):
            return Reply("answer", problem="response body is not an object", **common)
        try:
            usage = read_usage(data)
        except UsageError as exc:
            error = self._scrub(f"malformed usage: {exc}")  # tokens and cost unknown
            return Reply("error", error=error, usage=Usage(cost_usd=None), **common)
        usage.cost_usd = self.cost(usage)
        common["usage"] = usage
        model = data.get("model")
        if model is not None and not (isinstance(model, str) and len(model) <= MAX_MODEL_CHARS):
            what = f"{len(model)} characters" if isinstance(model, str) else kind_of(model)
            return Reply("answer", problem=f"response model is {what}, not a model id", **common)
        common["response_model"] = model
        choices = data.get("choices")
        if not isinstance(choices, list) or len(choices) != 1 or not isinstance(choices[0], dict):
            return Reply("answer", problem="expected exactly one choice", **common)
        choice = choices[0]
        message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
        assert isinstance(message, dict)
        if message.get("refusal") or choice.get("finish_reason") == "content_filter":
            return Reply("refusal", **common)
        content = message.get("content")
        if not isinstance(content, str):
            return Reply("answer", problem="message has no text content", **common)
        try:
            return Reply("answer", payload=loads_strict(content), **common)
        except AnswerError as exc:
            if _looks_like_refusal(content):
                return Reply("refusal", **common)
            return Reply("answer", problem=str(exc), **common)

    async def estimate(self, requests: Sequence[JudgeRequest]) -> CostEstimate:
        """Local: characters / 4 for input, 200 output tokens per dimension; cost if priced.

        Nothing is sent (there is no counting endpoint in the chat-completions API)."""
        inp, out = char_estimate(requests)
        cost = self.cost(Usage(input_tokens=inp, output_tokens=out))
        method = f"characters / {CHARS_PER_TOKEN}; 200 output tokens per dimension"
        return CostEstimate(inp, out, cost, method)


def read_usage(data: dict[str, Any]) -> Usage:
    """The ``usage`` of a chat-completions body, strictly (see the module docstring).

    ``prompt_tokens`` counts cached prompt tokens too; they are split off into
    ``cache_read_tokens``. :class:`~evalkit.judge._base.UsageError` names the bad field.
    """
    u = data.get("usage", MISSING)
    if not isinstance(u, dict):
        raise UsageError(f"usage is {kind_of(u)}, not an object")
    prompt = token_count(u.get("prompt_tokens", MISSING), "usage.prompt_tokens")
    completion = token_count(u.get("completion_tokens", MISSING), "usage.completion_tokens")
    details = u.get("prompt_tokens_details")
    cached = 0
    if details is not None:
        if not isinstance(details, dict):
            raise UsageError(f"usage.prompt_tokens_details is {kind_of(details)}, not an object")
        name = "usage.prompt_tokens_details.cached_tokens"
        cached = token_count(details.get("cached_tokens"), name, required=False)
        if cached > prompt:
            raise UsageError(f"{name} ({cached}) is more than usage.prompt_tokens ({prompt})")
    return Usage(input_tokens=prompt - cached, output_tokens=completion, cache_read_tokens=cached)
