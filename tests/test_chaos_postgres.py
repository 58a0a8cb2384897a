"""A fleet on PostgreSQL while the database misbehaves (issue 20): three
member processes (tests/chaos_member.py, which is tests/fleet_member.py)
reach the server through a TCP proxy the test runs (tests/tcpproxy.py),
which cuts their connections and refuses new ones; or the server ends their
connections (``pg_terminate_backend``); or an operator holds a row lock for
three leases; or one member's clock runs a minute ahead.

In each: every job completes, each ran exactly once (the one row an
operator locked may run twice: its outcome cannot be written under the
lock, and its lease lapses), no member exits, and a member that met the
outage logged it. ``JOBSCHED_CHAOS_JOBS`` sets the jobs per scenario
(default 2,000, the issue's figure).

Every wait is on a state (a log line, the store, a process) with a generous
bound; the sleeps are the outages' own lengths.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pg
import psycopg
import pytest
from tcpproxy import TcpProxy
from test_fleet import TESTS, Member, lines, wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.timeout(300)]

#: Jobs per scenario.
JOBS = int(os.environ.get("JOBSCHED_CHAOS_JOBS", "2000"))
#: Seconds the proxy refuses connections (after cutting every open one).
OUTAGE = 5.0
#: What the members' connections are called, to find them on the server.
APP = "jobsched-chaos-member"


class ChaosMember(Member):
    """A member whose stderr (its log) goes to a file, maybe with its clock ahead."""

    def __init__(self, url: str, folder: Path, *flags: str, ahead: float = 0.0) -> None:
        self.log = folder / f"member-{len(list(folder.glob('member-*.log')))}.log"
        self._stderr = self.log.open("w")
        self.process = subprocess.Popen(
            [sys.executable, str(TESTS / "chaos_member.py"), str(ahead), url, str(folder), *flags],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            env={**os.environ, "PYTHONPATH": str(TESTS)},
        )
        self._start_reader()

    def _start_reader(self) -> None:
        self.lines = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.pid = self.process.pid

    def said(self) -> str:
        return self.log.read_text()

    def kill(self) -> None:
        super().kill()
        self._stderr.close()


class Chaos:
    """One scenario's database, proxy and members."""

    def __init__(self, url: str, proxy: TcpProxy, folder: Path) -> None:
        self.direct = url
        self.via_proxy = f"{proxy.url(url)}?application_name={APP}"
        self.proxy = proxy
        self.folder = folder
        self.members: list[ChaosMember] = []

    def start(self, count: int, *flags: str, ahead: float = 0.0) -> list[ChaosMember]:
        started = [
            ChaosMember(self.via_proxy, self.folder, *flags, ahead=ahead) for _ in range(count)
        ]
        for member in started:
            member.ready()
        self.members += started
        return started

    def sql(self, statement: str) -> list[tuple[object, ...]]:
        with psycopg.connect(self.direct, autocommit=True) as conn:
            cur = conn.execute(statement)
            return cur.fetchall() if cur.description else []

    def statuses(self) -> Counter[str]:
        rows = self.sql("SELECT status, count(*) FROM jobsched_jobs GROUP BY status")
        return Counter({str(status): int(str(n)) for status, n in rows})

    def join(self) -> None:
        """Every job finished; the members still run."""
        assert self.members[-1].ask("join", timeout=240) == "joined"
        for member in self.members:
            assert member.process.poll() is None, (member.pid, member.said()[-3000:])

    def check_and_stop(self, ids: list[str], *, twice: frozenset[str] = frozenset()) -> None:
        """Each of ``ids`` completed, and ran once (those in ``twice``: at
        most twice); nobody logged an internal error; each member stops, 0."""
        self.join()
        runs = Counter(job_id for _, job_id, *_ in lines(self.folder, "run"))
        starts = Counter(job_id for _, job_id, *_ in lines(self.folder, "start"))
        times = runs + starts
        assert set(ids) <= set(times), sorted(set(ids) - set(times))[:5]
        again = {i: n for i, n in times.items() if i in ids and n > (2 if i in twice else 1)}
        assert not again, list(again.items())[:5]
        assert self.statuses() == Counter({"completed": len(ids)}), self.statuses()
        for member in self.members:
            said = member.said()
            assert "internal error" not in said, said[-3000:]
            assert "InvalidTransitionError" not in said, said[-3000:]
        codes = [member.stop() for member in self.members]
        assert codes == [0] * len(codes), [m.said()[-3000:] for m in self.members]

    def logged_outage(self) -> list[ChaosMember]:
        """The members that logged the store's outage (its start and its end)."""
        return [
            m
            for m in self.members
            if "is unavailable (" in (s := m.said()) and "is back after" in s
        ]


@pytest.fixture
def chaos(tmp_path: Path) -> Iterator[Chaos]:
    target = urlparse(pg.ADMIN_URL)
    with (
        pg.database() as url,
        TcpProxy((target.hostname or "127.0.0.1", target.port or 5432)) as proxy,
    ):
        scenario = Chaos(url, proxy, tmp_path)
        try:
            yield scenario
        finally:
            for member in scenario.members:
                member.kill()


def submit(member: Member, kind: str, count: int) -> list[str]:
    ids = member.ask(f"submit {kind} {count}", timeout=120).split()
    assert len(ids) == count
    return ids


def ran(chaos: Chaos) -> int:
    return len(lines(chaos.folder, "run"))


def test_connections_reset_and_refused_for_five_seconds(chaos: Chaos) -> None:
    """The proxy resets every connection and refuses new ones for 5 s
    mid-run: the members ride it out and every job runs once."""
    chaos.start(3, "--workers", "16", "--lease", "20")
    ids = submit(chaos.members[0], "record", JOBS)
    wait_for("a tenth of the jobs ran", lambda: ran(chaos) >= JOBS // 10, timeout=120)
    chaos.proxy.refuse()
    time.sleep(OUTAGE)
    chaos.proxy.accept()
    chaos.check_and_stop(ids)
    assert chaos.logged_outage(), [m.said()[-2000:] for m in chaos.members]


def test_every_member_connection_terminated_by_the_server(chaos: Chaos) -> None:
    """``pg_terminate_backend`` of every member connection, three times
    mid-run: the pools reconnect, LISTEN listens again, every job runs once."""
    chaos.start(3, "--workers", "16", "--lease", "20")
    ids = submit(chaos.members[0], "record", JOBS)
    for share in (10, 4, 2):
        wait_for(f"1/{share} of the jobs ran", lambda s=share: ran(chaos) >= JOBS // s, timeout=120)
        ended = chaos.sql(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            f"WHERE application_name = '{APP}' AND datname = current_database()"
        )
        assert ended, "no member connection to end"
    chaos.check_and_stop(ids)
    assert chaos.logged_outage(), [m.said()[-2000:] for m in chaos.members]


def test_a_row_lock_held_for_three_leases_costs_that_row_alone(chaos: Chaos) -> None:
    """An operator's ``SELECT ... FOR UPDATE`` on one running job's row for
    3x the lease: the member's other running jobs keep their leases (none
    runs twice), the flow of jobs goes on, and the locked job completes (its
    own attempt may be run again: it is the one row the lock costs)."""
    lease = 2.0
    chaos.start(3, "--workers", "16", "--lease", str(lease))
    holds = submit(chaos.members[0], "hold", 7)
    wait_for("the 7 holds started", lambda: len(lines(chaos.folder, "start")) == 7)
    locked = holds[0]
    with psycopg.connect(chaos.direct) as operator:
        operator.execute(
            "SELECT * FROM jobsched_jobs WHERE id = %s FOR UPDATE",
            (int(locked.removeprefix("job-")),),
        )
        began = time.monotonic()
        ids = submit(chaos.members[1], "record", JOBS)
        (chaos.folder / "release").touch()  # the holds end, the locked one's outcome waits
        time.sleep(max(0.0, 3 * lease - (time.monotonic() - began)))
        operator.rollback()
    chaos.check_and_stop(ids + holds, twice=frozenset({locked}))
    starts = Counter(job_id for _, job_id, *_ in lines(chaos.folder, "start"))
    assert all(starts[h] == 1 for h in holds[1:]), starts


def test_a_member_whose_clock_runs_a_minute_ahead_takes_no_running_job(chaos: Chaos) -> None:
    """Two members run seven long jobs (the default 30 s lease); a third,
    its clock 60 s ahead, joins and runs its share of the other jobs but
    takes none of the running ones (leases are the server's clock)."""
    normal = chaos.start(2, "--workers", "16")
    holds = submit(normal[0], "hold", 7)
    wait_for("the 7 holds started", lambda: len(lines(chaos.folder, "start")) == 7)
    (ahead,) = chaos.start(1, "--workers", "16", ahead=60.0)
    ids = submit(ahead, "record", JOBS)
    wait_for("every record job ran", lambda: ran(chaos) >= JOBS, timeout=120)
    # Several takeover looks of the member ahead (one a second) while the
    # holds still run, any of which would have taken them: a chance to fail,
    # not a synchronisation.
    time.sleep(3.0)
    (chaos.folder / "release").touch()
    chaos.check_and_stop(ids + holds)
    starts = lines(chaos.folder, "start")
    assert sorted((job_id, attempt) for _, job_id, attempt, _, _ in starts) == sorted(
        (h, 1) for h in holds
    )
    assert ahead.pid not in {pid for _, _, _, pid, _ in starts}
    assert ahead.pid in {pid for _, _, _, pid, _ in lines(chaos.folder, "run")}
