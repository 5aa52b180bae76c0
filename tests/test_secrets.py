"""One rule for secrets (evalkit.secrets), applied where every file is written.

A judge that echoes the configured key in its rationale and an OpenAI spec with a key
in its URL: no trace of either in the ledger's bytes, the JSONL export, an executed
notebook or a rendered report.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import jupytext
import nbformat
import pytest

from evalkit.catalogue import Catalogue, load
from evalkit.judge import Ledger, judge_cases, load_ledger
from evalkit.judge.openai import OpenAIBackend
from evalkit.report._execute import execute_study
from evalkit.report._render import render_notebook, vega_bundle, write_page
from evalkit.report._secrets import SecretLeakError, check_parameters, scan_files
from evalkit.secrets import REDACTED, configured_secrets, find_secrets, scrub, scrubber
from tests.judge.conftest import DEFAULT_CASES, write_catalogue
from tests.stubs.anthropic_stub import default_answer

ENV_KEY = "local-openai-secret-0451"  # not key-shaped: found only as a configured value
URL_PASSWORD = "url-password-shaped-like-nothing"
QUERY_KEY = "q-param-secret-7781"
SHAPED = "sk-ant-api03-PLANTEDplanted-0123456789"


# --- what a secret is ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "clean"),
    [
        (f"key {SHAPED} end", f"key {REDACTED} end"),
        ("sk-proj-abcdefghijklmnopqrstuvwx1234", REDACTED),
        ("Authorization: Bearer abc.DEF-123_456", f"Authorization: Bearer {REDACTED}"),
        ("bearer eyJhbGciOiJIUzI1NiJ9==", f"bearer {REDACTED}"),
        (f"http://me:{URL_PASSWORD}@host:8080/v1", f"http://{REDACTED}@host:8080/v1"),
        (f"https://h/v1?api_key={QUERY_KEY}&x=1", f"https://h/v1?api_key={REDACTED}&x=1"),
        (f"https://h/v1?a=1&token={QUERY_KEY}#f", f"https://h/v1?a=1&token={REDACTED}#f"),
        (f"https://h/v1?key={QUERY_KEY}", f"https://h/v1?key={REDACTED}"),
        ("ghp_" + "a1" * 12, REDACTED),
        ("AKIAABCDEFGHIJKLMNOP", REDACTED),
    ],
)
def test_key_shaped_strings_are_scrubbed(text: str, clean: str) -> None:
    s = scrubber(environ={})
    assert s.scrub(text) == clean
    assert s.scrub(clean) == clean  # idempotent
    assert s.find(text) and not s.find(clean)


@pytest.mark.parametrize(
    "text",
    [
        "kappa 0.61, seed 0, sha256 " + "ab" * 32,
        "http://127.0.0.1:8080/v1:llama3.1:8b",
        "a risk-skilled reply; see https://example.org/a?page=2&sort=asc",
        "monkey=banana and the key point is the bearer of bad news",
        "[redacted] stays [redacted]",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    s = scrubber(environ={})
    assert s.scrub(text) == text and s.find(text) == []


def test_configured_secrets_are_the_values_of_secret_named_variables() -> None:
    env = {
        "ANTHROPIC_API_KEY": "sk-ant-x-1234567890",
        "OPENAI_API_KEY": ENV_KEY,
        "EVALKIT_KEYRING": "evalkit-keyring-value",
        "MY_SERVICE_TOKEN": "tok-0123456789",
        "DB_PASSWORD": "hunter2hunter2",
        "EVALKIT_NONCE_SALT": "salt-for-tests",
        "AWS_SECRET": "  padded-secret-value  ",
        "SHORT_KEY": "1234567",  # under 8 characters: too common to scrub
        "TOKENIZERS_PARALLELISM": "false-but-long",  # TOKEN is not the suffix
        "PIP_KEYRING_PROVIDER": "subprocess",
        "HOME": "/home/someone/keys",
    }
    found = configured_secrets(env)
    assert set(found) == {
        "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "EVALKIT_KEYRING", "MY_SERVICE_TOKEN",
        "DB_PASSWORD", "EVALKIT_NONCE_SALT", "AWS_SECRET",
    }  # fmt: skip
    assert found["AWS_SECRET"] == "padded-secret-value"
    s = scrubber(env)
    text = f"{ENV_KEY} / padded-secret-value / subprocess / /home/someone/keys"
    assert s.scrub(text) == f"{REDACTED} / {REDACTED} / subprocess / /home/someone/keys"
    assert s.find(text) == ["OPENAI_API_KEY", "AWS_SECRET"]  # names, never values


def test_a_secret_holding_another_is_replaced_whole() -> None:
    s = scrubber({"A_KEY": "abcdefgh", "B_KEY": "xx-abcdefgh-yy"})
    assert s.scrub("xx-abcdefgh-yy and abcdefgh") == f"{REDACTED} and {REDACTED}"


def test_scrub_value_walks_json_values() -> None:
    s = scrubber({"X_TOKEN": "token-value-1"})
    value = {"a": ["token-value-1", 3, None, True], "b": {"c": "ok token-value-1"}, "n": 1.5}
    assert s.scrub_value(value) == {
        "a": [REDACTED, 3, None, True],
        "b": {"c": f"ok {REDACTED}"},
        "n": 1.5,
    }


def test_extra_values_and_the_environment_at_call_time(monkeypatch: pytest.MonkeyPatch) -> None:
    assert scrub("passed-as-an-argument", extra=["passed-as-an-argument", None, "short"]) == (
        REDACTED
    )
    assert scrub(ENV_KEY) == ENV_KEY
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    assert scrub(ENV_KEY) == REDACTED


def test_the_report_scripts_are_not_mistaken_for_secrets() -> None:
    """Pages are scrubbed whole; the inlined Vega bundle must come out byte for byte."""
    bundle = vega_bundle()
    assert scrubber(environ={}).scrub(bundle) == bundle


def test_report_checks_use_the_same_rule(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    for params in ({"note": ENV_KEY}, {"judge": f"openai:http://u:{URL_PASSWORD}@h/v1:m"}):
        with pytest.raises(SecretLeakError, match="holds a secret"):
            check_parameters(params)
    page = tmp_path / "p.html"
    page.write_text(f"<p>?token={QUERY_KEY}</p>")
    assert [f.what for f in scan_files([page])] == ["credential query parameter"]
    assert find_secrets(f"x {ENV_KEY}") == ["OPENAI_API_KEY"]


# --- the write paths ------------------------------------------------------------------------


def _echoing_client(seen: list[httpx.Request]) -> httpx.AsyncClient:
    """A chat-completions server whose every rationale, refusal and error echoes secrets."""

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        body = json.loads(request.content)
        user = [m for m in body["messages"] if m["role"] == "user"]
        answer: dict[str, Any] = default_answer(
            {"messages": user, "response_format": body["response_format"]}
        )
        echo = f"{request.headers.get('authorization')} {request.url} {ENV_KEY} {SHAPED}"
        for entry in answer["scores"]:
            entry["rationale"] = f"I saw {echo}"
        if len(seen) == 1:  # one error body that echoes them too
            return httpx.Response(500, json={"error": {"message": f"bad auth {echo}"}})
        return httpx.Response(
            200,
            json={
                "model": f"served-at {request.url}",
                "choices": [{"message": {"content": json.dumps(answer)}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5},
            },
        )

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


def _secrets_in(data: bytes) -> list[str]:
    return [s for s in (ENV_KEY, URL_PASSWORD, QUERY_KEY, SHAPED) if s.encode() in data]


def test_no_secret_reaches_the_ledger_or_its_export(
    catalogue: Catalogue, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    ledger = tmp_path / "l.sqlite"
    seen: list[httpx.Request] = []
    for url, model in (  # two models: the URL is not in the key, the model is
        (f"http://judge:{URL_PASSWORD}@judge.invalid/v1", "m"),
        (f"http://judge.invalid/v1?api_key={QUERY_KEY}", "m2"),
    ):
        b = OpenAIBackend(url, model, http_client=_echoing_client(seen), backoff_base=0.0)
        frame = judge_cases(catalogue, judge=b.spec, ledger=ledger, backend=b, progress=False)
        assert set(frame["status"]) == {"ok"}
        assert frame["rationale"].str.contains(REDACTED, regex=False).all()
    assert any(ENV_KEY in (r.headers.get("authorization") or "") for r in seen)  # Bearer
    assert any(r.headers.get("authorization", "").startswith("Basic") for r in seen)
    assert any(URL_PASSWORD.encode() in r.url.userinfo for r in seen)
    with Ledger(ledger) as led:
        records = led.records()
        led.export_jsonl(tmp_path / "l.jsonl")
    assert sum(r["attempts"] for r in records) == len(seen)  # the 500 was retried, and kept
    assert {r["judge"] for r in records} == {
        f"openai:http://{REDACTED}@judge.invalid/v1:m",
        f"openai:http://judge.invalid/v1?api_key={REDACTED}:m2",
    }
    assert all(REDACTED in (r["raw_response"] or "") for r in records)
    assert all(REDACTED in (r["response_model"] or "") for r in records)
    files = [p for p in tmp_path.iterdir() if p.is_file()]
    assert {p.name for p in files} >= {"l.sqlite", "l.jsonl"}
    for path in files:
        assert _secrets_in(path.read_bytes()) == [], path
    assert _secrets_in(load_ledger(tmp_path / "l.jsonl").to_csv().encode()) == []


def test_imported_secrets_are_scrubbed_on_the_way_in(
    catalogue: Catalogue, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """An export written before scrubbing (or by hand) is scrubbed at the import."""
    judge_cases(catalogue, judge="baseline", ledger=tmp_path / "a.sqlite", progress=False)
    with Ledger(tmp_path / "a.sqlite") as led:
        led.export_jsonl(tmp_path / "a.jsonl")
    recs = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text().splitlines()]
    recs[0]["results"][0]["rationale"] = f"leaked {ENV_KEY} and {SHAPED}"
    recs[1]["judge"] = f"baseline?token={QUERY_KEY}"
    recs[2]["params"] = {**recs[2]["params"], "note": f"http://u:{URL_PASSWORD}@h/"}
    path = tmp_path / "b.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    with Ledger(tmp_path / "b.sqlite") as led:
        assert led.import_jsonl(path, catalogue=catalogue)["added"] == 5
        led.export_jsonl(tmp_path / "b-out.jsonl")
    for name in ("b.sqlite", "b-out.jsonl"):
        assert _secrets_in((tmp_path / name).read_bytes()) == [], name


def test_batches_store_the_spec_scrubbed_and_find_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    spec = f"openai:http://u:{URL_PASSWORD}@h/v1:m"
    with Ledger(tmp_path / "l.sqlite") as led:
        led.add_batch("b1", spec, {"k" * 64: {"judge": spec, "note": SHAPED}})
        assert led.open_batches(spec) == {
            "b1": {"k" * 64: {"judge": f"openai:http://{REDACTED}@h/v1:m", "note": REDACTED}}
        }
    assert _secrets_in((tmp_path / "l.sqlite").read_bytes()) == []


NOTEBOOK = """\
# %% tags=["parameters"]
seed = 0

# %%
import os
print("the key is", os.environ["OPENAI_API_KEY"])
print("judge", os.environ["LEAK_URL"], os.environ["LEAK_SHAPED"])

# %%
raise RuntimeError("failing with " + os.environ["OPENAI_API_KEY"])
"""


def test_no_secret_reaches_an_executed_notebook_or_a_page(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    source = tmp_path / "leaky.ipynb"
    monkeypatch.setenv("LEAK_URL", f"openai:http://u:{URL_PASSWORD}@h/v1:m")  # not a
    monkeypatch.setenv("LEAK_SHAPED", SHAPED)  # secret's name: found by their shapes
    jupytext.write(jupytext.reads(NOTEBOOK, fmt="py:percent"), source)
    run = execute_study(source, tmp_path / "work", {"seed": 1}, cwd=tmp_path)
    assert run.error is not None and "RuntimeError: failing with [redacted]" in run.error
    assert set(run.scrubbed) >= {"OPENAI_API_KEY", "Anthropic-shaped key", "URL userinfo"}
    executed = run.path.read_bytes()
    assert b"the key is [redacted]" in executed
    assert _secrets_in(executed) == []
    assert _secrets_in(nbformat.writes(run.notebook).encode()) == []
    page = write_page(render_notebook(run.notebook, "leaky"), tmp_path / "out" / "leaky.html")
    html = page.read_bytes()
    assert b"the key is [redacted]" in html and _secrets_in(html) == []
    for path in (tmp_path / "work").iterdir():  # the input, the executed one, the log
        assert _secrets_in(path.read_bytes()) == [], path


def test_a_page_is_scrubbed_when_it_is_written(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [
        nbformat.v4.new_output("display_data", {"text/html": f"<b>{ENV_KEY}</b> {SHAPED}"})
    ]
    nb.cells = [cell]
    page = write_page(render_notebook(nb, "t"), tmp_path / "t.html")
    assert _secrets_in(page.read_bytes()) == []
    assert f"<b>{REDACTED}</b> {REDACTED}" in page.read_text(encoding="utf-8")


@pytest.fixture
def catalogue(tmp_path: Path) -> Catalogue:
    return load(write_catalogue(tmp_path / "catalogues", DEFAULT_CASES))
