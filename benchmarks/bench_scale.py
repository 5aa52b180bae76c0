"""Benchmark: 100,000 judged cases through ledger -> load_ledger -> pairs -> agreement table.

Run:  python benchmarks/bench_scale.py [--cases 100000] [--tracemalloc]

Makes ``--cases`` synthetic judged requests one at a time (one per case, scoring the
three gated dimensions together, about 1% unparseable, with a raw answer of realistic
size) and writes each into a real SQLite ledger through the ledger's own API
(``Ledger.record``, one transaction each, as the judge writes them); then reads it back
with ``evalkit.judge.load_ledger``, joins it with as many synthetic human labels through
``evalkit.gate.join_pairs`` and computes ``evalkit.agreement.agreement_table`` (2,000
bootstrap resamples per dimension, the default). Prints the time of each stage, the
ledger's size on disk and the process's peak resident memory after each stage
(``resource.getrusage``); with ``--tracemalloc``, also the peak of Python allocations
within each stage (slower). Issue 9 sets no target for this one; it only prints.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pandas as pd
from _common import REPO, header, peak_rss_mb

from evalkit.agreement import agreement_table
from evalkit.catalogue import load
from evalkit.gate import join_pairs
from evalkit.judge import Ledger, load_ledger

T = TypeVar("T")
BINS = ["low", "partial", "high"]
MODEL = "claude-sonnet-4-6"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def synthetic_records(n: int, labels: list[tuple[str, str, str]], seed: int = 0
                      ) -> Iterator[dict[str, Any]]:  # fmt: skip
    """``n`` ledger records (REQUEST_FIELDS + results), made one at a time; the matching
    human labels are appended to ``labels``."""
    catalogue = load(REPO / "catalogues")
    bins = catalogue.constants.bins
    dims = []
    for d in catalogue.constants.gated_dimensions:
        rubric = catalogue.rubric(d)
        dims.append({"dimension": d, "version": rubric.version,
                     "rubric_hash": rubric.content_hash(bins),
                     "presence_gated": rubric.presence_gated})  # fmt: skip
    rng = np.random.default_rng(seed)
    human = rng.choice(BINS, size=(n, len(dims)), p=[0.6, 0.25, 0.15])
    judge = human.copy()
    flip = rng.random((n, len(dims))) < 0.2
    judge[flip] = rng.choice(BINS, size=int(flip.sum()))
    unparseable = rng.random(n) < 0.01
    for i in range(n):
        key = _sha(f"scale-request-{i}")
        case_id = f"scale-{i:06d}"
        ok = not unparseable[i]
        results = [
            {"dimension": d["dimension"], "bin": str(judge[i, j]), "signal_present": True,
             "evidence_turns": ["t1"], "rationale": "synthetic rationale for the benchmark",
             "injection_attempt": False}
            for j, d in enumerate(dims)
        ] if ok else []  # fmt: skip
        raw = json.dumps({"id": f"msg_{i:08d}", "type": "message", "role": "assistant",
                          "model": MODEL, "stop_reason": "tool_use",
                          "content": [{"type": "tool_use", "name": "record_scores",
                                       "input": {"scores": results}}]})  # fmt: skip
        yield (
            {
                "request_key": key, "content_key": _sha(key), "request_id": key[:8],
                "nonce": key[8:24], "case_id": case_id, "turn": 1, "dimensions": dims,
                "framing_hash": catalogue.framing_hash,
                "constants_hash": catalogue.constants_hash, "judge": f"anthropic:{MODEL}",
                "backend": "anthropic", "model": MODEL,
                "params": {"max_tokens": 4096, "mode": "tool", "temperature": None,
                           "schema_version": "record_scores/1"},
                "status": "ok" if ok else "unparseable", "attempts": 1 if ok else 3,
                "raw_response": raw, "problem": None if ok else "attempt 1: synthetic",
                "error": None, "input_tokens": 620, "output_tokens": 120,
                "cache_read_tokens": 1546, "cache_creation_tokens": 0, "cost_usd": 0.00415,
                "latency_s": 1.2, "response_model": MODEL, "batch_id": None,
                "created_at": f"2026-11-30T00:00:00.{i:06d}+00:00", "results": results,
            }
        )  # fmt: skip
        labels += [(case_id, d["dimension"], str(human[i, j])) for j, d in enumerate(dims)]


def stage(name: str, fn: Callable[[], T], trace: bool, rows: list[tuple[str, str]]) -> T:
    if trace:
        tracemalloc.start()
    t0 = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t0
    extra = ""
    if trace:
        extra = (
            f"; Python allocations peaked at {tracemalloc.get_traced_memory()[1] / 2**20:,.0f} MiB"
        )
        tracemalloc.stop()
    line = f"{dt:8.2f} s   peak RSS so far {peak_rss_mb():7,.0f} MiB{extra}"
    rows.append((name, line))
    print(f"    {name:<34}{line}", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--tracemalloc", action="store_true", help="also trace Python heap peaks")
    args = parser.parse_args()
    header("bench_scale: synthetic judged cases through the ledger to the agreement table")
    print(f"  {args.cases:,} cases × 3 dimensions (one request per case, ~1% unparseable)\n")
    rows: list[tuple[str, str]] = []
    trace = args.tracemalloc
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        path = Path(tmp) / "ledger.sqlite"
        label_rows: list[tuple[str, str, str]] = []
        in_record = [0.0]

        def write() -> int:
            written = 0
            with Ledger(path) as led:
                for rec in synthetic_records(args.cases, label_rows):
                    t0 = time.perf_counter()
                    written += led.record(rec)
                    in_record[0] += time.perf_counter() - t0
            return written

        written = stage("make + Ledger.record each", write, trace, rows)
        print(f"    {'':<34}of which in Ledger.record: {in_record[0]:.2f} s "
              f"({args.cases / in_record[0]:,.0f} requests/s)")  # fmt: skip
        labels = pd.DataFrame(label_rows, columns=["case_id", "dimension", "bin"])
        size = sum(p.stat().st_size for p in Path(tmp).glob("ledger.sqlite*"))
        frame = stage("load_ledger", lambda: load_ledger(path), trace, rows)
        pairs = stage("gate.join_pairs", lambda: join_pairs(frame, labels), trace, rows)
        table = stage(
            "agreement_table (2,000 resamples)",
            lambda: agreement_table(pairs, BINS, judge_col="judge_bin", human_col="human_bin"),
            trace,
            rows,
        )
    print(f"\n  {written:,} request(s) written; ledger {size / 2**20:,.0f} MiB on disk; "
          f"frame {len(frame):,} rows, {frame.memory_usage(deep=True).sum() / 2**20:,.0f} MiB; "
          f"{len(pairs):,} pairs")  # fmt: skip
    cols = ["dimension", "n", "n_missing", "kappa", "boot_low", "boot_high", "ac1", "status"]
    print(table[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print("\n  target: none set in issue 9 (time and peak memory are reported)")


if __name__ == "__main__":
    main()
