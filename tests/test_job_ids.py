"""Job ids: "job-<n>" strings outside, numbered on first need, exact form only."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from sample_jobs import FailTimes, Ok

import jobsched as js

Make = Callable[..., js.JobScheduler]

pytestmark = pytest.mark.anyio


class Label(str):
    """A str subclass: a label must come back as the very object given."""


def test_id_read_before_submit_is_kept_and_returned() -> None:
    """An id read early stays the job's id: submit() returns it, get() finds it."""
    s = js.JobScheduler()
    job = Ok()
    early = job.job_id
    assert early.startswith("job-") and job.job_id == early
    assert s.submit(job) == early
    assert s.get(early) is job and job.job_id == early


def test_seq_follows_submit_order_not_id_order() -> None:
    """seq grows in submit order even when ids were read in the other order."""
    s = js.JobScheduler()
    first, second = Ok(), Ok()
    second_id, first_id = second.job_id, first.job_id
    assert s.submit(first) == first_id and s.submit(second) == second_id
    assert 0 < first.seq < second.seq
    fresh = Ok()
    fresh_id = s.submit(fresh)
    assert fresh.seq > second.seq and fresh_id == fresh.job_id


def test_ids_are_unique_across_schedulers() -> None:
    """Two schedulers never hand out the same id."""
    a, b = js.JobScheduler(), js.JobScheduler()
    ids = [s.submit(Ok()) for _ in range(50) for s in (a, b)]
    assert len(set(ids)) == len(ids)
    with pytest.raises(js.UnknownJobError):
        b.get(ids[0])  # submitted to a, unknown to b


def test_pickle_and_copy_carry_the_id() -> None:
    """A pickled job (the process executor) keeps its id, even if never read before."""
    job = Ok(7)
    clone = pickle.loads(pickle.dumps(job))
    assert clone.job_id == job.job_id
    assert copy.copy(job).job_id == job.job_id
    assert pickle.loads(pickle.dumps(job)).job_id == job.job_id


@pytest.mark.parametrize(
    "bad",
    [
        "job-01",
        "job-0",
        "job-",
        "job-+1",
        "job- 1",
        "job-1 ",
        " job-1",
        "job-1_0",
        "JOB-1",
        "job-١",
        "job-" + "9" * 5000,
        1,
        None,
        ("job-1",),
        b"job-1",
    ],
)
def test_anything_but_an_exact_id_is_unknown(bad: Any) -> None:
    """Only the exact "job-<n>" form names a job: get, cancel and depends_on say unknown."""
    s = js.JobScheduler()
    for _ in range(12):
        s.submit(Ok())  # so job-1..job-9 style numbers could exist if mis-parsed
    with pytest.raises(js.UnknownJobError, match=r"no job .*never submitted here"):
        s.get(bad)
    assert s.cancel(bad) is False
    with pytest.raises(js.UnknownJobError, match=r"depends on unknown job\(s\)"):
        s.submit(Ok(), depends_on=[bad])


def test_an_empty_id_as_depends_on_is_unknown_not_no_dependency() -> None:
    """depends_on="" names one job, the id "": unknown, as any id that names
    no job, not taken for "no dependency" (a falsy depends_on)."""
    s = js.JobScheduler()
    with pytest.raises(js.UnknownJobError, match=r"unknown job\(s\) \[''\]"):
        s.submit(Ok(), depends_on="")
    js.result_of("job-1")  # once a marker exists, submit takes the workflow path: the same
    with pytest.raises(js.UnknownJobError, match=r"unknown job\(s\) \[''\]"):
        s.submit(Ok(), depends_on="")
    assert s.jobs() == []


def test_depends_on_an_unhashable_is_still_a_type_error() -> None:
    """depends_on holding an unhashable value fails as before: a TypeError."""
    s = js.JobScheduler()
    with pytest.raises(TypeError):
        s.submit(Ok(), depends_on=[["job-1"]])  # type: ignore[list-item]


async def test_upstream_failed_before_submit_names_it(make_scheduler: Make) -> None:
    """A dependent of an already-failed job is CANCELLED with the upstream's id."""
    async with make_scheduler() as s:
        bad = s.submit(FailTimes(99, retry=js.RetryPolicy(max_retries=0)))
        with anyio.fail_after(10):
            await s.join()
        late = s.submit(Ok(), depends_on=[bad])
    assert s.get(late).status is js.JobStatus.CANCELLED
    assert s.get(late).last_error == f"upstream {bad} failed"


def test_routing_options_read_back_and_can_be_set() -> None:
    """deadline, tenant and rate_key read back as given and can be changed singly."""
    job = Ok(deadline=5.0, tenant="a", rate_key="k")
    assert (job.deadline, job.tenant, job.rate_key) == (5.0, "a", "k")
    job.tenant = None
    assert (job.deadline, job.tenant, job.rate_key) == (5.0, None, "k")
    job.deadline = None
    job.rate_key = None
    assert (job.deadline, job.tenant, job.rate_key) == (None, None, None)
    job.rate_key = "r"
    assert (job.deadline, job.tenant, job.rate_key) == (None, None, "r")
    only_deadline = Ok(deadline=3)
    assert (only_deadline.deadline, only_deadline.tenant, only_deadline.rate_key) == (3, None, None)


def test_labels_come_back_as_the_objects_given() -> None:
    """Jobs share label storage, but a str subclass label is not swapped for an equal str."""
    plain = Ok(tenant="t", rate_key="r")
    label = Label("t")
    special = Ok(tenant=label, rate_key="r")
    assert plain.tenant == "t" and type(special.tenant) is Label and special.tenant is label
    other = Ok()
    other.tenant = label
    assert other.tenant is label
