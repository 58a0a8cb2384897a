"""Hostile text through every text field, a job's arguments, its exception
message and its result, on the memory, SQLite and PostgreSQL stores, then
through ``jobsched jobs/show`` (``--json`` and the tables) and the
dashboard's pages (issue 32).

Every value is either refused at submit with ``ValueError`` (text no store
can keep: NUL, lone surrogates; or a field's own rule) or stored and read
back equal, error text with those characters escaped (``\\x00``,
``\\udc80``); the CLI prints valid JSON and tables without raw control
characters; the dashboard escapes HTML; the scheduler never dies.

Profiles (``JOBSCHED_HYPOTHESIS_PROFILE``, as tests/test_model.py): ``ci``
(the default) runs 20 derandomized examples per store, under a second each;
``thorough`` runs 300 random ones per store.
"""

from __future__ import annotations

import html
import json
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

import anyio
import profiles
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient
from text_jobs import Says, says_hello

import jobsched as js
from jobsched._cli._main import cli
from jobsched._jobs._ids import MAX_OWN_ID
from jobsched._jobs._text import storable
from jobsched_dashboard import create_app

_COMMON: dict[str, Any] = {
    "deadline": None,
    "database": None,
    "print_blob": True,
    # Each example starts a scheduler on a store of its own: slow by design.
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}
settings.register_profile("fuzz-ci", max_examples=20, derandomize=True, **_COMMON)
settings.register_profile("fuzz-thorough", max_examples=300, **_COMMON)


def _profile() -> str:
    return "fuzz-" + profiles.chosen("tests/test_fuzz_text.py")


PROFILE = _profile()

# ── hostile text ─────────────────────────────────────────────────────────

EVIL = "<script>alert(1)</script>"
#: Pieces a hostile string is made of: what no store keeps, what bends text
#: (RTL and combining marks, a BOM, line separators), terminal escapes,
#: quotes and markup.
PIECES = [
    "\x00",
    "\udc80",
    "\ud800",
    "\udfff",
    "\u202e",
    "\u200f",
    "\u2066",
    "e\u0301",
    "\u0301",
    "\ufeff",
    "\u2028",
    "\x1b[2J",
    "\x1b]0;pwned\x07",
    "\x7f",
    "\x85",
    "\r\n",
    "\t",
    "'",
    '"',
    "\\",
    "\\x00",
    EVIL,
    "&amp;",
    "😀",
    "job-",
    " ",
    "-",
]

hostile = st.one_of(
    st.lists(st.sampled_from(PIECES) | st.text(max_size=4), min_size=1, max_size=6).map("".join),
    # Any code point, surrogates included (st.text() leaves them out).
    st.text(st.characters(codec=None, exclude_categories=()), min_size=1, max_size=12),
    # 10 kB of one piece.
    st.sampled_from(PIECES).map(lambda piece: (piece * 10_000)[:10_000]),
)
#: Text that is mostly plain, so that jobs get through to the store too.
maybe_hostile = st.one_of(st.sampled_from(["plain", "élan", "a b"]), hostile)


def unstorable(text: str) -> bool:
    """Text no store can keep (what the door refuses)."""
    return storable(text) != text


@dataclass
class Spec:
    """One job's hostile fields."""

    name: str
    tenant: str | None
    rate_key: str | None
    queue: str
    job_id: str | None
    value: str
    error: str | None
    args: tuple[str, ...]


#: The fields a submit checks; each spec makes one of them hostile, so that
#: most jobs get through the door and the rest of the way.
FIELDS = ["name", "tenant", "rate_key", "queue", "job_id", None]


@st.composite
def specs(draw: st.DrawFn) -> Spec:
    hot = draw(st.sampled_from(FIELDS))

    def text(name: str, plain: str | None) -> Any:
        return draw(hostile) if name == hot else plain

    own = text("job_id", None)
    return Spec(
        name=text("name", draw(st.sampled_from(["plain", "élan", "a b"]))),
        tenant=text("tenant", draw(st.sampled_from([None, "acme"]))),
        rate_key=text("rate_key", None),
        queue=text("queue", draw(st.sampled_from(["default", "emails"]))),
        job_id=None if own is None else "own-" + own,
        value=draw(hostile),
        error=draw(st.none() | hostile),
        args=tuple(draw(st.lists(hostile, max_size=2))),
    )


@dataclass
class Example:
    specs: list[Spec]
    schedule_id: str


examples = st.builds(Example, st.lists(specs(), min_size=1, max_size=4), schedule_id=maybe_hostile)

# ── one example on a store ───────────────────────────────────────────────


@dataclass
class Ran:
    """What an example left in its store: accepted specs by job id, the schedule."""

    jobs: dict[str, Spec] = field(default_factory=dict)
    numbers: dict[str, int] = field(default_factory=dict)
    schedule: str | None = None


def _may_refuse(spec: Spec) -> bool:
    """Whether a field's own rule (not the door's) may refuse ``spec``: a blank
    label, a queue's alphabet, an own id's length."""
    blank = any(v is not None and not v.strip() for v in (spec.tenant, spec.rate_key))
    own = spec.job_id is not None and len(spec.job_id) > MAX_OWN_ID
    return blank or spec.queue not in ("default", "emails") or own


async def _submit_all(url: str, example: Example) -> Ran:
    ran = Ran()
    never = js.RetryPolicy(max_retries=0)
    async with js.JobScheduler(store=url, num_workers=4) as s:
        for spec in example.specs:
            door = any(
                unstorable(text)
                for text in (spec.name, spec.tenant, spec.rate_key, spec.queue, spec.job_id)
                if text is not None
            )
            refused: ValueError | None = None
            try:
                job = Says(
                    spec.value,
                    spec.error,
                    *spec.args,
                    name=spec.name,
                    tenant=spec.tenant,
                    rate_key=spec.rate_key,
                    queue=spec.queue,
                    retry=never,
                )
                job_id = await s.enqueue(job, job_id=spec.job_id)
            except ValueError as exc:
                refused = exc
            if refused is not None:
                assert door or _may_refuse(spec), f"{spec!r} refused: {refused}"
                continue
            assert not door, f"{spec!r} accepted"
            if spec.job_id is not None and job_id in ran.jobs:
                continue  # the same own id twice: the first job stands
            ran.jobs[job_id] = spec
            ran.numbers[job_id] = job._jobsched_id
        try:
            ran.schedule = s.schedule_recurring(
                says_hello, 3600, start_in=3600, id=example.schedule_id
            )
        except ValueError:
            assert unstorable(example.schedule_id) or not example.schedule_id
        with anyio.fail_after(60):
            for job_id, spec in ran.jobs.items():
                _check_job(await s.wait(job_id), spec)
                _check_job(await s.fetch(job_id), spec)
                _check_job(s.get(job_id), spec)
        ids = [info.id for info in await s.schedules()]
        assert ids == ([] if ran.schedule is None else [example.schedule_id])
        # Still up: it runs a plain job after all that.
        with anyio.fail_after(60):
            assert await s.result(await s.enqueue(Says("after"))) == "after"
    return ran


def _check_job(job: js.Job, spec: Spec) -> None:
    """The job as read back: every field equal, error text escaped."""
    assert (job.name, job.tenant, job.rate_key, job.queue) == (
        spec.name,
        spec.tenant,
        spec.rate_key,
        spec.queue,
    )
    if spec.job_id is not None:
        assert job.job_id == spec.job_id
    if spec.error is None:
        assert job.status is js.JobStatus.COMPLETED, job.last_error
        assert job.result == spec.value
    else:
        assert job.status is js.JobStatus.FAILED
        assert job.last_error == f"ValueError: {storable(spec.error)}"
        assert job.last_traceback is not None
        assert not unstorable(job.last_traceback)
        assert storable(spec.error) in job.last_traceback
    if isinstance(job, Says):  # fetch gives the Job itself, with its own fields
        assert job.args == spec.args and job.value == spec.value


# ── the operator's views ─────────────────────────────────────────────────

#: What no view may print raw: terminal escapes, bidi overrides, NUL.
RAW = ["\x1b", "\x00", "\u202e", "\u2066", "\x07"]


def _cli(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def _check_cli(url: str, ran: Ran) -> None:
    listed = json.loads(_cli("jobs", "--store", url, "--json", "--limit", "100"))
    by_id = {row["job_id"]: row for row in listed}
    table = _cli("jobs", "--store", url)
    assert not any(raw in table for raw in RAW)
    for job_id, spec in ran.jobs.items():
        row = by_id[job_id]
        assert (row["name"], row["tenant"], row["queue"]) == (spec.name, spec.tenant, spec.queue)
        shown = json.loads(_cli("show", "--store", url, "--json", "--", job_id))
        assert shown["job_id"] == job_id and shown["name"] == spec.name
        if spec.error is None:
            assert shown["status"] == "completed"
            assert shown["result"] is not None and shown["result"][:20] == repr(spec.value)[:20]
        else:
            assert shown["last_error"] == f"ValueError: {storable(spec.error)}"
        text = _cli("show", "--store", url, "--", job_id)
        assert not any(raw in text for raw in RAW), text
    schedules = _cli("schedules", "--store", url)
    assert not any(raw in schedules for raw in RAW)


def _check_dashboard(url: str, ran: Ran, tried: list[Spec]) -> None:
    with TestClient(create_app(url)) as client:
        pages = ["/", "/jobs", "/schedules", "/members"]
        pages += [f"/jobs/{ran.numbers[job_id]}" for job_id in ran.jobs]
        for path in pages:
            page = client.get(path)
            assert page.status_code == 200, (path, page.text[-2000:])
            assert EVIL not in page.text and "\x00" not in page.text
        for job_id, spec in ran.jobs.items():
            page = client.get(f"/jobs/{ran.numbers[job_id]}").text
            if spec.error is not None and len(spec.error) < 200 and EVIL in spec.error:
                assert html.escape(EVIL) in page
        # A filter holding hostile text (refused at submit or not) is an
        # answer, never a server error.
        for spec in tried:
            for key, value in (("name", spec.name), ("tenant", spec.tenant)):
                if value is not None:
                    # What a browser sends: UTF-8, a lone surrogate as the
                    # replacement character it cannot encode.
                    sent = value[:500].encode("utf-8", "replace").decode("utf-8")
                    page = client.get("/jobs", params={key: sent})
                    assert page.status_code in (200, 400), page.text[-2000:]
                    assert EVIL not in page.text


# ── the test ─────────────────────────────────────────────────────────────


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def fuzz_store(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    from pg import SECRET

    # The schedulers, the CLI and the dashboard sign and verify with it.
    monkeypatch.setenv("JOBSCHED_SECRET", SECRET)
    return str(request.param)


TALLY = {"examples": 0, "jobs": 0, "refused": 0}


@pytest.mark.timeout(1200)
def test_hostile_text_is_refused_or_kept_and_shown_escaped(
    fuzz_store: str, request: pytest.FixtureRequest
) -> None:
    """Each value is refused with ValueError or stored, read back equal and
    shown escaped; the scheduler, the CLI and the dashboard stay up."""
    database = request.getfixturevalue("pg_session_database") if fuzz_store == "postgres" else ""
    began = time.perf_counter()
    TALLY.update(examples=0, jobs=0, refused=0)

    @settings(settings.get_profile(PROFILE))
    @given(examples)
    def check(example: Example) -> None:
        TALLY["examples"] += 1
        with tempfile.TemporaryDirectory() as folder:
            if fuzz_store == "memory":
                url = "memory"
            elif fuzz_store == "sqlite":
                url = f"sqlite:///{folder}/jobs.db"
            else:
                from pg import schema_url

                url = schema_url(database)
            ran = anyio.run(_submit_all, url, example)
            TALLY["jobs"] += len(ran.jobs)
            TALLY["refused"] += len(example.specs) - len(ran.jobs)
            if fuzz_store != "memory":
                _check_cli(url, ran)
                _check_dashboard(url, ran, example.specs)

    check()
    print(
        f"\nfuzz, profile {PROFILE!r}, {fuzz_store}: {TALLY['examples']} examples, "
        f"{TALLY['jobs']} jobs stored, {TALLY['refused']} refused, "
        f"in {time.perf_counter() - began:.0f} s"
    )
