"""FunctionJob: a job made from a plain callable, typed by what it returns."""

from __future__ import annotations

import contextlib
import functools
import inspect
import reprlib
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from .._enums import JobPriority
from ._job import _DEFAULT_RETRY, Job, _is_coroutine_function
from ._options import DEFAULT_QUEUE
from ._retry import RetryPolicy

if TYPE_CHECKING:
    # Type checkers only: typeshed ships typing_extensions, so no runtime dependency.
    from typing_extensions import TypedDict, TypeVarTuple, Unpack

    Ts = TypeVarTuple("Ts")

    class _JobOptions(TypedDict, total=False):
        """FunctionJob's keyword-only options, for its overloads."""

        executor: str | None
        name: str | None
        priority: JobPriority | int
        timeout: float | None
        retry: RetryPolicy
        deadline: float | None
        tenant: str | None
        rate_key: str | None
        queue: str


#: A FunctionJob's result type: the function's return value, awaited for a
#: coroutine function.
R = TypeVar("R")


class FunctionJob(Job, Generic[R]):
    """A job made from a plain callable.

    ``executor`` defaults to ``"async"`` for a coroutine function and to
    ``"thread"`` otherwise; ``name`` defaults to the function's qualified name.

    ``args`` and ``kwargs`` must bind to the function's signature, else
    ``TypeError`` here (not a retried failure at run time); a callable
    without an introspectable signature (some builtins) is not checked.

    Typing: ``FunctionJob[R]`` carries the function's result type (awaited
    for a coroutine function) as ``result: R | None``. A tuple ``args`` given
    without ``kwargs`` is checked against the function's positional
    parameters; a list ``args``, or any ``kwargs``, is not checked.
    """

    __slots__ = ("args", "executor", "func", "kwargs")

    #: The function's return value once an attempt succeeded, else None.
    result: R | None
    func: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]

    # Overloads, coroutine function first so its R is the awaited value. A
    # ParamSpec cannot stand for a tuple of arguments (PEP 612), but a
    # TypeVarTuple can (PEP 646): positional arguments only.
    @overload
    def __init__(
        self,
        func: Callable[[Unpack[Ts]], Coroutine[Any, Any, R]],
        args: tuple[Unpack[Ts]],
        kwargs: None = None,
        **options: Unpack[_JobOptions],
    ) -> None: ...
    @overload
    def __init__(
        self,
        func: Callable[[Unpack[Ts]], R],
        args: tuple[Unpack[Ts]],
        kwargs: None = None,
        **options: Unpack[_JobOptions],
    ) -> None: ...
    @overload
    def __init__(
        self, func: Callable[[], Coroutine[Any, Any, R]], **options: Unpack[_JobOptions]
    ) -> None: ...
    @overload
    def __init__(self, func: Callable[[], R], **options: Unpack[_JobOptions]) -> None: ...
    # Unchecked arguments: a list, or keyword arguments (the type system
    # cannot match a dict against parameters).
    @overload
    def __init__(
        self,
        func: Callable[..., Coroutine[Any, Any, R]],
        args: list[Any],
        kwargs: Mapping[str, Any] | None = None,
        **options: Unpack[_JobOptions],
    ) -> None: ...
    @overload
    def __init__(
        self,
        func: Callable[..., R],
        args: list[Any],
        kwargs: Mapping[str, Any] | None = None,
        **options: Unpack[_JobOptions],
    ) -> None: ...
    @overload
    def __init__(
        self,
        func: Callable[..., Coroutine[Any, Any, R]],
        args: Sequence[Any] = (),
        *,
        kwargs: Mapping[str, Any],
        **options: Unpack[_JobOptions],
    ) -> None: ...
    @overload
    def __init__(
        self,
        func: Callable[..., R],
        args: Sequence[Any] = (),
        *,
        kwargs: Mapping[str, Any],
        **options: Unpack[_JobOptions],
    ) -> None: ...
    @overload
    def __init__(
        self,
        func: Callable[..., Coroutine[Any, Any, R]],
        args: Sequence[Any],
        kwargs: Mapping[str, Any],
        **options: Unpack[_JobOptions],
    ) -> None: ...
    @overload
    def __init__(
        self,
        func: Callable[..., R],
        args: Sequence[Any],
        kwargs: Mapping[str, Any],
        **options: Unpack[_JobOptions],
    ) -> None: ...
    def __init__(
        self,
        func: Callable[..., Any],
        args: Sequence[Any] = (),
        kwargs: Mapping[str, Any] | None = None,
        *,
        executor: str | None = None,
        name: str | None = None,
        priority: JobPriority | int = JobPriority.MEDIUM,
        timeout: float | None = 30.0,
        retry: RetryPolicy = _DEFAULT_RETRY,
        deadline: float | None = None,
        tenant: str | None = None,
        rate_key: str | None = None,
        queue: str = DEFAULT_QUEUE,
    ) -> None:
        if not callable(func):
            raise TypeError(f"FunctionJob needs a callable, got {func!r}")
        is_coro = _is_coroutine_function(func)
        if executor is None:
            executor = "async" if is_coro else "thread"
        elif is_coro and executor != "async":
            raise ValueError(
                f"{_qualname(func)} is a coroutine function and cannot run on the "
                f"{executor!r} executor; use executor='async' or pass a plain function"
            )
        if not isinstance(args, (tuple, list)):
            raise TypeError(
                f"args must be a tuple or list of positional arguments, got {args!r} "
                f"(a {type(args).__name__}); did you mean ({args!r},)?"
            )
        if kwargs is not None and not isinstance(kwargs, Mapping):
            raise TypeError(
                f"kwargs must be a mapping of keyword arguments (a dict) or None, got {kwargs!r}"
            )
        _check_call(func, args, kwargs)
        self.executor: str = executor  # type: ignore[misc]
        self.func = func
        self.args = tuple(args)
        self.kwargs = dict(kwargs) if kwargs else {}
        super().__init__(
            name if name is not None else _qualname(func),
            priority=priority,
            timeout=timeout,
            retry=retry,
            deadline=deadline,
            tenant=tenant,
            rate_key=rate_key,
            queue=queue,
        )

    def run(self) -> Awaitable[Any]:
        """Call the coroutine function (the ``async`` executor awaits it)."""
        return self.func(*self.args, **self.kwargs)  # type: ignore[no-any-return]

    def run_sync(self) -> Any:
        """Call the plain function (thread and process executors)."""
        return self.func(*self.args, **self.kwargs)


# Signatures by function: building one costs more than the rest of a
# FunctionJob, and a producer builds many jobs of one function. Weak keys, so
# a cached lambda or a reloaded module's function can still go away.
_signatures: weakref.WeakKeyDictionary[Callable[..., Any], inspect.Signature | None] = (
    weakref.WeakKeyDictionary()
)


def _signature(func: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return _signatures[func]
    except (KeyError, TypeError):  # TypeError: not weakly referenceable or unhashable
        pass
    try:
        sig: inspect.Signature | None = inspect.signature(func)
    except (TypeError, ValueError):
        sig = None  # no signature to check against (some builtins, C callables)
    with contextlib.suppress(TypeError):
        _signatures[func] = sig
    return sig


def _check_call(
    func: Callable[..., Any], args: Sequence[Any], kwargs: Mapping[str, Any] | None
) -> None:
    sig = _signature(func)
    if sig is None:
        return
    try:
        sig.bind(*args, **(kwargs or {}))
    except TypeError as exc:
        name = _qualname(func)
        got = f"args={reprlib.repr(tuple(args))}, kwargs={reprlib.repr(dict(kwargs or {}))}"
        raise TypeError(
            f"FunctionJob({name}): the arguments don't match {name}{sig}: {exc} (got {got})"
        ) from None


def _qualname(func: Callable[..., Any]) -> str:
    while isinstance(func, functools.partial):
        func = func.func
    return getattr(func, "__qualname__", None) or repr(func)


# Rows pickle it by this name (the stored format; see that module).
FunctionJob.__module__ = "jobsched._function_job"
