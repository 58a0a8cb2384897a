"""What a request asks for, read and checked: query parameters, a job's number
in a path, an action's form and token. A bad value is a 400 naming a good one."""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Mapping
from typing import Any
from urllib.parse import parse_qs, urlencode

from starlette.convertors import Convertor, register_url_convertor
from starlette.exceptions import HTTPException
from starlette.requests import Request

from jobsched import JobStatus
from jobsched._jobs._ids import check_own_id, own_number
from jobsched._jobs._text import check_text
from jobsched.store import check_queue
from jobsched.store._args import LARGEST

from . import _limits, _registered, _views

#: The statuses in the order the filters list them.
STATUS_NAMES = _views.STATUS_ORDER


def window(request: Request) -> float:
    """The seconds of history asked for with ``?minutes=N`` (1 to 60), else the default."""
    text = request.query_params.get("minutes")
    if text is None:
        return _limits.WINDOW
    if not text.isdigit() or int(text) not in _limits.MINUTES:
        raise HTTPException(
            400, f"minutes must be a whole number from 1 to 60, got {text!r}; e.g. /?minutes=5"
        )
    return int(text) * 60.0


class Filters:
    """The job list's filters, from a query string: statuses, name, executor,
    tenant, queue."""

    def __init__(
        self,
        statuses: tuple[JobStatus, ...],
        name: str | None,
        executor: str | None,
        tenant: str | None,
        queue: str | None = None,
        args: dict[str, str] | None = None,
    ) -> None:
        self.statuses = statuses
        self.name = name
        self.executor = executor
        self.tenant = tenant
        self.queue = queue
        #: Registered jobs' arguments: parameter name -> text (``?arg=KEY=VALUE``).
        self.args = args or {}

    def store_args(self) -> dict[str, Any]:
        """``job_page``'s filter arguments; ``queue`` only when one is chosen,
        so a store written before queues still lists every job."""
        args: dict[str, Any] = {
            "statuses": self.statuses,
            "name": self.name,
            "executor": self.executor,
            "tenant": self.tenant,
        }
        if self.queue is not None:
            args["queue"] = self.queue
        if self.args:
            args["args"] = self.args
        return args

    def narrowed(self, applies: Collection[JobStatus]) -> tuple[JobStatus, ...]:
        """The filter's statuses an action applies to (all of ``applies`` when none is chosen)."""
        chosen = self.statuses or STATUS_NAMES
        return tuple(s for s in chosen if s in applies)

    def query(self, **extra: Any) -> str:
        """The filters (and ``extra``) as a query string, escaped."""
        pairs: list[tuple[str, Any]] = [("status", s.value) for s in self.statuses]
        pairs += [
            (key, value)
            for key, value in (
                ("name", self.name),
                ("executor", self.executor),
                ("tenant", self.tenant),
                ("queue", self.queue),
            )
            if value is not None
        ]
        pairs += [("arg", f"{key}={value}") for key, value in self.args.items()]
        pairs += list(extra.items())
        return urlencode(pairs)


def filters(request: Request) -> Filters:
    query = request.query_params
    statuses = []
    for text in query.getlist("status"):
        if not text:
            continue
        try:
            statuses.append(JobStatus(text.strip().lower()))
        except ValueError:
            known = ", ".join(s.value for s in STATUS_NAMES)
            raise HTTPException(
                400, f"status must be one of {known}, got {text!r}; e.g. /jobs?status=failed"
            ) from None
    texts = {}
    for key in ("name", "executor", "tenant"):
        value = query.get(key, "")
        texts[key] = value if value.strip() else None
        try:
            check_text(key, value)  # no job holds such text: say so, not a 500
        except ValueError as exc:
            raise HTTPException(400, str(exc)) from None
    return Filters(
        tuple(dict.fromkeys(statuses)),
        **texts,
        queue=queue_name(query.get("queue")),
        args=_registered.arg_filters(query.getlist("arg")),
    )


def queue_name(text: str | None) -> str | None:
    """The job list's ``?queue=``: a queue's name, or None when absent or
    blank; any other value is a 400 saying what a queue's name may be (the
    check of ``FunctionJob(queue=...)`` and ``jobsched jobs --queue``)."""
    if text is None or not text.strip():
        return None
    try:
        return check_queue(text)
    except ValueError as exc:
        raise HTTPException(400, f"{exc}; e.g. /jobs?queue=emails") from None


def job_id(text: str) -> int:
    """A job's number as typed into the lookup: ``job-12`` or ``12``, the
    number an id of your own is listed by (``job--53568``), or that id itself
    (``order-42``), as the CLI takes them."""
    typed = text.strip()
    digits = typed[4:] if typed.lower().startswith("job-") else typed
    number = _number(digits)
    if number is not None:
        return number
    try:
        return own_number(check_own_id(typed))
    except (TypeError, ValueError):
        raise HTTPException(
            400, f"{text!r} is not a job id; look up job-12, 12 or an id given at submit"
        ) from None


def _number(text: str) -> int | None:
    """A job's number (negative for an id of your own), or None."""
    body = text[1:] if text.startswith("-") else text
    if not (body.isascii() and body.isdigit() and len(body) < 20) or int(body) > LARGEST:
        return None
    return -int(body) if text.startswith("-") else int(body)


def before(text: str | None) -> int | None:
    """The job list's ``?before=``: a job's number, or None for the first page."""
    if text is None or text == "":
        return None
    number = _number(text)
    if number is None:
        raise HTTPException(400, f"before must be a job's number, got {text!r}")
    return number


class _JobNumber(Convertor[int]):
    """A job's number in a path: negative for an id given at submit (the
    built-in ``int`` takes digits only, so those jobs' pages were 404)."""

    regex = "-?[0-9]+"

    def convert(self, value: str) -> int:
        return int(value)

    def to_string(self, value: int) -> str:
        return str(value)


register_url_convertor("job", _JobNumber())


class _WorkflowNumber(Convertor[int]):
    """A workflow's number in a path: ``12``, or ``wf-12`` as the CLI prints it."""

    regex = "(?:wf-)?[0-9]{1,18}"

    def convert(self, value: str) -> int:
        return int(value.removeprefix("wf-"))

    def to_string(self, value: int) -> str:
        return str(value)


register_url_convertor("workflow", _WorkflowNumber())


def workflow_before(text: str | None) -> int | None:
    """The workflow list's ``?before=``: a workflow's number, or None for the first page."""
    if text is None or text == "":
        return None
    digits = text.removeprefix("wf-")
    if not (digits.isascii() and digits.isdigit() and len(digits) < 19):
        raise HTTPException(400, f"before must be a workflow's number, got {text!r}")
    return int(digits)


def done(request: Request) -> dict[str, Any] | None:
    """What a bulk action's redirect reports (``done``, ``n``, ``more``), if well formed."""
    query = request.query_params
    action, n = query.get("done"), query.get("n", "")
    if action not in ("retry", "cancel") or not (n.isascii() and n.isdigit() and len(n) < 10):
        return None
    return {"action": action, "n": int(n), "more": query.get("more") == "1"}


def bearer(headers: Mapping[str, str]) -> str | None:
    """The token of an ``Authorization: Bearer`` header, or None."""
    scheme, _, value = headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer":
        return None
    return value.strip() or None


async def form_body(request: Request) -> bytes | None:
    """A urlencoded form's body (empty for any other kind, which is not read);
    None when it is larger than :data:`~._limits.MAX_BODY`, read no further."""
    # A urlencoded form is all the page sends: parse it with the standard
    # library instead of pulling in python-multipart for Starlette's parser.
    if request.headers.get("content-type", "").split(";")[0].strip() != (
        "application/x-www-form-urlencoded"
    ):
        return b""
    declared = request.headers.get("content-length", "0")
    if not declared.isdigit() or int(declared) > _limits.MAX_BODY:
        return None
    body = b""
    # Closed when left early, not when the garbage collector finds it.
    async with contextlib.aclosing(request.stream()) as chunks:
        async for chunk in chunks:
            body += chunk
            if len(body) > _limits.MAX_BODY:  # a Content-Length that lied, or none (chunked)
                return None
    return body


def form_field(body: bytes, name: str) -> str | None:
    values = parse_qs(body.decode("utf-8", "replace")).get(name)
    return values[0] if values and values[0] else None
