"""What a :class:`~jobsched.BackgroundScheduler` says when it is called where
it cannot work: before it started, after it stopped, in a forked child, or on
its own loop's thread where the call would wait for that loop.

The loop thread (``_loopthread``) decides when; the words are here, one
function per case, each naming ``what`` was called (a public method).
"""

from __future__ import annotations

from .._exceptions import SchedulerError, SchedulerStoppedError


def not_started(what: str) -> SchedulerError:
    return SchedulerError(
        f"{what} needs a started scheduler: call start() first, or use "
        "`with BackgroundScheduler(...) as s:`"
    )


def stopped(what: str, error: BaseException | None) -> SchedulerStoppedError:
    """Shut down, or its thread ended on ``error``."""
    if error is not None:
        # The scheduler's task group wraps it: name the error itself.
        while len(getattr(error, "exceptions", ())) == 1:
            error = error.exceptions[0]  # type: ignore[attr-defined,union-attr]
        return SchedulerStoppedError(
            f"{what}: the scheduler's thread ended on an error "
            f"({type(error).__name__}: {error}); create a new BackgroundScheduler"
        )
    return SchedulerStoppedError(
        f"{what}: the scheduler was shut down; create a new BackgroundScheduler"
    )


def forked(what: str) -> SchedulerError:
    return SchedulerError(
        f"{what} in a forked child of the process that started this scheduler: its "
        "thread did not survive the fork. Start a scheduler in each worker process "
        "(e.g. in gunicorn's post_fork hook), not before the fork"
    )


def commit_on_loop(what: str) -> SchedulerError:
    return SchedulerError(
        f"{what} on a durable store waits for the commit, which can't happen on the "
        "scheduler's own thread (from a listener or an async job) while it waits: "
        "call the JobScheduler's method there (BackgroundScheduler.scheduler), whose "
        "change is written in the next group commit"
    )


def wait_on_loop(what: str) -> SchedulerError:
    return SchedulerError(
        f"{what} waits for the scheduler's event loop, so it can't be called on that "
        "loop's own thread (from a listener or an async job): await the JobScheduler's "
        "method there (BackgroundScheduler.scheduler)"
    )


def own_wait_on_loop(what: str) -> SchedulerError:
    return SchedulerError(
        f"{what} with wait=True was called on the scheduler's own thread (from a "
        "listener or an async job), which it would wait for: use wait=False"
    )


def own_wait_in_job(what: str) -> SchedulerError:
    return SchedulerError(
        f"{what} with wait=True was called from inside one of this scheduler's jobs, "
        "whose attempt must end before the shutdown can: use wait=False, or shut "
        "down from the code that owns the scheduler"
    )
