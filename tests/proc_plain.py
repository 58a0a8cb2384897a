"""A job function in a module that does not import jobsched (for the process executor's tests)."""

from __future__ import annotations

import sys
from typing import Any


def loaded(*modules: str) -> list[bool]:
    """Whether each of ``modules`` is imported in the calling process."""
    return [name in sys.modules for name in modules]


def adder(n: int) -> Any:
    """A lambda: a result that only cloudpickle can send back."""
    return lambda x: x + n


def raise_local_error(message: str) -> None:
    """Raises an exception of a class made here, which only cloudpickle can send back."""

    class LocalError(Exception):
        pass

    raise LocalError(message)
