"""The claimer's looks for jobs it never claims back off by their cost (issue 34).

Under a PostgreSQL held xmin each look steps over every dead index entry of
the waiting rows, and the claimer waits for it: a look that took c seconds
puts the next of its kind c / LOOKS_SHARE seconds off, so the looks take at
most that share of the claimer's time. :class:`Reports` is driven here on a
fake clock that only the store's calls move.
"""

from __future__ import annotations

import logging
from collections.abc import Collection

import pytest

import jobsched as js
from jobsched._engine._link import _timing
from jobsched._engine._link._closing import Closing
from jobsched._engine._link._outage import Outage
from jobsched._engine._link._reports import Reports
from jobsched._engine._link._retry import StoreCalls
from jobsched._engine._link._terms import Terms
from jobsched.store._codec import Codec

KID = b"\x01" * 8


class _Looked:
    """The three store calls of the looks: each moves the clock on by its
    kind's cost, and counts itself."""

    url = "sqlite:///looked"

    def __init__(self) -> None:
        self.now = 0.0
        self.cost = {"keys": 0.0, "names": 0.0, "executors": 0.0}
        self.calls = {"keys": 0, "names": 0, "executors": 0}
        #: Seconds the next call of a kind fails after (a slow outage), once.
        self.fail_after: dict[str, float] = {}
        self.keys: dict[bytes, int] = {}
        self.executors: dict[str, int] = {}

    def _call(self, kind: str) -> None:
        failing = self.fail_after.pop(kind, None)
        if failing is not None:
            self.now += failing
            raise js.StoreUnavailableError("connect timed out")
        self.calls[kind] += 1
        self.now += self.cost[kind]

    async def waiting_for_keys(self) -> dict[bytes, int]:
        self._call("keys")
        return dict(self.keys)

    async def waiting_for_names(self, names: Collection[str]) -> dict[str, int]:
        self._call("names")
        return {}

    async def waiting_for_executors(self, installed: Collection[str]) -> dict[str, int]:
        self._call("executors")
        return dict(self.executors)


@pytest.fixture(autouse=True)
def _share(monkeypatch: pytest.MonkeyPatch) -> None:
    """The figures below are for a share of 1% (the store's is smaller)."""
    monkeypatch.setattr(_timing, "LOOKS_SHARE", 0.01)


def _reports(store: _Looked) -> Reports:
    calls = StoreCalls(Outage(store.url), Closing(), down=lambda: None, back=lambda: None)
    return Reports(store, Codec(None), calls, Terms(), timer=lambda: store.now)  # type: ignore[arg-type]


async def _idle_pass(reports: Reports, store: _Looked, at: float) -> None:
    """A claimer's idle pass at ``at`` on the fake clock: both looks, as _claims does."""
    store.now = at
    await reports.look_when_idle(at)
    await reports.look_for_executors({"async"}, at)


@pytest.mark.anyio
async def test_a_slow_look_puts_the_next_off_by_its_cost_over_the_share() -> None:
    """Keys and names together took 2 s: the next look is 200 s off, not
    KEYS_EVERY; once cheap again it is back to KEYS_EVERY."""
    assert (_timing.KEYS_EVERY, _timing.LOOKS_SHARE) == (10.0, 0.01)
    store = _Looked()
    store.cost.update(keys=1.5, names=0.5)
    reports = _reports(store)
    await reports.look_when_idle(0.0)
    assert store.calls["keys"] == store.calls["names"] == 1
    for at in (10.0, 100.0, 199.9):
        store.now = at
        await reports.look_when_idle(at)
    assert store.calls["keys"] == 1
    store.cost.update(keys=0.001, names=0.001)
    store.now = 200.0
    await reports.look_when_idle(200.0)
    assert store.calls["keys"] == store.calls["names"] == 2
    store.now = 210.0
    await reports.look_when_idle(210.0)  # the cheap look: KEYS_EVERY again
    assert store.calls["keys"] == 3


@pytest.mark.anyio
async def test_a_cheap_look_keeps_its_interval() -> None:
    """Looks under EVERY x LOOKS_SHARE (0.1 s for keys, 0.3 s for executors)
    come every KEYS_EVERY / EXECUTORS_EVERY, as before."""
    store = _Looked()
    store.cost.update(keys=0.05, names=0.04, executors=0.29)
    reports = _reports(store)
    for at in (0.0, 9.9, 10.0, 19.9, 20.0, 29.9, 30.0, 59.9, 60.0):
        await _idle_pass(reports, store, at)
    assert store.calls == {"keys": 5, "names": 5, "executors": 3}


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("slow", "cost", "step", "off", "calls"),
    [
        ("executors", 3.0, 10, 300, {"keys": 30, "names": 30, "executors": 1}),
        ("keys", 5.0, 30, 500, {"keys": 1, "names": 1, "executors": 17}),
    ],
)
async def test_each_kind_backs_off_by_its_own_cost(
    slow: str, cost: float, step: int, off: int, calls: dict[str, int]
) -> None:
    """A slow executors look (3 s: the next 300 s off) leaves the cheap keys
    look at KEYS_EVERY, and a slow keys look (5 s: 500 s off) the cheap
    executors look at EXECUTORS_EVERY."""
    store = _Looked()
    store.cost[slow] = cost
    reports = _reports(store)
    for at in range(0, off, step):
        await _idle_pass(reports, store, float(at))
    assert store.calls == calls
    await _idle_pass(reports, store, float(off))
    assert store.calls[slow] == 2


@pytest.mark.anyio
async def test_an_outage_is_not_the_looks_cost(monkeypatch: pytest.MonkeyPatch) -> None:
    """A try that failed after 100 s and its backoff do not count: only the
    try that answered (0.01 s), so the next look is KEYS_EVERY off, not 10,000 s."""
    monkeypatch.setattr(_timing, "STORE_BACKOFF", js.RetryPolicy(max_retries=0, base_delay=0))
    store = _Looked()
    store.cost.update(keys=0.01, executors=0.01)
    store.fail_after.update(keys=100.0, executors=100.0)
    reports = _reports(store)
    await _idle_pass(reports, store, 0.0)
    assert store.calls == {"keys": 1, "names": 1, "executors": 1}
    await _idle_pass(reports, store, 30.0)
    assert store.calls == {"keys": 2, "names": 2, "executors": 2}


@pytest.mark.anyio
async def test_every_zero_looks_on_every_pass_whatever_the_cost(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """KEYS_EVERY / EXECUTORS_EVERY patched to 0 (the member tests' "look on
    every pass") are not backed off, however slow the look."""
    monkeypatch.setattr(_timing, "KEYS_EVERY", 0.0)
    monkeypatch.setattr(_timing, "EXECUTORS_EVERY", 0.0)
    store = _Looked()
    store.cost.update(keys=5.0, names=5.0, executors=5.0)
    reports = _reports(store)
    for _ in range(3):
        await _idle_pass(reports, store, 0.0)
    assert store.calls == {"keys": 3, "names": 3, "executors": 3}


@pytest.mark.anyio
async def test_what_the_looks_tell_is_told_as_before(caplog: pytest.LogCaptureFixture) -> None:
    """Under the backoff a key is still told once, and an executor again
    after EXECUTORS_REPEAT or at once when it comes back after none waited."""
    store = _Looked()
    store.cost.update(keys=1.0, executors=1.0)  # next looks 100 s off
    store.keys = {KID: 2}
    store.executors = {"gpu": 3}
    reports = _reports(store)
    with caplog.at_level(logging.WARNING, logger="jobsched"):
        for at in range(0, 1000, 100):  # every pass looks: ten of each kind
            await _idle_pass(reports, store, float(at))
        assert store.calls == {"keys": 10, "names": 10, "executors": 10}
        store.executors = {}
        await _idle_pass(reports, store, 1000.0)  # resolved...
        store.executors = {"gpu": 1}
        await _idle_pass(reports, store, 1100.0)  # ...and back: told at once
    keys = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(keys) == 1 and KID.hex() in keys[0].getMessage()
    told = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    gpu = [m for m in told if "'gpu'" in m]
    # At 0, again at 600 (EXECUTORS_REPEAT), and at 1100 when it came back.
    assert [m.split(" ")[0] for m in gpu] == ["3", "3", "1"]
