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

``--cli`` measures the command instead (issue 29): ``evalkit judge`` in a fresh
interpreter (a subprocess, so its imports, catalogue load, planning, ledger writes and
summary all count) judges ``--calls`` cases (default 432) against the same stub at
concurrency 64. It prints the share of the limit end to end (answered calls / the
command's wall time against 20/s), the share while sending (first to last request the
stub saw), the seconds before the first request and after the last answer, and the
command's CPU time; target >= 85% end to end. Python compiles a module from source
whenever it finds no cached bytecode and may not write any (``PYTHONDONTWRITEBYTECODE``
with a venv installed without ``.pyc`` files): every process then pays it again, and
the script says so. ``--pycache DIR`` runs the command with bytecode cached in ``DIR``
(``PYTHONPYCACHEPREFIX``, warmed by one import first), as a normally installed venv.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from _common import REPO, fake_anthropic_env, header, verdict

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
TARGET_CLI_SHARE = 0.85  # issue 29: the command, end to end
#: What ``evalkit judge --judge anthropic:...`` imports on its way to the first request.
WARM_IMPORTS = "import anthropic, pandas, evalkit.judging._run, evalkit.judge.anthropic"


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


def _bytecode_note(env: dict[str, str]) -> str:
    """Whether the command will find cached bytecode for the SDK it imports."""
    spec = importlib.util.find_spec("anthropic")
    origin = spec.origin if spec is not None else None
    cached = origin is not None and Path(importlib.util.cache_from_source(origin)).exists()
    if env.get("PYTHONPYCACHEPREFIX"):
        return f"bytecode cached in {env['PYTHONPYCACHEPREFIX']} (warmed first)"
    if cached:
        return "bytecode cached in the venv"
    if env.get("PYTHONDONTWRITEBYTECODE"):
        return (
            "NO cached bytecode and PYTHONDONTWRITEBYTECODE set: each process compiles\n"
            "  its imports from source (--pycache DIR caches them)"
        )
    return "no cached bytecode yet: the first process writes it"


def _cpu_of(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` so far (Linux ``/proc``; else None)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_cli(root: Path, tmp: Path, calls: int, pycache: str | None) -> None:
    """``evalkit judge`` in a subprocess against the stub; prints the end-to-end figures."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    if pycache:
        env["PYTHONPYCACHEPREFIX"] = pycache
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        subprocess.run([sys.executable, "-c", WARM_IMPORTS], env=env, check=True)
    print(f"  {_bytecode_note(env)}")
    ledger = tmp / "cli.sqlite"
    with CountingStub(latency=LATENCY_S, rate_limit=(LIMIT, 1.0)) as stub:
        env["ANTHROPIC_BASE_URL"] = stub.base_url
        cmd = [sys.executable, "-m", "evalkit", "judge", "--judge", f"anthropic:{MODEL}",
               "--split", "calibration", "--catalogue", str(root), "--ledger", str(ledger),
               "--yes", "--concurrency", "64", "--quiet"]  # fmt: skip
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        proc = subprocess.Popen(
            cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp
        )
        samples = []  # (CPU seconds of the command so far, requests the stub has seen)
        while proc.poll() is None:
            samples.append((_cpu_of(proc.pid), len(stub.served)))
            time.sleep(0.01)
        end = time.monotonic()
        _, stderr = proc.communicate()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        stub.wait_idle()
        served = list(stub.served)
        answered = [s for s in served if s.answered]
        first = min((s.at for s in served), default=end)
        last = max((s.at for s in answered), default=end)
    if proc.returncode != 0:
        print(f"  evalkit judge exited {proc.returncode}:\n{stderr[-2000:]}")
    wall = end - start
    share = len(answered) / wall / LIMIT
    sending = len(answered) / max(last - first, 1e-9) / LIMIT
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(
        f"  {len(answered)} answered in {wall:.1f} s: {share:.1%} of the limit end to end, "
        f"{sending:.1%} while sending ({last - first:.1f} s)\n"
        f"  before the first request {first - start:.1f} s · after the last answer "
        f"{end - last:.1f} s · CPU {cpu:.1f} s (user + system)"
    )
    known = [(c, n) for c, n in samples if c is not None]
    if known:  # CPU is what load does not inflate: the fixed costs on an idle machine
        pre = next((c for c, n in known if n > 0), known[-1][0])
        post = cpu - next((c for c, n in known if n >= len(served)), cpu)
        ideal = len(answered) / LIMIT
        print(
            f"  CPU before the first request {pre:.1f} s, after the last {max(post, 0):.1f} s: "
            f"with no other load, about {ideal / (ideal + pre + max(post, 0)):.0%} end to end"
        )
    ok = proc.returncode == 0 and share >= TARGET_CLI_SHARE
    print(f"\nverdict (issue 29: >= {TARGET_CLI_SHARE:.0%} of the limit end to end): {verdict(ok)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=None, help="distinct judge calls")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[8, 16, 32, 64])
    parser.add_argument("--cli", action="store_true", help="time `evalkit judge` end to end")
    parser.add_argument("--pycache", help="with --cli: bytecode cached in this folder")
    args = parser.parse_args()
    if args.cli:
        calls = args.calls or 432
        header("bench_judge_throughput --cli: `evalkit judge` end to end against the stub")
        print(
            f"  stub: latency {LATENCY_S * 1000:.0f} ms, limit {LIMIT} requests/s; "
            f"{calls} distinct calls, concurrency 64"
        )
        with tempfile.TemporaryDirectory(prefix="bench-throughput-cli-") as tmp_dir:
            tmp = Path(tmp_dir)
            root = synthetic_catalogue(tmp / "catalogue", calls, prefix="cli")
            with fake_anthropic_env():
                run_cli(root, tmp, calls, args.pycache)
        return
    args.calls = args.calls or 288
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
