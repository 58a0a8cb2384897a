"""The app's registered functions as a store keeps them for enqueues made in
SQL (PostgreSQL's ``jobsched_enqueue``), which know a job only by its name.

SQL cannot call the scheduler's strategy, so the sort key goes as a recipe:
every built-in strategy's key is linear in the job's ``seq`` and
``submitted_at`` (FIFO ``(seq,)``, priority ``(-priority, seq)``, aging
``(rate * submitted_at - priority, seq)``, EDF without a deadline ``(inf,
-priority, seq)``), so three probes give its coefficients and a fourth, at
today's magnitudes, checks them. A strategy whose key is not linear (a
custom one) gets no recipe, and SQL refuses its jobs with an error that
says so rather than order them wrongly.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .._jobs._registered import RegisteredJob
from .._log import logger
from .._ordering._strategies import SchedulingStrategy
from ..store._joined import Registered
from ..store._rows import KEY_WIDTH

#: A probe's seq and submitted_at as today's are (microseconds and seconds
#: since the epoch): the check of a recipe, where rounding would show.
_CHECK_AT = (1_700_000_000_000_000, 1.7e9)


def registered(registry: Mapping[str, Any], strategy: SchedulingStrategy) -> list[Registered]:
    """The rows of the JSON-serialised functions of ``registry`` (name ->
    JobFunction) under ``strategy``."""
    rows = []
    for name, function in registry.items():
        spec = function._spec
        if spec.serializer != "json":
            continue  # a pickled job's payload cannot be made in SQL
        probe = RegisteredJob(function, "{}")
        base, per_seq, per_second = _recipe(strategy, probe) or (None, None, None)
        row = Registered(name, spec.executor, spec.queue, spec.tenant, spec.rate_key,
                         base, per_seq, per_second)  # fmt: skip
        rows.append(row)
    return rows


def _recipe(
    strategy: SchedulingStrategy, job: RegisteredJob
) -> tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]] | None:
    """The key's (base, per seq, per second of submitted_at) coefficients, or
    None if the key is not linear in those two (or not numbers)."""

    def key(seq: int, submitted_at: float) -> tuple[float, ...]:
        job.seq = seq
        job.submitted_at = submitted_at
        found = tuple(map(float, strategy.key(job)))
        if len(found) > KEY_WIDTH:
            raise ValueError(f"a key of {len(found)} fields")
        return found + (0.0,) * (KEY_WIDTH - len(found))

    try:
        base = key(0, 0)
        per_seq = _slope(base, key(1, 0))
        per_second = _slope(base, key(0, 1))
        seq, second = _CHECK_AT
        expected = key(seq, second)
    except Exception as exc:  # a custom strategy's key may not take a probe
        logger.debug("no SQL key recipe for %s: %s", job.name, exc)
        return None
    for b, s, t, want in zip(base, per_seq, per_second, expected, strict=True):
        got = b + s * seq + t * second
        if not (got == want or math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-6)):
            return None
    return base, per_seq, per_second


def _slope(base: tuple[float, ...], moved: tuple[float, ...]) -> tuple[float, ...]:
    # A field that did not move has no slope (inf - inf would be NaN).
    return tuple(0.0 if b == m else m - b for b, m in zip(base, moved, strict=True))


async def put_functions(
    store: Any, registry: Mapping[str, Any], strategy: SchedulingStrategy
) -> None:
    """Store the app's registered functions, for enqueues made in SQL
    (``jobsched_enqueue``). Not worth failing the start for: that enqueue
    then says the name is not registered."""
    try:
        await store.put_functions(registered(registry, strategy))
    except Exception as exc:
        logger.warning(
            "could not store the app's registered functions in %s for jobsched_enqueue() "
            "(%s: %s); SQL enqueues of them fail until a scheduler of the app stores them",
            store.url,
            type(exc).__name__,
            exc,
        )
