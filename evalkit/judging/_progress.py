"""Progress of a run on stderr: a bar on a terminal or in Jupyter, plain lines in a log."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from evalkit.judging._plan import Plan


def _in_notebook() -> bool:
    """True inside a Jupyter kernel (where stderr is no TTY but a progress bar renders)."""
    ipython = sys.modules.get("IPython")
    try:
        shell = ipython.get_ipython() if ipython is not None else None
    except Exception:
        return False
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def widen(bar: Any) -> None:
    """In a notebook, let the bar's widget span the output's width and wrap its text under
    the bar, so the bar is never squeezed to 0 px behind its status. This is the layout
    tqdm gives ``ncols="100%"``, set on the widget directly: with ``ncols="100%"`` tqdm's
    own text form of the widget fails (``str - int``), and papermill, saving a notebook's
    outputs, asks for that text. A terminal bar (no ``container``) is left as it is."""
    box = getattr(bar, "container", None)
    if box is None:
        return
    box.children[1].layout.flex = "2"
    box.layout.width = "100%"
    box.layout.display = "inline-flex"
    box.layout.flex_flow = "row wrap"


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
            widen(self._bar)

    #: The bar: one rate (calls done per second), the short status after it. In a
    #: terminal of 100 columns the text takes about 60, the bar the rest.
    BAR_FORMAT = (
        "{desc} {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} "
        "[{elapsed}<{remaining}, {rate_fmt}{postfix}]"
    )

    @staticmethod
    def bar_options() -> dict[str, Any]:
        """tqdm's options, the same in a terminal (which sizes the bar itself) and in a
        notebook (where :func:`widen` lays the widget out)."""
        return {
            "desc": "judge",
            "unit": " calls",
            "leave": True,
            "bar_format": _Progress.BAR_FORMAT,
        }

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
