"""A job function in a module that does not import jobsched (for the process executor's tests)."""

from __future__ import annotations

import sys


def loaded(*modules: str) -> list[bool]:
    """Whether each of ``modules`` is imported in the calling process."""
    return [name in sys.modules for name in modules]
