"""Which hypothesis profile a run asked for: the one switch the model checks
and the fuzz tests share (``JOBSCHED_HYPOTHESIS_PROFILE``)."""

from __future__ import annotations

import os

import pytest

PROFILE_ENV = "JOBSCHED_HYPOTHESIS_PROFILE"
NAMES = ("ci", "thorough")


def chosen(test_file: str) -> str:
    """'ci' (the default) or 'thorough'; anything else stops the run naming both."""
    name = os.environ.get(PROFILE_ENV, "ci")
    if name not in NAMES:
        raise pytest.UsageError(
            f"{PROFILE_ENV}={name!r} is not a profile of {test_file}; "
            "set it to 'ci' (the default) or 'thorough'"
        )
    return name
