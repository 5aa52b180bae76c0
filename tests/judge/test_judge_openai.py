"""The openai backend against the chat-completions stub and httpx.MockTransport."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest

from evalkit.catalogue import Catalogue
from evalkit.errors import JudgeError
from evalkit.judge import judge_cases
from evalkit.judge.openai import OpenAIBackend, parse_openai_spec
from tests.stubs._server import malformed, ok, rate_limited, refusal, timeout
from tests.stubs.anthropic_stub import default_answer
from tests.stubs.openai_stub import OpenAIStub


def run(catalogue: Catalogue, ledger: Path, b: OpenAIBackend, **kw: Any) -> pd.DataFrame:
    return judge_cases(catalogue, judge=b.spec, ledger=ledger, backend=b, progress=False, **kw)


def backend(stub: OpenAIStub, **kw: Any) -> OpenAIBackend:
    kw.setdefault("timeout", 3.0)
    return OpenAIBackend(stub.base_url, "qwen2.5:7b", backoff_base=0.01, **kw)


@pytest.mark.parametrize(
    ("rest", "url", "model"),
    [
        ("http://127.0.0.1:8080/v1:qwen2.5-7b", "http://127.0.0.1:8080/v1", "qwen2.5-7b"),
        ("http://localhost:11434/v1:llama3.1:8b", "http://localhost:11434/v1", "llama3.1:8b"),
        ("https://host.example/v1/:m", "https://host.example/v1", "m"),
        ("http://localhost:8000:served-model", "http://localhost:8000", "served-model"),
    ],
)
def test_spec_parsing(rest: str, url: str, model: str) -> None:
    assert parse_openai_spec(rest) == (url, model)


def test_bad_spec_is_a_clear_error(catalogue: Catalogue, tmp_path: Path) -> None:
    with pytest.raises(JudgeError, match="openai:URL:MODEL"):
        judge_cases(catalogue, judge="openai:nonsense", ledger=tmp_path / "l.sqlite")


def test_success_with_json_schema_output(
    catalogue: Catalogue, openai_stub: OpenAIStub, tmp_path: Path
) -> None:
    frame = run(catalogue, tmp_path / "l.sqlite", backend(openai_stub))
    assert (frame["status"] == "ok").all() and len(frame) == 11
    body = openai_stub.completion_requests()[0].body
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["temperature"] == 0.0
    assert frame["cost_usd"].isna().all() and (frame["input_tokens"] > 0).all()
    assert (frame["judge"] == f"openai:{openai_stub.base_url}:qwen2.5:7b").all()


def test_faults(catalogue: Catalogue, openai_stub: OpenAIStub, tmp_path: Path) -> None:
    openai_stub.script(rate_limited(0.05), malformed("not_json"), ok(), *[malformed("bad_bin")] * 3)
    ledger = tmp_path / "l.sqlite"
    frame = run(catalogue, ledger, backend(openai_stub), cases=["j-masked", "j-emergency"],
                concurrency=1)  # fmt: skip
    by_case = frame.drop_duplicates("request_key").set_index("case_id")
    assert by_case.loc["j-masked", "status"] == "ok"
    assert by_case.loc["j-masked", "attempts"] == 3  # 429, then not JSON, then fine
    assert by_case.loc["j-emergency", "status"] == "unparseable"
    openai_stub.script(refusal())
    frame = run(catalogue, ledger, backend(openai_stub), cases=["j-benign"])
    assert (frame["status"] == "refused").all()


def test_timeout_is_retried(catalogue: Catalogue, openai_stub: OpenAIStub, tmp_path: Path) -> None:
    openai_stub.script(timeout())
    frame = run(catalogue, tmp_path / "l.sqlite", backend(openai_stub, timeout=2.0),
                cases=["j-masked"])  # fmt: skip
    assert frame.iloc[0].status == "ok" and frame.iloc[0].attempts == 2


def test_mock_transport_scrubs_the_key(catalogue: Catalogue, tmp_path: Path) -> None:
    key = "sk-openai-PLANTED-0123456789"

    def handler(request: httpx.Request) -> httpx.Response:
        assert request.headers["authorization"] == f"Bearer {key}"
        body = json.loads(request.content)
        user = [m for m in body["messages"] if m["role"] == "user"]
        answer = default_answer({"messages": user, "response_format": body["response_format"]})
        content = json.dumps(answer) + f" {request.headers['authorization']}"
        return httpx.Response(200, json={
            "choices": [{"message": {"content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5},
        })  # fmt: skip

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    b = OpenAIBackend("http://judge.invalid/v1", "m", api_key=key, http_client=client)
    ledger = tmp_path / "l.sqlite"
    frame = run(catalogue, ledger, b, cases=["j-masked"], max_parse_retries=0)
    assert frame.iloc[0].status == "unparseable"  # JSON followed by junk is not JSON
    assert key.encode() not in ledger.read_bytes()
