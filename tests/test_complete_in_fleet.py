"""``complete_in`` across a fleet of real member processes on PostgreSQL
(tests/txn_member.py running tests/txn_jobs.py's app), each job inserting a
row of its own into an app table and completing in the same transaction:

- 500 such jobs on three members while one member is ``kill -9``ed and then
  every member connection is ended by the server (``pg_terminate_backend``):
  the table holds exactly 500 rows, one per job, and each job is COMPLETED
  once, with the result of the attempt whose row committed.
- A member paused (SIGSTOP) past its lease while its job holds its
  transaction open: another member takes the job over and completes it;
  resumed, the paused job's complete_in raises LeaseLostError, its row rolls
  back, and the newer attempt's outcome stands.

Every wait is on a state (a log line, the store, a table) with a generous bound.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pg
import psycopg
import pytest
import txn_jobs
from test_fleet import TESTS, Member, wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.timeout(300)]

#: Jobs in the exactly-once test.
JOBS = 500
#: What the members' connections (their store's and their jobs') are called on the server.
APP = "jobsched-complete-in-member"
TABLE = "app_rows"


class TxnMember(Member):
    """A member of tests/txn_member.py; its stderr (WARNINGs and worse) in a file."""

    def __init__(self, url: str, folder: Path, *flags: str, app: str) -> None:
        # The application_name of its connections, the jobs' it runs too
        # (libpq's PGAPPNAME: their URL is the submitter's).
        self.app = app
        self.log = folder / f"member-{len(list(folder.glob('member-*.log')))}.log"
        self._stderr = self.log.open("w")
        self.process = subprocess.Popen(
            [sys.executable, str(TESTS / "txn_member.py"), url, url, TABLE, str(folder), *flags],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            env={**os.environ, "PYTHONPATH": str(TESTS), "PGAPPNAME": app},
        )
        self._start_reader()

    def _start_reader(self) -> None:
        import queue
        import threading

        self.lines = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.pid = self.process.pid

    def said(self) -> str:
        return self.log.read_text()

    def kill(self) -> None:
        super().kill()
        self._stderr.close()


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[tuple[str, list[TxnMember]]]:
    """A fresh database with the app's table (its URL, for the test's own
    connections), and the members started on it."""
    members: list[TxnMember] = []
    with pg.database() as url:
        txn_jobs.create_table(url, TABLE)
        try:
            yield url, members
        finally:
            for member in members:
                member.kill()


def start(url: str, folder: Path, members: list[TxnMember], count: int, *flags: str) -> None:
    """``count`` members, each one's connections (its jobs' too) named
    APP-<n>, its ``app``: the test can tell when a killed one's are gone."""
    started = [
        TxnMember(url, folder, *flags, app=f"{APP}-{n}")
        for n in range(len(members), len(members) + count)
    ]
    for member in started:  # started together, so their imports overlap
        member.ready()
    members += started


def sql(url: str, statement: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        cursor = conn.execute(statement, params or None)
        return cursor.fetchall() if cursor.description else []


def count_rows(url: str) -> int:
    return int(sql(url, f"SELECT count(*) FROM {TABLE}")[0][0])


def stored(url: str) -> dict[str, tuple[str, int, Any]]:
    """Each job's (status, attempts, result as JSON): registered jobs' results are JSON."""
    rows = sql(
        url,
        "SELECT id, status, attempts, "
        "convert_from(substring(result from 2), 'UTF8')::jsonb FROM jobsched_jobs",
    )
    return {f"job-{row[0]}": row[1:] for row in rows}


def test_500_jobs_complete_exactly_once_through_a_kill_and_a_reset(
    fleet: tuple[str, list[TxnMember]], tmp_path: Path
) -> None:
    """Three members run 500 jobs that each insert a row and complete in
    that transaction; one member is killed (SIGKILL) mid-run, then the
    server ends every member connection, the jobs' own too. Exactly 500
    rows, one per job, and every job COMPLETED with the result of the
    attempt whose row is there; the survivors stop cleanly."""
    url, members = fleet
    start(url, tmp_path, members, 3)
    ids = members[0].ask(f"submit once {JOBS}", timeout=120).split()
    assert len(set(ids)) == JOBS
    victim = members[1]
    # A job it claimed ahead and had not started yet is handed back
    # uncounted, not lost: kill it while a start of its is in the store.
    started = (
        "SELECT count(*) FROM jobsched_jobs WHERE status = 'running' "
        "AND started_at IS NOT NULL AND owner LIKE %s"
    )
    owned = f"%:{victim.pid}:%"
    wait_for(
        "the member to kill committed jobs and has one started",
        lambda: (
            sql(url, f"SELECT count(*) FROM {TABLE} WHERE pid = %s", victim.pid)[0][0] >= 10
            and sql(url, started, owned)[0][0] >= 1
        ),
        timeout=120,
    )
    os.kill(victim.pid, signal.SIGKILL)
    victim.process.wait(timeout=30)
    # A COMMIT the member sent as it died still lands: the server ends its
    # sessions only when it next reads from them.
    gone = "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s"
    wait_for("the killed member's sessions to end", lambda: not sql(url, gone, victim.app)[0][0])
    # What it had started and not ended when it died (it may have ended the
    # one seen above in between): each is an attempt the others take over.
    taken = sql(url, started, owned)[0][0]
    wait_for("half the jobs committed", lambda: count_rows(url) >= JOBS // 2, timeout=120)
    terminate = (
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        f"WHERE application_name LIKE '{APP}-%' AND datname = current_database()"
    )
    wait_for("a member connection to end", lambda: bool(sql(url, terminate)), timeout=60)
    assert members[0].ask("join", timeout=240) == "joined"
    codes = [member.stop() for member in (members[0], members[2])]
    assert codes == [0, 0], [m.said()[-3000:] for m in members]

    rows = sql(url, f"SELECT job_id, attempt, pid FROM {TABLE}")
    assert len(rows) == JOBS
    by_job = {job_id: (attempt, pid) for job_id, attempt, pid in rows}
    assert sorted(by_job) == sorted(ids)
    jobs = stored(url)
    assert {job_id: status for job_id, (status, _, _) in jobs.items()} == dict.fromkeys(
        ids, "completed"
    )
    for job_id in ids:
        attempt, pid = by_job[job_id]
        _, attempts, result = jobs[job_id]
        assert (attempts, result["attempt"], result["pid"]) == (attempt, attempt, pid), job_id
    # The kill landed mid-run: attempts of the dead member were taken over.
    lost = sql(url, "SELECT count(*) FROM jobsched_attempts WHERE error = 'worker lost'")
    assert lost[0][0] >= taken
    for member in (members[0], members[2]):
        said = member.said()
        assert "internal error" not in said and "a bug in jobsched" not in said, said[-3000:]


def test_a_member_paused_past_its_lease_cannot_complete(
    fleet: tuple[str, list[TxnMember]], tmp_path: Path
) -> None:
    """A member stopped (SIGSTOP) while its job holds an insert in an open
    transaction; its lease runs out, a second member takes the job over and
    completes attempt 2. Resumed, the first job's complete_in raises
    LeaseLostError: its insert rolls back, and the store keeps attempt 2's
    completion."""
    url, members = fleet
    start(url, tmp_path, members, 1, "--lease", "2")
    (paused,) = members
    (job_id,) = paused.ask("submit held 1").split()
    log = tmp_path / "log"
    wait_for("attempt 1 started", lambda: log.exists() and "start" in log.read_text())
    try:
        pause_between_transactions(url, paused)
        start(url, tmp_path, members, 1, "--lease", "2")
        wait_for(
            "attempt 2 completed elsewhere",
            lambda: stored(url)[job_id][0] == "completed",
            timeout=120,
        )
        (tmp_path / "go").touch()
    finally:
        os.kill(paused.pid, signal.SIGCONT)
    lost = wait_for(
        "the paused job's LeaseLostError",
        lambda: [line for line in log.read_text().splitlines() if line.startswith("lost ")],
        timeout=60,
    )
    codes = [member.stop() for member in members]
    assert codes == [0, 0], [m.said()[-3000:] for m in members]

    (line,) = lost
    assert line.startswith(f"lost {job_id} 1 {paused.pid} {job_id} ('txn.held'): attempt 1 ")
    assert "roll your transaction back" in line
    takeover = members[1]
    assert sql(url, f"SELECT job_id, attempt, pid FROM {TABLE}") == [(job_id, 2, takeover.pid)]
    assert stored(url)[job_id] == (
        "completed",
        2,
        {"tag": "0", "attempt": 2, "pid": takeover.pid},
    )


def pause_between_transactions(url: str, member: TxnMember) -> None:
    """SIGSTOP ``member`` at a moment when none of its store's sessions is
    inside a transaction: one stopped there (a heartbeat between its UPDATE
    and its COMMIT) would hold its rows' locks for as long as it stays
    stopped, and no other member could take its job over. Its job's own
    session is in its transaction, as it should be."""
    busy = (
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s "
        "AND state <> 'idle' AND query NOT LIKE 'INSERT INTO app_rows%%'"
    )
    for _ in range(1000):
        os.kill(member.pid, signal.SIGSTOP)
        if not sql(url, busy, member.app)[0][0]:
            return
        os.kill(member.pid, signal.SIGCONT)
        time.sleep(0.005)  # let it finish what it was doing, then try again
    raise AssertionError("the member's store sessions were never all idle")
