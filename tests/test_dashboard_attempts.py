"""The dashboard's job page and timeline with every attempt on record (issue
38, item 2): an attempt a stop handed back shows as "handed back", apart from
the failed ones, and no retry wait is drawn to it (its number ran again)."""

from __future__ import annotations

import time

from test_dashboard import FakeStore, client, stored

from jobsched import JobStatus
from jobsched.store import HANDED_BACK_AT_STOP, Attempt
from jobsched_dashboard import _timeline as timelines

S = JobStatus


def _handed_back(job_id: int, owner: str, start: float, end: float) -> Attempt:
    return Attempt(
        job_id, 1, "deployed", "async", owner, start, end, S.RETRY_WAIT, HANDED_BACK_AT_STOP,
        handed_back=True,
    )  # fmt: skip


def test_the_job_page_shows_a_hand_back_and_the_run_after_it() -> None:
    """Attempt 1 handed back by one member, attempt 1 completed by another:
    two rows, the first "handed back" with its error, neither "failed"."""
    store = FakeStore()
    now = time.time()
    store.add_job(stored(1, S.COMPLETED, name="deployed", finished_at=now - 1, owner=None))
    store.history = [
        _handed_back(1, "old:1:aa", now - 40, now - 3),
        Attempt(1, 1, "deployed", "async", "new:2:bb", now - 2, now - 1, S.COMPLETED),
    ]
    with client(store) as c:
        html = c.get("/jobs/1/live").text
    rows = html[html.index('id="attempts"') :].split("<tr>")[2:]
    assert len(rows) == 2, html
    assert "handed back" in rows[0] and HANDED_BACK_AT_STOP in rows[0] and "old:1:aa" in rows[0]
    assert "failed" not in rows[0]
    assert "completed" in rows[1] and "new:2:bb" in rows[1]


def test_the_timeline_marks_a_hand_back_and_draws_no_wait_to_it() -> None:
    """A hand-back's bar says so; the wait before attempt 2 starts at the
    counted attempt 1's end, not at the hand-back's."""
    attempts = [
        _handed_back(1, "m1", 900, 905),
        Attempt(1, 1, "deployed", "async", "m2", 910, 915, S.RETRY_WAIT, "boom"),
        Attempt(1, 2, "deployed", "async", "m2", 930, 940, S.COMPLETED),
    ]
    t = timelines.timeline(attempts, 1000.0, window=100)
    cut = next(b for b in t.bars if "handed back" in b.title)
    assert HANDED_BACK_AT_STOP in cut.title and "failed" not in cut.title
    (wait,) = t.waits
    retried = next(b for b in t.bars if "failed, retried" in b.title)
    assert wait.x1 == retried.x + retried.width and wait.x1 != cut.x + cut.width
