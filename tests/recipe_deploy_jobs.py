"""A job for the recipes' deploy test (tests/test_recipes.py), imported by a
`jobsched worker --import recipe_deploy_jobs` subprocess and by the test.

It says when it starts (a file named after the worker's pid) and runs until
the test tells it to finish (a file named ``finish``), so the test can stop
its worker mid-run without sleeping for a guessed time.
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio


async def render(folder: str) -> str:
    """Runs until ``folder/finish`` exists; returns the pid that finished it."""
    here = Path(folder)
    (here / f"started-{os.getpid()}").touch()
    while not (here / "finish").exists():  # noqa: ASYNC110 - the test is another process
        await anyio.sleep(0.02)
    return f"rendered by pid {os.getpid()}"
