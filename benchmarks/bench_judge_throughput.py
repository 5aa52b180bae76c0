"""Benchmark: judge throughput against a rate-limited Messages API, at any concurrency.

Run:  python benchmarks/bench_judge_throughput.py [--calls 288] [--concurrency 8 16 32 64]

Starts the stub Messages API (``tests.stubs.anthropic_stub``) on 127.0.0.1 with 300 ms
latency and a limit of 20 requests/s (a token bucket of 20 refilled at 20/s, enforced
like a provider: 429 with ``retry-after`` beyond it, ``anthropic-ratelimit-*`` headers
on every answer), writes a synthetic catalogue of ``--calls`` distinct cases, and
judges them through the real ``anthropic`` backend (the official SDK, a fake key) with
``judge_cases`` into a fresh ledger, once per concurrency. Then once more at the
highest concurrency with an input-tokens-per-minute limit that binds (set to 60% of
what the request limit allows). Per run it prints:

* share of the limit achieved end to end (planning, sending, recording: answered
  calls / wall time against 20/s; for the TPM run, input tokens counted as the stub
  counts them / wall time against the TPM limit);
* 429s answered by the stub, and as a share of all requests it received;
* calls recorded as ``error`` (one pass: no re-run);
* duplicates: bodies the stub answered with a 200 more than once;
* wall time, and the most requests in flight at the stub.

Targets (issue 16): 0 errors, >= 95% of the request limit, 429s <= 10% of requests;
with the binding TPM limit, >= 90% of it and 0 errors. It prints PASS/MISS and never
fails: a loaded machine may miss. About 90 s in all with the defaults.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from _common import fake_anthropic_env, header, verdict

from evalkit.catalogue import load
from evalkit.judge import judge_cases
from evalkit.judge.anthropic import AnthropicBackend
from tests.faults._support import MODEL, CountingStub, synthetic_catalogue

LATENCY_S = 0.3
LIMIT = 20  # requests per second
TARGET_SHARE = 0.95
TARGET_TPM_SHARE = 0.90
MAX_429_SHARE = 0.10
TPM_BINDING = 0.6  # the TPM run's limit, as a share of what 20 requests/s would use


@dataclass
class Result:
    label: str
    calls: int
    ok: int
    errors: int
    requests: int
    rate_limited: int
    duplicates: int
    wall: float
    max_in_flight: int
    share: float

    def line(self) -> str:
        return (
            f"  {self.label:<24} {self.share:6.1%} of limit · {self.rate_limited:3d} × 429 "
            f"({self.rate_limited / max(self.requests, 1):5.1%} of {self.requests}) · "
            f"{self.errors} error · {self.duplicates} dup · {self.wall:5.1f} s · "
            f"max {self.max_in_flight} in flight"
        )


def run_once(
    root: Path, tmp: Path, label: str, concurrency: int, input_tpm: float | None = None
) -> tuple[Result, float]:
    """One judge run into a fresh ledger; returns the result and the input tokens/s the
    stub counted (uncached input + cache writes, as Anthropic's ITPM counts them)."""
    catalogue = load(root)
    ledger = tmp / f"ledger-{label.replace(' ', '_')}.sqlite"
    with CountingStub(latency=LATENCY_S, rate_limit=(LIMIT, 1.0), input_tpm=input_tpm) as stub:
        backend = AnthropicBackend(MODEL, base_url=stub.base_url)
        t0 = time.monotonic()
        frame = judge_cases(
            catalogue,
            judge=backend.spec,
            ledger=ledger,
            backend=backend,
            concurrency=concurrency,
            progress=False,
        )
        wall = time.monotonic() - t0
        stub.wait_idle()
        served = list(stub.served)
        result = Result(
            label=label,
            calls=len(frame.drop_duplicates("request_key")),
            ok=0,
            errors=0,
            requests=len(served),
            rate_limited=sum(s.status == 429 for s in served),
            duplicates=stub.duplicates(),
            wall=wall,
            max_in_flight=stub.max_in_flight,
            share=0.0,
        )
    requests = frame.drop_duplicates("request_key")
    result.ok = int((requests["status"] == "ok").sum())
    result.errors = int((requests["status"] == "error").sum())
    tokens = float((requests["input_tokens"] + requests["cache_creation_tokens"]).sum())
    result.share = result.ok / wall / LIMIT
    return result, tokens / wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=288, help="distinct judge calls")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[8, 16, 32, 64])
    args = parser.parse_args()
    header("bench_judge_throughput: judge calls against a rate-limited stub Messages API")
    print(
        f"  stub: latency {LATENCY_S * 1000:.0f} ms, limit {LIMIT} requests/s (token bucket, "
        f"429 + retry-after + rate-limit headers); {args.calls} distinct calls per run"
    )
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="bench-throughput-") as tmp_dir:
        tmp = Path(tmp_dir)
        root = synthetic_catalogue(tmp / "catalogue", args.calls, prefix="tp")
        with fake_anthropic_env():
            per_second: list[float] = []
            for c in args.concurrency:
                result, tokens_per_s = run_once(root, tmp, f"concurrency {c}", c)
                results.append(result)
                per_second.append(tokens_per_s / max(result.ok / result.wall, 1e-9))
                print(result.line(), flush=True)
            # Input tokens per call as the stub counts them; the TPM limit binds below the
            # request limit: TPM_BINDING of the tokens 20 requests/s would use.
            per_call = sum(per_second) / len(per_second)
            tpm = TPM_BINDING * LIMIT * per_call * 60
            top = max(args.concurrency)
            tpm_result, tpm_rate = run_once(root, tmp, f"TPM {tpm:.0f}, conc. {top}", top, tpm)
            tpm_share = tpm_rate / (tpm / 60)
            tpm_result.share = tpm_share
            print(tpm_result.line().replace("of limit", "of TPM  "), flush=True)

    print("\nverdicts (issue 16: 0 errors, >= 95% of the limit, 429s <= 10% of requests)")
    for r in results:
        ok = r.errors == 0 and r.share >= TARGET_SHARE
        ok = ok and r.rate_limited <= MAX_429_SHARE * r.requests and r.duplicates == 0
        print(f"  {r.label:<24} {verdict(ok)}")
    ok = tpm_result.errors == 0 and tpm_share >= TARGET_TPM_SHARE and tpm_result.duplicates == 0
    print(f"  {tpm_result.label:<24} {verdict(ok)} (>= {TARGET_TPM_SHARE:.0%} of the TPM limit)")


if __name__ == "__main__":
    main()
