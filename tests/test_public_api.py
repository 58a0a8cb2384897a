"""The public surface matches the contract in shared/spec/API.md."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import anyio
import pytest

import jobsched as js

SPEC = Path(__file__).resolve().parents[2] / "shared" / "spec" / "API.md"

# Every name the contract gives as `js.X`.
CONTRACT_NAMES = {
    "App", "JobFunction",
    "Job", "AsyncJob", "BlockingJob", "CpuBoundJob", "FunctionJob", "JobPriority",
    "JobStatus", "InvalidTransitionError", "RetryPolicy", "NonRetryableError",
    "SchedulingStrategy", "FIFOStrategy", "PriorityStrategy", "AgingPriorityStrategy",
    "EarliestDeadlineFirstStrategy", "SchedulerError", "UnknownJobError",
    "SchedulerStoppedError", "ExecutorNotFoundError", "JobScheduler", "Executor",
    "cancel_requested", "CronTrigger", "RateLimit", "FairShareStrategy",
    "JobStore", "open_store", "StoreNotFoundError", "StoreUnavailableError",
    "BackgroundScheduler", "JobFailedError", "ScheduleInfo", "UnknownScheduleError",
    "current_job", "LeaseLostError", "Retention", "QueueInfo",
    "Workflow", "WorkflowInfo", "After", "UpstreamFailedError", "result_of", "results_of",
}  # fmt: skip

# Names the contract has grown for work still open, with the issue that builds
# each. A name moves to CONTRACT_NAMES when it ships; the test below fails if
# one ships without moving, so this list cannot go stale.
PENDING_NAMES: dict[str, int] = {}


#: Names that left jobsched.__all__ for jobsched.strategies (issue 23): still
#: importable from jobsched, with a DeprecationWarning.
MOVED_TO_STRATEGIES = {"ReadyQueue", "SortKey"}


def test_contract_names_are_exported() -> None:
    """Every name the contract fixes is importable from jobsched and listed in __all__."""
    missing = sorted(n for n in CONTRACT_NAMES if not hasattr(js, n))
    assert missing == []
    assert set(js.__all__) >= CONTRACT_NAMES
    assert all(hasattr(js, n) for n in js.__all__)


def test_strategy_authors_import_from_jobsched_strategies() -> None:
    """jobsched.strategies has what a strategy author needs: the base class,
    SortKey, ReadyQueue and the built-in strategies. ReadyQueue and SortKey are
    no longer in jobsched.__all__; from jobsched they still work, with a
    DeprecationWarning naming the new place."""
    import jobsched.strategies as strategies

    assert set(strategies.__all__) == MOVED_TO_STRATEGIES | {
        "SchedulingStrategy", "FIFOStrategy", "PriorityStrategy", "AgingPriorityStrategy",
        "EarliestDeadlineFirstStrategy", "FairShareStrategy",
    }  # fmt: skip
    assert all(hasattr(strategies, n) for n in strategies.__all__)
    for name in set(strategies.__all__) - MOVED_TO_STRATEGIES:
        assert getattr(strategies, name) is getattr(js, name)
    assert not MOVED_TO_STRATEGIES & set(js.__all__)
    for name in sorted(MOVED_TO_STRATEGIES):
        with pytest.warns(DeprecationWarning, match=f"jobsched.{name} .*jobsched.strategies"):
            assert getattr(js, name) is getattr(strategies, name)


@pytest.mark.skipif(not SPEC.exists(), reason="the shared spec is not beside this checkout")
def test_contract_list_is_complete() -> None:
    """The list above covers every `js.X` the spec mentions."""
    mentioned = set(re.findall(r"\bjs\.([A-Za-z_]+)", SPEC.read_text()))
    assert mentioned - set(PENDING_NAMES) <= CONTRACT_NAMES


def test_pending_names_are_not_shipped_yet() -> None:
    """A pending name that is now exported belongs in CONTRACT_NAMES instead."""
    shipped = sorted(n for n in PENDING_NAMES if hasattr(js, n))
    assert shipped == []


def test_scheduler_signature() -> None:
    """JobScheduler takes the contract's parameters, keyword-only after strategy."""
    params = inspect.signature(js.JobScheduler).parameters
    assert next(iter(params)) == "strategy"
    for name, default in [
        ("num_workers", 4),
        ("executors", None),
        ("rng", None),
        ("history_limit", 10_000),
        ("rate_limits", None),
        ("executor_limits", None),
    ]:
        assert params[name].default == default
        assert params[name].kind is inspect.Parameter.KEYWORD_ONLY
    for method in [
        "submit", "submit_threadsafe", "schedule_recurring", "cancel_recurring", "cancel",
        "get", "jobs", "join", "add_listener", "start", "stop", "schedule_cron",
        "wait", "result", "enqueue", "fetch",
    ]:  # fmt: skip
        assert callable(getattr(js.JobScheduler, method)), method
    stop = inspect.signature(js.JobScheduler.stop).parameters["cancel_running"]
    assert stop.default is False and stop.kind is inspect.Parameter.KEYWORD_ONLY
    grace = inspect.signature(js.JobScheduler.stop).parameters["grace"]
    assert grace.kind is inspect.Parameter.KEYWORD_ONLY
    for method in ["submit", "enqueue"]:
        params = inspect.signature(getattr(js.JobScheduler, method)).parameters
        for name in ["at", "job_id", "connection"]:
            assert params[name].default is None, (method, name)
            assert params[name].kind is inspect.Parameter.KEYWORD_ONLY
    for method in ["wait", "result"]:
        timeout = inspect.signature(getattr(js.JobScheduler, method)).parameters["timeout"]
        assert timeout.default is None and timeout.kind is inspect.Parameter.KEYWORD_ONLY


#: JobScheduler's public methods and attributes: the contract's (shared/spec/
#: API.md, "The scheduler" and later sections), and the three that integrations
#: use beyond it (jobsched-otel: submit hooks, removing its listener).
SCHEDULER_PUBLIC = {
    "submit", "submit_threadsafe", "schedule_recurring", "schedule_cron",
    "cancel_recurring", "cancel", "get", "jobs", "join", "add_listener", "start",
    "stop", "peak_running", "flush", "enqueue", "fetch", "wait", "result",
    "schedules", "pause_schedule", "resume_schedule", "trigger_schedule",
    "add_submit_hook", "remove_submit_hook", "remove_listener",
    "queues", "pause_queue", "resume_queue",
    "enqueue_workflow", "workflow", "cancel_workflow",
}  # fmt: skip


def test_scheduler_public_surface_is_the_contract(tmp_path: Path) -> None:
    """No name without an underscore on JobScheduler (its class, or an
    instance in memory or running on a durable store) beyond the contract's:
    the store link's callbacks (claim_capacity, claimed, changed, existed,
    held, cancel_held, fire_schedules) live on a private object (issue 23)."""

    def public(obj: object) -> set[str]:
        return {name for name in dir(obj) if not name.startswith("_")}

    async def main() -> set[str]:
        async with js.JobScheduler(store=f"sqlite:///{tmp_path / 'jobs.db'}") as s:
            return public(s)

    for found in [public(js.JobScheduler), public(js.JobScheduler()), anyio.run(main)]:
        assert found <= SCHEDULER_PUBLIC, sorted(found - SCHEDULER_PUBLIC)
    for name in SCHEDULER_PUBLIC - {"peak_running"}:
        assert callable(getattr(js.JobScheduler, name)), name


def test_job_signature() -> None:
    """Job's keyword options and FunctionJob's positional ones are the contract's."""
    params = inspect.signature(js.Job.__init__).parameters
    assert list(params)[:2] == ["self", "name"]
    for name in ["priority", "timeout", "retry", "deadline", "tenant", "rate_key"]:
        assert params[name].kind is inspect.Parameter.KEYWORD_ONLY, name
    assert params["timeout"].default == 30.0
    fparams = list(inspect.signature(js.FunctionJob.__init__).parameters)
    assert fparams[:4] == ["self", "func", "args", "kwargs"]


def test_error_hierarchy() -> None:
    """The errors subclass as the contract says."""
    for err in [
        js.InvalidTransitionError, js.UnknownJobError, js.SchedulerStoppedError,
        js.ExecutorNotFoundError, js.LeaseLostError,
    ]:  # fmt: skip
        assert issubclass(err, js.SchedulerError)
    assert issubclass(js.UnknownJobError, KeyError)
    assert issubclass(js.NonRetryableError, Exception)
    assert not issubclass(js.NonRetryableError, js.SchedulerError)


def test_cancel_requested_is_false_outside_a_job() -> None:
    """Outside a running thread job, cancel_requested() is False."""
    assert js.cancel_requested() is False
    token = js.CancelToken()
    assert token.run(js.cancel_requested) is False
    token.cancel()
    assert token.run(js.cancel_requested) is True
    assert js.cancel_requested() is False
