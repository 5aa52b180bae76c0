"""Planning a run: which backend, which requests, and what the ledger already holds.

Requests are built for case x scored turn x dimension group; their keys are looked
up in the ledger before anything is sent (see :func:`evalkit.judge._run.judge_cases`).
"""

from __future__ import annotations

import dataclasses
import importlib
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TextIO

from evalkit.catalogue import Case, Catalogue
from evalkit.errors import EvalkitError, JudgeError
from evalkit.judge._base import Backend, CostEstimate
from evalkit.judge._prompt import (
    NEEDS_SOURCES,
    JudgeIdentity,
    JudgeParams,
    JudgeRequest,
    assistant_turns,
    build_request,
    order_dimensions,
)

#: Most repeats of one request (``--samples``).
MAX_SAMPLES = 20

Turns = Literal["final", "all"] | Sequence[int]


def _require_sealed(catalogue: Catalogue) -> str:
    """The id of the held-out seal in force; refuse to judge held-out cases without one.

    Delegates to ``evalkit.heldout.assert_sealed(catalogue)`` when that module exists;
    without it, or when it raises, this raises ``JudgeError("held-out labels are not
    sealed ...")``.
    """
    try:
        heldout = importlib.import_module("evalkit.heldout")
    except ModuleNotFoundError as exc:
        if exc.name not in ("evalkit.heldout", "evalkit"):
            raise
        raise JudgeError("held-out labels are not sealed (no seal registry installed)") from None
    check = getattr(heldout, "assert_sealed", None)
    if check is None:
        raise JudgeError("held-out labels are not sealed (evalkit.heldout has no assert_sealed)")
    try:
        return str(check(catalogue).id)
    except EvalkitError as exc:
        raise JudgeError(f"held-out labels are not sealed: {exc}") from exc


def judge_slug(judge: str) -> str:
    """A file-name-safe form of a judge spec (``anthropic:claude-x`` → ``anthropic_claude-x``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", judge).strip("_") or "judge"


def make_backend(
    spec: str,
    catalogue: Catalogue,
    *,
    for_gate: bool = False,
    params: JudgeParams | None = None,
    call_deadline: float | None = None,
) -> Backend | None:
    """The backend named by ``spec``; None for ``replay`` (answered from the ledger).

    ``call_deadline``: wall-clock seconds per HTTP attempt of a networked backend (None:
    :data:`~evalkit.judge._base.CALL_DEADLINE_S`).
    """
    kind, _, rest = spec.partition(":")
    net: dict[str, Any] = {"params": params, "for_gate": for_gate}
    if call_deadline is not None:
        net["call_deadline"] = call_deadline
    if kind == "baseline" and not rest:
        from evalkit.judge.baseline import BaselineBackend

        return BaselineBackend(catalogue.rubrics, catalogue.resources, params=params)
    if kind == "anthropic":
        from evalkit.judge.anthropic import AnthropicBackend

        return AnthropicBackend(rest, **net)
    if kind == "openai":
        from evalkit.judge.openai import OpenAIBackend, parse_openai_spec

        url, model = parse_openai_spec(rest)
        return OpenAIBackend(url, model, **net)
    if kind == "recorded":
        from evalkit.judge.recorded import RecordedBackend

        return RecordedBackend(rest, params=params)
    if kind == "replay":
        return None
    raise JudgeError(
        f"unknown judge {spec!r}; use anthropic:MODEL, openai:URL:MODEL, recorded:NAME, "
        "replay or baseline"
    )


def build_requests(
    catalogue: Catalogue,
    cases: Sequence[Case],
    dimensions: Sequence[str],
    identity: JudgeIdentity,
    salt: bytes,
    *,
    rubric_versions: dict[str, str] | None = None,
    turns: Turns = "final",
    together: bool = True,
    seal: str | None = None,
    samples: int = 1,
) -> list[JudgeRequest]:
    """Every request of a run, deduplicated, in case order.

    ``samples``: each request is asked that many times, the repeat index in the key
    (:attr:`JudgeParams.sample`, ADR-0027); the repeats of a request follow it.

    A dimension in :data:`NEEDS_SOURCES` is skipped for a case without sources.
    ``turns``: ``final`` (the last assistant turn), ``all`` (every assistant turn, each
    with the transcript prefix up to it) or explicit turn indices. ``seal``: the id of
    the held-out seal in force, bound to every held-out request (ADR-0015); a held-out
    case without it is a :class:`JudgeError`.
    """
    if type(samples) is not int or not 1 <= samples <= MAX_SAMPLES:
        raise JudgeError(f"samples must be an integer from 1 to {MAX_SAMPLES}, got {samples!r}")
    identities = [
        dataclasses.replace(identity, params=dataclasses.replace(identity.params, sample=i))
        for i in range(samples)
    ]
    if seal is None and any(c.split == "heldout" for c in cases):
        raise JudgeError("held-out labels are not sealed: no seal id for the held-out cases")
    rubric_versions = rubric_versions or {}
    dims = order_dimensions(catalogue, dimensions)
    rubrics = {}
    for d in dims:
        try:
            rubrics[d] = catalogue.rubric(d, rubric_versions.get(d))
        except KeyError as exc:
            raise JudgeError(str(exc.args[0])) from None
    out: dict[str, JudgeRequest] = {}
    for case in cases:
        if turns == "final":
            scored = [len(case.turns) - 1]
        elif turns == "all":
            scored = assistant_turns(case)
        else:
            scored = list(turns)
        usable = [d for d in dims if d not in NEEDS_SOURCES or case.has_sources]
        groups = [usable] if together else [[d] for d in usable]
        for turn in scored:
            for group in groups:
                for who in identities if group else ():
                    req = build_request(
                        catalogue,
                        case,
                        turn,
                        [rubrics[d] for d in group],
                        who,
                        salt,
                        heldout_seal=seal if case.split == "heldout" else None,
                    )
                    out.setdefault(req.key, req)
    return list(out.values())


@dataclass
class Plan:
    """What a run will do, computed before anything is sent."""

    judge: str
    requests: list[JudgeRequest]
    in_ledger: int
    errors_to_retry: int
    to_send: list[JudgeRequest]
    pending_in_batches: int = 0
    estimate: CostEstimate | None = None
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        lines = [
            f"judge {self.judge}: {len(self.requests)} request(s); {self.in_ledger} already "
            f"in the ledger; {len(self.to_send)} to send ({self.errors_to_retry} earlier "
            f"error(s) retried); {self.pending_in_batches} awaited in open batch(es)",
        ]
        if self.estimate is not None and self.to_send:
            lines.append(self.estimate_line())
        return "\n".join(lines + self.notes)

    def estimate_line(self) -> str:
        """The estimate, saying whether it is a local approximation or a provider's count."""
        est = self.estimate
        if est is None:
            return "no cost estimate"
        cost = "unknown" if est.cost_usd is None else f"${est.cost_usd:.4f}"
        kind = "local approximation, nothing sent" if est.local else "counted by the provider"
        return (
            f"estimated cost {cost} ({kind}) for ~{est.input_tokens} input and "
            f"~{est.output_tokens} output tokens ({est.method})"
        )

    def cost_per_call(self) -> float:
        """The estimated cost of one call still to send (0 when unknown or none to send)."""
        est = self.estimate
        if est is None or est.cost_usd is None or not self.to_send:
            return 0.0
        return est.cost_usd / len(self.to_send)


def _in_notebook() -> bool:
    """True inside a Jupyter kernel (where stderr is no TTY but a progress bar renders)."""
    ipython = sys.modules.get("IPython")
    try:
        shell = ipython.get_ipython() if ipython is not None else None
    except Exception:
        return False
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


class _Progress:
    """Progress of a run: calls done, cache hits, failures, spend, and the traffic
    controller's figures (requests in flight / window, pace, 429s seen).

    A ``tqdm.auto`` bar on a terminal (or a Jupyter widget); when the stream is not a
    TTY (a log, CI) one plain line every 5 s and a last one at the end. ``spend`` sums
    the calls of known cost; ``unknown_cost`` counts the others (an unpriced model, or
    a usage block that could not be read).
    """

    def __init__(
        self,
        plan: Plan,
        enabled: bool,
        stream: TextIO | None = None,
        traffic: Any = None,
    ) -> None:
        self.total = len(plan.to_send) + plan.pending_in_batches
        self.cached = plan.in_ledger
        self.done = self.failed = self.unknown_cost = 0
        self.spend = 0.0
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.traffic = traffic
        self._last = 0.0
        self._bar: Any = None
        if enabled and self.total and (self._isatty() or _in_notebook()):
            from tqdm.auto import tqdm

            self._bar = tqdm(total=self.total, file=self.stream, **self.bar_options())

    #: The bar: one rate (calls done per second), the short status after it. In a
    #: terminal of 100 columns the text takes about 60, the bar the rest.
    BAR_FORMAT = (
        "{desc} {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} "
        "[{elapsed}<{remaining}, {rate_fmt}{postfix}]"
    )

    @staticmethod
    def bar_options(notebook: bool | None = None) -> dict[str, Any]:
        """tqdm's options. In a notebook the widget spans the output's width and wraps
        its text under the bar (``ncols="100%"``), so the bar is never squeezed to 0 px."""
        notebook = _in_notebook() if notebook is None else notebook
        options: dict[str, Any] = {
            "desc": "judge",
            "unit": " calls",
            "leave": True,
            "bar_format": _Progress.BAR_FORMAT,
        }
        return {**options, "ncols": "100%"} if notebook else options

    def _isatty(self) -> bool:
        isatty = getattr(self.stream, "isatty", None)
        return bool(isatty and isatty())

    def update(self, rec: dict[str, Any]) -> None:
        self.done += 1
        self.failed += rec["status"] != "ok"
        if rec["cost_usd"] is None:
            self.unknown_cost += 1
        else:
            self.spend += rec["cost_usd"]
        if self._bar is not None:
            self._bar.set_postfix_str(self.bar_text(), refresh=False)
            self._bar.update(1)
        else:
            self.show()

    def spend_text(self) -> str:
        if self.done and self.unknown_cost == self.done:
            return "spend unknown"
        if self.unknown_cost:
            return f"${self.spend:.4f} + {self.unknown_cost} call(s) of unknown cost"
        return f"${self.spend:.4f}"

    def traffic_text(self) -> str:
        """In flight / window, pace, 429s seen (empty without a controller)."""
        if self.traffic is None:
            return ""
        f = self.traffic.figures()
        text = (
            f"{f['in_flight']} in flight (window {f['window']}) · {f['pace_per_s']:.1f} req/s · "
            f"{f['rate_limited']} × 429 in {f['episodes']} episode(s)"
        )
        if f["header_notes"]:
            text += f" · {f['header_notes']} rate-limit header(s) ignored"
        return text

    def bar_text(self) -> str:
        """The short status beside the bar: failures, spend, 429s when any (the full
        figures are printed under the bar when it closes)."""
        parts = [f"{self.failed} failed", self.spend_text()]
        if self.unknown_cost and self.unknown_cost < self.done:
            parts[1] = f"${self.spend:.4f} + {self.unknown_cost} unpriced"
        seen = self.traffic.figures()["rate_limited"] if self.traffic is not None else 0
        return " · ".join(parts + ([f"{seen} × 429"] if seen else []))

    def status_text(self) -> str:
        parts = [f"{self.cached} from ledger", f"{self.failed} failed", self.spend_text()]
        return " · ".join(parts + ([self.traffic_text()] if self.traffic is not None else []))

    def summary_text(self) -> str:
        """The figures under a closed bar, one short line each: calls, then traffic when
        requests were sent (a local judge sends none: no "0.0 req/s" beside its rate)."""
        lines = [
            f"judge: {self.done}/{self.total} calls · "
            + " · ".join([f"{self.cached} from ledger", f"{self.failed} failed", self.spend_text()])
        ]
        if self.traffic is not None and self.traffic.figures()["sent"]:
            lines.append(f"judge: {self.traffic_text()}")
        return "\n".join(lines)

    def show(self, final: bool = False) -> None:
        if not self.enabled:
            return
        if self._bar is not None:
            if final:
                self._bar.set_postfix_str(self.bar_text(), refresh=True)
            return
        now = time.monotonic()
        if not (final or now - self._last >= 5.0):
            return
        self._last = now
        line = f"judge: {self.done}/{self.total} calls · {self.status_text()}"
        self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        """End the bar, and name the rate-limit headers that were ignored (if any)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
            self.stream.write(f"{self.summary_text()}\n")
            self.stream.flush()
        notes = self.traffic.header_notes if self.traffic is not None else {}
        if self.enabled and notes:
            first, n = next(iter(notes.items()))
            self.stream.write(
                f"judge: ignored {sum(notes.values())} malformed rate-limit header value(s), "
                f"e.g. {first} ({n}x)\n"
            )
            self.stream.flush()
