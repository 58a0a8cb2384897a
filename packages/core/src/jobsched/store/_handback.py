"""Attempts a stopping member cut short and handed back, in the history.

A hand-back at stop leaves the job's ``attempts`` as it was before the cut
attempt (the contract: it does not use up a retry), so the next claim runs
an attempt of the same number. Its row in the attempts table cannot take
the key (job, attempt) that attempt will want; it takes a negative one
instead, which no counted attempt ever has: ``-(attempt * KEY_STEP + n)``,
``n`` the hand-backs of that attempt number before it. Read back, the key
gives the attempt number and marks the row handed back
(:attr:`~jobsched.store.Attempt.handed_back`). Both stores share this
numbering, so a row reads the same whichever wrote it; the schema is the
one they had.
"""

from __future__ import annotations

from collections.abc import Collection

#: The error a handed-back attempt's history row shows.
HANDED_BACK_AT_STOP = "handed back at stop"
#: Hand-backs of one attempt number a history keeps at most (a deploy loop
#: beyond that adds no row): the step between two attempt numbers' keys.
KEY_STEP = 1000


def hand_back_key(attempt: int, taken: Collection[int]) -> int | None:
    """The history key of one more hand-back of ``attempt`` (a counted
    attempt's number, 1 or more), given the keys the job's history holds
    already; None if that attempt number has ``KEY_STEP`` hand-backs."""
    base = -attempt * KEY_STEP
    used = set(taken)
    return next((key for key in range(base, base - KEY_STEP, -1) if key not in used), None)


def attempt_of_key(key: int) -> tuple[int, bool]:
    """A history row's attempt number, and whether it was handed back."""
    if key > 0:
        return key, False
    return -key // KEY_STEP, True
