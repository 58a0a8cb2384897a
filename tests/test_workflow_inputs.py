"""Results reaching a dependent claimed from a durable store (issue 37, E3's
claim side): ``LinkHost.claimed`` hands the claimed jobs that hold result
markers to ``ClaimInputs``, which reads their upstreams in one store call
(``StoreLink.read_inputs``), binds them and queues the job; a dependent
that cannot receive a result ends FAILED with a clear ``last_error``.

Until submitting with markers on a durable store is wired (E3's
Submission side), the rows are built through the store API, as another
member would have written them: upstreams completed (or failed) by a
claim and a record, then dependents whose payload holds the markers (a
pickled FunctionJob, or a registered job's JSON tags). A scheduler then
runs on that store. On SQLite and PostgreSQL, asyncio and trio (on the
real clock: the stores work in threads).
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import wf_input_jobs as wj
from pg import SECRET, schema_url

import jobsched as js
from jobsched._engine import _claiminputs
from jobsched._engine._link import _timing
from jobsched._exceptions import StoreUnavailableError
from jobsched._jobs._form import stored_form
from jobsched._jobs._markers import result_of, results_of
from jobsched._workflows._inputs import find_inputs
from jobsched.store import JobStore, NewJob, Outcome
from jobsched.store._codec import Codec

pytestmark = pytest.mark.anyio

S = js.JobStatus
WAIT = 60


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'jobs.db'}"
    return schema_url(request.getfixturevalue("pg_session_database"))


class Rows:
    """Rows as another member writes them: upstreams ended, dependents queued."""

    def __init__(self, store: JobStore) -> None:
        self.store = store
        self.codec = Codec(store.secrets)
        self.number = 0

    def _next(self) -> int:
        self.number += 1
        return self.number

    async def ended(
        self, status: js.JobStatus = S.COMPLETED, *, result: bytes | None = None, error: str = ""
    ) -> str:
        """An upstream, claimed by another member and ended with ``result``."""
        number = self._next()
        now = time.time()
        payload = self.codec.dumps(js.FunctionJob(wj.value, (number,)), "upstream")
        await self.store.add([NewJob(number, "up", "async", (0.0,), now, now, payload)], now)
        claims = await self.store.claim("other", 9, {"async": 9}, now, 30)
        assert [c.id for c in claims] == [number]
        outcome = Outcome(
            number, claims[0].attempt, status, now, result=result, error=error or None
        )
        await self.store.record("other", [outcome])
        return f"job-{number}"

    async def result(self, value: Any) -> str:
        """An upstream that completed with ``value``, pickled and signed."""
        return await self.ended(result=self.codec.dumps(value, "result"))

    async def dependent(
        self, job: js.Job, depends_on: list[str], run_on_failure: tuple[str, ...] = ()
    ) -> str:
        """A dependent as its submitter stores it (markers found, so they pickle)."""
        assert find_inputs(job) is not None
        number = self._next()
        now = time.time()
        deps = tuple(int(u.split("-")[1]) for u in depends_on)
        args = (
            getattr(job, "args_json", None) if getattr(type(job), "_jobsched_json", False) else None
        )
        payload = b"J" if args is not None else self.codec.dumps(stored_form(job), "dependent")
        row = NewJob(
            number,
            job.name,
            job.executor,
            (0.0,),
            now,
            now,
            payload,
            depends_on=deps,
            args=args,
            run_on_failure=tuple(int(u.split("-")[1]) for u in run_on_failure),
        )
        assert await self.store.add([row], now) == []  # nothing cancelled at once
        return f"job-{number}"


@pytest.fixture
async def rows(url: str) -> AsyncIterator[Rows]:
    store = js.open_store(url, secret=SECRET)
    await store.open()
    try:
        yield Rows(store)
    finally:
        await store.close()


async def run(url: str, *job_ids: str, app: js.App | None = None) -> list[js.Job]:
    """Start a member on the store; the jobs as they ended."""
    store = js.open_store(url, secret=SECRET)
    options: dict[str, Any] = {"store": store, "num_workers": 2}
    scheduler = app.scheduler(**options) if app is not None else js.JobScheduler(**options)
    async with scheduler as s:
        return [await s.wait(job_id, timeout=WAIT) for job_id in job_ids]


def call(*args: Any, executor: str = "thread", **kwargs: Any) -> js.FunctionJob[Any]:
    return js.FunctionJob(wj.collect, args, kwargs=kwargs, executor=executor)


@pytest.mark.parametrize("executor", ["thread", "process"])
async def test_result_of_and_results_of_reach_a_claimed_job(
    rows: Rows, url: str, executor: str
) -> None:
    """Each marker gets its upstream's result (a list's in order, an upstream
    named twice twice, one inside a list or dict too), on a thread and in a
    process worker (the bound job pickled into it)."""
    a = await rows.result({"rows": [1, 2]})
    b = await rows.result("two")
    c = await rows.ended(result=b'J{"n": 3}')  # a registered upstream's JSON
    none = await rows.ended()  # completed with no result
    job = call(
        result_of(a),
        [7, result_of(c)],
        executor=executor,
        fan=results_of([c, b, a, b]),
        inner={"k": result_of(none)},
    )
    dependent = await rows.dependent(job, [a, b, c, none])
    (done,) = await run(url, dependent)
    assert done.status is S.COMPLETED, done.last_error
    values, named, pid = done.result
    assert values == [{"rows": [1, 2]}, [7, {"n": 3}]]
    assert named == {"fan": [{"n": 3}, "two", {"rows": [1, 2]}, "two"], "inner": {"k": None}}
    assert (pid != os.getpid()) is (executor == "process")


async def test_an_upstream_that_failed_on_a_run_edge(rows: Rows, url: str) -> None:
    """On a "run" edge: result_of raises UpstreamFailedError in the job (FAILED,
    not retried); in results_of the failed slot holds the error."""
    ok = await rows.result(1)
    failed = await rows.ended(S.FAILED, error="ValueError: no")
    cancelled = await rows.ended(S.CANCELLED, error="cancelled")
    lenient = (failed, cancelled)
    raising = await rows.dependent(
        call(result_of(failed), retry=js.RetryPolicy(max_retries=3)), [failed], (failed,)
    )
    over = await rows.dependent(
        js.FunctionJob(wj.describe, (results_of([ok, failed, cancelled]),), executor="thread"),
        [ok, failed, cancelled],
        lenient,
    )
    got_raising, got_over = await run(url, raising, over)
    assert got_raising.status is S.FAILED and got_raising.attempts == 1
    assert got_raising.last_error is not None
    assert (
        f"upstream {failed} ended failed, not completed: ValueError: no" in got_raising.last_error
    )
    assert got_over.status is S.COMPLETED, got_over.last_error
    assert got_over.result == ["1", f"failed {failed} failed", f"failed {cancelled} cancelled"]


async def test_a_result_that_cannot_be_received_fails_the_dependent(rows: Rows, url: str) -> None:
    """An upstream the store does not hold (pruned), a result whose signature
    does not verify, JSON that does not decode: the dependent ends FAILED,
    unretried, naming the upstream and why; a dependent beside them runs."""
    ok = await rows.result(5)
    forged = await rows.ended(result=b"K" + bytes(8) + bytes(32) + b"not a pickle")
    bad_json = await rows.ended(result=b"J{not json")
    pruned = "job-9999"
    retry = js.RetryPolicy(max_retries=3)
    ids = [
        await rows.dependent(call(result_of(ok), result_of(pruned), retry=retry), [ok]),
        await rows.dependent(call(results_of([ok, forged]), retry=retry), [ok, forged]),
        await rows.dependent(call(result_of(bad_json), retry=retry), [bad_json]),
        await rows.dependent(call(result_of(ok)), [ok]),
    ]
    gone, unsigned, undecodable, fine = await run(url, *ids)
    for job in (gone, unsigned, undecodable):
        assert (job.status, job.attempts) == (S.FAILED, 1), job.last_error
    assert gone.last_error == (
        f"cannot receive the result of {pruned}: the store does not hold it "
        "(pruned, or it never existed)"
    )
    assert unsigned.last_error is not None
    assert unsigned.last_error.startswith(
        f"cannot receive the result of {forged}: its stored result cannot be loaded: "
    )
    assert undecodable.last_error is not None
    assert undecodable.last_error.startswith(
        f"cannot receive the result of {bad_json}: its stored result cannot be decoded ("
    )
    assert fine.status is S.COMPLETED and fine.result[0] == [5]


async def test_inputs_over_the_bound_fail_only_that_dependent(
    rows: Rows, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over MAX_INPUT_BYTES (all upstreams of one job together) the job fails
    with their size; dependents claimed with it whose own inputs fit run, as
    each is asked alone once the batch is over the bound."""
    monkeypatch.setattr(_claiminputs, "MAX_INPUT_BYTES", 2_000)
    big = [await rows.ended(result=b"J" + b"1" * 800) for _ in range(3)]
    small = await rows.ended(result=b"J" + b"2" * 800)
    fan_in = await rows.dependent(call(results_of(big)), big)
    one = await rows.dependent(call(result_of(big[0])), [big[0]])
    other = await rows.dependent(call(result_of(small)), [small])
    got_fan, got_one, got_other = await run(url, fan_in, one, other)
    assert (got_fan.status, got_fan.attempts) == (S.FAILED, 1)
    assert got_fan.last_error == (
        "its 3 upstreams' results are 2.3 KB, more than the 2 KB a job may receive: "
        "return smaller results, or pass ids and fetch"
    )
    assert got_one.status is S.COMPLETED and got_one.result[0] == [int("1" * 800)]
    assert got_other.status is S.COMPLETED and got_other.result[0] == [int("2" * 800)]


async def test_a_registered_job_gets_json_values(rows: Rows, url: str) -> None:
    """A registered dependent receives JSON values (a pickled upstream's result
    unpickled), its stored arguments keeping the tags; a failed result_of
    raises in it."""
    one = await rows.ended(result=b"J1")
    two = await rows.result(2)
    ten = await rows.ended(result=b"J10")
    failed = await rows.ended(S.TIMED_OUT, error="timed out")
    summed = await rows.dependent(
        wj.total.job(results_of([one, two]), start=result_of(ten)), [one, two, ten]
    )
    refused = await rows.dependent(wj.echo.job(result_of(failed)), [failed], (failed,))
    got_sum, got_refused = await run(url, summed, refused, app=wj.app)
    assert got_sum.status is S.COMPLETED and got_sum.result == 13
    stored = await rows.store.fetch(int(summed.split("-")[1]))
    assert stored is not None and stored.args is not None and "$result_of" in stored.args
    assert got_refused.status is S.FAILED
    assert got_refused.last_error is not None
    assert f"upstream {failed} ended timed_out" in got_refused.last_error


async def test_a_job_waiting_for_its_inputs_counts_as_claimed_and_can_be_cancelled(
    rows: Rows, url: str
) -> None:
    """While its inputs are read the job is held and counted as claimed (the
    member claims no more for that worker); a cancel then ends it CANCELLED
    and its body never runs."""
    up = await rows.result(1)
    dependent = await rows.dependent(call(result_of(up)), [up])
    store = js.open_store(url, secret=SECRET)
    reading, release = anyio.Event(), anyio.Event()
    read = store.inputs

    async def slow(ids: Any, max_bytes: int) -> Any:
        reading.set()
        await release.wait()
        return await read(ids, max_bytes)

    store.inputs = slow  # type: ignore[method-assign]
    async with js.JobScheduler(store=store, num_workers=1) as s:
        try:
            with anyio.fail_after(WAIT):
                await reading.wait()
            host = s._backing.host  # type: ignore[attr-defined]
            assert host.claim_capacity() == (0, {})  # the one worker's job is claimed
            assert s.cancel(dependent) is True
        finally:
            release.set()  # else the stop waits for the read (store calls are shielded)
        got = await s.wait(dependent, timeout=WAIT)
    assert got.status is S.CANCELLED and got.result is None
    stored = await rows.store.fetch(int(dependent.split("-")[1]))
    assert stored is not None and stored.status is S.CANCELLED


async def test_inputs_read_through_an_outage_and_handed_back_at_stop(
    rows: Rows, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the store fails the read the job waits, held; a stop hands it
    back (its attempt uncounted) and the next member runs it with its inputs."""
    monkeypatch.setattr(_timing, "UNAVAILABLE_WAIT", 5.0)
    up = await rows.result("v")
    dependent = await rows.dependent(call(result_of(up)), [up])
    store = js.open_store(url, secret=SECRET)
    failing = anyio.Event()

    async def down(ids: Any, max_bytes: int) -> Any:
        failing.set()
        raise StoreUnavailableError("the test's outage")

    store.inputs = down  # type: ignore[method-assign]
    async with js.JobScheduler(store=store, num_workers=1):
        with anyio.fail_after(WAIT):
            await failing.wait()
    stored = await rows.store.fetch(int(dependent.split("-")[1]))
    assert stored is not None and (stored.status, stored.attempts) == (S.PENDING, 0)
    (done,) = await run(url, dependent)
    assert (done.status, done.attempts) == (S.COMPLETED, 1) and done.result[0] == ["v"]
