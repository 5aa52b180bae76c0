"""An OpenAI-compatible chat-completions server as a target (llama.cpp, vLLM, Ollama, ...).

Spec ``openai:URL:MODEL``, the grammar of the judge's ``openai`` backend: the URL is
``scheme://host[:port][/path]`` and the model is everything after the next colon, so
``openai:http://localhost:11434/v1:llama3.1:8b`` names the model ``llama3.1:8b``.
Each call is ``POST {URL}/chat/completions`` with the system prompt (if any) as the
first message. ``OPENAI_API_KEY`` (or ``api_key=``) is sent as a bearer token when
set, local servers need none, and it is scrubbed from every error. Retries and the
traffic controller (``rpm=``, ``input_tpm=``, ``output_tpm=``, ``traffic=``) follow
:mod:`evalkit.runner._policy`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import httpx

from evalkit.errors import JudgeError
from evalkit.judge._base import CHARS_PER_TOKEN
from evalkit.judge.openai import parse_openai_spec as _parse_judge_spec
from evalkit.runner._anthropic import TARGET_CEILING
from evalkit.runner._policy import Failure, retrying, scrub, target_traffic
from evalkit.runner._types import (
    Message,
    RunnerError,
    TargetCallError,
    TargetReply,
    TurnContext,
    fingerprint_of,
)
from evalkit.traffic import Charge, TrafficController


def parse_openai_spec(rest: str) -> tuple[str, str]:
    """Split ``URL:MODEL`` (the part after ``openai:``) as the judge does; RunnerError if
    malformed."""
    try:
        return _parse_judge_spec(rest)
    except JudgeError as exc:
        raise RunnerError(str(exc).replace("openai judge", "openai target")) from None


class OpenAITarget:
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint."""

    #: ``reply`` takes ``system=`` to override the system prompt for one call.
    accepts_system = True

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        system: str | None = None,
        max_tokens: int = 1024,
        temperature: float | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 4,
        max_retry_wait: float = 120.0,
        rpm: float | None = None,
        input_tpm: float | None = None,
        output_tpm: float | None = None,
        traffic: TrafficController | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        if not model:
            raise RunnerError("openai target: no model name")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.spec = f"openai:{self.base_url}:{model}"
        self.system = system
        self.max_tokens = max_tokens
        self.temperature = temperature
        self._api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self._timeout = timeout
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait
        #: Paces this target's calls (see :mod:`evalkit.runner._policy`); pass one
        #: ``traffic`` to several targets that share a provider's limit.
        self.traffic = target_traffic(traffic, rpm, input_tpm, output_tpm, TARGET_CEILING)
        self._given_client = http_client
        self._client: httpx.AsyncClient | None = http_client

    @property
    def fingerprint(self) -> str:
        """Changes with the model, system prompt and parameters; not with URL or key."""
        return fingerprint_of(
            {
                "kind": "openai",
                "model": self.model,
                "system": self.system,
                "max_tokens": self.max_tokens,
                "temperature": self.temperature,
            }
        )

    def _secrets(self) -> list[str | None]:
        return [self._api_key]

    def _classify(self, exc: BaseException) -> Failure | None:
        if isinstance(exc, httpx.HTTPStatusError):
            detail = exc.response.text[:300]
            return Failure(
                scrub(f"HTTP {exc.response.status_code}: {detail}", self._secrets()),
                status=exc.response.status_code,
                headers=dict(exc.response.headers),
            )
        if isinstance(exc, httpx.TimeoutException):
            return Failure(f"timeout after {self._timeout:g} s", transient=True)
        if isinstance(exc, httpx.TransportError):
            return Failure(scrub(f"{type(exc).__name__}: {exc}", self._secrets()), transient=True)
        return None

    def body(self, messages: Sequence[Message], *, system: str | None = None) -> dict[str, Any]:
        """The chat-completions request body for ``messages``."""
        msgs: list[dict[str, str]] = []
        system = system if system is not None else self.system
        if system:
            msgs.append({"role": "system", "content": system})
        msgs += [{"role": m["role"], "content": m["content"]} for m in messages]
        body: dict[str, Any] = {
            "model": self.model,
            "messages": msgs,
            "max_tokens": self.max_tokens,
        }
        if self.temperature is not None:
            body["temperature"] = self.temperature
        return body

    async def reply(
        self, messages: Sequence[Message], context: TurnContext, *, system: str | None = None
    ) -> TargetReply:
        """One chat-completions call; raises TargetCallError on failure or a malformed body."""
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self._timeout)
        client = self._client
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        body = self.body(messages, system=system)

        async def call() -> tuple[dict[str, str], dict[str, Any]]:
            resp = await client.post(
                f"{self.base_url}/chat/completions", json=body, headers=headers
            )
            resp.raise_for_status()
            data: dict[str, Any] = resp.json()
            return dict(resp.headers), data

        def observe(result: tuple[dict[str, str], dict[str, Any]]) -> Any:
            seen, data = result
            u = data.get("usage") if isinstance(data, dict) else None
            u = u if isinstance(u, dict) else {}
            prompt, completion = _count(u.get("prompt_tokens")), _count(u.get("completion_tokens"))
            return seen, None if prompt is None or completion is None else (prompt, completion)

        chars = sum(len(m["content"]) for m in body["messages"])
        (_, data), _ = await retrying(
            call,
            self._classify,
            max_retries=self.max_retries,
            max_wait=self.max_retry_wait,
            traffic=self.traffic,
            charge=Charge(input_tokens=chars // CHARS_PER_TOKEN, output_tokens=self.max_tokens),
            observe=observe,
        )
        try:
            choice = data["choices"][0]
            message = choice.get("message") or {}
            text = message.get("content") or message.get("refusal") or ""
        except (KeyError, IndexError, TypeError, AttributeError):
            raise TargetCallError("openai target: response has no choices[0].message") from None
        usage = data.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        return TargetReply(
            text=str(text),
            input_tokens=_count(usage.get("prompt_tokens")),
            output_tokens=_count(usage.get("completion_tokens")),
            stop_reason=choice.get("finish_reason"),
        )

    async def aclose(self) -> None:
        """Close the HTTP client this target opened (not one passed in)."""
        if self._client is not None and self._client is not self._given_client:
            await self._client.aclose()
        self._client = self._given_client


def _count(value: object) -> int | None:
    """A token count the server reported, or None when it is missing or malformed (a
    string, a bool, a negative or fractional number): unknown, never guessed."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None
