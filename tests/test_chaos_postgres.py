"""A fleet on PostgreSQL while the database misbehaves (issue 20): three
member processes (tests/chaos_member.py, which is tests/fleet_member.py)
reach the server through a TCP proxy the test runs (tests/tcpproxy.py),
which cuts their connections and refuses new ones (for 5 s, and for 60 s:
three leases); or the server ends their connections
(``pg_terminate_backend``); or an operator holds a row lock for three
leases; or one member's clock runs a minute ahead; or one member is
stopped (SIGSTOP) for three leases.

In each: every job completes once (its one stored outcome is its last
attempt's), no member exits, and a member that met the outage logged it.
Where no lease ran out, each job ran exactly once (but the one row an
operator locked: its outcome cannot be written under the lock, and its
lease lapses). Where leases ran out (the minute's outage, the stopped
member), the jobs whose leases lapsed may run twice (at least once, the
contract's word for a lost lease), never more, and the tests count them.
``JOBSCHED_CHAOS_JOBS`` sets the jobs per scenario (default 2,000, the
issue's figure).

Every wait is on a state (a log line, the store, a process) with a generous
bound; the sleeps are the outages' own lengths.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator
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
#: The long outage's seconds: three of its scenario's leases.
LONG_OUTAGE = 60.0
#: What the members' connections are called, to find them on the server.
APP = "jobsched-chaos-member"
#: A password in the members' URL (the server's trust auth never asks for
#: it), which no log line may show.
PASSWORD = "chaos-password"


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
        via_proxy = proxy.url(url)
        if urlparse(via_proxy).password is None:
            via_proxy = via_proxy.replace("@", f":{PASSWORD}@", 1)
        self.via_proxy = f"{via_proxy}?application_name={APP}"
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

    def check_and_stop(
        self, ids: list[str], *, twice: frozenset[str] = frozenset(), stale: int | None = None
    ) -> None:
        """Each of ``ids`` completed, and ran once (those in ``twice``, and
        with ``stale`` a member's pid, those that member ran too: at most
        twice); nobody logged an internal error; each member stops, 0.

        The members stop first, so that the runs are counted once no more
        can start: a member resumed after its lease ran out may still start
        a job it had claimed before (its outcome is fenced off) while the
        others finish the rest."""
        self.join()
        codes = [member.stop() for member in self.members]
        ran = runs(self)
        times = Counter({job_id: len(r) for job_id, r in ran.items()})
        assert set(ids) <= set(times), sorted(set(ids) - set(times))[:5]

        def allowed(job_id: str) -> int:
            if job_id in twice or any(pid == stale for _, pid in ran[job_id]):
                return 2
            return 1

        again = {i: n for i, n in times.items() if i in ids and n > allowed(i)}
        assert not again, [(i, ran[i]) for i in list(again)[:5]]
        assert self.statuses() == Counter({"completed": len(ids)}), self.statuses()
        for member in self.members:
            said = member.said()
            assert "internal error" not in said, said[-3000:]
            assert "InvalidTransitionError" not in said, said[-3000:]
        assert codes == [0] * len(codes), [m.said()[-3000:] for m in self.members]

    def stored(self, ids: Iterable[str]) -> dict[str, tuple[str, int, object]]:
        """Each job's stored (status, attempts, result), read through a member."""
        out = {}
        for job_id in ids:
            job = self.members[0].fetch(job_id)
            out[job_id] = (job["status"], job["attempts"], job["result"])
        return out

    def statuses_of(self, ids: Iterable[str]) -> Counter[str]:
        numbers = ",".join(job_id.removeprefix("job-") for job_id in ids)
        rows = self.sql(
            f"SELECT status, count(*) FROM jobsched_jobs WHERE id IN ({numbers}) GROUP BY status"
        )
        return Counter({str(status): int(str(n)) for status, n in rows})

    def lost_attempts(self) -> Counter[str]:
        """How many attempts of each job ended "worker lost" (a lease ran out)."""
        rows = self.sql("SELECT job_id FROM jobsched_attempts WHERE error = 'worker lost'")
        return Counter(f"job-{job_id}" for (job_id,) in rows)

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
    connected = (
        "SELECT count(*) FROM pg_stat_activity "
        f"WHERE application_name = '{APP}' AND datname = current_database()"
    )
    terminate = (
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        f"WHERE application_name = '{APP}' AND datname = current_database()"
    )
    for share in (10, 4, 2):
        wait_for(f"1/{share} of the jobs ran", lambda s=share: ran(chaos) >= JOBS // s, timeout=120)
        # The pools reconnect after the last round: wait until they have (on
        # a fast run the next share comes before the backoff is over).
        wait_for(
            "the members connected again",
            lambda: int(str(chaos.sql(connected)[0][0])) > 0,
            timeout=60,
        )
        # Counted a moment ago, a connection may be gone by now (the pool
        # hands back one it found dead): end every one there is once some are.
        wait_for("a member connection to end", lambda: bool(chaos.sql(terminate)), timeout=60)
    chaos.check_and_stop(ids)
    # A connection ended while idle is replaced before use, without an
    # outage; one ended under a statement may cost one: never more than
    # one per round, and never a line from psycopg's pool.
    for member in chaos.members:
        warned = warnings_of(member)
        assert len(warned) <= 3, warned
        assert all(line.startswith("WARNING jobsched:") for line in warned), warned


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


def warnings_of(member: ChaosMember) -> list[str]:
    """The lines a member logged at WARNING and above, on any logger."""
    return [
        line
        for line in member.said().splitlines()
        if line.startswith(("WARNING ", "ERROR ", "CRITICAL "))
    ]


#: A database that refuses a value of its own (a DBA's check, say), as a data
#: exception (class 22): any update of a job whose last error says POISON.
#: Unlike NUL, no scheduler's care for text can keep it from the store.
REFUSE_POISON = """
CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.last_error LIKE '%POISON%' THEN
        RAISE EXCEPTION 'this database refuses the word' USING ERRCODE = '22023';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER refuse_poison BEFORE UPDATE ON jobsched_jobs
    FOR EACH ROW EXECUTE FUNCTION refuse_poison();
"""


def test_poison_jobs_among_2000_stop_no_member(chaos: Chaos) -> None:
    """Among 2,000 jobs, one whose error holds a NUL and one whose error the
    database refuses (REFUSE_POISON), each failing every attempt: no member
    exits, each poison job ends FAILED after its retries (4 attempts) with
    no NUL stored (replaced before the store, or the store's refusal named
    instead), and the 2,000 complete, each once."""
    chaos.start(3, "--workers", "16", "--lease", "20")
    chaos.sql(REFUSE_POISON)
    nul = submit(chaos.members[1], "nul", 1)
    ids = submit(chaos.members[0], "record", JOBS)
    poison = submit(chaos.members[2], "poison", 1)
    chaos.join()
    codes = [member.stop() for member in chaos.members]
    assert codes == [0, 0, 0], [m.said()[-3000:] for m in chaos.members]
    assert chaos.statuses_of(ids) == Counter({"completed": JOBS})
    times = Counter({job_id: len(r) for job_id, r in runs(chaos).items()})
    assert set(times) == set(ids) and set(times.values()) == {1}
    for job_id in nul + poison:
        number = job_id.removeprefix("job-")
        ((status, attempts, error),) = chaos.sql(
            f"SELECT status, attempts, last_error FROM jobsched_jobs WHERE id = {number}"
        )
        assert (status, attempts) == ("failed", 4), (job_id, status, attempts, error)
        assert isinstance(error, str) and "\x00" not in error
        if job_id in poison:
            assert error.startswith("the store refused this attempt's outcome"), error
            assert "this database refuses the word" in error
    for member in chaos.members:
        said = member.said()
        assert "a bug in jobsched" not in said and "internal error" not in said, said[-3000:]


def test_a_database_read_only_for_ten_seconds(chaos: Chaos) -> None:
    """``default_transaction_read_only`` on for 10 s (every session ended),
    then off (the members recycle their read-only sessions themselves): no
    member exits, each logs one WARNING and one INFO in all (on every
    logger: psycopg's pool's too), and every job completes once."""
    chaos.start(3, "--workers", "16", "--lease", "20")
    ids = submit(chaos.members[0], "record", JOBS)
    wait_for("a tenth of the jobs ran", lambda: ran(chaos) >= JOBS // 10, timeout=120)
    name = chaos.direct.rpartition("/")[2]
    with psycopg.connect(pg.ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'ALTER DATABASE "{name}" SET default_transaction_read_only = on')
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> pg_backend_pid()",
            (name,),
        )
        began = time.monotonic()
        wait_for(
            "every member met the read-only database",
            lambda: all("is unavailable (" in m.said() for m in chaos.members),
            timeout=60,
        )
        time.sleep(max(0.0, 10.0 - (time.monotonic() - began)))
        admin.execute(f'ALTER DATABASE "{name}" SET default_transaction_read_only = off')
    # Each member's next try after its backoff finds the database back; the
    # others may drain every job before that.
    wait_for(
        "every member found the database back",
        lambda: all("is back after" in m.said() for m in chaos.members),
        timeout=120,
    )
    chaos.check_and_stop(ids)
    for member in chaos.members:
        warned = warnings_of(member)
        assert len(warned) == 1, warned
        assert warned[0].startswith("WARNING jobsched: the store"), warned
        back = [line for line in member.said().splitlines() if "is back after" in line]
        assert len(back) == 1, member.said()[-3000:]


def runs(chaos: Chaos) -> dict[str, list[tuple[int, int]]]:
    """Each job's runs (a record's ``run``, a hold's ``start``): (attempt, pid)."""
    out: dict[str, list[tuple[int, int]]] = {}
    for _, job_id, attempt, pid, _ in lines(chaos.folder, "run") + lines(chaos.folder, "start"):
        out.setdefault(job_id, []).append((attempt, pid))
    return out


def assert_last_attempt_stored(chaos: Chaos, ids: Iterable[str], stale: int | None = None) -> None:
    """Fencing: the outcome stored for each of ``ids`` is its last attempt's
    (a record returns its member's pid, a hold ``"PID:ATTEMPT"``), whoever
    wrote last. A job whose start a member never committed (an outage, a
    stop) went back to the store uncounted and ran again under the same
    number (on another member, or on the same one, which claimed it again):
    one of those runs is stored, never two; with ``stale``, the member that
    was stopped, whose run it is not."""
    ran_by = runs(chaos)
    for job_id, (status, attempts, result) in chaos.stored(ids).items():
        assert status == "completed", (job_id, status)
        last = [pid for attempt, pid in ran_by[job_id] if attempt == attempts]
        if len(last) > 1 and stale is not None:
            last = [pid for pid in last if pid != stale]
        assert last, (job_id, attempts, ran_by[job_id])
        stored = {value for pid in last for value in (pid, f"{pid}:{attempts}")}
        assert result in stored, (job_id, result, ran_by[job_id])


def test_connections_refused_for_a_minute_three_leases(chaos: Chaos) -> None:
    """The proxy resets every connection and refuses new ones for 60 s, three
    leases (20 s): no member exits; each logs the outage once as it starts
    (a WARNING) and once as it ends (an INFO), its URL masked; every job
    completes, its one stored outcome its last attempt's (fencing: a job
    whose lease ran out in the outage may run twice, at least once, but
    never completes twice); jobs submitted after the outage run too."""
    lease = LONG_OUTAGE / 3
    chaos.start(3, "--workers", "16", "--lease", str(lease))
    holds = submit(chaos.members[2], "hold", 6)
    wait_for("the 6 holds started", lambda: len(lines(chaos.folder, "start")) == 6)
    later = JOBS // 4
    ids = submit(chaos.members[0], "record", JOBS - later)
    wait_for("a tenth of the jobs ran", lambda: ran(chaos) >= JOBS // 10, timeout=120)
    chaos.proxy.refuse()
    cut = time.monotonic()
    # The holds end in the outage, after their leases ran out: outcomes that
    # wait for the store while the other members may take those jobs over.
    time.sleep(LONG_OUTAGE / 2)
    (chaos.folder / "release").touch()
    time.sleep(LONG_OUTAGE / 2)
    chaos.proxy.accept()
    wait_for(
        "every member logged that the store is back",
        lambda: all("is back after" in m.said() for m in chaos.members),
        timeout=60,
    )
    ids += submit(chaos.members[1], "record", later)
    chaos.join()
    ran_by = runs(chaos)
    again = {i for i in ids + holds if len(ran_by.get(i, [])) > 1}
    thrice = {i: ran_by[i] for i in again if len(ran_by[i]) > 2}
    assert not thrice, (
        len(thrice),
        list(thrice.items())[:5],
        chaos.stored(list(thrice)[:5]),
        chaos.sql(
            "SELECT job_id, attempt, owner, status, error FROM jobsched_attempts "
            f"WHERE job_id IN ({','.join(i.removeprefix('job-') for i in list(thrice)[:5])})"
        ),
        [(m.pid, m.said()[-3000:]) for m in chaos.members],
    )
    retried = {
        str(i) for (i,) in chaos.sql("SELECT 'job-' || id FROM jobsched_jobs WHERE attempts > 1")
    }
    assert_last_attempt_stored(chaos, again | retried | set(holds))
    after = sum(1 for _, _, _, _, at in lines(chaos.folder, "run") if at > cut + LONG_OUTAGE)
    assert after >= later, (after, later)
    chaos.check_and_stop(ids + holds, twice=frozenset(ids + holds))
    for member in chaos.members:
        said = member.said()
        assert PASSWORD not in said, said[-3000:]
        warned = [line for line in said.splitlines() if "is unavailable (" in line]
        back = [line for line in said.splitlines() if "is back after" in line]
        assert len(warned) == 1 and warned[0].startswith("WARNING "), warned
        assert f":***@127.0.0.1:{chaos.proxy.port}/" in warned[0], warned[0]
        assert len(back) == 1 and back[0].startswith("INFO "), back
    lost = chaos.lost_attempts()
    print(
        f"\n{JOBS} jobs, lease {lease:g} s, outage {LONG_OUTAGE:g} s: {len(again)} ran twice,"
        f" ({len(again & set(holds))} of the 6 holds), {len(retried)} with 2+ attempts,"
        f" {sum(lost.values())} attempts 'worker lost';"
        f" {[b for m in chaos.members for b in m.said().splitlines() if 'is back after' in b]}"
    )


def test_a_member_stopped_for_three_leases_loses_its_jobs_and_writes_no_outcome(
    chaos: Chaos,
) -> None:
    """SIGSTOP one member mid-run for three leases (5 s), then SIGCONT: the
    others take its jobs over after its lease ("worker lost"; those run at
    least once, the newer attempt on another member), the outcomes it writes
    when it resumes are refused (each job's stored outcome is its last
    attempt's: fencing), it does not exit, and every job completes."""
    lease = 5.0
    chaos.start(3, "--workers", "16", "--lease", str(lease))
    holds = submit(chaos.members[0], "hold", 12)
    wait_for("the 12 holds started", lambda: len(lines(chaos.folder, "start")) == 12)
    by_member = Counter(pid for _, _, _, pid, _ in lines(chaos.folder, "start"))
    victim = next(m for m in chaos.members if m.pid == by_member.most_common(1)[0][0])
    others = [m for m in chaos.members if m is not victim]
    held = {job_id for _, job_id, _, pid, _ in lines(chaos.folder, "start") if pid == victim.pid}
    ids = submit(others[0], "record", JOBS)
    wait_for("a tenth of the jobs ran", lambda: ran(chaos) >= JOBS // 10, timeout=120)
    victim.process.send_signal(signal.SIGSTOP)
    stopped = time.monotonic()

    def taken_over() -> bool:
        again = {(i, a) for _, i, a, pid, _ in lines(chaos.folder, "start") if pid != victim.pid}
        return all((h, 2) in again for h in held)

    wait_for("the stopped member's holds started again elsewhere", taken_over, timeout=120)
    (chaos.folder / "release-2").touch()
    wait_for(
        "their newer attempts stored completed",
        lambda: chaos.statuses_of(held) == Counter({"completed": len(held)}),
        timeout=60,
    )
    time.sleep(max(0.0, 3 * lease - (time.monotonic() - stopped)))
    (chaos.folder / "release").touch()  # the stale attempts end, if they still run
    victim.process.send_signal(signal.SIGCONT)
    chaos.join()

    ran_by = runs(chaos)
    again = {i for i, r in ran_by.items() if len(r) > 1}
    for job_id in again:
        # Its attempt 1 on the stopped member (before the stop, or after
        # it, a job it still held), and one on another member: attempt 2,
        # or 1 again where the stopped member's start was never committed
        # (no attempt in the store: the job went back uncounted).
        assert len(ran_by[job_id]) == 2, (job_id, ran_by[job_id])
        by_pid = {pid: attempt for attempt, pid in ran_by[job_id]}
        assert by_pid.pop(victim.pid, None) == 1, (job_id, ran_by[job_id])
        assert list(by_pid.values()) in ([1], [2]), (job_id, ran_by[job_id])
    retried = {
        str(i) for (i,) in chaos.sql("SELECT 'job-' || id FROM jobsched_jobs WHERE attempts > 1")
    }
    assert held <= retried, (held, retried)
    assert_last_attempt_stored(chaos, again | retried | set(holds), stale=victim.pid)
    lost = chaos.lost_attempts()
    assert set(lost) == retried, set(lost) ^ retried
    owners = chaos.sql("SELECT DISTINCT owner FROM jobsched_attempts WHERE error = 'worker lost'")
    assert len(owners) == 1, owners
    chaos.check_and_stop(ids + holds, twice=frozenset(again), stale=victim.pid)
    stale = Counter(
        kind
        for kind, job_id, _, pid, _ in lines_of(chaos, "end", "cancelled")
        if pid == victim.pid and job_id in held
    )
    print(
        f"\n{JOBS} jobs, lease {lease:g} s: {len(held)} holds and {len(retried) - len(held)}"
        f" records taken over ('worker lost'), {len(again)} ran twice; the stale holds: {stale}"
    )


def lines_of(chaos: Chaos, *kinds: str) -> list[tuple[str, str, int, int, float]]:
    return [line for kind in kinds for line in lines(chaos.folder, kind)]
