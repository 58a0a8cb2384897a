"""The store link's parts on their own (issue 36): each is built with what it
needs and nothing else, so its rules are checked without a store or a loop
where it has none."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

import jobsched as js
from jobsched._engine._link import _timing
from jobsched._engine._link._closing import Closing
from jobsched._engine._link._ids import Ids
from jobsched._engine._link._outage import Outage
from jobsched._engine._link._retry import LinkClosed, StoreCalls
from jobsched._engine._link._writes import Writes
from jobsched.store._codec import BIG
from jobsched.store._rows import NewJob, Outcome

COMPLETED = js.JobStatus.COMPLETED


def _job(number: int, *, own_id: bool = False) -> NewJob:
    return NewJob(number, "noop", "async", (0.0,), 0.0, 0.0, b"x", own_id=own_id)


def _outcome(number: int, result: bytes | None = None) -> Outcome:
    return Outcome(number, 1, COMPLETED, 5.0, result=result)


@pytest.mark.anyio
async def test_a_big_result_cuts_the_writes_queued_before_it_into_a_batch_of_their_own() -> None:
    writes = Writes()
    writes.add(_job(1))
    writes.record(_outcome(2))
    writes.record(_outcome(3, b"r" * BIG))  # a big result: the cut goes before it
    writes.add(_job(4))  # after the cut: the next batch
    assert writes.appended == 4
    first = writes.take_batch(10.0)
    assert [j.id for j in first.adds] == [1] and [o.id for o in first.outcomes] == [2]
    assert first.done == 2 and first.now == 10.0
    second = writes.take_batch(11.0)
    assert [j.id for j in second.adds] == [4] and [o.id for o in second.outcomes] == [3]
    assert second.done == 4
    assert not writes.pending()


@pytest.mark.anyio
async def test_a_start_goes_with_the_outcome_of_its_attempt_when_both_wait() -> None:
    writes = Writes()
    writes.start(1, 1, 3.0)  # ended before the commit: written with its outcome
    writes.start(2, 1, 4.0)  # still running: a start of its own
    writes.record(_outcome(1))
    batch = writes.take_batch(10.0)
    assert batch.starts == [(2, 1, 4.0)]
    assert batch.outcomes[0].started_at == 3.0


@pytest.mark.anyio
async def test_an_own_id_is_unconfirmed_until_its_batch_is_written() -> None:
    writes = Writes()
    job = _job(7, own_id=True)
    writes.add(job)
    assert writes.unconfirmed(7) == b"x"
    writes.settle(writes.take_batch(1.0).adds)
    assert writes.unconfirmed(7) is None


@pytest.mark.anyio
async def test_outcomes_pile_up_at_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_timing, "OUTCOMES_WAITING_MAX", 2)
    writes = Writes()
    writes.record(_outcome(1))
    assert not writes.outcomes_piled_up()
    writes.record(_outcome(2))
    assert writes.outcomes_piled_up()
    writes.take_batch(1.0)  # the batch being written does not count
    assert not writes.outcomes_piled_up()


class _Reserving:
    """The one store call :class:`Ids` makes, failing when told to."""

    def __init__(self) -> None:
        self.next = 1
        self.asked: list[int] = []
        self.down = False

    def reserve_ids(self, count: int) -> int:
        if self.down:
            raise js.StoreUnavailableError("down")
        self.asked.append(count)
        first, self.next = self.next, self.next + count
        return first


def test_ids_come_from_blocks_reserved_ahead_and_survive_a_failed_reserve(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_timing, "ID_BLOCK", 4)
    store = _Reserving()
    ids = Ids(store)  # type: ignore[arg-type]  # only reserve_ids is called
    assert [ids.next_id() for _ in range(2)] == [1, 2]
    assert len(store.asked) == 1  # half the block left: not yet
    store.down = True
    assert ids.next_id() == 3  # the reserve ahead failed: the ids in hand still serve
    store.down = False
    assert ids.next_id() == 4  # reserved ahead now, the block used up fast: twice as big
    assert store.asked == [4, 8]
    assert ids.next_id() == 5
    assert ids.next_seq() < ids.next_seq()


def _calls(closing: Closing, said: list[str]) -> StoreCalls:
    return StoreCalls(
        Outage("sqlite:///x"),
        closing,
        down=lambda: said.append("down"),
        back=lambda: said.append("back"),
    )


@pytest.mark.anyio
async def test_a_call_is_retried_through_an_outage_logged_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(_timing, "STORE_BACKOFF", js.RetryPolicy(max_retries=0, base_delay=0))
    said: list[str] = []
    calls = _calls(Closing(), said)
    failures = 3

    async def flaky() -> str:
        nonlocal failures
        if failures:
            failures -= 1
            raise js.StoreUnavailableError("connection lost")
        return "done"

    with caplog.at_level(logging.INFO, logger="jobsched"):
        assert await calls.call("claiming jobs", flaky) == "done"
    assert said == ["down", "back"]  # one outage: begun once, ended once
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "unavailable" in warnings[0].getMessage()


@pytest.mark.anyio
async def test_a_call_gives_up_when_told_and_ends_when_the_link_closes() -> None:
    said: list[str] = []
    closing = Closing()
    calls = _calls(closing, said)

    async def down() -> Any:
        raise js.StoreUnavailableError("down")

    with pytest.raises(js.StoreUnavailableError):
        await calls.call("writing", down, give_up=lambda failing: True)
    closing.begin()
    with pytest.raises(LinkClosed):
        await calls.call("claiming jobs", down)
    assert said == ["down"]  # never back


@pytest.mark.anyio
async def test_close_cuts_a_backoff_short(monkeypatch: pytest.MonkeyPatch) -> None:
    hour = js.RetryPolicy(base_delay=3600, max_delay=3600, jitter=False)
    monkeypatch.setattr(_timing, "STORE_BACKOFF", hour)
    closing = Closing()
    calls = _calls(closing, [])
    with anyio.fail_after(30):  # not the hour
        async with anyio.create_task_group() as tg:
            tg.start_soon(calls.backoff, 1)
            closing.end_backoffs()  # before or while it waits: the same event
