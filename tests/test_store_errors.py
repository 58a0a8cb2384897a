"""Store errors by cause: an outage is waited out, one job's data fails that
job alone, and only a bug ends a scheduler (logged as one).

The stores on their own are fed raw rows a database refuses (NUL in text on
PostgreSQL, a lone surrogate on both, a value over SQLite's length limit),
so they hold even if the scheduler's own checks of text are bypassed; the
scheduler's side (a batch written in halves around the refused job) runs on
a store that refuses a marked value.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest
from poison_jobs import Quick, Raises

import jobsched as js
from jobsched._jobs._ids import id_number
from jobsched.store import REPORT_BUGS, Change, JobDataError, JobStore, NewJob, Outcome, Recorded
from jobsched_sqlite import SQLiteStore

pytestmark = pytest.mark.anyio

S = js.JobStatus
NOW = 1_700_000_000.0
ALL = {"async": 99}
NUL = "bad \x00 byte"
SURROGATE = "bad \ud800 half"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def new(job_id: int, **kw: Any) -> NewJob:
    fields: dict[str, Any] = {
        "name": f"j{job_id}",
        "executor": "async",
        "run_at": NOW,
        "submitted_at": NOW,
        "payload": b"P",
    }
    fields.update(kw)
    return NewJob(job_id, key=(0.0,), **fields)


def store_url(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> Any:
    if kind == "sqlite":
        return f"sqlite:///{tmp_path / 'jobs.db'}"
    from pg import SECRET, schema_url

    from jobsched_postgres import PostgresStore

    return PostgresStore(schema_url(request.getfixturevalue("pg_session_database")), secret=SECRET)


KINDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=KINDS)
async def raw(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[JobStore]:
    store = store_url(request.param, tmp_path, request)
    if isinstance(store, str):
        store = js.open_store(store)
    await store.open()
    yield store
    await store.close()


def refused_values(store: JobStore) -> list[str]:
    """Texts this store cannot keep: a lone surrogate everywhere, NUL on PostgreSQL."""
    return [SURROGATE, NUL] if "postgresql" in store.url else [SURROGATE]


# ── the stores on their own ─────────────────────────────────────────────


@pytest.mark.parametrize("field", ["name", "tenant", "rate_key"])
async def test_a_new_job_the_store_cannot_keep_is_refused_as_data(
    raw: JobStore, field: str
) -> None:
    for value in refused_values(raw):
        with pytest.raises(JobDataError) as info:
            await raw.add([new(1), new(2, **{field: value})], NOW)
        assert value not in str(info.value)
        # Nothing of the call was written, and the store works on.
        assert await raw.fetch(1) is None
    await raw.add([new(1)], NOW)
    assert (await raw.fetch(1)) is not None


async def test_an_outcome_the_store_cannot_keep_is_refused_as_data(raw: JobStore) -> None:
    await raw.add([new(1), new(2)], NOW)
    claims = await raw.claim("m", 2, ALL, NOW, 30.0)
    assert sorted(c.id for c in claims) == [1, 2]
    for value in refused_values(raw):
        for bad in (
            Outcome(1, 1, S.FAILED, NOW + 1, error=value),
            Outcome(1, 1, S.FAILED, NOW + 1, error="E", traceback=value),
            Outcome(1, 1, S.RETRY_WAIT, NOW + 1, run_at=NOW + 2, error=value),
        ):
            with pytest.raises(JobDataError):
                await raw.record("m", [Outcome(2, 1, S.COMPLETED, NOW + 1), bad])
    # Neither was written: the good one goes in alone, the bad job's
    # attempt is still this member's to end.
    assert (await raw.fetch(2)).status is S.RUNNING  # type: ignore[union-attr]
    await raw.record("m", [Outcome(2, 1, S.COMPLETED, NOW + 1)])
    recorded = await raw.record("m", [Outcome(1, 1, S.FAILED, NOW + 1, error="replaced")])
    assert recorded.refused == []
    one = await raw.fetch(1)
    assert one is not None and (one.status, one.last_error) == (S.FAILED, "replaced")
    assert (await raw.fetch(2)).status is S.COMPLETED  # type: ignore[union-attr]


@pytest.mark.skipif(
    not hasattr(sqlite3.Connection, "setlimit"),
    reason="Connection.setlimit is new in Python 3.11 (the main 3.11 run covers this)",
)
async def test_a_result_over_sqlites_length_limit_is_refused_as_data(tmp_path: Path) -> None:
    store = SQLiteStore(f"sqlite:///{tmp_path / 'jobs.db'}")
    await store.open()
    try:
        await store.add([new(1)], NOW)
        await store.claim("m", 1, ALL, NOW, 30.0)
        assert store._conn is not None
        store._conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 1000)
        with pytest.raises(JobDataError, match="string or blob too big"):
            await store.record("m", [Outcome(1, 1, S.COMPLETED, NOW + 1, result=b"x" * 5000)])
        await store.record("m", [Outcome(1, 1, S.COMPLETED, NOW + 1, result=b"x")])
        assert (await store.fetch(1)).result == b"x"  # type: ignore[union-attr]
    finally:
        await store.close()


async def test_a_bug_in_a_statement_is_raised_as_it_is(
    raw: JobStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Neither an outage nor data: not dressed as either."""
    if "postgresql" in raw.url:
        from jobsched_postgres import _outcomes

        monkeypatch.setattr(
            _outcomes, "_LOOK", "SELECT no_such_column FROM jobsched_jobs WHERE id = ANY(%s)"
        )
        import psycopg

        bug: type[Exception] = psycopg.errors.UndefinedColumn
    else:
        from jobsched_sqlite import _store

        def broken(*args: Any) -> Recorded:
            raise sqlite3.OperationalError("no such column: no_such_column")

        monkeypatch.setattr(_store, "record", broken)
        bug = sqlite3.OperationalError
    await raw.add([new(1)], NOW)
    await raw.claim("m", 1, ALL, NOW, 30.0)
    with pytest.raises(bug):
        await raw.record("m", [Outcome(1, 1, S.COMPLETED, NOW + 1)])


def test_which_postgresql_errors_are_which() -> None:
    pytest.importorskip("psycopg")
    import psycopg
    from psycopg import errors
    from psycopg_pool import PoolTimeout

    from jobsched_postgres import _errors

    def error(state: str) -> Exception:
        return errors.lookup(state)("x")

    transient = ["08006", "08001", "57P01", "57P02", "57P03", "57014", "53100", "53300"]
    transient += ["40001", "40P01", "55P03", "25006", "58030"]
    for state in transient:
        assert _errors.is_transient(error(state)), state
        assert not _errors.is_data(error(state)), state
    for exc in (psycopg.OperationalError("lost"), psycopg.InterfaceError("closed"), PoolTimeout()):
        assert _errors.is_transient(exc)
    for state in ["22021", "22P05", "22001", "22003", "54000"]:
        assert _errors.is_data(error(state)), state
        assert not _errors.is_transient(error(state)), state
    assert _errors.is_data(psycopg.DataError("PostgreSQL text fields cannot contain NUL"))
    assert _errors.is_data(UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed"))
    for state in ["42703", "42601", "23505", "XX000", "25P02"]:
        assert not _errors.is_transient(error(state)), state
        assert not _errors.is_data(error(state)), state
    said = str(_errors.unavailable("postgresql://h/db", error("25006")))
    assert "read-only" in said and "default_transaction_read_only" in said


def test_which_sqlite_errors_are_data() -> None:
    from jobsched_sqlite import _errors

    too_big = sqlite3.DataError("string or blob too big")
    assert _errors.is_data(too_big) and not _errors.is_transient(too_big)
    assert _errors.is_data(UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed"))
    assert not _errors.is_data(sqlite3.OperationalError("no such column: x"))
    assert not _errors.is_data(sqlite3.OperationalError("database is locked"))


# ── the scheduler on a store that refuses a job's data ──────────────────


@pytest.mark.parametrize("kind", KINDS)
async def test_a_job_whose_error_the_store_refuses_fails_alone(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The raw text reaches the store (whatever the scheduler does to error
    text first, the store must not end a scheduler on it)."""
    store = store_url(kind, tmp_path, request)
    async with js.JobScheduler(store=store, num_workers=4) as s:
        bad = [s.submit(Raises(value, retry=js.RetryPolicy(max_retries=1, base_delay=0.01)))
               for value in (SURROGATE, NUL)]  # fmt: skip
        good = [s.submit(Quick(i)) for i in range(30)]
        with anyio.fail_after(60):
            await s.join()
        for job_id in bad:
            job = await s.fetch(job_id)
            assert (job.status, job.attempts) == (S.FAILED, 2)
            assert job.last_error is not None
            if job_id == bad[0] or kind == "postgres":
                # Refused by the store, or replaced before it.
                assert "\x00" not in job.last_error and "\ud800" not in job.last_error
        for i, job_id in enumerate(good):
            assert await s.result(job_id) == i


class Refusing(SQLiteStore):
    """A SQLite store that refuses, as one job's data, any new job named
    ``POISON`` and any outcome whose error or result says ``POISON``."""

    calls = 0

    async def add(self, jobs: Sequence[NewJob], now: float) -> list[Change]:
        self.calls += 1
        if any(job.name == "POISON" for job in jobs):
            raise JobDataError("a name this store cannot keep")
        return await super().add(jobs, now)

    async def record(self, owner: str, outcomes: Sequence[Outcome]) -> Recorded:
        self.calls += 1
        if any("POISON" in (o.error or "") or b"POISON" in (o.result or b"") for o in outcomes):
            raise JobDataError("a value this store cannot keep")
        return await super().record(owner, outcomes)


async def test_the_rest_of_a_batch_of_outcomes_is_written(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = Refusing(f"sqlite:///{tmp_path / 'jobs.db'}")
    async with js.JobScheduler(store=store, num_workers=8) as s:
        # Submitted together, run together: their outcomes share batches.
        ids = [s.submit(Quick(i)) for i in range(40)]
        poison = s.submit(Raises("POISON", retry=js.RetryPolicy(max_retries=0)))
        ids += [s.submit(Quick(i)) for i in range(40, 80)]
        with anyio.fail_after(60):
            await s.join()
        job = await s.fetch(poison)
        assert job.status is S.FAILED
        assert job.last_error == (
            "the store refused this attempt's outcome (its error text or result): "
            "a value this store cannot keep"
        )
        assert s.get(poison).status is S.FAILED
        for i, job_id in enumerate(ids):
            assert await s.result(job_id) == i
    # One line for the refusal (the job's own failure is logged as any).
    warned = [r.getMessage() for r in caplog.records if r.module == "_refusals"]
    assert warned == [f"{poison}: {job.last_error}; stored failed with that error"]


async def test_a_retry_the_store_refuses_stays_a_retry(tmp_path: Path) -> None:
    """Its error replaced by the refusal: the job runs its retries and ends
    FAILED, as it would with text the store keeps."""
    store = Refusing(f"sqlite:///{tmp_path / 'jobs.db'}")
    async with js.JobScheduler(store=store) as s:
        poison = s.submit(Raises("POISON", retry=js.RetryPolicy(max_retries=2, base_delay=0.01)))
        with anyio.fail_after(60):
            await s.join()
        job = await s.fetch(poison)
        assert (job.status, job.attempts) == (S.FAILED, 3)
        assert job.last_error is not None and "the store refused" in job.last_error
        assert [a.status for a in await store.attempts(job_id=id_number(poison))] == [
            S.RETRY_WAIT, S.RETRY_WAIT, S.FAILED
        ]  # fmt: skip


async def test_a_result_the_store_refuses_fails_its_job(tmp_path: Path) -> None:
    store = Refusing(f"sqlite:///{tmp_path / 'jobs.db'}")
    async with js.JobScheduler(store=store) as s:
        poison = s.submit(Quick(b"POISON"))
        ok = s.submit(Quick(b"fine"))
        with anyio.fail_after(60):
            await s.join()
        job = await s.fetch(poison)
        assert (job.status, job.result) == (S.FAILED, None)
        assert job.last_error is not None and "the store refused" in job.last_error
        assert await s.result(ok) == b"fine"


async def test_a_new_job_the_store_refuses_is_cancelled_and_named_at_flush(
    tmp_path: Path,
) -> None:
    store = Refusing(f"sqlite:///{tmp_path / 'jobs.db'}")
    async with js.JobScheduler(store=store) as s:
        await s.flush()  # the store opened: what follows is one batch
        calls = store.calls
        before = [s.submit(Quick(i)) for i in range(5)]
        refused = s.submit(Quick(name="POISON"))
        after = [s.submit(Quick(i)) for i in range(5, 10)]
        downstream = s.submit(Quick(), depends_on=[refused])
        with pytest.raises(ValueError, match="the store refused") as info:
            await s.flush()
        said = str(info.value)
        assert f"the store refused {refused} ('POISON'): a name this store cannot keep" in said
        assert "The other jobs are committed" in said
        # Halves until it was alone: a handful of calls, not one per job.
        assert store.calls - calls <= 10
        assert s.get(refused).status is S.CANCELLED
        assert s.get(refused).last_error == (
            "the store refused this job: a name this store cannot keep"
        )
        assert s.get(downstream).status is S.CANCELLED
        with anyio.fail_after(60):
            await s.join()
        for i, job_id in enumerate(before + after):
            assert await s.result(job_id) == i
        with pytest.raises(js.UnknownJobError):
            await s.fetch(refused)
        # A later flush is about later writes.
        s.submit(Quick())
        await s.flush()
        # enqueue says it the same way.
        with pytest.raises(ValueError, match="the store refused"):
            await s.enqueue(Quick(name="POISON"))


async def test_a_bug_in_a_store_is_logged_as_one_and_ends_the_scheduler(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken(SQLiteStore):
        async def record(self, owner: str, outcomes: Sequence[Outcome]) -> Recorded:
            raise RuntimeError("a bug in the store")

    store = Broken(f"sqlite:///{tmp_path / 'jobs.db'}")
    ended: BaseException | None = None
    with anyio.fail_after(60):
        try:
            async with js.JobScheduler(store=store) as s:
                s.submit(Quick())
                await s.join()
        except Exception as exc:
            ended = exc
    assert ended is not None and "a bug in the store" in repr(ended)
    bugs = [r for r in caplog.records if r.levelno == logging.CRITICAL]
    assert len(bugs) == 1
    line = bugs[0].getMessage()
    assert "a bug in jobsched or in the store" in line
    assert "RuntimeError: a bug in the store" in line
    assert f"report it with this traceback at {REPORT_BUGS}" in line
    assert "\n" not in line
