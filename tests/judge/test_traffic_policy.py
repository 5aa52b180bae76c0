"""The traffic controller's policy with a fake clock: AIMD, headers, buckets, charges."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from evalkit.errors import JudgeError
from evalkit.traffic import (
    DEFAULT_PAUSE_S,
    INITIAL_WINDOW,
    MAX_PAUSE_S,
    Bucket,
    Budgets,
    Charge,
    Limits,
    Ticket,
    TrafficController,
    Window,
    parse_duration,
    read_headers,
)

NOW_WALL = datetime(2026, 12, 1, 10, 0, 0, tzinfo=UTC).timestamp()


class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


# -- AIMD ---------------------------------------------------------------------------------


def test_slow_start_then_additive_increase_per_clean_round() -> None:
    w = Window(ceiling=64)
    assert w.size == INITIAL_WINDOW
    for _ in range(4):
        w.on_success(0.0)
    assert w.size == INITIAL_WINDOW + 4  # slow start: one per success
    assert w.on_rate_limited(sent_at=1.0, now=1.0, retry_after=0.0)
    assert w.size == (INITIAL_WINDOW + 4) // 2 == 6
    for _ in range(5):
        w.on_success(2.0)
    assert w.size == 6  # a round is as many successes as the window is wide
    w.on_success(2.0)
    assert w.size == 7 and w.clean == 0


def test_window_stays_within_one_and_the_ceiling() -> None:
    w = Window(ceiling=3)
    assert w.size == 3
    for _ in range(10):
        w.on_success(0.0)
    assert w.size == 3
    for i in range(10):
        w.on_rate_limited(sent_at=float(i), now=float(i), retry_after=0.0)
    assert w.size == 1 and w.episodes == 10
    with pytest.raises(ValueError, match="below 1"):
        Window(ceiling=0)


def test_many_429s_from_one_burst_are_one_episode() -> None:
    w = Window(ceiling=16, size=16)
    burst_sent_at = 5.0
    assert w.on_rate_limited(burst_sent_at, now=5.3, retry_after=1.0)  # the cut
    for i in range(15):  # the rest of the burst was sent before the cut
        assert not w.on_rate_limited(burst_sent_at, now=5.3 + i * 0.01, retry_after=1.0)
    assert w.size == 8 and w.episodes == 1 and w.rate_limited == 16
    assert w.on_rate_limited(sent_at=7.0, now=7.3, retry_after=1.0)  # sent after: new one
    assert w.size == 4 and w.episodes == 2


def test_cool_down_is_capped_whatever_retry_after_says() -> None:
    w = Window(ceiling=8)
    w.on_rate_limited(sent_at=0.0, now=10.0, retry_after=3600.0)
    assert w.cooling(10.0) == MAX_PAUSE_S
    w.on_rate_limited(sent_at=0.0, now=30.0, retry_after=3600.0)  # same episode
    assert w.cooling(30.0) == MAX_PAUSE_S - 20.0  # still within max_pause of the cut
    assert w.cooling(10.0 + MAX_PAUSE_S) == 0.0
    for bad in (None, -5.0, math.nan):
        fresh = Window(ceiling=8)
        fresh.on_rate_limited(sent_at=0.0, now=0.0, retry_after=bad)
        assert fresh.cooling(0.0) == DEFAULT_PAUSE_S


def test_no_growth_during_a_cool_down() -> None:
    w = Window(ceiling=8, size=4)
    w.on_rate_limited(sent_at=0.0, now=0.0, retry_after=2.0)
    for _ in range(20):
        w.on_success(1.0)  # answers of requests in flight during the cool-down
    assert w.size == 2


def test_a_huge_retry_after_does_not_freeze_the_controller() -> None:
    clock = FakeClock()
    c = TrafficController(ceiling=8, clock=clock, wall=lambda: NOW_WALL)
    charge = Charge(input_tokens=100, output_tokens=50)
    assert c.wait_for(charge, clock()) == 0.0
    admitted = c.window.size
    t = _ticket(c, charge, clock())
    c.rate_limited(t, {"retry-after": "3600"}, retry_after=3600.0)
    assert c.wait_for(charge, clock()) == MAX_PAUSE_S  # not an hour
    clock.t += MAX_PAUSE_S
    assert c.wait_for(charge, clock()) == 0.0
    assert c.window.size == admitted // 2 and c.figures()["rate_limited"] == 1


def _ticket(c: TrafficController, charge: Charge, now: float) -> Ticket:
    c.budgets.take(charge, now)
    c.in_flight += 1
    return Ticket(charge, now, charge.input_tokens)


# -- headers ------------------------------------------------------------------------------


def test_anthropic_headers_with_rfc3339_reset() -> None:
    report = read_headers(
        {
            "Anthropic-RateLimit-Requests-Limit": "1200",
            "anthropic-ratelimit-requests-remaining": "7",
            "anthropic-ratelimit-requests-reset": "2026-12-01T10:00:03Z",
            "anthropic-ratelimit-input-tokens-limit": "40000",
            "anthropic-ratelimit-input-tokens-remaining": "39000",
            "anthropic-ratelimit-input-tokens-reset": "2026-12-01T09:59:00+00:00",  # past
            "anthropic-ratelimit-output-tokens-limit": "8000",
        },
        NOW_WALL,
    )
    assert report.notes == ()
    r = report.readings
    assert (r["requests"].limit, r["requests"].remaining, r["requests"].reset_s) == (1200, 7, 3.0)
    assert r["input_tokens"].reset_s == 0.0  # a reset in the past: full, never negative
    assert r["output_tokens"].remaining is None


def test_openai_headers_and_durations() -> None:
    report = read_headers(
        {
            "x-ratelimit-limit-requests": "500",
            "x-ratelimit-remaining-requests": "499",
            "x-ratelimit-reset-requests": "120ms",
            "x-ratelimit-limit-tokens": "30000",
            "x-ratelimit-remaining-tokens": "29000",
            "x-ratelimit-reset-tokens": "6m0s",
        },
        NOW_WALL,
    )
    assert report.readings["requests"].reset_s == pytest.approx(0.12)
    assert report.readings["tokens"].reset_s == 360.0
    cases = {"1s": 1.0, "6m0s": 360.0, "20ms": 0.02, "1m30.951s": 90.951, "1h2m3.5s": 3723.5}
    for text, seconds in cases.items():
        assert parse_duration(text) == pytest.approx(seconds)
    for bad in ("", "5", "-1s", "1s1m", "soon", "1.2.3s", "ms"):
        assert parse_duration(bad) is None, bad


@pytest.mark.parametrize(
    ("headers", "note"),
    [
        ({"anthropic-ratelimit-requests-limit": "12.5"}, "not a whole number >= 1"),
        ({"anthropic-ratelimit-requests-limit": "-3"}, "not a whole number >= 1"),
        ({"anthropic-ratelimit-requests-limit": "0"}, "not a whole number >= 1"),
        ({"x-ratelimit-limit-tokens": "lots"}, "not a whole number >= 1"),
        (
            {"anthropic-ratelimit-requests-limit": "10",
             "anthropic-ratelimit-requests-remaining": "11"},
            "not a whole number in [0, 10]",
        ),
        (
            {"anthropic-ratelimit-requests-limit": "10",
             "anthropic-ratelimit-requests-remaining": "-1"},
            "not a whole number in [0, 10]",
        ),
        (
            {"anthropic-ratelimit-requests-limit": "10",
             "anthropic-ratelimit-requests-reset": "2026-12-01T10:00:03"},  # no zone
            "not an RFC 3339 time with a zone",
        ),
        (
            {"x-ratelimit-limit-requests": "10", "x-ratelimit-reset-requests": "-20ms"},
            "not a duration",
        ),
    ],
)  # fmt: skip
def test_garbage_headers_are_ignored_with_a_note(headers: dict[str, str], note: str) -> None:
    report = read_headers(headers, NOW_WALL)
    assert len(report.notes) == 1 and note in report.notes[0]
    for reading in report.readings.values():  # what is kept is valid, and never negative
        assert reading.limit >= 1
        assert reading.remaining is None or 0 <= reading.remaining <= reading.limit
        assert reading.reset_s is None or reading.reset_s >= 0


def test_garbage_headers_are_counted_by_the_controller_and_change_nothing() -> None:
    clock = FakeClock()
    c = TrafficController(ceiling=4, clock=clock, wall=lambda: NOW_WALL)
    charge = Charge()
    t = _ticket(c, charge, clock())
    c.release(t, {"anthropic-ratelimit-requests-limit": "many"})
    assert c.figures()["header_notes"] == 1 and c.budgets.buckets == {}
    assert read_headers(None, NOW_WALL).readings == {}


# -- buckets and charges ------------------------------------------------------------------


def test_rpm_paces_requests() -> None:
    b = Budgets(Limits(rpm=60))  # one a second, a burst of one
    one = Charge()
    assert b.delay(one, 0.0) == 0.0
    b.take(one, 0.0)
    assert b.delay(one, 0.0) == pytest.approx(1.0)
    assert b.delay(one, 0.4) == pytest.approx(0.6)
    assert b.delay(one, 1.0) == 0.0


def test_a_cost_above_the_capacity_waits_for_a_full_bucket_and_leaves_debt() -> None:
    bucket = Bucket(rate=10.0, capacity=10.0, level=10.0, at=0.0)
    assert bucket.delay(35.0, 0.0) == 0.0
    bucket.take(35.0, 0.0)
    assert bucket.level == -25.0
    assert bucket.delay(35.0, 0.0) == pytest.approx(3.5)  # back to full, then it may go


def test_output_tokens_charged_from_max_tokens_then_corrected() -> None:
    b = Budgets(Limits(output_tpm=6000))  # 100 tokens/s, a burst of 100
    charged = Charge(output_tokens=100)  # max_tokens
    b.take(charged, 0.0)
    assert b.delay(charged, 0.0) == pytest.approx(1.0)
    b.correct(charged, Charge(output_tokens=20), 0.0)  # the answer used 20
    assert b.buckets["output_tokens"].level == pytest.approx(80.0)
    assert b.delay(charged, 0.0) == pytest.approx(0.2)


def test_reported_limits_pace_and_remaining_lowers_the_level() -> None:
    b = Budgets()
    assert b.buckets == {}
    report = read_headers(
        {
            "anthropic-ratelimit-requests-limit": "600",
            "anthropic-ratelimit-requests-remaining": "0",
        },
        NOW_WALL,
    )
    b.observe(report, 0.0)
    assert b.per_minute("requests") == 600
    assert b.delay(Charge(), 0.0) == pytest.approx(0.1)  # remaining 0: wait one token
    user = Budgets(Limits(rpm=300))
    user.observe(report, 0.0)
    assert user.per_minute("requests") == 300  # the lower of the two binds


def test_the_controller_learns_how_the_provider_counts_input() -> None:
    clock = FakeClock()
    c = TrafficController(ceiling=8, limits=Limits(input_tpm=60_000), clock=clock)
    for _ in range(20):
        t = _ticket(c, Charge(input_tokens=1000), clock())
        c.release(t)
        c.correct(t, 150, 0)
    assert c.input_ratio == pytest.approx(0.15, abs=0.01)


@pytest.mark.parametrize(
    "kwargs",
    [{"rpm": 0}, {"input_tpm": -5}, {"output_tpm": "many"}],
)
def test_user_limits_must_be_positive(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="is not a positive number"):
        Limits(**kwargs)  # type: ignore[arg-type]


def test_deadline_must_be_positive() -> None:
    with pytest.raises(JudgeError, match="--deadline 0 s is not positive"):
        TrafficController(deadline=0)
