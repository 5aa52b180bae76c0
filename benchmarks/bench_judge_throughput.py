"""Benchmark: judge throughput against a rate-limited Messages API, and duplicates.

Run:  python benchmarks/bench_judge_throughput.py [--calls 1000] [--concurrency 8]

Starts the stub Messages API (``tests.stubs.anthropic_stub``) on 127.0.0.1 with 300 ms
latency and a limit of 20 requests/s (a sliding 1-second window; beyond it the stub
answers 429 with ``retry-after``), writes a synthetic catalogue of ``--calls`` distinct
cases, and judges them through the real ``anthropic`` backend (``AnthropicBackend``,
the official SDK, a fake key in the environment) with ``judge_cases`` into a fresh
ledger. Prints, in one run:

  1. calls/s achieved end to end (planning, sending, recording) and over the sending
     phase (first to last request the stub saw), against the limit; target >= 90%;
  2. retries: 429s the stub sent, and ``attempts - 1`` summed over the ledger (equal
     when every attempt is counted);
  3. duplicates counted on the stub side: bodies (sha256 of the JSON) answered with a
     200 more than once; target 0; plus the ledger's own view (one row per request).
It only prints: nothing fails on a slow machine. 1,000 calls take about a minute.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from _common import fake_anthropic_env, header, verdict

from evalkit.catalogue import load
from evalkit.judge import judge_cases, load_ledger
from evalkit.judge.anthropic import AnthropicBackend
from tests.faults._support import MODEL, CountingStub, synthetic_catalogue

LATENCY_S = 0.3
LIMIT = 20  # requests per second
TARGET_SHARE = 0.90


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000, help="distinct judge calls")
    parser.add_argument(
        "--concurrency", type=int, default=8, help="judge concurrency (CLI default 8)"
    )
    parser.add_argument(
        "--max-retries", type=int, default=None, help="backend retry budget (default: its own)"
    )
    args = parser.parse_args()
    header("bench_judge_throughput: judge calls against a rate-limited stub Messages API")
    print(
        f"  stub: latency {LATENCY_S * 1000:.0f} ms, limit {LIMIT} requests/s (429 + "
        f"retry-after beyond it); {args.calls} distinct calls; concurrency {args.concurrency}"
    )
    with tempfile.TemporaryDirectory(prefix="bench-throughput-") as tmp:
        root = synthetic_catalogue(Path(tmp) / "catalogue", args.calls, prefix="tp")
        catalogue = load(root)
        ledger = Path(tmp) / "ledger.sqlite"
        with CountingStub(latency=LATENCY_S, rate_limit=(LIMIT, 1.0)) as stub, fake_anthropic_env():
            kw = {} if args.max_retries is None else {"max_retries": args.max_retries}
            backend = AnthropicBackend(MODEL, base_url=stub.base_url, **kw)
            t0 = time.monotonic()
            frame = judge_cases(
                catalogue,
                judge=backend.spec,
                ledger=ledger,
                backend=backend,
                concurrency=args.concurrency,
                progress=False,
            )
            wall = time.monotonic() - t0
            served = list(stub.served)
            first_pass = frame.drop_duplicates("request_key")
            errors = int((first_pass["status"] == "error").sum())
            rerun_wall, rerun_sent = 0.0, 0
            if errors:  # what `evalkit judge` advises on exit 1: run the same command again
                t1 = time.monotonic()
                judge_cases(catalogue, judge=backend.spec, ledger=ledger, backend=backend,
                            concurrency=args.concurrency, progress=False)  # fmt: skip
                rerun_wall = time.monotonic() - t1
                rerun_sent = len(stub.served) - len(served)
            max_in_flight = stub.max_in_flight
            duplicates = stub.duplicates()
            all_served = list(stub.served)
        frame = load_ledger(ledger)
    requests = frame.drop_duplicates("request_key")
    n = len(requests)
    ok = int((first_pass["status"] == "ok").sum())
    first = min(s.at for s in served)
    last = max(s.at for s in served if s.status == 200)
    sending = last - first + LATENCY_S  # the last answer leaves the stub LATENCY_S later
    answered = sum(s.answered for s in served)
    rate_e2e = ok / wall
    rate_send = answered / sending
    stub_429 = sum(s.status == 429 for s in all_served)
    ledger_retries = int((requests["attempts"] - 1).sum())

    print("\n[1] throughput (first pass)")
    statuses = first_pass["status"].value_counts().to_dict()
    print(f"    {len(first_pass)} request(s) recorded, statuses {statuses}")
    print(
        f"    end to end: {ok} answered in {wall:.1f} s -> {rate_e2e:.2f} calls/s = "
        f"{rate_e2e / LIMIT:.1%} of the limit"
    )
    print(
        f"    sending phase: {sending:.1f} s -> {rate_send:.2f} calls/s = {rate_send / LIMIT:.1%}"
    )
    print(f"    most requests in flight at the stub: {max_in_flight}")
    print(
        f"    target >= {TARGET_SHARE:.0%} of {LIMIT}/s end to end: "
        f"{verdict(rate_e2e >= TARGET_SHARE * LIMIT)}"
    )
    if errors:
        print(
            f"    {errors} request(s) ended in `error` (retry budget spent on 429s); the re-run "
            f"sent {rerun_sent} request(s) in {rerun_wall:.1f} s and left statuses "
            f"{requests['status'].value_counts().to_dict()}"
        )
    print("\n[2] retries (both passes)")
    print(f"    stub answered {stub_429} request(s) with 429; {len(all_served)} answer requests")
    extra = len(all_served) - n
    print(
        f"    ledger attempts - 1 summed: {ledger_retries} "
        f"({'matches' if ledger_retries == extra else 'DIFFERS from'} the stub's "
        f"{extra} extra request(s)); most attempts for one request: "
        f"{int(requests['attempts'].max())}"
    )
    print("\n[3] duplicates")
    ledger_dupes = int(frame.duplicated(["request_key", "dimension"]).sum())
    print(
        f"    stub side: {duplicates} body(ies) answered more than once (target 0): "
        f"{verdict(duplicates == 0)}"
    )
    print(
        f"    ledger side: {ledger_dupes} duplicated (request, dimension) row(s); "
        f"{n} distinct keys for {args.calls} planned calls"
    )


if __name__ == "__main__":
    main()
