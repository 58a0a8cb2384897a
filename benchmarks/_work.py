"""Job bodies every system runs; importable by name so worker processes find them."""

from __future__ import annotations

import time


async def noop() -> None:
    """The no-op async job of W1, W2 and W6."""


def sleep_1ms() -> None:
    """The blocking job of W3."""
    time.sleep(0.001)


def count_primes(below: int) -> int:
    """The CPU-bound job of W4: primes below ``below`` by trial division."""
    count = 0
    for n in range(2, below):
        if n % 2 == 0:
            count += n == 2
            continue
        d = 3
        while d * d <= n:
            if n % d == 0:
                break
            d += 2
        else:
            count += 1
    return count


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (0..100) by nearest rank."""
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered)) - 1))
    return ordered[rank]
