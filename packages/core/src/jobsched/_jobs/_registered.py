"""The job a call of a registered function becomes: its name and JSON arguments.

Nothing of it is pickled into the store: the row holds the registered name
and the arguments as tagged JSON, and the member that claims it finds the
function by name in its own app. The arguments are decoded for each run, on
every store (the memory store too), so a job behaves the same wherever it
runs; so is the result, which goes through a JSON round trip.
"""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

from .._exceptions import NonRetryableError, SchedulerError
from . import _json
from ._job import Job

#: The payload of a registered job's row (see the seam): nothing to unpickle.
PAYLOAD = b"J"
#: What starts a registered job's stored result: the JSON follows.
RESULT_TAG = b"J"
#: The keys of the arguments of a call enqueued by SQL (PostgreSQL's
#: ``jobsched_enqueue``), which cannot know the function's parameter names:
#: ``{"$args": [...], "$kwargs": {...}}``, bound to the signature when the
#: job runs. No parameter's name starts with ``$``, so these never clash
#: with the usual form (parameter name -> value).
SQL_ARGS, SQL_KWARGS = "$args", "$kwargs"


class RegisteredJob(Job):
    """A call of a registered function (``@app.job``), with JSON arguments.

    ``args_json`` is the stored text: an object of each parameter's name to
    its value as bound to the function's signature. Built by
    :meth:`JobFunction.job`, or by a member from a claimed row.
    """

    __slots__ = ("args_json", "executor", "function")

    #: The engine's mark: stored as ``payload=b"J"`` plus ``args``.
    _jobsched_json: ClassVar[bool] = True

    def __init__(self, function: Any, args_json: str, **options: Any) -> None:
        spec = function._spec
        self.function = function
        self.args_json = args_json
        self.executor: str = spec.executor  # type: ignore[misc]
        super().__init__(
            function.name,
            priority=options.get("priority", spec.priority),
            timeout=spec.timeout,
            retry=spec.retry,
            tenant=spec.tenant,
            rate_key=spec.rate_key,
            queue=options.get("queue", spec.queue),
        )

    @property
    def arguments(self) -> dict[str, Any]:
        """The arguments as the run sees them (decoded from ``args_json``)."""
        return _json.loads(self.args_json)  # type: ignore[no-any-return]

    def _call_args(self) -> tuple[list[Any], dict[str, Any]]:
        flow = self._flow
        if flow is not None and flow.bound is not None:
            # Bound to its upstreams' results (jobsched._workflows._bind).
            if flow.failed is not None:
                raise flow.failed
            arguments = flow.bound
        else:
            arguments = self.arguments
        if SQL_ARGS in arguments:
            return _bind_sql(self, arguments)
        plain = self.function._plain
        if plain is not None and arguments.keys() <= plain:
            return [], arguments  # every parameter takes its name (JobFunction._plain)
        bound = inspect.BoundArguments(self.function._signature, arguments)
        return list(bound.args), bound.kwargs

    async def run(self) -> Any:
        """Await the registered coroutine function; the result round-trips through JSON."""
        args, kwargs = self._call_args()
        return _round_trip(self.name, await self.function.fn(*args, **kwargs))

    def run_sync(self) -> Any:
        """Call the registered plain function; the result round-trips through JSON."""
        args, kwargs = self._call_args()
        return _round_trip(self.name, self.function.fn(*args, **kwargs))


def _bind_sql(job: RegisteredJob, arguments: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """The call of arguments enqueued by SQL, bound now; NonRetryableError
    (every run would fail the same way) if they do not bind."""
    function = job.function
    args, kwargs = arguments.get(SQL_ARGS), arguments.get(SQL_KWARGS, {})
    try:
        if type(args) is not list or type(kwargs) is not dict:
            raise TypeError(
                f"args must be a JSON array and kwargs an object, got {args!r} and {kwargs!r}"
            )
        bound = function._signature.bind(*args, **kwargs)
    except TypeError as exc:
        raise NonRetryableError(
            f"{job.name}: the arguments jobsched_enqueue() stored don't match "
            f"{function.fn.__name__}{function._signature}: {exc}; enqueue it again with "
            "args (a JSON array, by position) and kwargs (a JSON object, by name) that do"
        ) from None
    return list(bound.args), bound.kwargs


def _round_trip(name: str, value: Any) -> Any:
    """What a reader of the stored result gets back; NonRetryableError (the
    job ends FAILED, not retried: a rerun returns the same kind) if it does
    not encode."""
    if value is None:
        return None
    try:
        text = _json.dumps(value, f"the result of {name}")
    except (TypeError, ValueError) as exc:
        raise NonRetryableError(str(exc)) from None
    return _json.loads(text)


def encode_result(job: Job) -> bytes:
    """A registered job's result as the store keeps it: ``b"J"`` + JSON."""
    return RESULT_TAG + _json.dumps(job.result, f"the result of {job.name}").encode()


def decode_result(blob: bytes) -> Any:
    """A stored ``b"J"`` result's value."""
    return _json.loads(blob[1:].decode())


def from_row(registry: Any, name: str, executor: str, args_json: str) -> Job:
    """A registered job as a member rebuilds it from its row. A name this
    process does not register (a reader without the app, e.g. fetch) gives a
    job that keeps the row's name and arguments and cannot run."""
    function = registry.get(name) if registry is not None else None
    if function is None:
        return UnregisteredJob(name, executor, args_json)
    return RegisteredJob(function, args_json)


def load_claimed(registry: Any, name: str | None, args_json: str) -> tuple[Job | None, str]:
    """A claimed registered row as the job to run, or (None, why it cannot run here)."""
    if name is None:
        return None, (
            "the store handed over a registered job without its name (Claimed.name), so "
            "no member can find its function: update the store's package"
        )
    function = registry.get(name) if registry is not None else None
    if function is None:
        # A member claims only the names its app registers (claim(names=...)):
        # a store that ignores names= handed it over; fail it clearly.
        return None, unknown_name(name) + (
            "; the store handed it to a member that does not register it, which a "
            "store that honours claim(names=...) never does"
        )
    return RegisteredJob(function, args_json), ""


class UnregisteredJob(Job):
    """A stored registered job whose name this process does not register:
    its arguments and result read, but it cannot run here."""

    __slots__ = ("args_json", "executor")

    def __init__(self, name: str, executor: str, args_json: str) -> None:
        super().__init__(name)
        self.executor = executor  # type: ignore[misc]
        self.args_json = args_json

    @property
    def arguments(self) -> dict[str, Any]:
        """The arguments, decoded from ``args_json``."""
        return _json.loads(self.args_json)  # type: ignore[no-any-return]

    async def run(self) -> Any:
        raise SchedulerError(unknown_name(self.name))

    def run_sync(self) -> Any:
        raise SchedulerError(unknown_name(self.name))


def unknown_name(name: str) -> str:
    """What a member says of a registered job whose name its app lacks."""
    return (
        f"no function is registered under the name {name!r} in this process's app: "
        "deploy the code that declares it (@app.job) on this member, or register it "
        "under that name"
    )
