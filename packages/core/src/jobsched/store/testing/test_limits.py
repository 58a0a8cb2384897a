"""Executor rooms, rate buckets and fair share in a durable store's claim.

docs/stores.md "Limits and fair share" is what every store implements; these
hold every store to the same cases, on exact numbers (each claim is given its
``now``). The scheduler's side is tested with the scheduler (the repository's
tests/test_fair_share.py, test_rate_limit.py, test_durable_limits.py).
"""

from __future__ import annotations

import anyio
import pytest

import jobsched as js
from jobsched.store import Claimed, JobStore, NewJob, Outcome

from . import Lapse, Opener

pytestmark = pytest.mark.anyio

NOW = 1_700_000_000.0
LONG = 3600.0
ALL = {"async": 99}


def new(job_id: int, key: tuple[float, ...] = (0.0,), **kw: object) -> NewJob:
    fields: dict[str, object] = {
        "name": f"j{job_id}",
        "executor": "async",
        "run_at": NOW,
        "submitted_at": NOW,
        "payload": b"P" + bytes([job_id % 256]),
    }
    fields.update(kw)
    return NewJob(job_id, key=key, **fields)  # type: ignore[arg-type]


def ids(claims: list[Claimed]) -> list[int]:
    return [c.id for c in claims]


# ── executor rooms ───────────────────────────────────────────────────────


async def test_a_claim_takes_no_more_than_each_executors_room(store: JobStore) -> None:
    """Each executor gets at most its room; the rest of the limit goes to the next best jobs."""
    await store.add(
        [new(i, (float(i),), executor="thread" if i <= 4 else "async") for i in range(1, 9)], NOW
    )
    got = await store.claim("m", 5, {"thread": 2, "async": 99, "process": 0}, NOW, 30)
    assert ids(got) == [1, 2, 5, 6, 7]
    # A full executor (room 0) gets nothing, however good its jobs' keys.
    assert ids(await store.claim("m", 5, {"thread": 0, "async": 1}, NOW, 30)) == [8]
    assert ids(await store.claim("m", 5, {"thread": 1}, NOW, 30)) == [3]


async def test_rooms_hold_under_a_rate_limit_and_fair_share(store: JobStore) -> None:
    """The rooms bound the claims that choose job by job too."""
    await store.add(
        [new(i, (float(i),), executor="thread" if i <= 4 else "async") for i in range(1, 9)], NOW
    )
    rates = {"unused": js.RateLimit(1)}
    got = await store.claim("m", 5, {"thread": 2, "async": 99}, NOW, 30, rates=rates)
    assert ids(got) == [1, 2, 5, 6, 7]
    got = await store.claim("m", 5, {"thread": 1, "async": 99}, NOW, 30, tenants={})
    assert ids(got) == [3, 8]


# ── rate buckets ─────────────────────────────────────────────────────────


async def test_a_bucket_gives_burst_then_its_rate_and_holds_nothing_else_back(
    store: JobStore,
) -> None:
    """Jobs of a limited key take a token each; others, and unlisted keys, are not limited."""
    # A long lease, so no claim here is a take-over of an earlier one.
    rates = {"email": js.RateLimit(2, per=1.0, burst=2)}
    await store.add(
        [new(i, (float(i),), rate_key="email") for i in range(1, 6)]
        + [new(10, (10.0,)), new(11, (11.0,), rate_key="other")],
        NOW,
    )
    got = await store.claim("m", 10, ALL, NOW, LONG, rates=rates)
    assert ids(got) == [1, 2, 10, 11]
    # Empty: the next token is due in half a second, and next_due says so.
    assert await store.claim("m", 10, ALL, NOW + 0.25, LONG, rates=rates) == []
    assert await store.next_due() == pytest.approx(NOW + 0.5)
    assert ids(await store.claim("m", 10, ALL, NOW + 0.5, LONG, rates=rates)) == [3]
    # Time going back mints nothing.
    assert await store.claim("m", 10, ALL, NOW, LONG, rates=rates) == []
    later = await store.claim("m", 10, ALL, NOW + 60, LONG, rates=rates)
    assert ids(later) == [4, 5]  # the bucket holds burst tokens at most
    assert await store.claim("m", 10, ALL, NOW + 61, LONG, rates=rates) == []
    assert await store.next_due() is None  # no bucket is empty


async def test_a_limited_backlog_comes_back_best_first_and_is_free_for_an_unlimited_member(
    store: JobStore,
) -> None:
    """Jobs of an empty key wait, best first as tokens come; a member that does not
    limit the key runs them at once."""
    rates = {"k": js.RateLimit(1, per=10.0, burst=1)}
    await store.add([new(i, (float(-i),), rate_key="k") for i in range(1, 21)], NOW)
    assert ids(await store.claim("m", 5, {"async": 9}, NOW, LONG, rates=rates)) == [20]
    assert await store.claim("m", 5, {"async": 9}, NOW + 5, LONG, rates=rates) == []
    assert ids(await store.claim("m", 5, {"async": 9}, NOW + 10, LONG, rates=rates)) == [19]
    got = await store.claim("other", 5, {"async": 9}, NOW + 10, LONG)
    assert ids(got) == [18, 17, 16, 15, 14]
    got = await store.claim("other", 50, {"async": 99}, NOW + 10, LONG, rates={})
    assert ids(got) == list(range(13, 0, -1))


async def test_a_bucket_read_past_in_one_claim_lets_the_next_jobs_through(
    store: JobStore,
) -> None:
    """A claim that empties a bucket goes on down the order past that key's jobs,
    however many of them there are, to fill its limit."""
    rates = {"k": js.RateLimit(1, per=60.0, burst=2)}
    await store.add(
        [new(i, (float(i),), rate_key="k") for i in range(1, 31)]
        + [new(100 + i, (100.0 + i,)) for i in range(3)],
        NOW,
    )
    got = await store.claim("m", 5, ALL, NOW, LONG, rates=rates)
    assert ids(got) == [1, 2, 100, 101, 102]


async def test_retries_take_tokens_and_lost_takeovers_do_not(store: JobStore, lapse: Lapse) -> None:
    """Each attempt takes a token, a retry too; taking over a lost attempt does not;
    a token stays spent when the claim is handed back unstarted."""
    rates = {"k": js.RateLimit(1, per=10.0, burst=1)}
    await store.add([new(1, rate_key="k"), new(2, (1.0,), rate_key="k")], NOW)
    (first,) = await store.claim("dead", 5, ALL, NOW, 5, rates=rates)
    assert first.id == 1
    # The lease runs out: taken over at once, with no token (there is none).
    lapse(store, 6)
    (lost,) = await store.claim("m", 5, ALL, NOW + 6, LONG, rates=rates)
    assert (lost.id, lost.lost) == (1, True)
    retry = Outcome(1, lost.attempt, js.JobStatus.RETRY_WAIT, NOW + 6, run_at=NOW + 7)
    assert (await store.record("m", [retry])).refused == []
    # The retry needs a token like any attempt: the bucket's next is at NOW + 10.
    assert await store.claim("m", 5, ALL, NOW + 9, LONG, rates=rates) == []
    (again,) = await store.claim("m", 5, ALL, NOW + 10, LONG, rates=rates)
    assert (again.id, again.attempt, again.lost) == (1, 2, False)
    # A claim handed back unstarted keeps its token spent.
    (handed,) = await store.claim("m", 5, ALL, NOW + 20, LONG, rates=rates)
    assert handed.id == 2
    await store.release("m", [2])
    assert await store.claim("m", 5, ALL, NOW + 25, LONG, rates=rates) == []
    assert ids(await store.claim("m", 5, ALL, NOW + 30, LONG, rates=rates)) == [2]


async def test_a_bucket_is_shared_by_every_member(member: Opener) -> None:
    """Two members claiming by turns from one store share one budget: burst + rate * time."""
    # Steps of 1/8 s at 8 tokens a second: exact in binary, one token per step.
    rates = {"api": js.RateLimit(8, per=1.0, burst=4)}
    a, b = await member(), await member()
    await a.add([new(i, (float(i),), rate_key="api") for i in range(1, 201)], NOW)
    taken: list[tuple[float, str]] = []
    for step in range(17):  # two seconds; each member claims first every other step
        now = NOW + step / 8
        members = [(a, "a"), (b, "b")] if step % 2 else [(b, "b"), (a, "a")]
        for store, name in members:
            got = await store.claim(name, 50, ALL, now, LONG, rates=rates)
            taken += [(now, name) for _ in got]
    assert len(taken) == 4 + 16  # burst, then 8 a second for 2 s: no more, no less
    assert {name for _, name in taken} == {"a", "b"}
    for step in range(17):
        t = NOW + step / 8
        assert sum(1 for when, _ in taken if when <= t) <= 4 + step


async def test_one_members_claim_spends_the_fleets_tokens(member: Opener) -> None:
    """What one member's claim took, the other's cannot; jobs without a key are not held back."""
    a, b = await member(), await member()
    await a.add([new(i, (float(i),), rate_key="api") for i in range(1, 9)] + [new(9, (9.0,))], NOW)
    rates = {"api": js.RateLimit(2, per=10.0, burst=3)}
    first = await a.claim("a", 2, ALL, NOW, LONG, rates=rates)
    second = await b.claim("b", 5, ALL, NOW, LONG, rates=rates)
    assert ids(first) == [1, 2] and ids(second) == [3, 9]  # three tokens for the fleet
    assert await a.claim("a", 5, ALL, NOW + 4.9, LONG, rates=rates) == []
    assert ids(await b.claim("b", 5, ALL, NOW + 5, LONG, rates=rates)) == [4]
    assert ids(await a.claim("a", 5, ALL, NOW + 100, LONG, rates=rates)) == [5, 6, 7]


async def test_members_claiming_at_once_never_overspend_a_bucket(member: Opener) -> None:
    """Concurrent claims of several members take the burst once between them."""
    rates = {"api": js.RateLimit(1, per=3600.0, burst=10)}
    first = await member()
    await first.add([new(i, (float(i),), rate_key="api") for i in range(1, 101)], NOW)
    got: list[int] = []

    async def claim(name: str) -> None:
        store = await member()
        for _ in range(5):
            got.extend(ids(await store.claim(name, 3, ALL, NOW, LONG, rates=rates)))

    async with anyio.create_task_group() as tg:
        for name in ["a", "b", "c", "d"]:
            tg.start_soon(claim, name)
    assert sorted(got) == list(range(1, 11))


async def test_the_last_rate_limited_claim_of_each_member_is_its_next_due(
    member: Opener,
) -> None:
    """next_due() names the next token of a bucket this member's last claim left empty."""
    a, b = await member(), await member()
    await a.add([new(1, rate_key="k"), new(2, rate_key="k")], NOW)
    rates = {"k": js.RateLimit(1, per=4.0, burst=1)}
    assert ids(await a.claim("a", 5, ALL, NOW, LONG, rates=rates)) == [1]
    assert await a.next_due() == pytest.approx(NOW + 4)
    assert await b.next_due() is None  # b has not met the empty bucket
    assert await b.claim("b", 5, ALL, NOW + 1, LONG, rates=rates) == []
    assert await b.next_due() == pytest.approx(NOW + 4)


# ── fair share ───────────────────────────────────────────────────────────


async def test_fair_share_serves_tenants_round_robin_by_weight(store: JobStore) -> None:
    """Within one claim: turns of each tenant's weight, each tenant's jobs best first."""
    jobs = [new(i, (float(i),), tenant="big") for i in range(1, 11)]
    jobs += [new(20 + i, (20.0 + i,), tenant="small") for i in range(3)]
    jobs += [new(30, (0.5,), tenant=None)]
    await store.add(jobs, NOW)
    weights: dict[str | None, int] = {"big": 2}
    got = await store.claim("m", 9, ALL, NOW, 30, tenants=weights)
    # None's best key is the best of all, so it goes first among the never-served;
    # then big (key 1) before small (key 20); big takes two per turn.
    assert ids(got) == [30, 1, 2, 20, 3, 4, 21, 5, 6]


async def test_fair_share_turns_carry_over_between_one_job_claims(store: JobStore) -> None:
    """A turn cut short by the claim's limit goes on in the next claim."""
    jobs = [new(i, (float(i),), tenant="big") for i in range(1, 31)]
    jobs += [new(100 + i, (100.0 + i,), tenant="small") for i in range(1, 4)]
    jobs += [new(200, (200.0,))]  # no tenant: a tenant of its own
    await store.add(jobs, NOW)
    order = []
    for _ in range(9):
        (c,) = await store.claim("m", 1, ALL, NOW, 30, tenants={"big": 2})
        order.append(c.id)
    # Big twice, then small once, then the untenanted job once, round after round.
    assert order == [1, 2, 101, 200, 3, 4, 102, 5, 6]
    batch = await store.claim("m", 4, ALL, NOW, 30, tenants={"big": 2})
    assert ids(batch) == [103, 7, 8, 9]  # small's turn is next; big's follow


async def test_fair_share_turns_carry_over_between_members(member: Opener) -> None:
    """Claims of one job by two members keep one rotation: three of gold's, one of None's."""
    a, b = await member(), await member()
    jobs = []
    for i in range(20):
        jobs += [new(2 * i + 1, (2.0 * i,), tenant="gold"), new(2 * i + 2, (2.0 * i + 1,))]
    await a.add(jobs, NOW)
    weights: dict[str | None, int] = {"gold": 3}
    order = []
    for step in range(12):
        store = a if step % 2 else b
        (got,) = await store.claim(f"m{step % 2}", 1, ALL, NOW, 30, tenants=weights)
        order.append("gold" if got.id % 2 else None)
    assert order == ["gold", "gold", "gold", None] * 3
    # A newcomer is served next, ahead of the tenants served before it.
    await a.add([new(100, (99.0,), tenant="new")], NOW)
    (got,) = await a.claim("m", 1, ALL, NOW, 30, tenants=weights)
    assert got.id == 100


async def test_members_claiming_at_once_keep_one_rotation(member: Opener) -> None:
    """Concurrent fair-share claims of one job each still serve tenants turn by turn."""
    first = await member()
    tenants = ["a", "b", "c", "d"]
    await first.add(
        [new(10 * i + n, (float(n),), tenant=t) for i, t in enumerate(tenants) for n in range(8)],
        NOW,
    )
    served: list[int] = []

    async def claim(name: str) -> None:
        store = await member()
        for _ in range(4):
            (got,) = await store.claim(name, 1, ALL, NOW, LONG, tenants={})
            served.append(got.id)

    async with anyio.create_task_group() as tg:
        for name in ["m1", "m2", "m3", "m4"]:
            tg.start_soon(claim, name)
    # Sixteen turns of one job: every tenant served four times, its four
    # best jobs, whichever member claimed. Two members that read the same
    # turn would serve one tenant a fifth time. (The order the claims
    # return in is not the order they committed in, so it proves nothing.)
    assert sorted(served) == [10 * i + n for i in range(4) for n in range(4)], served


async def test_fair_share_skips_a_tenant_it_may_not_claim_for_now(store: JobStore) -> None:
    """A tenant whose jobs are on a full executor or out of tokens keeps its place; others go on."""
    await store.add(
        [
            new(1, (1.0,), tenant="a", executor="thread"),
            new(2, (2.0,), tenant="a"),
            new(3, (3.0,), tenant="b", rate_key="k"),
            new(4, (4.0,), tenant="c"),
        ],
        NOW,
    )
    rates = {"k": js.RateLimit(1, per=60.0, burst=1)}
    first = await store.claim("m", 2, {"thread": 0, "async": 9}, NOW, 30, rates=rates, tenants={})
    assert ids(first) == [2, 3]  # a's job 1 waits for a thread; b takes its token
    rest = await store.claim("m", 5, {"thread": 1, "async": 9}, NOW, 30, rates=rates, tenants={})
    assert sorted(ids(rest)) == [1, 4]


async def test_a_tenant_that_runs_short_ends_its_turn(store: JobStore) -> None:
    """A tenant that took fewer than it asked has nothing more now: its turn
    ends instead of carrying its credit to the next claim."""
    rates = {"k": js.RateLimit(1, per=60.0, burst=2)}
    await store.add(
        [new(i, (float(i),), tenant="a", rate_key="k") for i in range(1, 6)]
        + [new(10 + i, (10.0 + i,), tenant="b") for i in range(4)]
        + [new(20 + i, (20.0 + i,), tenant="c") for i in range(4)],
        NOW,
    )
    weights: dict[str | None, int] = {"a": 4}
    got = await store.claim("m", 3, ALL, NOW, LONG, rates=rates, tenants=weights)
    assert ids(got) == [1, 2, 10]  # a's turn ends at its two tokens; b's starts
    # A minute on a has a token again, but no credit: c, never served, is next.
    got = await store.claim("m", 1, ALL, NOW + 60, LONG, rates=rates, tenants=weights)
    assert ids(got) == [20]
    got = await store.claim("m", 2, ALL, NOW + 60, LONG, rates=rates, tenants=weights)
    assert ids(got) == [3, 11]  # then a (served before b), then b
