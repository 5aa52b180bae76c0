"""Reading a batch output file: size limits, one JSON object per line, and the Reply each
line gives (Message Batches result lines or OpenAI/vLLM batch output lines).

Every problem is collected with its line and field and raised together as a
:class:`BatchFileError` (exit 2); nothing here writes anything. See
:mod:`evalkit.judging._batch_files` for the formats and the import itself.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evalkit.errors import EvalkitError, JudgeError
from evalkit.judge._base import Reply

#: Largest batch output file read (bytes); larger is refused before reading.
MAX_FILE_BYTES = 2 * 1024**3
#: Largest single line (bytes): a judge answer is a few KB.
MAX_LINE_BYTES = 4 * 1024**2


class BatchFileError(EvalkitError):
    """A batch output file that cannot be imported: every problem, with file and line."""

    def __init__(self, path: Path, problems: Sequence[tuple[int | None, str, str]]) -> None:
        self.problems = list(problems)
        shown = [
            f"  - {path}" + (f" line {line}" if line else "") + (f" [{f}]" if f else "") + f": {m}"
            for line, f, m in self.problems[:20]
        ]
        more = len(self.problems) - len(shown)
        super().__init__(
            f"{len(self.problems)} problem(s) in batch output {path}; nothing was recorded:\n"
            + "\n".join(shown)
            + (f"\n  ... and {more} more" if more > 0 else "")
        )


def _read_lines(path: Path) -> list[tuple[int, str]]:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise JudgeError(f"batch output {path}: cannot read: {exc.strerror or exc}") from None
    if size > MAX_FILE_BYTES:
        raise BatchFileError(path, [(None, "", f"{size} bytes, more than {MAX_FILE_BYTES}")])
    out = []
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            out.append((number, raw))
    problems: list[tuple[int | None, str, str]] = []
    lines = []
    for number, raw in out:
        if len(raw) > MAX_LINE_BYTES:
            problems.append((number, "", f"line of {len(raw)} bytes, over {MAX_LINE_BYTES}"))
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            problems.append((number, "", "not valid UTF-8"))
            continue
        if text.strip():
            lines.append((number, text))
    if problems:
        raise BatchFileError(path, problems)
    return lines


def _reply_for(
    backend: Any, item: dict[str, Any], number: int, problems: list[tuple[int | None, str, str]]
) -> Reply | None:
    """The Reply one output line gives, or None after adding its problem."""
    if "result" in item:  # Message Batches result line
        if set(item) != {"custom_id", "result"}:
            problems.append((number, "", f"keys {sorted(item)}, expected custom_id, result"))
            return None
        result = item["result"]
        if not isinstance(result, dict) or result.get("type") not in (
            "succeeded", "errored", "canceled", "expired"
        ):  # fmt: skip
            problems.append((number, "result.type", "not succeeded|errored|canceled|expired"))
            return None
        if result["type"] != "succeeded":
            detail = json.dumps(result.get("error"), sort_keys=True)[:500]
            return Reply("error", error=f"batch item {result['type']}: {detail}")
        message = result.get("message")
        if not isinstance(message, dict):
            problems.append((number, "result.message", "not an object"))
            return None
        model = message.get("model")
        if model != backend.model:
            problems.append(
                (number, "result.message.model", f"{model!r} is not the judge's {backend.model!r}")
            )
            return None
        import anthropic

        try:
            parsed = anthropic.types.Message.model_validate(message)
        except Exception as exc:  # pydantic's ValidationError: a malformed message
            first = str(exc).splitlines()[0:2]
            problems.append((number, "result.message", f"not a Message: {' '.join(first)}"))
            return None
        return backend.reply_from_message(parsed, attempts=1, latency_s=0.0, batch=True)
    if "response" in item or "error" in item:  # OpenAI / vLLM batch output line
        extra = set(item) - {"id", "custom_id", "response", "error"}
        if extra:
            problems.append((number, "", f"unknown keys {sorted(extra)}"))
            return None
        response, error = item.get("response"), item.get("error")
        if response is None:
            if error is None:
                problems.append((number, "", "neither response nor error"))
                return None
            return Reply("error", error=f"batch item error: {json.dumps(error)[:500]}")
        if not isinstance(response, dict):
            problems.append((number, "response", "not an object"))
            return None
        status = response.get("status_code")
        if type(status) is not int:
            problems.append((number, "response.status_code", "not an integer"))
            return None
        body = response.get("body")
        if status != 200:
            return Reply("error", error=f"batch item HTTP {status}: {json.dumps(body)[:500]}")
        if not isinstance(body, dict):
            problems.append((number, "response.body", "not an object"))
            return None
        if body.get("model") != backend.model:
            problems.append(
                (number, "response.body.model", f"{body.get('model')!r} is not {backend.model!r}")
            )
            return None
        return backend.reply_from_body(json.dumps(body))
    problems.append((number, "", "neither a Message Batches nor an OpenAI batch output line"))
    return None
