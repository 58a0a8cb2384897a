"""A fleet on PostgreSQL, with real processes: members (tests/fleet_member.py)
share one fresh database, and what ran where is read from the jobs' log lines
(tests/fleet_jobs.py) and from the store.

Every wait is on a state (a log line, a job's stored status, a process's
exit) with a generous bound; nothing sleeps to synchronise.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pg
import pytest
from fleet_jobs import parse

# Each member is a fresh interpreter that imports jobsched and connects: a
# second on a quiet machine, several under load; the bound leaves room for it.
pytestmark = [pytest.mark.postgres, pytest.mark.timeout(120)]

TESTS = Path(__file__).resolve().parent
#: Jobs in the run-once test: thousands, and bigger claims (16 workers a
#: member) so that a loaded machine still runs them in seconds.
COUNT = 2000


class Member:
    """A member process and its command line protocol (see tests/fleet_member.py)."""

    def __init__(self, url: str, folder: Path, *flags: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(TESTS / "fleet_member.py"), url, str(folder), *flags],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(TESTS)},
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.pid = self.process.pid

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.strip())
        self.lines.put("")  # the process ended

    def answer(self, timeout: float = 30) -> str:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"member {self.pid} said nothing for {timeout} s") from None
        assert line, f"member {self.pid} ended (exit {self.process.poll()})"
        return line

    def ready(self) -> None:
        assert self.answer(60) == f"ready {self.pid}"

    def ask(self, command: str, timeout: float = 30) -> str:
        assert self.process.stdin is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        return self.answer(timeout)

    def fetch(self, job_id: str) -> dict[str, Any]:
        return json.loads(self.ask(f"fetch {job_id}"))  # type: ignore[no-any-return]

    def stop(self) -> int:
        """End its input (it stops cleanly); its exit status."""
        if self.process.stdin is not None and not self.process.stdin.closed:
            self.process.stdin.close()
        return self.process.wait(timeout=30)

    def kill(self) -> None:
        """Whatever state it is in (stopped too), end it and close its pipes."""
        if self.process.poll() is None:
            os.kill(self.pid, signal.SIGCONT)
            self.process.kill()
        self.process.wait(timeout=30)
        self.reader.join(timeout=30)
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()


def _start(url: str, folder: Path, flag_sets: tuple[tuple[str, ...], ...]) -> list[Member]:
    """One member per set of command-line flags, started together."""
    members = [Member(url, folder, *flags) for flags in flag_sets]
    for member in members:  # started together, so their imports overlap
        member.ready()
    return members


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[Callable[..., list[Member]]]:
    """Starts members on one fresh database; kills whatever is left at the end."""
    started: list[Member] = []
    with pg.database() as url:

        def start(*flag_sets: tuple[str, ...]) -> list[Member]:
            members = _start(url, tmp_path, flag_sets)
            started.extend(members)
            return members

        try:
            yield start
        finally:
            for member in started:
                member.kill()


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Member]]:
    """Three members for the tests that neither kill them nor change their
    configuration (a member's start is most of such a test's time): two with
    the ``special`` executor, one without; 16 workers each."""
    members: list[Member] = []
    with pg.database() as url:
        try:
            members += _start(
                url,
                tmp_path_factory.mktemp("shared"),
                (("--special", "--workers", "16"),) * 2 + (("--workers", "16"),),
            )
            yield members
        finally:
            for member in members:
                member.kill()


def wait_for(what: str, condition: Callable[[], Any], timeout: float = 30) -> Any:
    """Poll ``condition`` (a log file, the store) until it is truthy; its value."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(0.01)
    return value


def lines(tmp_path: Path, kind: str) -> list[tuple[str, str, int, int, float]]:
    return [line for line in parse(tmp_path / "log") if line[0] == kind]


def test_thousands_of_jobs_each_run_once_spread_across_three_members(
    shared: list[Member], tmp_path: Path
) -> None:
    """2,000 jobs submitted on one member run exactly once each, on all three."""
    members = shared
    assert members[0].ask(f"use {tmp_path}") == "ok"
    ids = members[0].ask(f"submit record {COUNT}").split()
    assert len(set(ids)) == COUNT
    assert members[1].ask("join", timeout=60) == "joined"

    runs = lines(tmp_path, "run")
    times = Counter(job_id for _, job_id, _, _, _ in runs)
    assert set(times) == set(ids)
    assert max(times.values()) == 1, [i for i, n in times.items() if n > 1][:5]
    assert {attempt for _, _, attempt, _, _ in runs} == {1}
    per_member = Counter(pid for _, _, _, pid, _ in runs)
    assert set(per_member) == {m.pid for m in members}, per_member  # each ran some
    for job_id in ids[:: len(ids) // 10]:
        stored = members[2].fetch(job_id)
        assert (stored["status"], stored["attempts"]) == ("completed", 1), stored


def test_a_killed_member_s_running_jobs_run_again_and_only_those(
    fleet: Callable[..., list[Member]], tmp_path: Path
) -> None:
    """SIGKILL a member mid-run: every job still completes; only the killed
    member's jobs get a second attempt, on the others, after its lease."""
    members = fleet(*[("--lease", "3")] * 3)
    ids = members[0].ask("submit hold 9").split()
    wait_for("all 9 jobs started", lambda: len(lines(tmp_path, "start")) == 9)
    # And their starts committed: a start the store never saw is no attempt
    # (the job would go back uncounted and run again as attempt 1).
    wait_for("their starts committed", lambda: all(members[0].fetch(i)["started"] for i in ids))
    by_member = Counter(pid for _, _, _, pid, _ in lines(tmp_path, "start"))
    victim = next(m for m in members if m.pid == by_member.most_common(1)[0][0])
    lost = {job_id for _, job_id, _, pid, _ in lines(tmp_path, "start") if pid == victim.pid}
    victim.process.send_signal(signal.SIGKILL)
    victim.process.wait(timeout=30)
    (tmp_path / "release").touch()

    survivor = next(m for m in members if m is not victim)
    assert survivor.ask("join", timeout=50) == "joined"
    starts = lines(tmp_path, "start")
    for job_id in ids:
        stored = survivor.fetch(job_id)
        attempts = [(attempt, pid) for _, i, attempt, pid, _ in starts if i == job_id]
        assert stored["status"] == "completed", stored
        if job_id in lost:
            assert stored["attempts"] == 2, stored
            assert attempts[0] == (1, victim.pid)
            assert attempts[1][0] == 2 and attempts[1][1] != victim.pid, attempts
            assert len(attempts) == 2
        else:
            assert stored["attempts"] == 1, stored
            assert len(attempts) == 1, attempts
    ended = [(i, attempt) for _, i, attempt, _, _ in lines(tmp_path, "end")]
    assert sorted(ended) == sorted((i, 2 if i in lost else 1) for i in ids)


def test_a_member_stopped_past_its_lease_cannot_record_over_the_newer_attempt(
    fleet: Callable[..., list[Member]], tmp_path: Path
) -> None:
    """SIGSTOP the member running a job until another has run it again, then
    SIGCONT and let the first attempt finish: the stored outcome stays the
    newer attempt's (fencing on owner and attempt)."""
    members = fleet(*[("--lease", "2", "--workers", "1")] * 2)
    (job_id,) = members[0].ask("submit hold 1").split()
    _, _, _, first_pid, _ = wait_for("the job started", lambda: lines(tmp_path, "start"))[0]
    stale = next(m for m in members if m.pid == first_pid)
    other = next(m for m in members if m is not stale)
    # Its start committed first: a start still on its way to the store makes
    # the takeover hand the job back uncounted, and the next run is attempt 1
    # again (claims ahead are not attempts), which is not this test's case.
    wait_for("the start stored", lambda: other.fetch(job_id)["started"])
    stale.process.send_signal(signal.SIGSTOP)

    wait_for("a second attempt", lambda: len(lines(tmp_path, "start")) == 2)
    (tmp_path / "release-2").touch()
    newer = wait_for(
        "the second attempt's outcome stored",
        lambda: (job := other.fetch(job_id))["status"] == "completed" and job,
    )
    assert newer["result"] == f"{other.pid}:2", newer

    (tmp_path / "release-1").touch()  # the stale attempt may now finish, if it still runs
    stale.process.send_signal(signal.SIGCONT)
    assert stale.stop() == 0  # its stop flushes whatever outcome it has
    final = other.fetch(job_id)
    assert (final["status"], final["attempts"], final["result"]) == (
        "completed",
        2,
        f"{other.pid}:2",
    ), final
    starts = [(attempt, pid) for _, _, attempt, pid, _ in lines(tmp_path, "start")]
    assert starts == [(1, stale.pid), (2, other.pid)]


def test_each_fire_time_of_a_stored_schedule_makes_one_job_across_members(
    fleet: Callable[..., list[Member]], tmp_path: Path
) -> None:
    """Three members register the same stored schedule: its fires come once
    per interval, not once per member."""
    interval = 0.2
    members = fleet(*[("--tick", str(interval))] * 3)
    wait_for("ten fires", lambda: len(lines(tmp_path, "run")) >= 10)
    for member in members:  # all at once: no member fires alone at the end
        assert member.process.stdin is not None
        member.process.stdin.close()
    assert [member.stop() for member in members] == [0, 0, 0]
    runs = lines(tmp_path, "run")
    assert len({job_id for _, job_id, _, _, _ in runs}) == len(runs)
    times = sorted(at for _, _, _, _, at in runs)
    fires = (times[-1] - times[0]) / interval + 1
    # One job per fire time, give or take one at each end; three members
    # firing alike would make about three times as many.
    assert len(runs) <= fires + 2, (len(runs), fires)


def test_cancel_on_one_member_reaches_a_job_running_on_another(
    shared: list[Member], tmp_path: Path
) -> None:
    """``cancel`` on a member that doesn't run the job stops it where it runs."""
    members = shared
    assert members[0].ask(f"use {tmp_path}") == "ok"
    (job_id,) = members[0].ask("submit hold 1").split()
    _, _, _, runner, _ = wait_for("the job started", lambda: lines(tmp_path, "start"))[0]
    canceller = next(m for m in members if m.pid != runner)
    asked = time.monotonic()
    assert canceller.ask(f"cancel {job_id}") == "True"
    # The contract says within a second; the bound here is generous for a
    # loaded machine.
    (_, _, _, pid, at), *_ = wait_for(
        "the job cancelled where it runs", lambda: lines(tmp_path, "cancelled"), timeout=5
    )
    assert pid == runner
    assert at - asked < 5
    stored = wait_for(
        "the cancel stored",
        lambda: (job := canceller.fetch(job_id))["status"] == "cancelled" and job,
    )
    assert stored["attempts"] == 1


def test_a_fleet_wide_rate_limit_holds_across_members(
    fleet: Callable[..., list[Member]], tmp_path: Path
) -> None:
    """Three members, one bucket of 20 a second (burst 5) in the database:
    60 limited jobs take the fleet about 2.75 s, not a third of that."""
    rate, burst, count = 20.0, 5, 60
    members = fleet(*[("--rate", f"api={rate}/1/{burst}")] * 3)
    members[0].ask(f"submit record {count} api")
    assert members[1].ask("join", timeout=50) == "joined"
    runs = lines(tmp_path, "run")
    assert len(runs) == count
    starts = sorted(at for _, _, _, _, at in runs)
    # Each start is logged a little after its claim took the token; a slack
    # of 2 tokens absorbs that delay, never a second member's own bucket.
    for i in range(count):
        for j in range(i + 1, count):
            assert j - i + 1 <= burst + rate * (starts[j] - starts[i]) + 2, (i, j)
    assert starts[-1] - starts[0] >= 0.8 * (count - burst - 2) / rate
    assert len({pid for _, _, _, pid, _ in runs}) > 1  # the limit is the fleet's, not a member's


def test_a_member_without_an_executor_never_claims_its_jobs(
    shared: list[Member], tmp_path: Path
) -> None:
    """Jobs on the ``special`` executor run only on the two members that have it;
    the third, idle all along, never takes one."""
    *having, lacking = shared
    assert having[0].ask(f"use {tmp_path}") == "ok"
    ids = having[0].ask("submit special 40").split()
    assert lacking.ask("join", timeout=50) == "joined"
    runs = lines(tmp_path, "special")
    assert sorted(job_id for _, job_id, _, _, _ in runs) == sorted(ids)
    assert lacking.pid not in {pid for _, _, _, pid, _ in runs}
    assert lacking.fetch(ids[-1])["status"] == "completed"
    assert lacking.process.poll() is None
