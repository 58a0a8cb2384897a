"""Retry policy: capped exponential backoff with full jitter."""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how soon a failed job runs again.

    ``cap = min(max_delay, base_delay * 2 ** (attempt - 1))``, then the delay is
    ``uniform(0, cap)`` with jitter, else ``cap``. Full jitter spreads the
    retries of many jobs that failed together (a shared outage) instead of
    bringing them back as a synchronised herd.

    :param max_retries: attempts after the first; 0 means never retry.
    :param base_delay: the cap after the first failure, in seconds.
    :param max_delay: the largest cap, in seconds.
    :param jitter: draw the delay uniformly from ``[0, cap]``.
    """

    max_retries: int = 3
    base_delay: float = 1.0
    max_delay: float = 60.0
    jitter: bool = True

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {self.max_retries!r}")
        if self.base_delay < 0 or self.max_delay < 0:
            raise ValueError(
                f"delays must be >= 0, got base_delay={self.base_delay!r}, "
                f"max_delay={self.max_delay!r}"
            )

    def delay(self, attempt: int, rng: random.Random) -> float:
        """Seconds to wait after the 1-based attempt ``attempt`` failed."""
        cap = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        return rng.uniform(0, cap) if self.jitter else cap
