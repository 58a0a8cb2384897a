"""Rate limits: a token bucket, a pure function of the time it is given."""

from __future__ import annotations

import math

# A token that is due at `now` can come out a hair short after the float
# arithmetic of refilling; without this slack the job would be put back by a
# delay too small to move the clock, and retried in a loop.
_EPSILON = 1e-9


class RateLimit:
    """A token bucket: at most ``burst`` starts at once, ``rate`` per ``per`` seconds on average.

    The bucket starts full. Each start takes one token; tokens come back at
    ``rate / per`` a second up to ``burst``, so over any window of ``w``
    seconds at most ``burst + w * rate / per`` starts happen.

    It never reads a clock: every method takes ``now``, in the scheduler's
    clock seconds. Its state lives in the object, so two keys given the same
    ``RateLimit`` share one budget.

    :param rate: tokens per ``per`` seconds (> 0).
    :param per: the period of ``rate``, in seconds (> 0).
    :param burst: the bucket's capacity (>= 1); ``max(rate, 1)`` by default,
        since a bucket that cannot hold a whole token would never let a job
        start.
    :raises ValueError: a value is not positive and finite, or ``burst < 1``.
    """

    __slots__ = ("_last", "_tokens", "burst", "per", "rate")

    def __init__(self, rate: float, per: float = 1.0, burst: float | None = None) -> None:
        for name, value in (("rate", rate), ("per", per)):
            if not _positive(value):
                raise ValueError(
                    f"RateLimit {name} must be a positive finite number, got {value!r}"
                )
        if burst is None:
            burst = max(float(rate), 1.0)
        elif not _positive(burst) or burst < 1:
            raise ValueError(
                f"RateLimit burst must be a finite number >= 1 (the bucket must hold at "
                f"least one token), got {burst!r}"
            )
        self.rate: float = rate
        self.per: float = per
        self.burst: float = burst
        self._tokens = float(burst)
        self._last: float | None = None

    def __repr__(self) -> str:
        return f"RateLimit({self.rate!r}, per={self.per!r}, burst={self.burst!r})"

    def tokens(self, now: float) -> float:
        """Tokens in the bucket at ``now`` (refills it up to ``now``)."""
        last = self._last
        if last is None or now <= last:
            if last is None:
                self._last = now
            return self._tokens
        self._tokens = min(self.burst, self._tokens + (now - last) * self.rate / self.per)
        self._last = now
        return self._tokens

    def try_acquire(self, now: float) -> bool:
        """Take a token if there is one at ``now``; True if taken."""
        return self.take(now) is None

    def take(self, now: float) -> float | None:
        """Take a token: None if taken, else the time the next token is due."""
        tokens = self.tokens(now)
        if tokens >= 1.0 - _EPSILON:
            self._tokens = max(tokens - 1.0, 0.0)
            return None
        return now + (1.0 - tokens) * self.per / self.rate

    def available_at(self, now: float) -> float:
        """When a token will be there, ``now`` if one already is; takes nothing."""
        tokens = self.tokens(now)
        if tokens >= 1.0 - _EPSILON:
            return now
        return now + (1.0 - tokens) * self.per / self.rate


def refill(limit: RateLimit, tokens: float, since: float, now: float) -> float:
    """Tokens at ``now`` in a bucket of ``limit`` that held ``tokens`` at ``since``.

    For a bucket kept outside the object (a durable store's row), as
    :meth:`RateLimit.tokens` does for its own: a clock read that goes back
    mints nothing, and a bucket never holds more than ``burst``.
    """
    if now > since:
        tokens += (now - since) * limit.rate / limit.per
    return min(limit.burst, tokens)


def has_token(tokens: float) -> bool:
    """True if a bucket holding ``tokens`` can give one (within float error)."""
    return tokens >= 1.0 - _EPSILON


def whole_tokens(tokens: float) -> int:
    """How many starts a bucket holding ``tokens`` allows now (within float error)."""
    return int(tokens + _EPSILON)


def token_due(limit: RateLimit, tokens: float, now: float) -> float:
    """When a bucket of ``limit`` holding ``tokens`` at ``now`` has a whole token."""
    return now if has_token(tokens) else now + (1.0 - tokens) * limit.per / limit.rate


def _positive(value: object) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and value > 0
        and math.isfinite(value)
    )
