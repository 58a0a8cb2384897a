"""Registered jobs in a durable store: rows with JSON ``args`` that a claim
hands only to a member that knows their name, on every path of the claim.

A registered job's row has ``payload`` ``b"J"`` and its arguments as JSON
text in ``args`` (docs/stores.md, "Registered jobs"); a pickled job's
``args`` is None and is claimed as before, whatever ``names`` says.
"""

from __future__ import annotations

import json

import pytest

import jobsched as js
from jobsched.store import Claimed, JobStore, Member, NewJob, Outcome

from . import Lapse

pytestmark = pytest.mark.anyio

NOW = 1_700_000_000.0
ALL = {"async": 99}
S = js.JobStatus
SEND = "shop.jobs.send_email"
SYNC = "shop.jobs.sync_customer"


def registered(job_id: int, key: float, name: str = SEND, **args: object) -> NewJob:
    """A registered job's row, as an app writes it: name, ``b"J"``, JSON arguments."""
    return NewJob(
        job_id,
        name=name,
        executor="async",
        key=(key,),
        run_at=NOW,
        submitted_at=NOW,
        payload=b"J",
        args=json.dumps(args or {"to": f"user{job_id}@example.com"}),
    )


def pickled(job_id: int, key: float) -> NewJob:
    return NewJob(
        job_id,
        name=f"pickled {job_id}",
        executor="async",
        key=(key,),
        run_at=NOW,
        submitted_at=NOW,
        payload=b"P" + job_id.to_bytes(4, "big"),
    )


def ids(claims: list[Claimed]) -> list[int]:
    return [c.id for c in claims]


async def test_a_registered_job_is_claimed_only_by_a_member_that_knows_its_name(
    store: JobStore,
) -> None:
    """Without its name a claim passes it by (pickled jobs still come, in
    key order); with it, the job comes with its arguments."""
    await store.add([registered(1, 1.0), pickled(2, 2.0), registered(3, 3.0, SYNC)], NOW)
    assert ids(await store.claim("old", 9, ALL, NOW, 30)) == [2]  # names=(): none registered
    assert ids(await store.claim("other", 9, ALL, NOW, 30, names={"shop.jobs.other"})) == []
    (claim,) = await store.claim("new", 9, ALL, NOW, 30, names={SEND})
    assert (claim.id, claim.attempt, claim.payload) == (1, 1, b"J")
    assert claim.args is not None and json.loads(claim.args) == {"to": "user1@example.com"}
    (sync,) = await store.claim("newer", 9, ALL, NOW, 30, names=[SEND, SYNC])
    assert sync.id == 3


async def test_a_pickled_jobs_claim_has_no_args(store: JobStore) -> None:
    await store.add([pickled(1, 1.0)], NOW)
    (claim,) = await store.claim("m", 1, ALL, NOW, 30, names={SEND})
    assert claim.args is None


async def test_the_name_filter_holds_with_limits_and_fair_share(store: JobStore) -> None:
    """The claim's other paths (rate buckets, fair share, executor rooms)
    pass an unknown name by too."""
    await store.add([registered(1, 1.0), pickled(2, 2.0), registered(3, 3.0)], NOW)
    rates = {"smtp": js.RateLimit(99, per=1.0)}
    assert ids(await store.claim("m", 9, ALL, NOW, 30, rates=rates)) == [2]
    assert ids(await store.claim("m", 9, ALL, NOW, 30, tenants={None: 1})) == []
    got = await store.claim("m", 9, {"async": 1}, NOW, 30, tenants={None: 1}, names={SEND})
    assert ids(got) == [1]


async def test_an_expired_registered_job_is_taken_over_only_by_a_member_that_knows_it(
    store: JobStore, lapse: Lapse
) -> None:
    """A takeover is a claim too: a member that cannot run the job leaves
    the lost attempt for one that can."""
    await store.add([registered(1, 1.0)], NOW)
    await store.claim("dead", 1, ALL, NOW, 10, names={SEND})
    lapse(store, 11)
    assert await store.claim("unaware", 9, ALL, NOW + 11, 10) == []
    (lost,) = await store.claim("aware", 9, ALL, NOW + 11, 10, names={SEND})
    assert (lost.id, lost.attempt, lost.lost) == (1, 1, True)
    assert lost.args is not None and json.loads(lost.args)["to"] == "user1@example.com"


async def test_waiting_for_names_counts_the_registered_jobs_no_member_knows(
    store: JobStore,
) -> None:
    """Pending and retry-waiting ones, by name; neither pickled, running nor
    finished ones, nor the names given."""
    await store.add(
        [
            registered(1, 1.0),
            registered(2, 2.0),
            registered(3, 3.0, SYNC),
            registered(4, 4.0, SYNC),
            pickled(5, 5.0),
        ],
        NOW,
    )
    assert await store.waiting_for_names(()) == {SEND: 2, SYNC: 2}
    assert await store.waiting_for_names({SEND}) == {SYNC: 2}
    assert await store.waiting_for_names([SEND, SYNC]) == {}
    claims = await store.claim("m", 2, ALL, NOW, 30, names={SYNC})
    assert ids(claims) == [3, 4]
    retry = Outcome(3, 1, S.RETRY_WAIT, NOW + 1, run_at=NOW + 60, error="E: later")
    done = Outcome(4, 1, S.COMPLETED, NOW + 1, result=b'J{"sent": true}')
    assert (await store.record("m", [retry, done])).refused == []
    assert await store.waiting_for_names({SEND}) == {SYNC: 1}


async def test_the_operator_reads_return_args_and_a_json_result(store: JobStore) -> None:
    """fetch, jobs and job_page give the arguments back as they were written;
    a registered job's result is the store's bytes, b"J" and its JSON."""
    await store.add([registered(1, 1.0, to="a@b", n=5, urgent=True), pickled(2, 2.0)], NOW)
    await store.claim("m", 1, ALL, NOW, 30, names={SEND})
    await store.record("m", [Outcome(1, 1, S.COMPLETED, NOW + 1, result=b'J{"id": 7}')])
    job = await store.fetch(1)
    assert job is not None and job.payload == b"J" and job.result == b'J{"id": 7}'
    assert job.args is not None and json.loads(job.args) == {"to": "a@b", "n": 5, "urgent": True}
    other = await store.fetch(2)
    assert other is not None and other.args is None
    listed = {j.id: j.args for j in await store.jobs()}
    assert listed[1] == job.args and listed[2] is None
    page = await store.job_page()
    assert {j.id: j.args for j in page.jobs} == listed


async def test_job_page_filters_by_arguments(store: JobStore) -> None:
    """Every filter must match: a string as it is, a number or boolean as
    its JSON text; pickled jobs never match."""
    await store.add(
        [
            registered(1, 1.0, to="a@b", n=5, urgent=True, price=2.5, note=None),
            registered(2, 2.0, to="a@b", n=6, urgent=False),
            registered(3, 3.0, to="c@d", n=5, price="2.5"),
            pickled(4, 4.0),
        ],
        NOW,
    )

    async def matching(**args: str) -> list[int]:
        return [j.id for j in (await store.job_page(args=args)).jobs]

    assert await matching(to="a@b") == [2, 1]
    assert await matching(to="a@b", n="5") == [1]
    assert await matching(n="5") == [3, 1]
    assert await matching(urgent="true") == [1]
    assert await matching(urgent="false") == [2]
    assert await matching(price="2.5") == [3, 1]  # a number as its JSON, a string as it is
    assert await matching(note="null") == []  # JSON's null matches nothing
    assert await matching(to="nobody") == []
    assert await matching(missing="x") == []
    with pytest.raises(ValueError, match="'to-be' is not a parameter name"):
        await store.job_page(args={"to-be": "x"})
    with pytest.raises(TypeError, match="args must map parameter names"):
        await store.job_page(args={"n": 5})  # type: ignore[dict-item]


async def test_the_members_list_keeps_the_names_each_member_runs(store: JobStore) -> None:
    """What ``jobsched stats`` reads to say which waiting jobs no member knows."""
    await store.report_member(Member("h:1:a", 4, 0, NOW, NOW, names=(SEND, SYNC)))
    await store.report_member(Member("h:2:b", 4, 0, NOW, NOW))
    assert {m.owner: m.names for m in await store.members()} == {
        "h:1:a": (SEND, SYNC),
        "h:2:b": (),
    }
    await store.report_member(Member("h:1:a", 4, 1, NOW, NOW + 5, names=(SEND,)))
    assert {m.owner: m.names for m in await store.members()}["h:1:a"] == (SEND,)


async def test_job_page_by_arguments_looks_at_most_scan_jobs_a_page(store: JobStore) -> None:
    """The window of ``scan`` jobs holds as it does for the other filters;
    the arguments combine with them."""
    await store.add(
        [registered(i, float(i), to="a@b" if i % 2 else "c@d") for i in range(1, 7)], NOW
    )
    pages, before = [], None
    while True:
        page = await store.job_page(args={"to": "a@b"}, scan=2, before=before)
        pages.append(([j.id for j in page.jobs], page.scanned))
        if page.next_before is None:
            break
        before = page.next_before
    assert pages == [([5], 2), ([3], 2), ([1], 2)]
    by_name = await store.job_page(args={"to": "a@b"}, name=SEND, statuses=[S.PENDING])
    assert [j.id for j in by_name.jobs] == [5, 3, 1]
    assert (await store.job_page(args={"to": "a@b"}, name=SYNC)).jobs == []
    assert (await store.job_page(args={"to": "a@b"}, statuses=[S.COMPLETED])).jobs == []
    first = await store.job_page(args={"to": "a@b"}, limit=1)
    assert ([j.id for j in first.jobs], first.next_before) == ([5], 5)


async def test_job_page_by_arguments_and_queue(store: JobStore) -> None:
    """With a queue too: the default queue's jobs, or a named one's."""
    jobs = [registered(1, 1.0, to="a@b"), registered(2, 2.0, to="a@b"), pickled(3, 3.0)]
    jobs[1].queue = "emails"
    await store.add(jobs, NOW)
    default = await store.job_page(args={"to": "a@b"}, queue="default")
    assert [j.id for j in default.jobs] == [1]
    emails = await store.job_page(args={"to": "a@b"}, queue="emails")
    assert [(j.id, j.queue) for j in emails.jobs] == [(2, "emails")]
    assert (await store.job_page(args={"to": "a@b"}, queue="video")).jobs == []
