"""The controller's policy as plain state and arithmetic: no clock, no waiting.

Every method takes ``now`` (seconds on a monotonic clock) so the policy is tested with
a fake clock; :mod:`evalkit.traffic._controller` does the waiting.

* :class:`Window`: how many requests may be in flight (AIMD). Until the first rate-limit
  episode it grows by one per success (a slow start: it doubles each round, from
  :data:`INITIAL_WINDOW`), so a run reaches a limit it does not know within a few round
  trips. Additive increase after that: +1 after a *clean round*, as many successes in a
  row as the window is wide, with no rate limit among them. Multiplicative decrease: x
  :data:`DECREASE` on a rate-limit *episode*. An episode is the 429s of one burst: a 429
  for a request sent before the last cut belongs to the episode that made the cut and
  changes nothing (a burst of 16 requests answered 16 times 429 is one cut, not
  sixteen). A cut starts a cool-down, in which no request starts, for the
  ``retry-after`` the provider gave, but never longer than ``max_pause`` after the cut:
  a ``retry-after`` of an hour costs ``max_pause`` per episode, and the run's deadline
  decides how long to keep trying.
* :class:`Bucket`: a token bucket (``rate`` units/s, ``capacity`` units). A cost larger
  than the capacity is let through when the bucket is full and leaves it in debt, so
  no request waits forever and the average rate holds.
* :class:`Budgets`: one bucket per resource (requests, input tokens, output tokens,
  all tokens) at the lower of the user's limit and the provider's reported one, each
  per minute, with a burst of :data:`BURST_S` seconds of its rate (the providers
  enforce per-minute limits over shorter intervals too).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from evalkit.traffic._headers import RESOURCES, Report

#: Window factor on a rate-limit episode.
DECREASE = 0.5
#: Longest cool-down after a cut, whatever ``retry-after`` says (seconds).
MAX_PAUSE_S = 60.0
#: Cool-down after a cut when the provider names no wait (seconds).
DEFAULT_PAUSE_S = 1.0
#: Burst of a bucket: this many seconds of its rate may go at once.
BURST_S = 1.0
#: Window a run starts with (never above the ceiling): small enough that a first burst
#: against an unknown limit costs few 429s, and grows by one per clean round.
INITIAL_WINDOW = 8


@dataclass
class Window:
    """The AIMD window (see the module docstring). ``size`` is in ``[1, ceiling]``."""

    ceiling: int
    size: int = 0
    max_pause: float = MAX_PAUSE_S
    cut_at: float = -math.inf
    cooldown_until: float = -math.inf
    clean: int = 0
    episodes: int = 0
    rate_limited: int = 0

    def __post_init__(self) -> None:
        if self.ceiling < 1:
            raise ValueError(f"concurrency ceiling {self.ceiling} is below 1")
        self.size = min(self.ceiling, self.size or INITIAL_WINDOW)

    def cooling(self, now: float) -> float:
        """Seconds of cool-down left at ``now`` (0 when none)."""
        return max(0.0, self.cooldown_until - now)

    def on_success(self, now: float) -> None:
        """A request answered without a rate limit; maybe widen the window."""
        if now < self.cooldown_until:
            return
        if not self.episodes:  # slow start
            self.size = min(self.ceiling, self.size + 1)
            return
        self.clean += 1
        if self.clean >= self.size:
            self.size = min(self.ceiling, self.size + 1)
            self.clean = 0

    def on_rate_limited(self, sent_at: float, now: float, retry_after: float | None) -> bool:
        """A 429 for a request sent at ``sent_at``; True if it opened a new episode.

        A new episode cuts the window and starts a cool-down of ``retry_after`` (or
        :data:`DEFAULT_PAUSE_S`), at most ``max_pause``. A 429 of the current episode
        may lengthen the cool-down to its own ``retry_after``, still within
        ``max_pause`` of the cut. A negative or NaN ``retry_after`` counts as none.
        """
        self.rate_limited += 1
        wait = DEFAULT_PAUSE_S
        if retry_after is not None and retry_after >= 0:
            wait = retry_after
        new = sent_at >= self.cut_at
        if new:
            self.episodes += 1
            self.size = max(1, math.floor(self.size * DECREASE))
            self.cut_at = now
            self.clean = 0
        limit = self.cut_at + self.max_pause
        self.cooldown_until = max(self.cooldown_until, min(now + wait, limit))
        return new


@dataclass
class Bucket:
    """A token bucket; ``level`` may go below 0 (debt), never above ``capacity``."""

    rate: float
    capacity: float
    level: float
    at: float

    def refill(self, now: float) -> None:
        if now > self.at:
            self.level = min(self.capacity, self.level + (now - self.at) * self.rate)
        self.at = max(self.at, now)

    def delay(self, cost: float, now: float) -> float:
        """Seconds until ``cost`` may be taken (0: now). A cost above the capacity
        waits for a full bucket."""
        self.refill(now)
        need = min(cost, self.capacity)
        return 0.0 if self.level >= need else (need - self.level) / self.rate

    def take(self, cost: float, now: float) -> None:
        self.refill(now)
        self.level -= cost

    def give(self, amount: float, now: float) -> None:
        """Return ``amount`` (negative: take more), never above the capacity."""
        self.refill(now)
        self.level = min(self.capacity, self.level + amount)


@dataclass(frozen=True)
class Limits:
    """Limits the user states, per minute (None: none of that kind)."""

    rpm: float | None = None
    input_tpm: float | None = None
    output_tpm: float | None = None

    def __post_init__(self) -> None:
        for name in ("rpm", "input_tpm", "output_tpm"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, (int, float)) and value > 0):
                raise ValueError(f"--{name.replace('_', '-')} {value!r} is not a positive number")

    def per_minute(self) -> dict[str, float]:
        pairs = {"requests": self.rpm, "input_tokens": self.input_tpm}
        pairs["output_tokens"] = self.output_tpm
        return {k: float(v) for k, v in pairs.items() if v is not None}


@dataclass(frozen=True)
class Charge:
    """What one request is charged before it is sent, by resource."""

    requests: float = 1.0
    input_tokens: float = 0.0
    output_tokens: float = 0.0

    def amounts(self) -> dict[str, float]:
        return {
            "requests": self.requests,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "tokens": self.input_tokens + self.output_tokens,
        }


@dataclass
class Budgets:
    """One :class:`Bucket` per limited resource (see the module docstring)."""

    limits: Limits = field(default_factory=Limits)
    reported: dict[str, float] = field(default_factory=dict)
    buckets: dict[str, Bucket] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for resource in RESOURCES:
            self._retune(resource, 0.0)

    def per_minute(self, resource: str) -> float | None:
        """The binding per-minute limit of ``resource``: the lower of the user's and
        the provider's (None: unlimited)."""
        known = [
            v
            for v in (self.limits.per_minute().get(resource), self.reported.get(resource))
            if v is not None
        ]
        return min(known) if known else None

    def _retune(self, resource: str, now: float) -> None:
        limit = self.per_minute(resource)
        if limit is None:
            self.buckets.pop(resource, None)
            return
        rate = limit / 60.0
        capacity = max(rate * BURST_S, 1.0)
        old = self.buckets.get(resource)
        if old is None:
            self.buckets[resource] = Bucket(rate, capacity, capacity, now)
        else:
            old.refill(now)
            old.rate, old.capacity = rate, capacity
            old.level = min(old.level, capacity)

    def delay(self, charge: Charge, now: float) -> float:
        """Seconds until every bucket can take ``charge``."""
        amounts = charge.amounts()
        return max((b.delay(amounts[r], now) for r, b in self.buckets.items()), default=0.0)

    def take(self, charge: Charge, now: float) -> None:
        amounts = charge.amounts()
        for resource, bucket in self.buckets.items():
            bucket.take(amounts[resource], now)

    def correct(self, charged: Charge, actual: Charge, now: float) -> None:
        """Replace what was charged by what the provider counted (returns or takes the
        difference)."""
        before, after = charged.amounts(), actual.amounts()
        for resource, bucket in self.buckets.items():
            bucket.give(before[resource] - after[resource], now)

    def observe(self, report: Report, now: float) -> None:
        """Adopt the provider's reported limits; a reported ``remaining`` lowers a
        bucket's level to it (someone else may share the limit), never raises it."""
        for resource, reading in report.readings.items():
            if self.reported.get(resource) != reading.limit:
                self.reported[resource] = float(reading.limit)
                self._retune(resource, now)
            bucket = self.buckets.get(resource)
            if bucket is not None and reading.remaining is not None:
                bucket.refill(now)
                bucket.level = min(bucket.level, float(reading.remaining))

    def exhausted_reset(self, report: Report) -> float | None:
        """The longest reset among resources the report says are used up (None: none)."""
        resets = [
            r.reset_s
            for r in report.readings.values()
            if r.remaining == 0 and r.reset_s is not None
        ]
        return max(resets) if resets else None
