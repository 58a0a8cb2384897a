"""JobFunction: a function registered with ``@app.job``, and its options sender."""

from __future__ import annotations

import inspect
import reprlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, TypeVar

from .._enums import JobPriority
from .._jobs import _json
from .._jobs._job import Job
from .._jobs._registered import RegisteredJob
from .._jobs._retry import RetryPolicy
from .._workflows._edges import After

if TYPE_CHECKING:
    from datetime import datetime

    from ._app import App

P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Spec:
    """What ``@app.job`` said of a function: the options of every job of it."""

    executor: str
    queue: str
    priority: int
    timeout: float | None
    retry: RetryPolicy
    tenant: str | None
    rate_key: str | None
    serializer: str


class JobFunction(Generic[P, R]):
    """A function registered with ``@app.job``: call it to run it here, or
    enqueue calls of it for the app's workers.

    ``f(...)`` calls the function. ``await f.enqueue(...)`` and
    ``f.enqueue_sync(...)`` return the job id once the job is committed;
    ``f.options(...)`` gives a sender with per-call options; ``f.job(...)``
    builds the :class:`~jobsched.Job` for ``s.submit`` or ``depends_on``.
    """

    __slots__ = ("__dict__", "_app", "_names", "_plain", "_signature", "_spec", "fn", "name")

    def __init__(self, app: App, fn: Callable[P, Any], name: str, spec: Spec) -> None:
        #: The function as written.
        self.fn = fn
        #: The name it is registered (and stored) under.
        self.name = name
        self._app = app
        self._spec = spec
        self._signature = inspect.signature(fn)
        params = self._signature.parameters.values()
        # Parameters that all bind by position or name (the usual function):
        # calls bind, and runs call, without inspect's Python-level binding,
        # which cost more than the JSON of a few arguments.
        plain = all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in params)
        self._names = tuple(p.name for p in params) if plain else None
        self._plain = frozenset(self._names) if self._names is not None else None
        # What pickle and introspection read: the module attribute this
        # object replaced (a pickled job of it refers to it by that name).
        self.__module__ = fn.__module__
        self.__qualname__ = fn.__qualname__
        self.__name__ = getattr(fn, "__name__", name)
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.fn(*args, **kwargs)  # type: ignore[no-any-return]

    def __reduce__(self) -> str:
        # By reference, as the function itself would be: `serializer="pickle"`
        # jobs and the process executor pickle it.
        return self.__qualname__

    def __repr__(self) -> str:
        return f"<JobFunction {self.name!r}>"

    @property
    def queue(self) -> str:
        """The queue its jobs go to unless ``options(queue=...)`` says otherwise."""
        return self._spec.queue

    def job(self, *args: P.args, **kwargs: P.kwargs) -> Job:
        """The job for a call, arguments encoded now.

        :raises TypeError: the arguments do not bind to the function's
            signature, or one does not encode as JSON (named).
        :raises ValueError: a string in them holds NUL or a lone surrogate,
            which no store can keep (named).
        """
        return self._make(args, kwargs, {})

    async def enqueue(self, *args: P.args, **kwargs: P.kwargs) -> str:
        """Enqueue a call; returns the job id once it is committed."""
        return await self._app._enqueue(self._make(args, kwargs, {}), {})

    def enqueue_sync(self, *args: P.args, **kwargs: P.kwargs) -> str:
        """:meth:`enqueue` from synchronous code (any thread but a scheduler's loop)."""
        return self._app._enqueue_sync(self._make(args, kwargs, {}), {})

    def options(
        self,
        *,
        job_id: str | None = None,
        delay: float = 0.0,
        at: datetime | None = None,
        depends_on: str | Job | After | Iterable[str | Job | After] = (),
        queue: str | None = None,
        priority: JobPriority | int | None = None,
        connection: object = None,
    ) -> Sender[P, R]:
        """A sender of calls with these options (``enqueue``, ``enqueue_sync``, ``job``).

        :param job_id: an id of your own (idempotent, as ``submit(job_id=...)``).
        :param delay: seconds before the job may start; or ``at``, an aware datetime.
        :param depends_on: job ids, jobs or ``js.After`` edges it waits for
            (an id or a job: it must complete first).
        :param queue: another queue than the registered one.
        :param priority: another priority than the registered one.
        :param connection: a database connection with a transaction open:
            the job is written in that transaction and exists if and only
            if it commits (docs/stores.md, "Enqueue in your own
            transaction"). ``enqueue`` takes an async driver's connection
            too, ``enqueue_sync`` a synchronous one.
        """
        made: dict[str, Any] = {}
        if queue is not None:
            made["queue"] = queue
        if priority is not None:
            made["priority"] = priority
        submit: dict[str, Any] = {}
        if job_id is not None:
            submit["job_id"] = job_id
        if delay:
            submit["delay"] = delay
        if at is not None:
            submit["at"] = at
        deps = [depends_on] if isinstance(depends_on, (str, Job, After)) else list(depends_on)
        if deps:
            submit["depends_on"] = deps
        if connection is not None:
            submit["connection"] = connection
        return Sender(self, made, submit)

    def _make(self, args: tuple[Any, ...], kwargs: dict[str, Any], made: dict[str, Any]) -> Job:
        spec = self._spec
        if spec.serializer == "pickle":
            from .._jobs._function import FunctionJob

            self._bind(args, kwargs)
            return FunctionJob(
                self,
                args,
                kwargs,
                executor=spec.executor,
                name=self.name,
                priority=made.get("priority", spec.priority),
                timeout=spec.timeout,
                retry=spec.retry,
                tenant=spec.tenant,
                rate_key=spec.rate_key,
                queue=made.get("queue", spec.queue),
            )
        arguments = self._bind(args, kwargs)
        return RegisteredJob(self, encode_arguments(self, arguments), **made)

    def _bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        names = self._names
        if names is not None and len(args) + len(kwargs) == len(names):
            # Every parameter given once: what bind() returns, in the
            # signature's order. Anything else (defaults left out, a name
            # given twice or unknown) goes through bind() and its errors.
            if not kwargs:
                return dict(zip(names, args, strict=True))
            given = dict(zip(names, args, strict=False))
            given.update(kwargs)
            if len(given) == len(names) and given.keys() <= self._plain:  # type: ignore[operator]
                return {name: given[name] for name in names}
        try:
            return self._signature.bind(*args, **kwargs).arguments
        except TypeError as exc:
            got = f"args={reprlib.repr(args)}, kwargs={reprlib.repr(kwargs)}"
            raise TypeError(
                f"{self.name}: the arguments don't match {self.fn.__name__}{self._signature}: "
                f"{exc} (got {got})"
            ) from None


def encode_arguments(function: JobFunction[Any, Any], arguments: dict[str, Any]) -> str:
    """Bound arguments as the row's JSON: ``*args`` as a list, ``**kw`` as an object."""
    params = function._signature.parameters
    for key, value in arguments.items():
        if params[key].kind is inspect.Parameter.VAR_POSITIONAL:
            arguments[key] = list(value)
    try:
        return _json.dumps_arguments(arguments, "")
    except (TypeError, ValueError):
        pass
    # Say which argument: encode them one by one (only on this error path).
    for key, value in arguments.items():
        _json.dumps_arguments(value, f"{function.name}: the argument {key!r}")
    raise AssertionError("unreachable: the arguments encoded one by one")  # pragma: no cover


class Sender(Generic[P, R]):
    """:meth:`JobFunction.options`: calls of the function with those options."""

    __slots__ = ("_function", "_made", "_submit")

    def __init__(
        self, function: JobFunction[P, R], made: dict[str, Any], submit: dict[str, Any]
    ) -> None:
        self._function = function
        self._made = made
        self._submit = submit

    def job(self, *args: P.args, **kwargs: P.kwargs) -> Job:
        """The job for a call, with the sender's queue and priority (the
        other options are the submit's: pass them to ``s.submit``)."""
        return self._function._make(args, kwargs, self._made)

    async def enqueue(self, *args: P.args, **kwargs: P.kwargs) -> str:
        """Enqueue a call with these options; returns the job id once committed."""
        function = self._function
        return await function._app._enqueue(function._make(args, kwargs, self._made), self._submit)

    def enqueue_sync(self, *args: P.args, **kwargs: P.kwargs) -> str:
        """:meth:`enqueue` from synchronous code."""
        function = self._function
        return function._app._enqueue_sync(function._make(args, kwargs, self._made), self._submit)
