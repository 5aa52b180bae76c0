"""The retry delay: retry-after is a floor with jitter above it; backoff is capped."""

from __future__ import annotations

from evalkit.judge._base import retry_delay


def test_retry_after_is_a_floor_with_jitter() -> None:
    waits = [retry_delay(1, 2.0) for _ in range(200)]
    assert all(2.0 <= w <= 2.5 for w in waits)
    assert len({round(w, 6) for w in waits}) > 1  # not all callers wake together


def test_retry_after_never_exceeds_max_wait() -> None:
    assert retry_delay(1, 500.0, max_wait=120.0) == 120.0


def test_backoff_without_retry_after_is_capped() -> None:
    assert all(6.0 <= retry_delay(10, None, base=0.5, cap=8.0) <= 8.0 for _ in range(50))
