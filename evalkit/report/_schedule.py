"""Run independent jobs a few at a time, and say what runs while they run.

:func:`run_jobs` runs named jobs on up to ``workers`` threads (each study's work is in
its kernel, a subprocess, so threads are enough to keep the cores busy), prints a line
when each starts, and returns the results in the order the jobs were given, whatever
order they finished in. :class:`Reporter` writes those lines and a progress line: on a
terminal one line rewritten in place every second; elsewhere (a log, a pipe) a line only
after ``every`` seconds with nothing printed, so a long job is never silent for longer.
No line is wider than :data:`WIDTH` characters (or the terminal, if narrower).
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TextIO, TypeVar

R = TypeVar("R")

#: The widest line the reporter writes (a terminal at 100 columns).
WIDTH = 100


def cores_available() -> int:
    """The CPUs this process may run on (``os.sched_getaffinity``; ``os.cpu_count`` where
    that does not exist), at least 1."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def fit(text: str, width: int = WIDTH) -> str:
    """``text`` cut to ``width`` characters, ending in "…" when cut."""
    return text if len(text) <= width else text[: width - 1] + "…"


class Reporter:
    """Thread-safe lines and a progress line for a run.

    ``write`` receives whole lines (without newline) when ``stream`` is None, e.g. a test's
    list; otherwise lines go to ``stream`` (default stderr). ``tty`` (default: whether
    ``stream`` is a terminal) chooses between rewriting the progress line in place and
    printing it as a line after ``every`` seconds of silence.
    """

    def __init__(
        self,
        write: Callable[[str], None] | None = None,
        *,
        stream: TextIO | None = None,
        tty: bool | None = None,
        every: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._stream = stream if stream is not None or write is not None else sys.stderr
        self._write = write
        self._tty = bool(tty) if tty is not None else _is_tty(self._stream)
        self._every = every
        self._clock = clock
        self._lock = threading.Lock()
        self._last = clock()
        self._shown = False  # a progress line is on the terminal, to be cleared

    @property
    def width(self) -> int:
        if not self._tty:
            return WIDTH
        return max(20, min(WIDTH, shutil.get_terminal_size((WIDTH, 24)).columns))

    def line(self, text: str) -> None:
        """Print ``text`` as a line of its own (clearing the progress line first)."""
        with self._lock:
            self._clear()
            self._emit(text + "\n")
            self._last = self._clock()

    def progress(self, text: str) -> None:
        """Show ``text`` as the progress line: in place on a terminal; elsewhere as a line,
        but only when nothing was printed for ``every`` seconds."""
        with self._lock:
            if self._tty:
                self._emit("\r" + fit(text, self.width - 1) + "\x1b[K")
                self._shown = True
            elif self._clock() - self._last >= self._every:
                self._emit(fit(text, self.width) + "\n")
                self._last = self._clock()

    def done(self) -> None:
        """Clear the progress line (at the end of a run)."""
        with self._lock:
            self._clear()

    def _clear(self) -> None:
        if self._shown:
            self._emit("\r\x1b[K")
            self._shown = False

    def _emit(self, text: str) -> None:
        if self._write is not None:
            if text.endswith("\n"):
                self._write(text[:-1])
            return
        assert self._stream is not None
        self._stream.write(text)
        self._stream.flush()


def _is_tty(stream: TextIO | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):
        return False


def run_jobs(
    jobs: Sequence[tuple[str, Callable[[], R]]],
    *,
    workers: int,
    reporter: Reporter,
    tick: float = 1.0,
) -> list[R]:
    """Run each ``(name, job)`` on up to ``workers`` threads; return the results in the
    order of ``jobs``.

    Each job's start is reported as ``NAME: started``; its end is the job's own business
    (it knows what it made). While jobs run, every ``tick`` seconds the progress line names
    the running jobs with their time so far and how many are done. A job that raises:
    the jobs not yet started are not started, the running ones finish, and the first
    exception (in the order of ``jobs``) is raised. ``workers`` below 1 counts as 1.
    """
    if not jobs:
        return []
    started: dict[str, float] = {}
    finished: set[str] = set()
    guard = threading.Lock()
    stop = threading.Event()

    def wrap(name: str, job: Callable[[], R]) -> Callable[[], R]:
        def run() -> R:
            if stop.is_set():
                raise _NotStarted(name)
            with guard:
                started[name] = time.monotonic()
            reporter.line(f"{name}: started")
            try:
                return job()
            except BaseException:
                stop.set()
                raise
            finally:
                with guard:
                    finished.add(name)

        return run

    def status() -> str:
        now = time.monotonic()
        with guard:
            running = [(n, now - t) for n, t in started.items() if n not in finished]
            done = len(finished)
        what = ", ".join(f"{n} {s:.0f} s" for n, s in running) or "starting"
        return f"  … {done} of {len(jobs)} done; running: {what}"

    def ticker() -> None:
        while not ticking.wait(tick):
            reporter.progress(status())

    ticking = threading.Event()
    watcher = threading.Thread(target=ticker, name="study-progress", daemon=True)
    watcher.start()
    try:
        with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="study") as pool:
            futures: list[Future[R]] = [pool.submit(wrap(n, j)) for n, j in jobs]
            errors = [f.exception() for f in futures]
    finally:
        ticking.set()
        watcher.join()
        reporter.done()
    first = next((e for e in errors if e is not None and not isinstance(e, _NotStarted)), None)
    if first is not None:
        raise first
    return [f.result() for f in futures]


class _NotStarted(Exception):
    """A job left out because an earlier one raised."""
