"""A stand-in for a batch engine: answer a batch input file through a stub server.

``run_batch(input, output, base_url)`` does what the provider's batch API or vLLM's
``run_batch`` does with a file: POST each line's request to the model server and write
one output line per request, in that engine's output format (Message Batches results for
``{"custom_id", "params"}`` lines, OpenAI batch output for ``{"custom_id", "method",
"url", "body"}`` lines). The order of the output is reversed, as engines do not keep it.
``errored`` holds custom ids to answer with an error line instead.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Collection
from pathlib import Path
from typing import Any


def _post(url: str, body: dict[str, Any]) -> tuple[int, Any]:
    req = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", "x-api-key": "test",
                 "authorization": "Bearer test", "anthropic-version": "2023-06-01"},
        method="POST",
    )  # fmt: skip
    with urllib.request.urlopen(req, timeout=30) as resp:
        return resp.status, json.loads(resp.read())


def run_batch(
    input_path: str | Path,
    output_path: str | Path,
    base_url: str,
    *,
    errored: Collection[str] = (),
) -> int:
    """Answer every line of ``input_path`` through the stub at ``base_url``; return lines."""
    out = []
    for line in Path(input_path).read_text().splitlines():
        item = json.loads(line)
        cid = item["custom_id"]
        if "params" in item:  # Message Batches
            if cid in errored:
                err = {"type": "error", "error": {"type": "overloaded_error", "message": "x"}}
                out.append({"custom_id": cid, "result": {"type": "errored", "error": err}})
                continue
            _, message = _post(f"{base_url.rstrip('/')}/v1/messages", item["params"])
            out.append({"custom_id": cid, "result": {"type": "succeeded", "message": message}})
        else:  # OpenAI batch: url is /v1/chat/completions, base_url ends in /v1
            if cid in errored:
                out.append({"id": f"batch_req_{len(out)}", "custom_id": cid, "response": None,
                            "error": {"code": "server_error", "message": "x"}})  # fmt: skip
                continue
            root = base_url.rstrip("/").removesuffix("/v1")
            status, body = _post(root + item["url"], item["body"])
            out.append(
                {
                    "id": f"batch_req_{len(out)}",
                    "custom_id": cid,
                    "response": {"status_code": status, "request_id": f"r{len(out)}", "body": body},
                    "error": None,
                }
            )
    Path(output_path).write_text("".join(json.dumps(x) + "\n" for x in reversed(out)))
    return len(out)
