"""benchmarks._cpu_per_job (issue 34): a cluster's CPU summed from /proc, the
figures per job per REV, and a tiny run end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def cpu(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(ROOT))
    from benchmarks import _cpu_per_job

    return _cpu_per_job


def _stat(pid: int, comm: str, ppid: int, utime: int, stime: int, cutime: int, cstime: int) -> str:
    # Fields 3-17 of /proc/PID/stat, then the rest (ignored).
    middle = ["S", ppid, 1, 1, 0, -1, 4194560, 10, 0, 0, 0, utime, stime, cutime, cstime]
    return f"{pid} ({comm}) {' '.join(map(str, middle))} 20 0 1 0 100 0 0\n"


def _fake_proc(tmp_path: Path, processes: list[tuple[int, str, int, int, int, int, int]]) -> Path:
    for pid, comm, *rest in processes:
        folder = tmp_path / str(pid)
        folder.mkdir()
        (folder / "stat").write_text(_stat(pid, comm, *rest))
        (folder / "comm").write_text(comm + "\n")
        (folder / "status").write_text(f"Name:\t{comm}\nState:\tS\nPid:\t{pid}\nPPid:\t{rest[0]}\n")
    (tmp_path / "self").mkdir()  # not a pid: skipped
    (tmp_path / "meminfo").write_text("MemTotal: 1 kB\n")
    (tmp_path / "999").mkdir()  # a process gone between the listing and its stat
    return tmp_path


def test_the_cluster_is_the_postmaster_with_its_reaped_and_live_children(
    cpu: ModuleType, tmp_path: Path
) -> None:
    proc = _fake_proc(
        tmp_path,
        [
            (100, "postgres", 1, 5, 3, 1000, 200),  # the postmaster: own 8, reaped 1200
            (101, "postgres", 100, 40, 2, 7, 7),  # a backend: its own 42 (no children)
            (102, "postgres: a) b", 100, 10, 0, 0, 0),  # a ")" in comm
            (200, "python", 1, 500, 500, 0, 0),  # not the cluster's
            (300, "sh", 101, 77, 0, 0, 0),  # a grandchild: not the postmaster's
        ],
    )
    assert cpu.cluster_ticks(100, proc) == 8 + 1200 + 42 + 10
    assert cpu.postmaster_of(101, proc) == 100
    assert cpu.postmaster_of(200, proc) is None  # not a PostgreSQL process
    assert cpu.postmaster_of(12345, proc) is None  # not on this machine
    with pytest.raises(ProcessLookupError):
        cpu.cluster_ticks(4242, proc)


def test_the_sum_counts_a_live_child_and_then_the_same_child_reaped(cpu: ModuleType) -> None:
    """On the real /proc, this process standing in for the postmaster: a child
    burning ~0.3 s of CPU is counted while it lives and, reaped, in cutime."""
    before = cpu.cluster_ticks(os.getpid())
    child = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time\nt = time.process_time()\n"
         "while time.process_time() - t < 0.3: pass\nprint('done', flush=True)\n"
         "sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert child.stdout is not None and child.stdout.readline() == "done\n"
    tick = os.sysconf("SC_CLK_TCK")
    live = cpu.cluster_ticks(os.getpid())
    assert live - before >= 0.25 * tick
    child.communicate("")
    reaped = cpu.cluster_ticks(os.getpid())
    assert reaped >= live  # moved from the live child to cutime, not lost


def test_the_summary_gives_figures_per_job_and_ratios_to_the_first_rev(cpu: ModuleType) -> None:
    runs = {
        "a": [{"jobs_per_s": 100.0, "client_us": 1000.0, "server_us": 500.0},
              {"jobs_per_s": 120.0, "client_us": 1200.0, "server_us": 700.0},
              {"error": "boom"}],
        "b": [{"jobs_per_s": 50.0, "client_us": 2000.0, "server_us": 600.0}],
    }  # fmt: skip
    a, b = cpu.summarize(["a", "b"], runs, jobs=10)
    assert (a["runs"], a["errors"]) == (2, 1)
    assert a["client_us_per_job"] == {"median": 110.0, "min": 100.0, "max": 120.0, "ratio": 1.0}
    assert a["server_us_per_job"]["median"] == 60.0
    assert a["total_us_per_job"]["median"] == 170.0
    assert b["client_us_per_job"]["ratio"] == pytest.approx(200 / 110)
    assert b["total_us_per_job"]["ratio"] == pytest.approx(260 / 170)
    assert b["jobs_per_s"]["ratio"] == pytest.approx(50 / 110)
    # W7c8 (no server): the total is the client's.
    (w7,) = cpu.summarize(["a"], {"a": [{"jobs_per_s": 1.0, "client_us": 30.0}]}, jobs=3)
    assert "server_us_per_job" not in w7
    assert w7["total_us_per_job"]["median"] == 10.0


def test_an_explicit_commit_overrides_the_before_systems_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.syspath_prepend(str(ROOT))
    monkeypatch.setenv("JOBSCHED_BEFORE", "HEAD")
    from benchmarks import _before

    def rev_parse(rev: str) -> str:
        return subprocess.run(
            ["git", "rev-parse", rev], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()

    assert _before.commit() == rev_parse("HEAD")
    assert _before.commit("HEAD~1") == rev_parse("HEAD~1")
    with pytest.raises(RuntimeError, match="names no commit"):
        _before.commit("no-such-rev-anywhere")


@pytest.mark.timeout(60)
def test_a_tiny_w7c8_run_counts_this_code_and_a_commit() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks._cpu_per_job", "--workload", "W7c8",
         "--jobs", "100", "--runs", "1", "--json", "this", "HEAD"],
        capture_output=True, text=True, cwd=ROOT, timeout=50, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert [row["rev"] for row in out["summary"]] == ["this", "HEAD"]
    for row in out["summary"]:
        assert row["runs"] == 1 and row["errors"] == 0
        assert row["client_us_per_job"]["median"] > 0
        assert row["total_us_per_job"] == row["client_us_per_job"]
