"""Traffic: one controller per backend per run, riding the provider's rate limit.

:class:`TrafficController` (in :mod:`evalkit.traffic._controller`) is shared by every
in-flight call of a run. It adapts how many requests are in flight (AIMD, with
``--concurrency`` as the ceiling), paces to the provider's rate-limit headers and to
the user's ``--rpm`` / ``--input-tpm`` / ``--output-tpm`` (token buckets), treats a 429
as flow control (the call waits its turn and is sent again, outside the per-call
retry budget) and ends waiting calls when the run's ``--deadline`` passes. The policy
is plain state in :mod:`evalkit.traffic._policy`; the headers are read strictly in
:mod:`evalkit.traffic._headers`. ADR-0018 says why.

Token accounting. Output tokens are charged from ``max_tokens`` before a request and
corrected to the counted output after it. Input tokens are charged from the local
estimate (characters / 4) and corrected after, counted as the provider counts them
for its limit: Anthropic's input-tokens-per-minute excludes cache reads, so a backend
reports ``input_tokens + cache_creation_input_tokens``; an OpenAI-compatible server
counts every prompt token, cached or not, so it reports ``prompt_tokens``.
"""

from evalkit.traffic._controller import DeadlinePassed, SendingStopped, Ticket, TrafficController
from evalkit.traffic._headers import Reading, Report, parse_duration, parse_rfc3339, read_headers
from evalkit.traffic._policy import (
    BURST_S,
    DECREASE,
    DEFAULT_PAUSE_S,
    INITIAL_WINDOW,
    MAX_PAUSE_S,
    Bucket,
    Budgets,
    Charge,
    Limits,
    Window,
)

__all__ = [
    "BURST_S",
    "DECREASE",
    "DEFAULT_PAUSE_S",
    "INITIAL_WINDOW",
    "MAX_PAUSE_S",
    "Bucket",
    "Budgets",
    "Charge",
    "DeadlinePassed",
    "Limits",
    "Reading",
    "Report",
    "SendingStopped",
    "Ticket",
    "TrafficController",
    "Window",
    "parse_duration",
    "parse_rfc3339",
    "read_headers",
]
