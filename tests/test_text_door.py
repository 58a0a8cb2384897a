"""Text a store cannot keep (NUL, lone surrogates) is refused at the door on
every store, and error text is kept with it escaped (issue 32).

Tests that take ``make_scheduler`` run on the memory store, SQLite and
PostgreSQL, under asyncio and trio (tests/conftest.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from text_jobs import Says, says_hello

import jobsched as js
from jobsched._jobs._text import check_text, storable
from jobsched.store._args import check_page_args

Make = Callable[..., js.JobScheduler]
S = js.JobStatus

#: One of each kind a store cannot keep, with the name the error gives it.
BAD = [("a\x00b", "NUL"), ("a\udc80b", "a lone surrogate"), ("\ud800", "a lone surrogate")]


def _refused(field: str, value: str, what: str) -> str:
    """The pattern of the door's error for ``value`` in ``field``."""
    return f"{re.escape(field)} must not hold {what} .*got {re.escape(repr(value))}; drop or"


# ── the rule, alone ──────────────────────────────────────────────────────


@pytest.mark.parametrize(("value", "what"), BAD)
def test_check_text_names_the_field_shows_the_value_and_says_what_to_do(
    value: str, what: str
) -> None:
    """The error names the field, shows the value escaped and the fix."""
    with pytest.raises(ValueError, match=_refused("tenant", value, what)) as info:
        check_text("tenant", value)
    assert "\x00" not in str(info.value)
    str(info.value).encode("utf-8")  # printable anywhere: nothing raw in it


def test_check_text_takes_anything_else() -> None:
    """Control characters, marks, RTL text and non-BMP characters are text a store keeps."""
    for fine in ["", "plain", "\x01\x1b[31m\x7f", "\u202eevil", "e\u0301", "𝄞 😀", "a" * 10_000]:
        assert check_text("name", fine) is fine


def test_a_long_value_is_shown_cut() -> None:
    """A 10 kB value is not copied whole into the message."""
    with pytest.raises(ValueError, match="name must not hold NUL") as info:
        check_text("name", "a" * 10_000 + "\x00")
    assert len(str(info.value)) < 500 and "'...;" in str(info.value)


def test_storable_escapes_what_no_store_keeps_and_nothing_else() -> None:
    """NUL as \\x00, a lone surrogate as \\udXXX; other text as it is, the same object."""
    assert storable("bad\x00byte") == "bad\\x00byte"
    assert storable("\udc80\ud800x") == "\\udc80\\ud800x"
    fine = "ünïcode \x1b[0m 😀 \u202e"
    assert storable(fine) is fine
    assert storable("bad\x00\udfff").encode("utf-8") == b"bad\\x00\\udfff"


def test_a_page_filter_holding_nul_is_a_value_error() -> None:
    """An operator's filter (the dashboard's name, tenant) is checked like a submit."""
    for field in ("name", "executor", "tenant"):
        with pytest.raises(ValueError, match=_refused(field, "x\x00", "NUL")):
            check_page_args(
                statuses=(),
                limit=10,
                before=None,
                scan=100,
                **{"name": None, "executor": None, "tenant": None, field: "x\x00"},
            )


@pytest.mark.parametrize("field", ["tenant", "rate_key"])
def test_a_label_is_refused_when_the_job_is_made(field: str) -> None:
    """tenant and rate_key are checked at construction already, as their other checks are."""
    with pytest.raises(ValueError, match=_refused(field, "t\x00", "NUL")):
        Says(**{field: "t\x00"})


# ── at submit and enqueue, on every store ────────────────────────────────


def _jobs_with(field: str, value: str) -> list[tuple[Says, dict[str, Any]]]:
    """Jobs holding ``value`` in ``field``, with submit's keywords: set when made
    and, where that is refused already, set afterwards (submit checks again)."""
    if field == "job_id":
        return [(Says(), {"job_id": value})]
    late = Says()
    setattr(late, field, value)
    if field == "name":
        return [(Says(name=value), {}), (late, {})]
    return [(late, {})]


@pytest.mark.parametrize("field", ["name", "tenant", "rate_key", "job_id"])
@pytest.mark.parametrize(("value", "what"), BAD)
async def test_submit_and_enqueue_refuse_a_field_no_store_keeps(
    make_scheduler: Make, field: str, value: str, what: str
) -> None:
    """A ValueError at submit and enqueue, nothing queued, and the scheduler goes on."""
    async with make_scheduler() as s:
        for job, kw in _jobs_with(field, value):
            with pytest.raises(ValueError, match=_refused(field, value, what)):
                s.submit(job, **kw)
            with pytest.raises(ValueError, match=_refused(field, value, what)):
                await s.enqueue(job, **kw)
        assert s.jobs() == []
        with anyio.fail_after(30):
            assert await s.result(await s.enqueue(Says("fine"))) == "fine"


async def test_a_queue_name_holding_nul_is_refused(make_scheduler: Make) -> None:
    """A queue's name is refused as any name outside its alphabet."""
    with pytest.raises(ValueError, match=r"queue must be a name .*got 'q\\x00'"):
        Says(queue="q\x00")
    async with make_scheduler() as s:
        job = Says()
        with pytest.raises(ValueError, match="queue must be a name"):
            job.queue = "q\x00"
        assert s.jobs() == []


@pytest.mark.parametrize(("value", "what"), BAD)
async def test_schedule_ids_no_store_keeps_are_refused(
    make_scheduler: Make, value: str, what: str
) -> None:
    """Registering, pausing, resuming, triggering or cancelling such an id is a ValueError."""
    async with make_scheduler() as s:
        pattern = _refused("schedule id", value, what)
        with pytest.raises(ValueError, match=pattern):
            s.schedule_recurring(says_hello, 3600, start_in=3600, id=value)
        with pytest.raises(ValueError, match=pattern):
            s.schedule_cron(says_hello, "0 3 * * *", timezone="UTC", id=value)
        for call in (s.pause_schedule, s.resume_schedule, s.trigger_schedule):
            with pytest.raises(ValueError, match=pattern):
                await call(value)
        with pytest.raises(ValueError, match=pattern):
            s.cancel_recurring(value)
        assert await s.schedules() == []
        s.schedule_recurring(says_hello, 3600, start_in=3600, id="fine")
        assert [info.id for info in await s.schedules()] == ["fine"]


def test_a_background_scheduler_refuses_and_stays_up() -> None:
    """From another thread: the same ValueError, and the scheduler still runs jobs."""
    with js.BackgroundScheduler() as bg:
        with pytest.raises(ValueError, match=_refused("name", "a\x00b", "NUL")):
            bg.submit(Says(name="a\x00b"))
        with pytest.raises(ValueError, match=_refused("job_id", "\udc80", "a lone surrogate")):
            bg.submit(Says(), job_id="\udc80")
        with pytest.raises(ValueError, match=_refused("schedule id", "s\x00", "NUL")):
            bg.schedule_recurring(says_hello, 3600, id="s\x00")
        assert bg.result(bg.submit(Says("still up")), timeout=30) == "still up"


# ── error text, escaped before any store sees it ────────────────────────


@pytest.mark.parametrize(
    ("message", "kept"),
    [("bad\x00byte", "bad\\x00byte"), ("lone \udc80 surrogate", "lone \\udc80 surrogate")],
)
async def test_error_text_is_kept_escaped_on_every_store(
    make_scheduler: Make, message: str, kept: str
) -> None:
    """A job raising ValueError("bad\\x00byte") ends FAILED with the NUL escaped in
    last_error and the traceback, the same in this process as in the store."""
    async with make_scheduler() as s:
        job_id = await s.enqueue(Says(error=message, retry=js.RetryPolicy(max_retries=0)))
        with anyio.fail_after(30):
            ended = await s.wait(job_id)
        stored = await s.fetch(job_id)
        here = s.get(job_id)
        for job in (ended, stored, here):
            assert job.status is S.FAILED
            assert job.last_error == f"ValueError: {kept}"
            assert job.last_traceback is not None
            assert f"ValueError: {kept}\n" in job.last_traceback
            assert message not in job.last_traceback
            job.last_traceback.encode("utf-8")
        # The scheduler goes on.
        assert await s.result(await s.enqueue(Says("after"))) == "after"


async def test_a_retried_error_is_kept_escaped(make_scheduler: Make) -> None:
    """The error of an attempt that is retried goes through the same escape."""
    async with make_scheduler() as s:
        job_id = await s.enqueue(
            Says(error="x\x00", retry=js.RetryPolicy(max_retries=1, base_delay=0.0, jitter=False))
        )
        with anyio.fail_after(30):
            ended = await s.wait(job_id)
        assert (ended.status, ended.attempts, ended.last_error) == (
            S.FAILED,
            2,
            "ValueError: x\\x00",
        )


def test_show_escapes_an_own_id_it_prints(tmp_path: Path) -> None:
    """`jobsched show` printed an id given at submit raw in its first line: a
    bidi override or a terminal escape reached the operator's terminal (found
    by tests/test_fuzz_text.py)."""
    from click.testing import CliRunner

    from jobsched._cli._main import cli

    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    own = "own-\u202e\x1b[2J"

    async def main() -> None:
        async with js.JobScheduler(store=url) as s:
            await s.wait(await s.enqueue(Says("done"), job_id=own))

    anyio.run(main)
    shown = CliRunner().invoke(cli, ["show", "--store", url, "--", own], catch_exceptions=False)
    assert shown.exit_code == 0, shown.output
    first = shown.output.splitlines()[0]
    assert first.startswith("own-\\u202e\\x1b[2J  says"), first
    assert "\u202e" not in shown.output and "\x1b" not in shown.output
