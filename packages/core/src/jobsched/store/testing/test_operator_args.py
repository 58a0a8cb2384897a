"""The operator reads and retry on every store: bad arguments, and what a
retry requeues.

A store calls the shared checks (``jobsched.store.check_*``) before any work,
so each bad argument gets the same error, naming it and the fix, from every
store; PostgreSQL used to hand it to the database (``limit=0`` was an empty
page).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

import jobsched as js
from jobsched.store import JobStore, NewJob, Outcome

pytestmark = pytest.mark.anyio

NOW = 1_700_000_000.0
FAILED = js.JobStatus.FAILED

#: A call on a store, with arguments its types refuse.
Call = Callable[[Any], Awaitable[object]]


#: (call, error, what its message must say), one per error path.
BAD_ARGUMENTS = [
    pytest.param(
        lambda s: s.jobs(limit="5"),
        TypeError,
        r"limit must be a positive int, got '5'",
        id="jobs-limit-str",
    ),
    pytest.param(
        lambda s: s.jobs(limit=True),
        TypeError,
        r"limit must be a positive int, got True",
        id="jobs-limit-bool",
    ),
    pytest.param(
        lambda s: s.jobs(limit=0),
        ValueError,
        r"limit must be at least 1, got 0",
        id="jobs-limit-0",
    ),
    pytest.param(
        lambda s: s.attempts(limit="5"),
        TypeError,
        r"limit must be a positive int, got '5'",
        id="attempts-limit-str",
    ),
    pytest.param(
        lambda s: s.attempts(limit=-1),
        ValueError,
        r"limit must be at least 1, got -1",
        id="attempts-limit-negative",
    ),
    pytest.param(
        lambda s: s.jobs(statuses=FAILED),
        TypeError,
        r"collection of JobStatus, got <JobStatus.FAILED: 'failed'>; wrap a single status in",
        id="jobs-statuses-one-status",
    ),
    pytest.param(
        lambda s: s.jobs(statuses="failed"),
        TypeError,
        r"collection of JobStatus, got 'failed'; wrap a single status in a tuple",
        id="jobs-statuses-str",
    ),
    pytest.param(
        lambda s: s.jobs(statuses=[FAILED, "failed"]),
        TypeError,
        r"must hold JobStatus members, got 'failed'; use e.g. JobStatus.FAILED \(one of PENDING",
        id="jobs-statuses-not-jobstatus",
    ),
    pytest.param(
        lambda s: s.jobs(before="9"),
        TypeError,
        r"before must be a job id \(an int\) or None, got '9'",
        id="jobs-before-str",
    ),
    pytest.param(
        lambda s: s.jobs(before=1.5),
        TypeError,
        r"before must be a job id \(an int\) or None, got 1.5",
        id="jobs-before-float",
    ),
    pytest.param(
        lambda s: s.attempts(since="yesterday"),
        TypeError,
        r"since must be a wall-clock time in seconds or None, got 'yesterday'",
        id="attempts-since-str",
    ),
    pytest.param(
        lambda s: s.attempts(job_id=1.5),
        TypeError,
        r"job_id must be a job id \(an int\) or None, got 1.5",
        id="attempts-job_id-float",
    ),
    pytest.param(
        lambda s: s.retry(["1"], NOW),
        TypeError,
        r"retry takes job ids \(ints\), got '1'",
        id="retry-id-str",
    ),
    pytest.param(
        lambda s: s.retry(7, NOW),
        TypeError,
        r"retry takes a collection of job ids, got 7; wrap a single id in a list",
        id="retry-one-id",
    ),
    pytest.param(
        lambda s: s.retry(None, NOW),
        TypeError,
        r"retry takes a collection of job ids, got None",
        id="retry-ids-none",
    ),
    pytest.param(
        lambda s: s.jobs(statuses=5),
        TypeError,
        r"statuses must be a collection of JobStatus, got 5",
        id="jobs-statuses-int",
    ),
    pytest.param(
        lambda s: s.retry([1, True], NOW),
        TypeError,
        r"retry takes job ids \(ints\), got True",
        id="retry-id-bool",
    ),
    pytest.param(
        lambda s: s.job_page(name=3),
        TypeError,
        r"name must be a str \(matched exactly\) or None, got 3",
        id="page-name-int",
    ),
    pytest.param(
        lambda s: s.job_page(tenant=b"t"),
        TypeError,
        r"tenant must be a str \(matched exactly\) or None, got b't'",
        id="page-tenant-bytes",
    ),
    pytest.param(
        lambda s: s.job_page(scan=0),
        ValueError,
        r"scan must be from 1 to 9223372036854775807 \(2\*\*63 - 1\), got 0",
        id="page-scan-0",
    ),
    pytest.param(
        lambda s: s.job_page(scan=1.5),
        TypeError,
        r"scan must be a positive int, got 1.5",
        id="page-scan-float",
    ),
    pytest.param(
        lambda s: s.job_page(limit=0),
        ValueError,
        r"limit must be at least 1, got 0",
        id="page-limit-0",
    ),
    pytest.param(
        lambda s: s.members(limit=0),
        ValueError,
        r"limit must be at least 1, got 0",
        id="members-limit-0",
    ),
]


@pytest.mark.parametrize(("call", "error", "match"), BAD_ARGUMENTS)
async def test_a_bad_argument_is_refused_with_the_fix(
    store: JobStore, call: Call, error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        await call(store)


async def test_a_refused_retry_requeues_none_of_its_ids(store: JobStore) -> None:
    """The ids are checked before any is written: a bad one leaves the good ones alone."""
    await store.add([NewJob(1, "j1", "async", (0.0,), NOW, NOW, b"P")], NOW)
    await store.claim("m", 1, {"async": 99}, NOW, 30)
    await store.record("m", [Outcome(1, 1, FAILED, NOW + 1, error="E: x")])
    with pytest.raises(TypeError, match="retry takes job ids"):
        await store.retry([1, "2"], NOW + 2)  # type: ignore[list-item]
    job = await store.fetch(1)
    assert job is not None and job.status is FAILED
    assert await store.retry([1], NOW + 2) == [1]


async def test_good_arguments_of_every_accepted_type_still_read(store: JobStore) -> None:
    """What the checks let through: any collection of statuses (an empty one
    for all), a float or an int ``since``, ids in any collection."""
    await store.add([NewJob(i, f"j{i}", "async", (0.0,), NOW, NOW, b"P") for i in (1, 2)], NOW)
    await store.claim("m", 1, {"async": 99}, NOW, 30)
    assert [j.id for j in await store.jobs(statuses=frozenset(), limit=1, before=2)] == [1]
    assert await store.jobs(statuses=iter([FAILED, js.JobStatus.CANCELLED])) == []  # type: ignore[arg-type]
    assert [a.job_id for a in await store.attempts(since=int(NOW), limit=1)] == [1]
    assert [a.job_id for a in await store.attempts(since=NOW + 0.5, job_id=1)] == [1]
    assert await store.retry({1, 2}, NOW) == []  # running and pending: nothing to requeue
    assert await store.retry(iter([]), NOW) == []  # type: ignore[arg-type]


# ── what retry requeues ──────────────────────────────────────────────────────


def new(job_id: int, *, run_at: float = NOW, depends_on: tuple[int, ...] = ()) -> NewJob:
    return NewJob(job_id, f"j{job_id}", "async", (0.0, float(job_id)), run_at, NOW, b"P",
                  depends_on=depends_on)  # fmt: skip


async def test_a_retried_dependent_waits_again_for_its_unfinished_upstream(
    store: JobStore,
) -> None:
    """Cancelled while it waited, then retried: it must not run before its upstream."""
    await store.add([new(1, run_at=NOW + 10), new(2, depends_on=(1,))], NOW)
    await store.cancel([2], NOW)
    assert await store.retry([2, 2], NOW) == [2]  # once, however often named
    job = await store.fetch(2)
    assert job is not None and job.status is js.JobStatus.PENDING and job.depends_on == (1,)
    assert await store.claim("m", 5, {"async": 99}, NOW, 30) == []
    # Its upstream runs and completes: then, and only then, it is claimed.
    (up,) = await store.claim("m", 5, {"async": 99}, NOW + 10, 30)
    assert up.id == 1
    await store.record("m", [Outcome(1, 1, js.JobStatus.COMPLETED, NOW + 11)])
    assert [c.id for c in await store.claim("m", 5, {"async": 99}, NOW + 11, 30)] == [2]


async def test_the_requeued_ids_come_back_in_the_callers_order_each_once(
    store: JobStore,
) -> None:
    await store.add([new(i) for i in (1, 2, 3, 4)], NOW)
    claimed = await store.claim("m", 4, {"async": 99}, NOW, 30)
    assert sorted(c.id for c in claimed) == [1, 2, 3, 4]
    await store.record(
        "m", [Outcome(i, 1, js.JobStatus.FAILED, NOW + 1, error="E: x") for i in (1, 2, 3)]
    )
    # 4 is still running: it is left alone; 9 is no job at all.
    assert await store.retry([3, 9, 1, 4, 3, 2], NOW + 2) == [3, 1, 2]


# ── job_page: filters and keyset pages ───────────────────────────────────────


async def test_job_page_filters_and_pages_by_id_on_every_store(store: JobStore) -> None:
    """Filters match exactly and combine; pages go by id, each looking at no
    more than ``scan`` jobs, and ``next_before`` is None only at the end."""
    await store.add(
        [
            NewJob(i, "even" if i % 2 == 0 else "odd", "async" if i < 8 else "thread",
                   (0.0, float(i)), NOW + 100, NOW, b"P", tenant="t1" if i % 3 == 0 else None)
            for i in range(1, 11)
        ],
        NOW,
    )  # fmt: skip
    page = await store.job_page(name="even", limit=2)
    assert [j.id for j in page.jobs] == [10, 8] and page.next_before == 8
    page = await store.job_page(name="even", limit=2, before=page.next_before)
    assert [j.id for j in page.jobs] == [6, 4] and page.next_before == 4
    page = await store.job_page(name="even", limit=2, before=page.next_before)
    assert [j.id for j in page.jobs] == [2] and page.next_before is None
    # A window of 3 jobs: a rare match is found further on, page by page.
    page = await store.job_page(executor="thread", tenant="t1", scan=3)
    assert [j.id for j in page.jobs] == [9] and page.next_before == 8 and page.scanned == 3
    page = await store.job_page(executor="thread", tenant="t1", scan=3, before=8)
    assert page.jobs == [] and page.next_before == 5
    assert (await store.job_page(statuses=[FAILED], name="odd")).jobs == []
    unfiltered = await store.job_page(limit=4)
    assert [j.id for j in unfiltered.jobs] == [10, 9, 8, 7] and unfiltered.next_before == 7
    assert (await store.job_page(limit=10)).next_before is None
