"""An Anthropic model as a target, through ``anthropic.AsyncAnthropic`` (Messages API).

* Credentials: ``api_key=`` or ``ANTHROPIC_API_KEY``. Without one the target refuses
  at construction with a :class:`RunnerError`, before any request; the key is then
  passed explicitly, so the SDK never goes looking for other credentials (profiles,
  workload identity). The key is never stored: it is scrubbed from every error.
* Endpoint: ``base_url=`` or ``ANTHROPIC_BASE_URL`` (e.g. a stub server in tests),
  else the SDK's default.
* Retries: the SDK's own are off (``max_retries=0``); :mod:`evalkit.runner._policy`
  applies the judge's policy so that every attempt is counted, and the target's
  traffic controller (``rpm=``, ``input_tpm=``, ``output_tpm=`` or a shared
  ``traffic=``) paces the calls and treats a 429 as flow control.
* The reply is the concatenated text blocks. A refusal or an empty reply is a reply
  (``stop_reason`` says why), not an error.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import anthropic
import httpx2

from evalkit.judge._anthropic_http import BoundedAsyncClient
from evalkit.judge._base import CHARS_PER_TOKEN
from evalkit.runner._policy import Failure, retrying, scrub, target_traffic
from evalkit.runner._types import (
    Message,
    RunnerError,
    TargetReply,
    TurnContext,
    fingerprint_of,
)
from evalkit.traffic import Charge, TrafficController

#: Most requests in flight of one target's own controller (the runner's ``concurrency``
#: bounds the conversations; the controller adapts the requests below both).
TARGET_CEILING = 64


class AnthropicTarget:
    """A Claude model answering as the agent, with an optional system prompt."""

    #: ``reply`` takes ``system=`` to override the system prompt for one call.
    accepts_system = True

    def __init__(
        self,
        model: str,
        *,
        system: str | None = None,
        max_tokens: int = 1024,
        temperature: float | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 4,
        max_retry_wait: float = 120.0,
        rpm: float | None = None,
        input_tpm: float | None = None,
        output_tpm: float | None = None,
        traffic: TrafficController | None = None,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        if not model:
            raise RunnerError("anthropic target: no model id (use anthropic:MODEL)")
        key = api_key if api_key is not None else os.environ.get("ANTHROPIC_API_KEY", "")
        if not key.strip():
            raise RunnerError(
                "anthropic target: no API key; set ANTHROPIC_API_KEY (it is read from the "
                "environment and never written to transcripts)"
            )
        self.model = model
        self.spec = f"anthropic:{model}"
        self.system = system
        self.max_tokens = max_tokens
        self.temperature = temperature
        self._api_key = key
        self._base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        self._timeout = timeout
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait
        #: Paces this target's calls (see :mod:`evalkit.runner._policy`); pass one
        #: ``traffic`` to several targets that share a provider's limit.
        self.traffic = target_traffic(traffic, rpm, input_tpm, output_tpm, TARGET_CEILING)
        self._http_client = http_client
        self._client: anthropic.AsyncAnthropic | None = None

    @property
    def fingerprint(self) -> str:
        """Changes with the model, system prompt, max_tokens or temperature (never the key)."""
        return fingerprint_of(
            {
                "spec": self.spec,
                "system": self.system,
                "max_tokens": self.max_tokens,
                "temperature": self.temperature,
            }
        )

    def _client_for_call(self) -> anthropic.AsyncAnthropic:
        if self._client is None:
            self._client = anthropic.AsyncAnthropic(
                api_key=self._api_key,
                base_url=self._base_url,
                # the judge's bounded client: a target's reply is read within the same
                # size and inflation limits as a judge's (evalkit.judge._bounds)
                http_client=self._http_client or BoundedAsyncClient(timeout=self._timeout),
                timeout=self._timeout,
                max_retries=0,
            )
        return self._client

    def _classify(self, exc: BaseException) -> Failure | None:
        if isinstance(exc, anthropic.APIStatusError):
            return Failure(
                scrub(
                    f"HTTP {exc.status_code} {type(exc).__name__}: {exc.message}", [self._api_key]
                ),
                status=exc.status_code,
                headers=dict(exc.response.headers),
            )
        if isinstance(exc, anthropic.APITimeoutError):
            return Failure(f"timeout after {self._timeout:g} s", transient=True)
        if isinstance(exc, anthropic.APIConnectionError):
            return Failure(
                scrub(f"{type(exc).__name__}: {exc.message}", [self._api_key]), transient=True
            )
        if isinstance(exc, anthropic.APIError):
            return Failure(scrub(f"{type(exc).__name__}: {exc.message}", [self._api_key]))
        return None

    def body(self, messages: Sequence[Message], *, system: str | None = None) -> dict[str, Any]:
        """The Messages API parameters for ``messages`` (system prompt added when set)."""
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
        }
        system = system if system is not None else self.system
        if system:
            body["system"] = system
        if self.temperature is not None:
            body["temperature"] = self.temperature
        return body

    async def reply(
        self, messages: Sequence[Message], context: TurnContext, *, system: str | None = None
    ) -> TargetReply:
        """One Messages API call (with the retry policy); raises TargetCallError on failure."""
        client = self._client_for_call()
        body = self.body(messages, system=system)

        async def create() -> tuple[dict[str, str], Any]:
            raw = await client.messages.with_raw_response.create(**body)
            return dict(raw.headers), await raw.parse()

        def observe(result: tuple[dict[str, str], Any]) -> Any:
            headers, msg = result
            u: Any = getattr(msg, "usage", None)
            try:  # Anthropic's input-tokens-per-minute excludes cache reads
                counted = (
                    int(u.input_tokens) + int(getattr(u, "cache_creation_input_tokens", 0) or 0),
                    int(u.output_tokens),
                )
            except (AttributeError, TypeError, ValueError):
                counted = None
            return headers, counted

        chars = sum(len(m["content"]) for m in messages) + len(body.get("system") or "")
        (_, msg), _ = await retrying(
            create,
            self._classify,
            max_retries=self.max_retries,
            max_wait=self.max_retry_wait,
            traffic=self.traffic,
            charge=Charge(input_tokens=chars // CHARS_PER_TOKEN, output_tokens=self.max_tokens),
            observe=observe,
        )
        text = "".join(b.text for b in msg.content if b.type == "text")
        return TargetReply(
            text=text,
            input_tokens=msg.usage.input_tokens,
            output_tokens=msg.usage.output_tokens,
            stop_reason=msg.stop_reason,
        )

    async def aclose(self) -> None:
        """Close the SDK client (a later call opens a new one)."""
        if self._client is not None:
            await self._client.close()
            self._client = None
