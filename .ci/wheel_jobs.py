"""Jobs for .ci/wheel_check.py, in a module of their own: a job stored in
PostgreSQL must be importable by every member, so one defined in the
checking script (``__main__``) is refused there."""

from __future__ import annotations


async def double(x: int) -> int:
    return 2 * x
