"""Retry policy: capped exponential backoff with full jitter."""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import random  # only the rng's type: `import jobsched` skips random


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how soon a failed job runs again.

    ``cap = min(max_delay, base_delay * 2 ** (attempt - 1))``, then the delay is
    ``uniform(0, cap)`` with jitter, else ``cap``. Full jitter spreads the
    retries of many jobs that failed together (a shared outage) instead of
    bringing them back as a synchronised herd.

    :param max_retries: attempts after the first (an int >= 0); 0 means never retry.
    :param base_delay: the cap after the first failure, in seconds (finite, >= 0).
    :param max_delay: the largest cap, in seconds (finite, >= 0).
    :param jitter: draw the delay uniformly from ``[0, cap]``.
    :raises TypeError: a field has the wrong type (the message names it).
    :raises ValueError: a field is out of range (the message names it).
    """

    max_retries: int = 3
    base_delay: float = 1.0
    max_delay: float = 60.0
    jitter: bool = True

    def __post_init__(self) -> None:
        retries = self.max_retries
        if isinstance(retries, bool) or not hasattr(type(retries), "__index__"):
            raise TypeError(
                f"max_retries must be an int (attempts after the first), got {retries!r}"
            )
        if retries < 0:
            raise ValueError(f"max_retries must be >= 0 (0: never retry), got {retries!r}")
        # Frozen: normalise through object.__setattr__ (numpy ints, Fractions).
        object.__setattr__(self, "max_retries", operator.index(retries))
        for field in ("base_delay", "max_delay"):
            value = getattr(self, field)
            # Numbers only (Fraction, numpy floats too); float() would also take "5" and True.
            if isinstance(value, (bool, str, bytes)) or not hasattr(type(value), "__float__"):
                raise TypeError(f"{field} must be a number of seconds, got {value!r}")
            value = float(value)
            # NaN parks a job in RETRY_WAIT for ever; infinity would too.
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"{field} must be a finite number of seconds >= 0, got {value!r}")
            object.__setattr__(self, field, float(value))
        if not isinstance(self.jitter, bool):
            raise TypeError(f"jitter must be True or False, got {self.jitter!r}")

    def delay(self, attempt: int, rng: random.Random) -> float:
        """Seconds to wait after the 1-based attempt ``attempt`` failed."""
        if attempt < 1:
            raise ValueError(f"attempt is 1-based, got {attempt!r}")
        cap = self.max_delay
        base = self.base_delay
        if base == 0:
            cap = 0.0
        elif base < cap:
            # Compare binary exponents before multiplying: base * 2 ** (attempt - 1)
            # overflows a float past attempt ~1025, and the cap is reached long
            # before. frexp: base = m * 2**e with 0.5 <= m < 1, so the product
            # has exponent e + attempt - 1, and if that exceeds the cap's, the
            # product exceeds the cap.
            mantissa, exponent = math.frexp(base)
            exponent += attempt - 1
            if exponent <= math.frexp(cap)[1]:
                cap = min(cap, math.ldexp(mantissa, exponent))
        return rng.uniform(0, cap) if self.jitter else cap


# Rows pickle it by this name (the stored format; see that module).
RetryPolicy.__module__ = "jobsched._retry"
