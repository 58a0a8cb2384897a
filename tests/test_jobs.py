"""Job construction: defaults, FunctionJob inference, and every construction error."""

from __future__ import annotations

import functools
import inspect
from typing import Any

import pytest
from sample_jobs import Ok

import jobsched as js


def test_defaults_and_unique_ids() -> None:
    """A new job is PENDING with the contract's defaults and a unique string id."""
    a, b = Ok(), Ok()
    assert a.job_id != b.job_id and isinstance(a.job_id, str)
    assert a.status is js.JobStatus.PENDING
    assert (a.priority, a.timeout, a.retry, a.deadline) == (
        js.JobPriority.MEDIUM,
        30.0,
        js.RetryPolicy(),
        None,
    )
    assert (a.attempts, a.result, a.last_error, a.started_at, a.finished_at) == (
        0,
        None,
        None,
        None,
        None,
    )
    assert (a.tenant, a.rate_key) == (None, None)
    assert a.job_id in repr(a) and "pending" in repr(a)


@pytest.mark.parametrize("timeout", [0, -1, 0.0])
def test_non_positive_timeout_is_refused(timeout: float) -> None:
    """timeout <= 0 raises ValueError naming the value."""
    with pytest.raises(ValueError, match=f"timeout must be a positive number.*{timeout}"):
        Ok(timeout=timeout)


def test_timeout_none_means_no_limit() -> None:
    """timeout=None is allowed."""
    assert Ok(timeout=None).timeout is None


def test_executor_names_of_the_base_classes() -> None:
    """Each base class names the executor plugin that runs it."""
    assert js.AsyncJob.executor == "async"
    assert js.BlockingJob.executor == "thread"
    assert js.CpuBoundJob.executor == "process"
    assert issubclass(js.CpuBoundJob, js.BlockingJob)


def test_job_without_run_or_run_sync_is_refused() -> None:
    """A Job subclass with neither run() nor run_sync() fails with a fix in the message."""

    class Nothing(js.Job):
        executor = "async"

    with pytest.raises(TypeError, match=r"Nothing implements neither run\(\) nor run_sync\(\)"):
        Nothing("x")


def test_abstract_job_classes_cannot_be_instantiated() -> None:
    """AsyncJob without run and BlockingJob without run_sync are abstract."""

    class NoRun(js.AsyncJob):
        pass

    with pytest.raises(TypeError, match="abstract"):
        NoRun("x")  # type: ignore[abstract]


async def _coro_fn(x: int) -> int:
    return x


def _plain_fn(x: int) -> int:
    return x


class _AsyncCallable:
    async def __call__(self) -> None:
        return None


def test_function_job_infers_executor_and_name() -> None:
    """Coroutine functions go to "async", others to "thread"; name is the qualname."""
    assert js.FunctionJob(_coro_fn, (1,)).executor == "async"
    assert js.FunctionJob(_plain_fn, (1,)).executor == "thread"
    assert js.FunctionJob(functools.partial(_coro_fn, 1)).executor == "async"
    assert js.FunctionJob(_AsyncCallable()).executor == "async"
    assert js.FunctionJob(_plain_fn, (1,), executor="process").executor == "process"
    assert js.FunctionJob(_plain_fn, (1,)).name == "_plain_fn"
    assert js.FunctionJob(_plain_fn, (1,), name="custom").name == "custom"
    job = js.FunctionJob(_plain_fn, (3,), tenant="t", rate_key="r", priority=3)
    assert (job.tenant, job.rate_key, job.priority, job.run_sync()) == ("t", "r", 3, 3)


def test_function_job_errors() -> None:
    """A non-callable, or a coroutine function on a non-async executor, is refused."""
    with pytest.raises(TypeError, match="FunctionJob needs a callable"):
        js.FunctionJob(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="coroutine function and cannot run on the 'thread'"):
        js.FunctionJob(_coro_fn, executor="thread")


def test_function_job_kwargs_are_copied() -> None:
    """Args and kwargs are captured at construction."""
    kwargs: dict[str, Any] = {"x": 1}
    job = js.FunctionJob(_plain_fn, kwargs=kwargs)
    kwargs["x"] = 2
    assert job.run_sync() == 1


def _two(a: int, b: int = 0, *, c: int = 0) -> int:
    return a + b + c


@pytest.mark.parametrize(
    ("args", "kwargs", "problem"),
    [
        ((), None, "missing a required argument: 'a'"),
        ((1, 2, 3), None, "too many positional arguments"),
        ((1,), {"d": 1}, "got an unexpected keyword argument 'd'"),
        ((1,), {"a": 1}, "multiple values for argument 'a'"),
    ],
)
def test_function_job_arguments_must_bind(
    args: tuple[Any, ...], kwargs: dict[str, Any] | None, problem: str
) -> None:
    """Arguments that don't bind are refused at construction, naming function and signature."""
    with pytest.raises(TypeError) as info:
        js.FunctionJob(_two, args, kwargs)
    message = str(info.value)
    assert f"_two{inspect.signature(_two)}" in message
    assert problem in message


def test_function_job_binding_accepts_good_calls_and_partials() -> None:
    """Calls that bind are accepted; a partial is checked against what it still takes."""
    assert js.FunctionJob(_two, (1, 2), {"c": 3}).run_sync() == 6
    assert js.FunctionJob(_two, kwargs={"a": 1}).run_sync() == 1
    assert js.FunctionJob(functools.partial(_two, 1), (2,)).run_sync() == 3
    with pytest.raises(TypeError, match="too many positional arguments"):
        js.FunctionJob(functools.partial(_two, 1), (2, 3))
    # An async callable object is checked against its __call__.
    with pytest.raises(TypeError, match="too many positional arguments"):
        js.FunctionJob(_AsyncCallable(), (1,))


def test_function_job_without_a_signature_is_accepted() -> None:
    """A callable inspect can't read a signature from (min, a builtin) is accepted unchecked."""
    with pytest.raises(ValueError, match="no signature"):
        inspect.signature(min)  # the premise: no signature to check against
    job = js.FunctionJob(min, (3, 1, 2))
    assert job.run_sync() == 1


def test_function_job_signatures_are_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    """A signature is read once per function, however many jobs are built from it."""
    calls: list[object] = []
    real = inspect.signature

    def counting(func: Any) -> inspect.Signature:
        calls.append(func)
        return real(func)

    monkeypatch.setattr(inspect, "signature", counting)

    def local(x: int) -> int:
        return x

    for i in range(3):
        js.FunctionJob(local, (i,))
    assert calls == [local]
    with pytest.raises(TypeError, match="local"):
        js.FunctionJob(local, (1, 2))  # the cached signature still checks
    assert calls == [local]
