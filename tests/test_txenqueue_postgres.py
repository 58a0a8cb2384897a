"""Enqueue in your own transaction on PostgreSQL, through every kind of
connection a Python app holds (psycopg's async one, SQLAlchemy's sync and
async Connection and Session, Django's ``connection`` inside ``atomic()``),
and ``jobsched_enqueue()`` from SQL and from a trigger.

Each test's store is a schema of the session's database; the app's code
connects to the database without that search_path (the store's functions
are named by their schema).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import anyio
import psycopg
import pytest
from txenq_jobs import RAN, make_app

import jobsched as js
from jobsched._jobs._ids import own_number

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]

PROMPT = 20.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # psycopg's and SQLAlchemy's async connections are asyncio's


@pytest.fixture
def database(pg_session_database: str) -> str:
    from pg import require_server

    require_server()
    return pg_session_database


@pytest.fixture
def url(database: str) -> Iterator[str]:
    from pg import schema_url

    yield schema_url(database)
    RAN.clear()


def schema_of(url: str) -> str:
    return url.rpartition("%3D")[2]


# ── every kind of connection ─────────────────────────────────────────────


async def test_psycopg_async_connection(url: str, database: str) -> None:
    """An AsyncConnection's transaction: the job commits with it, or not at all."""
    app, record_job = make_app(url)
    async with app.scheduler() as s:
        async with await psycopg.AsyncConnection.connect(database) as conn:
            async with conn.transaction():
                kept = await record_job.options(connection=conn).enqueue("async")
            async with conn.transaction():
                gone = await record_job.options(connection=conn).enqueue("rolled back")
                raise psycopg.Rollback()  # the block rolls back and swallows it
            with pytest.raises(TypeError, match="async driver's connection.*await"):
                s.submit(record_job.job("sync"), connection=conn)
        with anyio.fail_after(PROMPT):
            assert await s.result(kept) == "async:[]:None:[]"
        with pytest.raises(js.UnknownJobError):
            await s.fetch(gone)


async def test_sqlalchemy_sync_session_and_connection(url: str, database: str) -> None:
    """A SQLAlchemy Session (the ORM's) and a Connection of a sync engine."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.orm import Session

    engine = create_engine(database.replace("postgresql://", "postgresql+psycopg://"))
    app, record_job = make_app(url)
    try:
        with app.background() as bg:
            with Session(engine) as session:
                session.execute(text("SELECT 1"))
                from_session = record_job.options(connection=session).enqueue_sync("session")
                session.commit()
            with engine.begin() as conn:
                from_conn = record_job.options(connection=conn).enqueue_sync("connection")
            with Session(engine) as session:
                gone = record_job.options(connection=session).enqueue_sync("rolled back")
                session.rollback()
            for job_id, tag in [(from_session, "session"), (from_conn, "connection")]:
                assert bg.result(job_id, timeout=PROMPT).startswith(tag)
            with pytest.raises(js.UnknownJobError):
                bg.fetch(gone)
            autocommit = engine.connect().execution_options(isolation_level="AUTOCOMMIT")
            with autocommit as conn, pytest.raises(ValueError, match="no transaction open"):
                record_job.options(connection=conn).enqueue_sync("alone")
            with pytest.raises(TypeError, match="not an Engine"):
                record_job.options(connection=engine).enqueue_sync("engine")
    finally:
        engine.dispose()


async def test_sqlalchemy_async_session_and_connection(url: str, database: str) -> None:
    """An AsyncSession and an AsyncConnection of an async engine (psycopg's driver)."""
    from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine

    engine = create_async_engine(database.replace("postgresql://", "postgresql+psycopg://"))
    app, record_job = make_app(url)
    try:
        async with app.scheduler() as s:
            async with AsyncSession(engine) as session:
                from_session = await record_job.options(connection=session).enqueue("session")
                await session.commit()
            async with engine.begin() as conn:
                from_conn = await record_job.options(connection=conn).enqueue("connection")
            async with AsyncSession(engine) as session:
                gone = await record_job.options(connection=session).enqueue("rolled back")
                await session.rollback()
            with anyio.fail_after(PROMPT):
                assert (await s.result(from_session)).startswith("session")
                assert (await s.result(from_conn)).startswith("connection")
            with pytest.raises(js.UnknownJobError):
                await s.fetch(gone)
    finally:
        await engine.dispose()


def _django(database: str) -> Any:
    """Django configured once for the session's database (settings.configure)."""
    from urllib.parse import urlparse

    import django
    from django.conf import settings

    if not settings.configured:
        parts = urlparse(database)
        settings.configure(
            DATABASES={
                "default": {
                    "ENGINE": "django.db.backends.postgresql",
                    "NAME": parts.path.lstrip("/"),
                    "USER": parts.username or "postgres",
                    "HOST": parts.hostname,
                    "PORT": parts.port or 5432,
                }
            },
            INSTALLED_APPS=[],
            USE_TZ=True,
        )
        django.setup()
    from django.db import connection, transaction

    return connection, transaction


async def test_django_connection_inside_atomic(url: str, database: str) -> None:
    """Django's ``connection`` inside ``transaction.atomic()`` (a view's thread,
    as Django runs views): committed with the block, gone if it raises;
    outside ``atomic()`` (autocommit) it is refused."""
    app, record_job = make_app(url)

    def view() -> tuple[str, str]:
        connection, transaction = _django(database)
        try:
            with transaction.atomic():
                kept = record_job.options(connection=connection).enqueue_sync("django")
            try:
                with transaction.atomic():
                    gone = record_job.options(connection=connection).enqueue_sync("rolled back")
                    raise RuntimeError("the view failed")
            except RuntimeError:
                pass
            with pytest.raises(ValueError, match="transaction.atomic"):
                record_job.options(connection=connection).enqueue_sync("alone")
            return kept, gone
        finally:
            connection.close()

    with app.background() as bg:
        kept, gone = await anyio.to_thread.run_sync(view)
        assert bg.result(kept, timeout=PROMPT).startswith("django")
        with pytest.raises(js.UnknownJobError):
            bg.fetch(gone)


async def test_a_named_queue_through_a_connection(url: str, database: str) -> None:
    """A job of a named queue adds the store's queue column through the store's
    pool first (never in the caller's transaction), then runs on a member of
    that queue."""
    app, record_job = make_app(url)
    async with app.scheduler(queues=["emails"]) as s:
        with psycopg.connect(database) as conn:
            job_id = await record_job.options(connection=conn, queue="emails").enqueue("mail")
        with anyio.fail_after(PROMPT):
            assert (await s.result(job_id)).startswith("mail")


# ── jobsched_enqueue() ───────────────────────────────────────────────────


def test_own_number_in_sql_is_python_s(url: str) -> None:
    """jobsched_own_number() gives own_number()'s number, across BLAKE2b's
    128-byte blocks and any script."""
    app, _ = make_app(url)
    with app.background(num_workers=0):
        pass  # creates the schema and its functions
    rng = random.Random(35)
    ids = ["a", "order-42", "x" * 127, "x" * 128, "x" * 129, "é" * 100, "日本語" * 66, "🎉" * 50]
    ids += [
        "".join(chr(rng.choice([rng.randrange(32, 127), rng.randrange(160, 0xD7FF)]))
                for _ in range(rng.randrange(1, 201)))
        for _ in range(60)
    ]  # fmt: skip
    with psycopg.connect(url) as conn:
        found = [conn.execute("SELECT jobsched_own_number(%s)", (i,)).fetchone() for i in ids]
    assert [row[0] for row in found if row] == [own_number(i) for i in ids]


async def test_jobsched_enqueue_runs_a_registered_job_with_its_args(url: str) -> None:
    """A job enqueued by SQL runs on a worker with its positional and named
    arguments bound to the function; an own job_id is the one Python knows
    (an enqueue of it from Python adds nothing)."""
    app, record_job = make_app(url)
    async with app.scheduler() as s:
        with psycopg.connect(url, autocommit=True) as conn:  # as psql: one statement, committed
            made = conn.execute(
                """SELECT jobsched_enqueue('tx.record', '["sql", 1, [2]]', '{"extra": {"k": 3}}')"""
            ).fetchone()
            own = conn.execute(
                'SELECT jobsched_enqueue(\'tx.record\', kwargs => \'{"tag": "named", "x": 1}\', '
                "job_id => 'order-9', run_at => now() + interval '10 milliseconds')"
            ).fetchone()
        assert made is not None and made[0].startswith("sql-") and own == ("order-9",)
        with anyio.fail_after(PROMPT):
            assert await s.result(made[0]) == "sql:[1, [2]]:{'k': 3}:[]"
            assert await s.result("order-9") == "named:[]:None:[('x', 1)]"
        assert await record_job.options(job_id="order-9").enqueue("python") == "order-9"
        assert (await s.fetch("order-9")).arguments == {  # type: ignore[attr-defined]
            "$args": [],
            "$kwargs": {"tag": "named", "x": 1},
        }
    assert [r[0] for r in RAN] == ["sql", "named"]


async def test_jobsched_enqueue_arguments_that_do_not_bind_fail_once(url: str) -> None:
    """Arguments that do not bind to the function fail the job without retries
    (every run would), saying what the function takes."""
    app, _ = make_app(url)
    async with app.scheduler() as s:
        with psycopg.connect(url, autocommit=True) as conn:
            row = conn.execute(
                "SELECT jobsched_enqueue('tx.record', '[]', '{\"no\": 1}')"
            ).fetchone()
        assert row is not None
        with anyio.fail_after(PROMPT):
            job = await s.wait(row[0])
    assert job.status is js.JobStatus.FAILED and job.attempts == 1
    assert "don't match record(tag" in (job.last_error or "")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("jobsched_enqueue('no.such')", "no job named 'no.such' is registered"),
        ("jobsched_enqueue('tx.record', queue => 'bad queue!')", "queue must be a name of 1-64"),
        ("jobsched_enqueue('tx.record', queue => '')", "queue must be a name"),
        ("jobsched_enqueue('tx.record', job_id => repeat('x', 201))", "at most 200 characters"),
        ("jobsched_enqueue('tx.record', job_id => '')", "job_id must not be empty"),
        ("jobsched_enqueue('tx.record', job_id => 'job-1')", "starts with 'job-'"),
        ("jobsched_enqueue('tx.record', '{}')", "args must be a JSON array"),
        ("jobsched_enqueue('tx.record', kwargs => '[]')", "kwargs must be a JSON object"),
    ],
)
def test_jobsched_enqueue_refuses_bad_input_with_sql_errors(
    url: str, call: str, message: str
) -> None:
    """Each check of enqueue raises a SQL error naming the problem, with a hint."""
    app, _ = make_app(url)
    with (
        app.background(num_workers=0),
        psycopg.connect(url, autocommit=True) as conn,
        pytest.raises(psycopg.Error, match=message) as raised,
    ):
        conn.execute(f"SELECT {call}")
    assert raised.value.diag.message_hint


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ('[{"$result_of": "job-1"}]', "{}"),
        ('[1, {"$results_of": ["job-1", "job-2"]}]', "{}"),
        ("[]", '{"x": {"$result_of": "job-1"}}'),
        ('[[{"k": [{"$result_of": "job-1"}]}]]', "{}"),  # nested anywhere
        ('[{"$tuple": [{"$result_of": "job-1"}]}]', "{}"),  # a tag's items are decoded
        ('[{"$obj": {"a": {"$result_of": "job-1"}}}]', "{}"),  # so are an escaped dict's values
        ("[]", '{"$result_of": "job-1"}'),
    ],
)
def test_jobsched_enqueue_refuses_result_markers(url: str, args: str, kwargs: str) -> None:
    """A result marker in the arguments (plan section 4.1) is refused with
    an error naming the Python API, and nothing is written: from SQL no
    upstream is named, so the job could never receive the result."""
    app, _ = make_app(url)
    with app.background(num_workers=0), psycopg.connect(url, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="result marker") as raised:
            conn.execute("SELECT jobsched_enqueue('tx.record', %s, %s)", (args, kwargs))
        assert "js.result_of" in (raised.value.diag.message_hint or "")
        count = conn.execute("SELECT count(*) FROM jobsched_jobs").fetchone()
    assert count == (0,)


@pytest.mark.parametrize(
    "args",
    [
        '[{"$obj": {"$result_of": "job-1"}}]',  # the caller's own dict, escaped
        '[{"$result_of": "job-1", "other": 2}]',  # two keys: no tag
        '[{"$results_of": 1, "$result_of": 2}]',
        '["$result_of"]',
    ],
)
async def test_jobsched_enqueue_takes_what_only_looks_like_a_marker(url: str, args: str) -> None:
    """Data the worker decodes as no marker is enqueued, and runs with it."""
    app, _ = make_app(url)
    async with app.scheduler() as s:
        with psycopg.connect(url, autocommit=True) as conn:
            row = conn.execute("SELECT jobsched_enqueue('tx.record', %s)", (args,)).fetchone()
        assert row is not None
        with anyio.fail_after(PROMPT):
            job = await s.wait(row[0])
    assert job.status is js.JobStatus.COMPLETED, job.last_error


def test_nul_never_reaches_jobsched_enqueue(url: str) -> None:
    """PostgreSQL's text holds no NUL: the driver or the server refuses one
    before the function runs, as no store can keep it."""
    app, _ = make_app(url)
    with app.background(num_workers=0), psycopg.connect(url, autocommit=True) as conn:
        with pytest.raises(psycopg.DataError, match="NUL"):
            conn.execute("SELECT jobsched_enqueue('tx.record', job_id => %s)", ("a\x00b",))
        with pytest.raises(psycopg.Error, match="0000|NUL|null"):
            conn.execute("SELECT jobsched_enqueue('tx.record', job_id => E'a\\u0000b')")
        count = conn.execute("SELECT count(*) FROM jobsched_jobs").fetchone()
    assert count == (0,)


async def test_jobsched_enqueue_from_a_trigger(url: str) -> None:
    """A trigger on the app's table enqueues a job per inserted row, in the
    inserting transaction: a rolled-back insert leaves no job."""
    app, _ = make_app(url)
    async with app.scheduler() as s:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE TABLE orders (id integer PRIMARY KEY, email text)")
            conn.execute(
                """CREATE FUNCTION order_placed() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    PERFORM jobsched_enqueue('tx.record', jsonb_build_array(NEW.email),
                                             job_id => 'receipt-' || NEW.id);
                    RETURN NEW;
                END $$"""
            )
            conn.execute(
                "CREATE TRIGGER order_placed AFTER INSERT ON orders "
                "FOR EACH ROW EXECUTE FUNCTION order_placed()"
            )
            with conn.transaction():
                conn.execute("INSERT INTO orders VALUES (1, 'ann@example.com')")
            with conn.transaction():
                conn.execute("INSERT INTO orders VALUES (2, 'bob@example.com')")
                raise psycopg.Rollback()  # the block rolls back and swallows it
        with anyio.fail_after(PROMPT):
            assert await s.result("receipt-1") == "ann@example.com:[]:None:[]"
        with pytest.raises(js.UnknownJobError):
            await s.fetch("receipt-2")


class _Squares(js.FIFOStrategy):
    """A custom strategy whose key SQL cannot compute (not linear in seq)."""

    def key(self, job: js.Job) -> tuple[float, ...]:
        return (float(job.seq) ** 2,)


def test_jobsched_enqueue_refuses_a_key_it_cannot_compute(url: str) -> None:
    """An app whose strategy's key is not linear in submit order leaves SQL no
    recipe: jobsched_enqueue says so instead of ordering the job wrongly."""
    app, _ = make_app(url, strategy=_Squares())
    with (
        app.background(num_workers=0),
        psycopg.connect(url, autocommit=True) as conn,
        pytest.raises(psycopg.errors.FeatureNotSupported, match="SQL cannot compute"),
    ):
        conn.execute("SELECT jobsched_enqueue('tx.record', '[\"x\"]')")
