"""Bad rows and keys on both durable stores: one bad row fails one job, never
the scheduler; a row signed by a key a member lacks waits for one that holds
it; a fleet rotates its key with jobs flowing and none failed.

Rows are planted through the store's own ``add`` with the bytes a submit
writes (``Codec.dumps(stored_form(job))``), so each test says exactly what the
row holds; the scheduler then meets it as it would meet a row another
process wrote.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest
from durable_jobs import Note, make_note, runs, square

import jobsched as js
from jobsched._engine._link import _timing
from jobsched._jobs._form import stored_form
from jobsched._time._recurring import StoredSchedule
from jobsched.store import NewJob
from jobsched.store._codec import Codec, key_id

pytestmark = pytest.mark.anyio

S = js.JobStatus
TESTS = Path(__file__).resolve().parent


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the stores work in threads, off trio's mock clock


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def url(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """An empty store of each kind; every test names its secrets itself."""
    monkeypatch.delenv("JOBSCHED_SECRET", raising=False)
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'jobs.db'}"
    from pg import schema_url

    return schema_url(request.getfixturevalue("pg_session_database"))


@pytest.fixture
def module_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory on sys.path for job modules a test writes (and rewrites)."""
    where = tmp_path / "mods"
    where.mkdir()
    sys.path.insert(0, str(where))
    try:
        yield where
    finally:
        sys.path.remove(str(where))
        for name in [
            n for n, m in sys.modules.items() if str(where) in str(getattr(m, "__file__", ""))
        ]:
            del sys.modules[name]


async def plant(url: str, secret: Any, payloads: list[bytes]) -> list[str]:
    """Add rows holding exactly ``payloads``; their job ids."""
    store = js.open_store(url, secret=secret)
    await store.open()
    try:
        first = store.reserve_ids(len(payloads))
        now = time.time()
        rows = [
            NewJob(first + i, f"planted {i}", "async", (0.0,), now, now, payload)
            for i, payload in enumerate(payloads)
        ]
        await store.add(rows, now)
    finally:
        await store.close()
    return [f"job-{row.id}" for row in rows]


def job_bytes(job: js.Job, secret: bytes) -> bytes:
    """The payload a submit under ``secret`` writes for ``job``."""
    return Codec(secret).dumps(stored_form(job), "job")


async def statuses(url: str, secret: Any) -> dict[S, int]:
    store = js.open_store(url, secret=secret)
    await store.open()
    try:
        counts = await store.counts()
    finally:
        await store.close()
    out: dict[S, int] = {}
    for (status, _), n in counts.items():
        out[status] = out.get(status, 0) + n
    return out


async def run_all(url: str, secret: Any, log: Path, good: int = 3) -> list[str]:
    """Submit ``good`` Note jobs and run until the store has nothing left; their ids.

    With ``load_grace=0``: a row whose class is gone fails at once, as these
    tests check, instead of waiting for a member that can load it
    (tests/test_load_grace.py).
    """
    async with js.JobScheduler(store=js.open_store(url, secret=secret), load_grace=0) as s:
        ids = [await s.enqueue(Note(str(log), i)) for i in range(good)]
        with anyio.fail_after(60):
            await s.join()
        for job_id in ids:
            assert (await s.fetch(job_id)).status is S.COMPLETED
    return ids


async def fetch(url: str, secret: Any, job_id: str) -> js.Job:
    async with js.JobScheduler(store=js.open_store(url, secret=secret)) as s:
        return await s.fetch(job_id)


# ── bad rows ────────────────────────────────────────────────────────────


async def test_a_row_that_loads_as_a_str_fails_alone(url: str, tmp_path: Path) -> None:
    """A verified payload that is a str: that job FAILED saying so; the others run."""
    # A FunctionJob beside it: its executor is the instance's, not the class's.
    function_job = js.FunctionJob(square, (3,))
    bad, fine = await plant(
        url, b"k", [Codec(b"k").dumps("not a job", "x"), job_bytes(function_job, b"k")]
    )
    log = tmp_path / "log"
    await run_all(url, b"k", log)
    done = await fetch(url, b"k", fine)
    assert (done.status, done.result) == (S.COMPLETED, 9)
    job = await fetch(url, b"k", bad)
    assert (job.status, job.attempts) == (S.FAILED, 1)
    assert job.last_error is not None
    assert "not a jobsched Job: it loads as a builtins.str" in job.last_error
    assert type(job).__name__ == "UnloadableJob" and job.name == "planted 0"
    assert len(runs(log)) == 3


async def test_a_class_renamed_between_runs_fails_its_jobs_alone(
    url: str, tmp_path: Path, module_dir: Path
) -> None:
    """Rename a job class, or reuse its name for a plain class, and restart:
    those rows end FAILED naming the module and attribute, every other job runs,
    and fetch shows them."""
    source = textwrap.dedent(
        """
        import jobsched as js

        class {name}(js.AsyncJob):
            async def run(self):
                return "ran"
        """
    )
    (module_dir / "release_jobs.py").write_text(source.format(name="Report"))
    (module_dir / "app_other.py").write_text(source.format(name="Report"))
    import app_other  # type: ignore[import-not-found]
    import release_jobs  # type: ignore[import-not-found]

    renamed, reused = await plant(
        url,
        b"k",
        [
            job_bytes(release_jobs.Report("report"), b"k"),
            job_bytes(app_other.Report("other"), b"k"),
        ],
    )
    # The next release: Report renamed in one module, a plain class in the other.
    (module_dir / "release_jobs.py").write_text(source.format(name="Summary"))
    (module_dir / "app_other.py").write_text("class Report:\n    pass\n")
    del sys.modules["release_jobs"], sys.modules["app_other"]
    log = tmp_path / "log"
    await run_all(url, b"k", log)
    first, second = await fetch(url, b"k", renamed), await fetch(url, b"k", reused)
    assert (first.status, second.status) == (S.FAILED, S.FAILED)
    assert first.last_error == (
        "cannot load the job: module 'release_jobs' has no attribute 'Report'; "
        "is its module importable here?"
    )
    assert second.last_error is not None and (
        "app_other.Report" in second.last_error or "app_other" in second.last_error
    ), second.last_error
    assert getattr(first, "load_error", "").startswith("cannot load the job: module 'release_jobs'")
    assert len(runs(log)) == 3


async def test_a_module_gone_fails_its_job_and_fetch_still_answers(
    url: str, tmp_path: Path, module_dir: Path
) -> None:
    (module_dir / "gone_jobs.py").write_text(
        "import jobsched as js\n\nclass Gone(js.AsyncJob):\n    async def run(self):\n"
        "        return 1\n"
    )
    import gone_jobs  # type: ignore[import-not-found]

    (bad,) = await plant(url, b"k", [job_bytes(gone_jobs.Gone("gone"), b"k")])
    (module_dir / "gone_jobs.py").unlink()
    del sys.modules["gone_jobs"]
    await run_all(url, b"k", tmp_path / "log", good=1)
    job = await fetch(url, b"k", bad)
    assert job.status is S.FAILED and job.last_error is not None
    assert "module 'gone_jobs' cannot be imported here (ModuleNotFoundError" in job.last_error
    assert "so its attribute 'Gone' cannot be loaded" in job.last_error


async def test_a_tampered_payload_fails_its_job_unpickled(url: str, tmp_path: Path) -> None:
    """A row altered under a key the member holds: FAILED, never unpickled."""
    log = tmp_path / "log"
    good = job_bytes(Note(str(log), "tampered"), b"k")
    tampered = good[:-1] + bytes([good[-1] ^ 1])
    (bad,) = await plant(url, [b"k", b"old"], [tampered])
    await run_all(url, [b"k", b"old"], log)
    job = await fetch(url, b"k", bad)
    assert (job.status, job.attempts) == (S.FAILED, 1)
    assert job.last_error is not None and "does not verify under key id" in job.last_error
    assert "altered" in job.last_error
    assert getattr(job, "load_error", None) == job.last_error
    assert all(w != "tampered" for w in map(str, runs(log)))  # it never ran
    assert len(runs(log)) == 3


async def test_fetch_of_a_completed_job_whose_result_was_altered(url: str, tmp_path: Path) -> None:
    """The result is signed too: an altered one makes fetch give the placeholder, not raise."""
    log = tmp_path / "log"
    (job_id,) = await run_all(url, b"k", log, good=1)
    await alter_result(url, int(job_id.removeprefix("job-")))
    job = await fetch(url, b"k", job_id)
    assert (type(job).__name__, job.status, job.result) == ("UnloadableJob", S.COMPLETED, None)
    assert "the stored result cannot be loaded" in getattr(job, "load_error", "")


async def test_result_of_a_completed_job_whose_result_cannot_be_loaded_raises(
    url: str, tmp_path: Path
) -> None:
    """result() never answers None for a result it could not load: it
    raises, saying why (it returned the placeholder's None as the result)."""
    (job_id,) = await run_all(url, b"k", tmp_path / "log", good=1)
    await alter_result(url, int(job_id.removeprefix("job-")))
    async with js.JobScheduler(store=js.open_store(url, secret=b"k")) as s:
        with anyio.fail_after(60), pytest.raises(js.SchedulerError) as info:
            await s.result(job_id)
    assert not isinstance(info.value, js.JobFailedError)  # it completed
    message = str(info.value)
    assert job_id in message and "completed" in message
    assert "the stored result cannot be loaded" in message


async def alter_result(url: str, number: int) -> None:
    if url.startswith("sqlite"):
        import sqlite3

        conn = sqlite3.connect(url.removeprefix("sqlite:///"))
        with conn:
            (result,) = conn.execute("SELECT result FROM jobs WHERE id = ?", (number,)).fetchone()
            altered = result[:-1] + bytes([result[-1] ^ 1])
            conn.execute("UPDATE jobs SET result = ? WHERE id = ?", (altered, number))
        conn.close()
        return
    import psycopg

    from jobsched_postgres import _connect

    with psycopg.connect(_connect.conninfo_from_url(url), autocommit=True) as pg:
        pg.execute(
            "UPDATE jobsched_jobs SET result = overlay(result placing "
            "decode(lpad(to_hex(get_byte(result, length(result) - 1) # 1), 2, '0'), 'hex') "
            "from length(result)) WHERE id = %s",
            (number,),
        )


# ── keys ────────────────────────────────────────────────────────────────


def stats_text(url: str, secret: str) -> str:
    return _stats(url, secret)


def stats_json(url: str, secret: str) -> dict[str, Any]:
    return json.loads(_stats(url, secret, "--json"))  # type: ignore[no-any-return]


def _stats(url: str, secret: str, *flags: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "JOBSCHED_STORE"}
    env["JOBSCHED_SECRET"] = secret
    done = subprocess.run(
        [str(Path(sys.prefix) / "bin" / "jobsched"), "stats", *flags, "--store", url],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


async def test_a_member_never_claims_a_row_signed_by_a_key_it_lacks(
    url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A member with another secret leaves the row PENDING, logs one ERROR naming
    the key id, `jobsched stats` counts the row, and a member that holds the key
    runs it: nothing FAILED."""
    monkeypatch.setattr(_timing, "KEYS_EVERY", 0.0)  # look on every idle pass
    log = tmp_path / "log"
    (waiting,) = await plant(url, b"one", [job_bytes(Note(str(log), "one's"), b"one")])
    store = js.open_store(url, secret="two")
    looks = Looks(store)
    caplog.set_level(logging.ERROR, logger="jobsched")
    async with js.JobScheduler(store=store) as s:
        await looks.more(3)
        job = await s.fetch(waiting)
        assert (job.status, job.attempts, job.last_error) == (S.PENDING, 0, None)
        assert "does not hold" in getattr(job, "load_error", "")  # fetch answers all the same
        assert await store.waiting_for_keys() == {key_id(b"one"): 1}
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1, errors  # once, however many looks
    assert (
        f"signed with key id {key_id(b'one').hex()}, which this member does not hold" in (errors[0])
    )
    assert not log.exists()
    stats = stats_json(url, "two")
    assert stats["waiting_for_unknown_key"] == {key_id(b"one").hex(): 1}
    table = stats_text(url, "two")
    assert "1 job(s) wait for a key this command does not hold" in table
    assert table.splitlines()[-1].split() == [key_id(b"one").hex(), "1"]
    assert stats_json(url, "three,one")["waiting_for_unknown_key"] == {}
    # A member that holds the key (among others) runs it.
    async with js.JobScheduler(store=js.open_store(url, secret=["three", "one"])) as s:
        with anyio.fail_after(60):
            await s.join()
        assert (await s.fetch(waiting)).status is S.COMPLETED
    assert S.FAILED not in await statuses(url, "one")


async def test_a_fleet_rotates_its_key_with_jobs_flowing_and_none_failed(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Members roll from A to [B, A] to B one at a time, each submitting while
    the others run: a member on A alone never takes a B row, a member on
    [B, A] runs both, and no job ends FAILED."""
    monkeypatch.setattr(_timing, "KEYS_EVERY", 0.0)
    log = str(tmp_path / "log")
    submitted: list[str] = []

    def submit(s: js.JobScheduler, tag: str, n: int = 15) -> None:
        for i in range(n):
            # Some wait a little, so rows of both keys are waiting while members change.
            submitted.append(s.submit(Note(log, f"{tag}{i}", seconds=0.01), delay=(i % 3) * 0.05))

    async with anyio.create_task_group() as tg:
        m1 = await Member.start(tg, url, "A")
        m2 = await Member.start(tg, url, "A")
        submit(m1.s, "a1-")
        submit(m2.s, "a2-")
        # m1 restarts on [B, A]: it signs with B while m2, on A alone, runs on.
        await m1.stop()
        # While m1 is away, rows signed with B (as a member on [B, A] elsewhere
        # writes them) wait: m2, on A alone, claims past them.
        m2_looks = Looks(m2.s._link.store)  # type: ignore[union-attr]
        early = await plant(
            url, ["B", "A"], [job_bytes(Note(log, f"early{i}"), b"B") for i in range(5)]
        )
        submitted.extend(early)
        await m2_looks.more(2)
        for job_id in early:
            job = await m2.s.fetch(job_id)
            assert (job.status, job.attempts) == (S.PENDING, 0)
        m1 = await Member.start(tg, url, ["B", "A"])
        submit(m1.s, "b1-")
        submit(m2.s, "a2b-")
        await m1.s.flush()
        # m2 follows: both hold both keys.
        await m2.stop()
        m2 = await Member.start(tg, url, ["B", "A"])
        submit(m2.s, "b2-")
        # A is dropped once no job signed by it waits (`jobsched stats` run
        # with B alone shows none waiting for an unknown key).
        with anyio.fail_after(60):
            await m2.s.join()
        await m1.stop()
        m1 = await Member.start(tg, url, "B")
        submit(m1.s, "c1-")
        await m2.stop()
        m2 = await Member.start(tg, url, "B")
        submit(m2.s, "c2-")
        with anyio.fail_after(60):
            await m2.s.join()
        await m1.stop()
        await m2.stop()
    counted = await statuses(url, "B")
    assert counted == {S.COMPLETED: len(submitted)}, counted
    assert len(runs(log)) == len(submitted) == 7 * 15 + 5


class Looks:
    """Counts a member's looks for unknown keys: an idle member claims before
    each, so two looks after a row was written mean a claim saw it."""

    def __init__(self, store: js.JobStore) -> None:
        self.count = 0
        self._waiters: list[tuple[int, anyio.Event]] = []
        real = store.waiting_for_keys

        async def counted() -> dict[bytes, int]:
            self.count += 1
            for target, event in self._waiters:
                if self.count >= target:
                    event.set()
            return await real()

        store.waiting_for_keys = counted  # type: ignore[method-assign]

    async def more(self, n: int) -> None:
        event = anyio.Event()
        self._waiters.append((self.count + n, event))
        with anyio.fail_after(30):
            await event.wait()


class Member:
    """One fleet member in a task of its own, so members stop in any order."""

    def __init__(self, s: js.JobScheduler) -> None:
        self.s = s
        self._stop = anyio.Event()
        self._stopped = anyio.Event()

    @classmethod
    async def start(cls, tg: anyio.abc.TaskGroup, url: str, secret: Any) -> Member:
        return await tg.start(cls._run, js.open_store(url, secret=secret))  # type: ignore[no-any-return]

    @classmethod
    async def _run(cls, store: js.JobStore, *, task_status: anyio.abc.TaskStatus[Member]) -> None:
        async with js.JobScheduler(store=store, num_workers=2) as s:
            member = cls(s)
            task_status.started(member)
            await member._stop.wait()
        member._stopped.set()

    async def stop(self) -> None:
        self._stop.set()
        with anyio.fail_after(60):
            await self._stopped.wait()


async def test_a_schedule_signed_by_a_key_a_member_lacks_is_left_alone(
    url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A member with another secret neither fires nor removes a stored
    schedule: it logs an ERROR once, and a member with the key fires it."""
    log = str(tmp_path / "log")
    # The row schedule_recurring(..., id="beat") writes on a member with "one".
    schedule = StoredSchedule(functools.partial(make_note, log), 3600.0, None, False)
    raw = js.open_store(url, secret="one")
    await raw.open()
    await raw.put_schedules([("beat", Codec(b"one").dumps(schedule, "schedule"), time.time())])
    await raw.close()
    caplog.set_level(logging.ERROR, logger="jobsched")
    left_alone = "stored schedule 'beat' is left alone"
    async with js.JobScheduler(store=js.open_store(url, secret="two", lease=1.0)) as s:
        with anyio.fail_after(30):
            while not any(left_alone in r.getMessage() for r in caplog.records):  # noqa: ASYNC110 - a log line is the only sign
                await anyio.sleep(0.01)
        store = s._link.store  # type: ignore[union-attr]
        assert [sched.id for sched in await store.schedules()] == ["beat"]
    assert sum(left_alone in r.getMessage() for r in caplog.records) == 1
    assert runs(log) == {}
    async with js.JobScheduler(store=js.open_store(url, secret="one", lease=1.0)) as s:
        with anyio.fail_after(30):
            while not runs(log):  # noqa: ASYNC110 - the job runs in the store's claims
                await anyio.sleep(0.02)


async def test_a_schedule_a_member_cannot_fire_does_not_spin_its_claimer(
    url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A due schedule this member claimed and left alone (another key signed
    it) stays due in the store: the claimer waits its poll interval, not 0
    (it asked the store thousands of times a second)."""
    schedule = StoredSchedule(
        functools.partial(make_note, str(tmp_path / "log")), 3600.0, None, False
    )
    raw = js.open_store(url, secret="one")
    await raw.open()
    await raw.put_schedules([("beat", Codec(b"one").dumps(schedule, "schedule"), time.time())])
    await raw.close()
    caplog.set_level(logging.ERROR, logger="jobsched")
    store = js.open_store(url, secret="two")
    calls: list[None] = []
    next_due = store.next_due

    async def counted() -> float | None:
        calls.append(None)
        return await next_due()

    store.next_due = counted  # type: ignore[method-assign]
    async with js.JobScheduler(store=store, num_workers=2):
        with anyio.fail_after(30):
            while not any("left alone" in r.getMessage() for r in caplog.records):  # noqa: ASYNC110 - a log line is the only sign
                await anyio.sleep(0.01)
        before = len(calls)
        await anyio.sleep(1.0)
        during = len(calls) - before
    # About two (POLL_INTERVAL); a loaded machine makes fewer, never more.
    assert during <= 20, during


async def test_rows_in_the_format_before_key_ids_still_run(url: str, tmp_path: Path) -> None:
    """A row already on disk in the legacy format (b"S" + MAC, no key id) is
    claimed by any member and verified against every key it holds."""
    import hashlib
    import hmac
    import pickle

    log = tmp_path / "log"
    data = pickle.dumps(stored_form(Note(str(log), "legacy")), protocol=pickle.HIGHEST_PROTOCOL)
    legacy = b"S" + hmac.new(b"old", data, hashlib.sha256).digest() + data
    (job_id,) = await plant(url, ["new", "old"], [legacy])
    await run_all(url, ["new", "old"], log, good=1)
    job = await fetch(url, ["new", "old"], job_id)
    assert (job.status, job.result) == (S.COMPLETED, "legacy")


async def test_a_member_without_a_secret_leaves_signed_rows_alone(url: str, tmp_path: Path) -> None:
    """SQLite without a secret: it runs unsigned rows and never claims signed ones."""
    if not url.startswith("sqlite"):
        pytest.skip("the PostgreSQL store requires a secret")
    log = tmp_path / "log"
    (signed,) = await plant(url, "k", [job_bytes(Note(str(log), "signed"), b"k")])
    store = js.open_store(url)
    looks = Looks(store)
    done = anyio.Event()
    finished: list[str] = []

    def listener(job: js.Job, old: S, new: S) -> None:
        if new.is_terminal:
            finished.append(job.job_id)
            if len(finished) == 2:
                done.set()

    async with js.JobScheduler(store=store) as s:
        s.add_listener(listener)
        own = [await s.enqueue(Note(str(log), i)) for i in range(2)]
        with anyio.fail_after(30):
            await done.wait()
        await looks.more(2)  # idle passes after the row was there: each claims first
        assert [(await s.fetch(i)).status for i in own] == [S.COMPLETED, S.COMPLETED]
        assert await store.waiting_for_keys() == {key_id(b"k"): 1}
        row = await store.fetch(int(signed.removeprefix("job-")))
        assert row is not None and (row.status, row.attempts) == (S.PENDING, 0)
