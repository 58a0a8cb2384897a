"""A job module that does not import jobsched when it loads (tests/test_current_job.py):
a process worker running its functions never loads the attempt's handle."""

from __future__ import annotations


def lazy() -> str:
    """Imports jobsched only when it runs, then asks for the current job."""
    import jobsched

    try:
        jobsched.current_job()
    except RuntimeError as exc:
        return str(exc)
    return "found"
