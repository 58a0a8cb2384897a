"""A batch of outcomes in a durable store.

The built-in stores write the usual outcome, a completion with nothing but its time
(and result), with a short statement of its own and every other outcome
with a full one; these hold the two paths to one behaviour in one batch:
fenced, written, counted. A store with one path passes them too.
"""

from __future__ import annotations

import pytest

import jobsched as js
from jobsched.store import JobStore, NewJob, Outcome

from . import Lapse

pytestmark = pytest.mark.anyio

S = js.JobStatus
NOW = 1_700_000_000.0


def new(job_id: int) -> NewJob:
    return NewJob(job_id, f"j{job_id}", "async", (0.0,), NOW, NOW, b"P" + bytes([job_id]))


def done(job_id: int, attempt: int = 1, status: S = S.COMPLETED, **kw: object) -> Outcome:
    return Outcome(job_id, attempt, status, NOW + 1, **kw)  # type: ignore[arg-type]


async def test_one_batch_of_plain_and_other_outcomes_is_written_and_counted(
    store: JobStore,
) -> None:
    await store.add([new(i) for i in range(1, 7)], NOW)
    claims = await store.claim("m1", 6, {"async": 99}, NOW, 30)
    assert sorted(c.id for c in claims) == [1, 2, 3, 4, 5, 6]
    recorded = await store.record(
        "m1",
        [
            done(1),
            done(2, result=b"r"),
            done(3, status=S.FAILED, error="E: no"),
            Outcome(4, 1, S.RETRY_WAIT, NOW + 1, run_at=NOW + 60, error="E: again"),
            done(5, attempt=2),  # a stale attempt: refused, plain or not
            done(6, error="E: an earlier attempt's"),  # completed: the error is cleared
        ],
    )
    assert sorted(recorded.refused) == [5]
    jobs = {i: await store.fetch(i) for i in range(1, 7)}
    assert {i: j.status for i, j in jobs.items() if j is not None} == {
        1: S.COMPLETED,
        2: S.COMPLETED,
        3: S.FAILED,
        4: S.RETRY_WAIT,
        5: S.RUNNING,
        6: S.COMPLETED,
    }
    one, two, three, six = jobs[1], jobs[2], jobs[3], jobs[6]
    assert one is not None and (one.result, one.finished_at, one.owner) == (None, NOW + 1, None)
    assert two is not None and two.result == b"r"
    assert three is not None and three.last_error == "E: no"
    # A completed job shows no error (issue 22: an earlier "worker lost" read as its own).
    assert six is not None and (six.last_error, six.last_traceback) == (None, None)
    assert await store.counts() == {
        (S.COMPLETED, "async"): 3,
        (S.FAILED, "async"): 1,
        (S.RETRY_WAIT, "async"): 1,
        (S.RUNNING, "async"): 1,
    }
    assert (await store.record("m2", [done(5)])).refused == [5]  # another owner's
    assert (await store.record("m1", [done(1)])).refused == [1]  # completed already


@pytest.mark.parametrize("carried", [None, "worker lost"])
async def test_a_completion_after_a_lost_worker_clears_last_error(
    store: JobStore, carried: str | None, lapse: Lapse
) -> None:
    """A job taken over from a lost member and then completed shows no error:
    "worker lost" stays in the first attempt's row only. Both completion
    statements clear it, the plain one (no error carried) and the full one (a
    member that carries the job's earlier error, as before issue 22)."""
    await store.add([new(1)], NOW)
    await store.claim("dead", 1, {"async": 99}, NOW, 10)
    lapse(store, 11)
    (taken,) = await store.claim("alive", 1, {"async": 99}, NOW + 11, 10)
    assert taken.lost
    lost = Outcome(1, 1, S.RETRY_WAIT, NOW + 11, run_at=NOW + 12, error="worker lost")
    assert (await store.record("alive", [lost])).refused == []
    (second,) = await store.claim("alive", 1, {"async": 99}, NOW + 12, 10)
    assert second.attempt == 2
    before = await store.fetch(1)
    assert before is not None and before.last_error == "worker lost"
    completed = Outcome(1, 2, S.COMPLETED, NOW + 13, result=b"r", error=carried)
    assert (await store.record("alive", [completed])).refused == []
    job = await store.fetch(1)
    assert job is not None and job.status is S.COMPLETED and job.result == b"r"
    assert (job.last_error, job.last_traceback) == (None, None)
    history = [(a.attempt, a.status, a.error) for a in await store.attempts(job_id=1)]
    assert history[0] == (1, S.RETRY_WAIT, "worker lost")


async def test_a_plain_completion_releases_its_dependents(store: JobStore) -> None:
    await store.add([new(1)], NOW)
    blocked = NewJob(2, "j2", "async", (0.0,), NOW, NOW, b"P2", depends_on=(1,))
    await store.add([blocked], NOW)
    (claim,) = await store.claim("m1", 5, {"async": 99}, NOW, 30)
    assert claim.id == 1  # the dependent waits
    await store.record("m1", [done(1)])
    (then,) = await store.claim("m1", 5, {"async": 99}, NOW + 2, 30)
    assert then.id == 2


async def test_a_retry_of_a_job_cancelled_while_it_ran_ends_cancelled(store: JobStore) -> None:
    """A cancel of a running job is a flag its owner learns at its next
    heartbeat; an attempt that fails before then must not retry, or the next
    claim clears the flag and the job runs on (found by the durable model:
    cancelled, it completed)."""
    await store.add([new(1), new(2), new(3)], NOW)
    blocked = NewJob(4, "j4", "async", (0.0,), NOW, NOW, b"P4", depends_on=(1,))
    await store.add([blocked], NOW)
    claims = await store.claim("m1", 5, {"async": 99}, NOW, 30)
    assert sorted(c.id for c in claims) == [1, 2, 3]
    assert await store.cancel([1, 3], NOW) == []  # running: flagged for the owner
    recorded = await store.record(
        "m1",
        [
            Outcome(1, 1, S.RETRY_WAIT, NOW + 1, run_at=NOW + 2, error="E: first"),
            Outcome(2, 1, S.RETRY_WAIT, NOW + 1, run_at=NOW + 2, error="E: second"),
            done(3),  # it finished before the cancel reached it: it stands
        ],
    )
    assert recorded.refused == []
    assert sorted((c.id, c.status, c.error) for c in recorded.changes) == [
        (1, S.CANCELLED, "cancelled"),
        (4, S.CANCELLED, "upstream job-1 cancelled"),
    ]
    one, two, three = [await store.fetch(i) for i in (1, 2, 3)]
    assert one is not None and (one.status, one.last_error) == (S.CANCELLED, "cancelled")
    assert one.finished_at == NOW + 1 and one.owner is None
    assert two is not None and (two.status, two.last_error) == (S.RETRY_WAIT, "E: second")
    assert three is not None and three.status is S.COMPLETED
    # The attempt itself failed: its row says so, as for any retry.
    (attempt,) = await store.attempts(job_id=1)
    assert (attempt.status, attempt.error) == (S.RETRY_WAIT, "E: first")
    # Nothing is left to claim but the uncancelled retry, when it is due.
    (again,) = await store.claim("m1", 5, {"async": 99}, NOW + 3, 30)
    assert again.id == 2


async def test_a_job_handed_back_with_a_cancel_request_ends_cancelled(store: JobStore) -> None:
    """A member that stops hands back the jobs it claimed and never started
    (and those it cut short); one someone asked to cancel meanwhile ends
    CANCELLED, its attempt not counted, instead of being claimed again (the
    claim clears the request)."""
    await store.add([new(1), new(2)], NOW)
    blocked = NewJob(3, "j3", "async", (0.0,), NOW, NOW, b"P3", depends_on=(1,))
    await store.add([blocked], NOW)
    claims = await store.claim("m1", 5, {"async": 99}, NOW, 30)
    assert sorted(c.id for c in claims) == [1, 2]
    assert await store.cancel([1], NOW) == []  # running: flagged for the owner
    await store.release("m1", [1, 2])
    one, two, three = [await store.fetch(i) for i in (1, 2, 3)]
    assert one is not None
    assert (one.status, one.attempts, one.last_error) == (S.CANCELLED, 0, "cancelled")
    assert one.owner is None and one.finished_at is not None
    assert two is not None and (two.status, two.attempts) == (S.PENDING, 0)
    assert three is not None
    assert (three.status, three.last_error) == (S.CANCELLED, "upstream job-1 cancelled")
    assert await store.attempts(job_id=1) == []
    (again,) = await store.claim("m2", 5, {"async": 99}, NOW + 1, 30)
    assert again.id == 2


async def test_a_stale_and_a_newer_attempt_of_one_job_in_one_batch_write_the_newer(
    store: JobStore,
) -> None:
    """A member's outcome of attempt 1 waits out an outage; meanwhile the job
    was retried and the same member claimed it again: both outcomes go in
    one batch. The newer is written and the stale one refused (found by the
    60 s chaos test: keeping the first refused both, and attempt 2's lease
    lapsed, so the job ran a third time)."""
    await store.add([new(1)], NOW)
    await store.claim("m1", 1, {"async": 99}, NOW, 30)
    retry = Outcome(1, 1, S.RETRY_WAIT, NOW + 1, run_at=NOW + 1, error="worker lost")
    assert (await store.record("m1", [retry])).refused == []
    (again,) = await store.claim("m1", 1, {"async": 99}, NOW + 2, 30)
    assert (again.id, again.attempt) == (1, 2)
    recorded = await store.record("m1", [done(1, attempt=1), done(1, attempt=2, result=b"2")])
    assert recorded.refused == [1]
    job = await store.fetch(1)
    assert job is not None and (job.status, job.attempts, job.result) == (S.COMPLETED, 2, b"2")


async def test_big_results_are_written_with_their_batch_and_fenced(store: JobStore) -> None:
    """Results of a few MB (which the built-in stores write by a statement
    of their own) land with their batch, on either path, and a refused
    outcome's big result is not written."""
    big = [bytes([i]) * ((2 << 20) + i) for i in range(3)]
    await store.add([new(i) for i in range(1, 5)], NOW)
    claims = await store.claim("m1", 4, {"async": 99}, NOW, 30)
    assert sorted(c.id for c in claims) == [1, 2, 3, 4]
    recorded = await store.record(
        "m1",
        [
            done(1, result=big[0]),
            done(2, result=b"small"),
            done(3, result=big[1], error="E: an earlier attempt's"),  # not plain
            done(4, attempt=2, result=big[2]),  # a stale attempt: refused
        ],
    )
    assert recorded.refused == [4]
    jobs = {i: await store.fetch(i) for i in range(1, 5)}
    assert {i: (j.status, j.result) for i, j in jobs.items() if j is not None} == {
        1: (S.COMPLETED, big[0]),
        2: (S.COMPLETED, b"small"),
        3: (S.COMPLETED, big[1]),
        4: (S.RUNNING, None),
    }


#: Texts some databases cannot keep: NUL (PostgreSQL), a lone surrogate (any
#: store that encodes text as UTF-8).
HOSTILE = ["NUL \x00 byte", "half \ud800 a pair"]


@pytest.mark.parametrize("text", HOSTILE, ids=["nul", "surrogate"])
async def test_a_text_the_store_cannot_keep_is_kept_or_refused_as_data(
    store: JobStore, text: str
) -> None:
    """Kept as it is, or refused with JobDataError and nothing of the call
    written (so the scheduler can write the call's other jobs without it):
    never another exception, and the store works on."""
    from jobsched.store import JobDataError

    await store.add([new(1), new(2)], NOW)
    assert len(await store.claim("m1", 2, {"async": 99}, NOW, 30)) == 2
    try:
        await store.record("m1", [done(1), done(2, status=S.FAILED, error=text)])
    except JobDataError:
        one = await store.fetch(1)
        assert one is not None and one.status is S.RUNNING  # the call wrote nothing
        await store.record("m1", [done(1), done(2, status=S.FAILED, error="E: replaced")])
    else:
        two = await store.fetch(2)
        assert two is not None and two.last_error == text
    assert [(await store.fetch(i)).status for i in (1, 2)] == [S.COMPLETED, S.FAILED]  # type: ignore[union-attr]
    named = NewJob(4, text, "async", (0.0,), NOW, NOW, b"P")
    try:
        await store.add([new(3), named], NOW)
    except JobDataError:
        assert await store.fetch(3) is None  # the call wrote nothing
        await store.add([new(3)], NOW)
    else:
        four = await store.fetch(4)
        assert four is not None and four.name == text
    assert await store.fetch(3) is not None
