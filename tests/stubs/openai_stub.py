"""A stub of an OpenAI-compatible ``POST /v1/chat/completions`` server on 127.0.0.1.

Its ``base_url`` ends in ``/v1`` (as llama.cpp, vLLM and Ollama expose it). Answers
follow ``response_format.json_schema.schema`` with the same default answer, faults
and malformed variants as :mod:`tests.stubs.anthropic_stub`; a ``refusal`` fault sets
``message.refusal``, ``malformed("not_json")`` sends content that is not JSON,
``bad_usage(...)`` replaces (or removes) the ``usage`` block, ``trickle(...)`` sends
the answer one byte at a time and ``hostile(make)`` sends ``make(completion)``
instead. Rate limits as :class:`tests.stubs._server.RateLimiter`
with ``x-ratelimit-*`` headers (requests, and tokens: the prompt plus ``max_tokens``
before the answer; here only the prompt's bucket is reported as ``tokens``).
Standalone: ``python -m tests.stubs.openai_stub --port 8766``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from tests.stubs._server import Fault, Recorded, Response, StubServer
from tests.stubs.anthropic_stub import break_answer, default_answer

__all__ = ["OpenAIStub", "running_openai_stub"]


def _chat_to_messages_body(body: dict[str, Any]) -> dict[str, Any]:
    """Present a chat body to :func:`default_answer` (which reads the last message)."""
    return {
        "messages": [m for m in body.get("messages", []) if m.get("role") == "user"],
        "response_format": body.get("response_format"),
    }


class OpenAIStub(StubServer):
    """The chat-completions stub (options as :class:`tests.stubs._server.StubServer`)."""

    url_suffix = "/v1"

    def __init__(
        self,
        *,
        responder: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
        **options: Any,
    ) -> None:
        super().__init__(**options)
        self.responder = responder or default_answer
        self._ids = itertools.count(1)

    def completion_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.path == "/v1/chat/completions"]

    def route(self, method: str, path: str, headers: dict[str, str], body: Any) -> Response:
        if method == "POST" and path == "/v1/chat/completions":
            ok = isinstance(body, dict)
            prompt = (
                sum(len(str(m.get("content", ""))) for m in body.get("messages", [])) if ok else 0
            )
            return self.answer_request(
                lambda fault: self._complete(body, fault),
                input_tokens=float(prompt // 4),
                max_tokens=float(body.get("max_tokens") or 0) if ok else 0.0,
            )
        return self.error(404, "not_found_error", f"no route {method} {path}")

    header_style = "openai"

    def output_tokens_of(self, resp: Response) -> int | None:
        usage = resp.body.get("usage") if isinstance(resp.body, dict) else None
        value = usage.get("completion_tokens") if isinstance(usage, dict) else None
        return value if isinstance(value, int) else None

    def error_body(self, kind: str, message: str) -> Any:
        return {"error": {"type": kind, "message": message}}

    def _complete(self, body: Any, fault: Fault | None) -> Response:
        if fault is not None and fault.kind == "status":
            return self.error(fault.status, fault.error_type, "stub fault", fault.retry_after)
        if fault is not None and fault.kind == "timeout":
            self.hang()
        if fault is not None and fault.kind == "drop":
            return Response(0, drop=True)
        answer = self.responder(_chat_to_messages_body(body))
        content: str | None
        refusal = None
        finish = "stop"
        if fault is not None and fault.kind == "malformed" and fault.variant != "not_json":
            answer = break_answer(answer, fault.variant)
        content = json.dumps(answer)
        if not body.get("response_format") and "text" in answer:
            content = str(answer["text"])  # a plain chat request
        if fault is not None and fault.variant == "not_json":
            content = content.replace('"scores"', "scores", 1)
        if fault is not None and fault.kind == "text":
            content = fault.text
        if fault is not None and fault.kind == "refusal":
            content, refusal = None, "I can't help with that."
        prompt = sum(len(str(m.get("content", ""))) for m in body.get("messages", [])) // 4
        completion: dict[str, Any] = {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion",
            "model": body.get("model", "stub"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": refusal},
                    "finish_reason": finish,
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": 120,
                "total_tokens": prompt + 120,
            },
        }
        if fault is not None and fault.kind == "usage":
            completion.pop("usage")
            if fault.variant != "absent":
                completion["usage"] = fault.usage
        slow = fault.interval if fault is not None and fault.kind == "trickle" else None
        if fault is not None and fault.make is not None:
            return fault.make(completion)
        return Response(200, completion, trickle=slow)


@contextmanager
def running_openai_stub(**options: Any) -> Iterator[str]:
    """Run an :class:`OpenAIStub` with ``options``; yield its base URL (ending in /v1)."""
    with OpenAIStub(**options) as stub:
        yield stub.base_url


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="OpenAI chat-completions stub on 127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0)
    args = parser.parse_args(argv)
    stub = OpenAIStub(latency=args.latency, port=args.port).start()
    print(stub.base_url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        stub.stop()


if __name__ == "__main__":
    main()
