"""The benchmark suite still runs: tiny sizes, raw and jobsched (and W7's store row), no plot.

It proves the harness works end to end (a child process per run, ratios
against raw, the Markdown and JSON reports), not how fast anything is: no
figure is asserted. APScheduler 4 and matplotlib live in the ``bench``
dependency group, which CI does not install; the rows at concurrency 8
(W7c8, W10c8) run their peer (huey, procrastinate) too where it is installed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pg
import pytest

import jobsched as js

ROOT = Path(__file__).resolve().parent.parent


def _suite(
    *args: str, timeout: float = 50, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchmarks", *args],
        cwd=ROOT,
        env=None if env is None else {**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def databases_named(prefix: str) -> list[str]:
    """The server's databases whose names start with ``prefix`` (a run's own)."""
    import psycopg

    with psycopg.connect(pg.ADMIN_URL, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT datname FROM pg_database WHERE starts_with(datname, %s)", (prefix,)
        ).fetchall()
    return [name for (name,) in rows]


def _module(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run one of the suite's modules on its own, as a child of the repository's root."""
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )


def test_suite_runs_on_tiny_sizes_and_writes_its_reports(tmp_path: Path) -> None:
    """Every requested workload gets a jobsched figure and a ratio to raw, in both reports."""
    done = _suite(
        "--reps", "1",
        "--systems", "raw,jobsched,store",
        "--only", "W1,W2,W2p,W3,W6,W0,W7,W8,W9",
        "--sizes", "W1=200,W2=100:400,W2p=200,W2mem=100,W3=8,W6=3,W0=2,W7=200,W8=100:200,W9=100",
        "--no-plot",
        "--out", str(tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr

    report = json.loads((tmp_path / "latest.json").read_text())
    rows = {(e["workload"], e["metric"], e["system"]): e for e in report["summary"]}
    for workload, metric in [
        ("W1", "jobs_per_s"),
        ("W2", "enqueue_us"),
        ("W2", "dispatch_us"),
        ("W2", "growth"),
        ("W2p", "enqueue_vs_4"),
        ("W2p", "dispatch_vs_4"),
        ("W2mem", "bytes_per_job"),
        ("W3", "jobs_per_s"),
        ("W6", "jobs_per_s"),
        ("W0", "import_ms"),
        ("W7", "jobs_per_s"),
        ("W8", "dispatch_us"),
        ("W8", "growth"),
        ("W9", "first_job_ms"),
    ]:
        entry = rows[(workload, metric, "jobsched")]
        assert "note" not in entry, entry
        assert entry["value"]["median"] > 0
        assert entry["ratio"]["min"] <= entry["ratio"]["median"] <= entry["ratio"]["max"]
    assert ("W1", "jobs_per_s", "apscheduler4") not in rows
    # The store's own row (no scheduler) is W7's alone.
    floor = rows[("W7", "jobs_per_s", "store")]
    assert floor["value"]["median"] > 0 and floor["ratio"]["median"] > 0
    assert "n/a" in rows[("W1", "jobs_per_s", "store")]["note"]

    table = (tmp_path / "latest.md").read_text()
    assert "| W1 | 200 | throughput" in table
    assert "jobsched / raw" in table
    assert "apscheduler4" not in table
    assert not (tmp_path / "w2_dispatch.png").exists()


def _shallow() -> bool:
    done = subprocess.run(
        ["git", "rev-parse", "--is-shallow-repository"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() == "true"


def test_the_01_system_runs_0_1s_own_code_beside_this_one(tmp_path: Path) -> None:
    """jobsched-0.1 gets its figures from 0.1's sources (out of git), the
    rows it cannot run say n/a, and this code's jobsched runs as before."""
    done = _suite(
        "--reps", "1",
        "--systems", "raw,jobsched,jobsched-0.1",
        "--only", "W1,W6,W3",
        "--sizes", "W1=200,W6=3,W3=8",
        "--no-plot",
        "--out", str(tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "latest.json").read_text())
    rows = {(e["workload"], e["system"]): e for e in report["summary"]}
    for workload in ("W1", "W6"):
        assert rows[(workload, "jobsched")]["value"]["median"] > 0
        entry = rows[(workload, "jobsched-0.1")]
        if _shallow():  # 0.1's commit is not here: the row says how to get it
            assert "git fetch --unshallow" in entry["note"]
            continue
        assert "note" not in entry, entry
        assert entry["value"]["median"] > 0
    assert "n/a" in rows[("W3", "jobsched-0.1")]["note"]
    table = (tmp_path / "latest.md").read_text()
    assert "| jobsched-0.1 | jobsched-0.1 / raw |" in table
    if not _shallow():
        # This code over 0.1's, paired by repetition, for each row both ran.
        paired = {e["workload"]: e for e in report["paired"]}
        assert set(paired) == {"W1", "W6"}
        assert paired["W6"]["pair"] == "jobsched / jobsched-0.1"
        assert paired["W6"]["ratio"]["median"] > 0
        assert "| jobsched / jobsched-0.1 | W6 | 3 | throughput (jobs/s) |" in table


def test_the_01_system_imports_0_1s_code(monkeypatch: pytest.MonkeyPatch) -> None:
    """The child of jobsched-0.1 imports the extracted sources, not this checkout's."""
    monkeypatch.syspath_prepend(str(ROOT))
    from benchmarks import _v01

    if _shallow():
        with pytest.raises(RuntimeError, match="git fetch --unshallow"):
            _v01.pythonpath()
        return
    paths = _v01.pythonpath()
    done = subprocess.run(
        [sys.executable, "-c", "import jobsched, jobsched_async; print(jobsched.__file__); "
         "print(jobsched_async.__file__)"],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(paths)},
        capture_output=True,
        text=True,
        check=True,
    )  # fmt: skip
    core, executor = done.stdout.split()
    assert core.startswith(paths[0]) and executor.startswith(paths[1])
    # 0.1 had no store seam: the import is the old code's, not a copy of main.
    assert not (Path(paths[0]) / "jobsched" / "store").exists()


def test_the_01_system_says_how_to_get_a_missing_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    """A checkout without 0.1's commit gets a figure-less row that says why."""
    monkeypatch.syspath_prepend(str(ROOT))
    from benchmarks import _suite, _v01

    monkeypatch.setattr(_v01, "COMMIT", "0" * 40)
    monkeypatch.setattr(_v01, "_extracted", [])
    result = _suite.run_child("jobsched-0.1", "W6", 3, timeout=60)
    assert result == {
        "error": "jobsched-0.1 needs commit 0000000 in this checkout's history "
        "(a full clone; `git fetch --unshallow` in a shallow one)"
    }


def test_the_before_system_runs_an_earlier_commit_beside_this_code(tmp_path: Path) -> None:
    """jobsched-before runs W1, W6 and W7c8 on the commit's code (here HEAD's),
    paired with jobsched repetition by repetition; other rows say n/a, and the
    report names the commit."""
    done = _suite(
        "--reps", "1",
        "--systems", "raw,jobsched,jobsched-before",
        "--only", "W1,W6,W3,W7c8",
        "--sizes", "W1=200,W6=3,W3=8,W7c8=200",
        "--no-plot",
        "--out", str(tmp_path),
        timeout=120,
        env={"JOBSCHED_BEFORE": "HEAD"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    _figures(tmp_path, "W1", ["jobsched", "jobsched-before"])
    _figures(tmp_path, "W6", ["jobsched", "jobsched-before"])
    _figures(tmp_path, "W7c8", ["jobsched", "jobsched-before"])
    report = json.loads((tmp_path / "latest.json").read_text())
    rows = {(e["workload"], e["system"]): e for e in report["summary"]}
    assert "n/a" in rows[("W3", "jobsched-before")]["note"]
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert report["meta"]["jobsched_before"] == head
    paired = {
        e["workload"]: e for e in report["paired"] if e["pair"] == "jobsched / jobsched-before"
    }
    assert set(paired) == {"W1", "W6", "W7c8"}
    assert all(e["ratio"]["median"] > 0 for e in paired.values())
    table = (tmp_path / "latest.md").read_text()
    assert f"jobsched-before: `{head}`" in table
    assert "| jobsched / jobsched-before | W7c8 | 200 | throughput (jobs/s) |" in table


@pytest.mark.postgres
@pytest.mark.timeout(150)
def test_the_before_system_runs_the_postgres_row(tmp_path: Path) -> None:
    """jobsched-before runs W10c8 with the commit's PostgreSQL store; no
    database is left behind."""
    pg.require_server()
    prefix = f"jobsched_smoke_{secrets.token_hex(4)}"
    done = _suite(
        "--reps", "1",
        "--systems", "raw,jobsched,jobsched-before",
        "--only", "W10c8",
        "--sizes", "W10c8=100",
        "--no-plot",
        "--out", str(tmp_path),
        timeout=140,
        env={
            "JOBSCHED_BENCH_PG": pg.url_of("").rstrip("/"),
            "JOBSCHED_BENCH_PREFIX": prefix,
            "JOBSCHED_BEFORE": "HEAD",
        },
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    _figures(tmp_path, "W10c8", ["jobsched", "jobsched-before"])
    assert "| jobsched / jobsched-before | W10c8 | 100 |" in (tmp_path / "latest.md").read_text()
    assert databases_named(prefix) == []


def test_the_before_system_runs_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run without --systems leaves jobsched-before out (on main it would
    time main against itself); naming it runs it."""
    monkeypatch.syspath_prepend(str(ROOT))
    from benchmarks import _suite as suite

    assert "jobsched-before" not in suite.parse_args([]).systems
    assert "jobsched-0.1" in suite.parse_args([]).systems
    chosen = suite.parse_args(["--systems", "jobsched,jobsched-before"]).systems
    assert chosen == ["raw", "jobsched", "jobsched-before"]


def test_the_before_system_imports_the_commits_packages(monkeypatch: pytest.MonkeyPatch) -> None:
    """The child of jobsched-before imports the core, the executor and both
    stores from the extracted commit, which holds that commit's files."""
    monkeypatch.syspath_prepend(str(ROOT))
    monkeypatch.setenv("JOBSCHED_BEFORE", "HEAD~1")
    from benchmarks import _before

    paths = _before.pythonpath()
    assert _before.pythonpath() is paths  # extracted once per process
    modules = ("jobsched", "jobsched_async", "jobsched_sqlite", "jobsched_postgres")
    done = subprocess.run(
        [sys.executable, "-c", f"import {', '.join(modules)}; "
         f"print(*({', '.join(m + '.__file__' for m in modules)},))"],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(paths)},
        capture_output=True,
        text=True,
        check=True,
    )  # fmt: skip
    root = Path(paths[0]).parents[2]
    for found in done.stdout.split():
        assert Path(found).is_relative_to(root), found
    scheduler = "packages/core/src/jobsched/_engine/_scheduler.py"
    old = subprocess.run(
        ["git", "show", f"HEAD~1:{scheduler}"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert (root / scheduler).read_text() == old


def test_the_before_system_defaults_to_the_merge_base_with_main(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without $JOBSCHED_BEFORE the commit is where this branch left main."""
    monkeypatch.syspath_prepend(str(ROOT))
    monkeypatch.delenv("JOBSCHED_BEFORE", raising=False)
    from benchmarks import _before

    base = subprocess.run(
        ["git", "merge-base", "HEAD", "main"], cwd=ROOT, capture_output=True, text=True
    )  # fmt: skip
    if base.returncode != 0:
        pytest.skip("no main branch in this checkout")
    assert _before.commit() == base.stdout.strip()


def test_the_before_system_says_what_to_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unknown $JOBSCHED_BEFORE gives a figure-less row that says so, and a
    checkout without main asks for the variable."""
    monkeypatch.syspath_prepend(str(ROOT))
    from benchmarks import _before
    from benchmarks import _suite as suite

    monkeypatch.setenv("JOBSCHED_BEFORE", "no-such-branch")
    assert suite.run_child("jobsched-before", "W6", 3, timeout=60) == {
        "error": "jobsched-before: JOBSCHED_BEFORE='no-such-branch' names no commit "
        "in this checkout"
    }
    monkeypatch.delenv("JOBSCHED_BEFORE")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(tmp_path)]
    subprocess.run([*git, "init", "-q", "-b", "other"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "x"], check=True)
    monkeypatch.setattr(_before, "_ROOT", tmp_path)
    with pytest.raises(RuntimeError, match="set JOBSCHED_BEFORE to a commit"):
        _before.commit()


def test_an_unknown_workload_is_refused_with_the_known_ones() -> None:
    """A typo in --only fails at once and lists the workload names."""
    done = _suite("--only", "W1,W99", "--no-plot")
    assert done.returncode == 2
    assert "unknown ['W99']" in done.stderr
    assert "W1,W2" in done.stderr


def test_a_malformed_size_override_is_refused() -> None:
    """--sizes says which form it expects."""
    done = _suite("--sizes", "W1:100", "--no-plot")
    assert done.returncode == 2
    assert "must look like W1=1000" in done.stderr


def test_the_otel_row_runs(tmp_path: Path) -> None:
    """W1otel (jobsched-otel's cost) gets its ratio and added µs, against raw's own."""
    done = _suite(
        "--reps", "1",
        "--systems", "raw,jobsched",
        "--only", "W1otel",
        "--sizes", "W1otel=200",
        "--no-plot",
        "--out", str(tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "latest.json").read_text())
    rows = {(e["workload"], e["metric"], e["system"]): e for e in report["summary"]}
    for metric in ("on_vs_off", "added_us"):
        for system in ("raw", "jobsched"):
            assert "note" not in rows[("W1otel", metric, system)], rows
    assert rows[("W1otel", "on_vs_off", "jobsched")]["value"]["median"] > 0
    assert "| W1otel | 200 | throughput on / off" in (tmp_path / "latest.md").read_text()


def test_dashboard_workload_times_every_page() -> None:
    """W14's child fills a tiny store and reports a time for each dashboard page."""
    done = _module("benchmarks._dashboard", "jobsched", "W14", "300")
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(figures) == {"index_ms", "live_ms", "job_ms", "index_cpu_ms"}
    assert all(v > 0 for v in figures.values())


@pytest.mark.postgres
def test_operator_reads_workload_times_the_scrape_too() -> None:
    """W15's child fills tiny SQLite and PostgreSQL stores and reports each
    read's p99, the Prometheus scrape's among them (its numbers checked)."""
    pg.require_server()
    done = _module("benchmarks._counts", "jobsched", "W15", "300")
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    reads = ("counts_p99", "counts_p50", "index_p99", "index_p50", "live_p99", "metrics_p99")
    assert set(figures) == {f"{db}_{read}_ms" for db in ("sqlite", "pg") for read in reads}
    assert all(v > 0 for v in figures.values())


@pytest.mark.postgres
@pytest.mark.timeout(150)  # four member processes start in these runs
def test_the_postgres_rows_run_on_tiny_sizes(tmp_path: Path) -> None:
    """W10-W12 get a jobsched figure and a ratio to the hand-written psycopg loop;
    every database a run made is gone afterwards."""
    pg.require_server()
    prefix = f"jobsched_smoke_{secrets.token_hex(4)}"
    done = _suite(
        "--reps", "1",
        "--systems", "raw,jobsched",
        "--only", "W10,W11,W12",
        "--sizes", "W10=100,W11=5,W12=100",
        "--no-plot",
        "--out", str(tmp_path),
        timeout=140,
        env={"JOBSCHED_BENCH_PG": pg.url_of("").rstrip("/"), "JOBSCHED_BENCH_PREFIX": prefix},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "latest.json").read_text())
    rows = {(e["workload"], e["metric"], e["system"]): e for e in report["summary"]}
    for workload, metric in [
        ("W10", "jobs_per_s"),
        ("W11", "p50_ms"),
        ("W11", "p99_ms"),
        ("W12", "jobs_per_s"),
        ("W12", "speedup"),
    ]:
        for system in ("raw", "jobsched"):
            entry = rows[(workload, metric, system)]
            assert "note" not in entry, entry
            assert entry["value"]["median"] > 0
    assert databases_named(prefix) == []


def test_the_page_count_names_each_btree_and_the_store_writes_more_than_raw() -> None:
    """benchmarks._stores_pages counts WAL frames per round by table and index."""
    done = _module("benchmarks._stores_pages", "7000")
    assert done.returncode == 0, done.stderr
    totals = {}
    for line in done.stdout.splitlines():
        name, _, rest = line.partition(": ")
        if "per round" in rest:
            totals[name] = float(rest.split()[0])
            # Every frame is put down to a table or an index by name.
            assert "jobs " in rest and "jobs_ready" in rest, line
    assert set(totals) == {"raw", "store"}
    # Deterministic counts, not timings: the store keeps more indexes than raw.
    assert 0 < totals["raw"] < totals["store"]
    assert "jobs_status" in done.stdout and "per prune" in done.stdout


@pytest.mark.parametrize("system", ["raw", "jobsched"])
def test_w4cold_runs_on_a_cold_pool(system: str) -> None:
    """W4cold's row (a cold process pool) runs for both systems and reports a throughput."""
    done = _module("benchmarks._child", system, "W4cold", "4")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["jobs_per_s"] > 0


@pytest.mark.postgres
@pytest.mark.timeout(150)  # a member process and four stores start in these runs
def test_the_producer_rows_run_on_tiny_sizes(tmp_path: Path) -> None:
    """W16 (wait() latency) and W17 (idempotent submit over plain, both stores)
    get a figure for raw and jobsched; no database is left behind."""
    pg.require_server()
    prefix = f"jobsched_smoke_{secrets.token_hex(4)}"
    done = _suite(
        "--reps", "1",
        "--systems", "raw,jobsched",
        "--only", "W16,W17",
        "--sizes", "W16=5,W17=40",
        "--no-plot",
        "--out", str(tmp_path),
        timeout=140,
        env={"JOBSCHED_BENCH_PG": pg.url_of("").rstrip("/"), "JOBSCHED_BENCH_PREFIX": prefix},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "latest.json").read_text())
    rows = {(e["workload"], e["metric"], e["system"]): e for e in report["summary"]}
    metrics = [("W16", "p50_ms"), ("W16", "p99_ms")] + [
        ("W17", f"{store}_{mode}_x") for store in ("sqlite", "pg") for mode in ("one", "bulk")
    ]
    for workload, metric in metrics:
        for system in ("raw", "jobsched"):
            entry = rows[(workload, metric, system)]
            assert "note" not in entry, entry
            assert entry["value"]["median"] > 0
    assert (
        "| W17 | 40 | pg submits then one flush, own id / plain"
        in (tmp_path / "latest.md").read_text()
    )
    assert databases_named(prefix) == []


@pytest.mark.postgres
@pytest.mark.timeout(150)  # two stores filled and claimed, twice
def test_the_queue_row_runs_on_a_small_size(tmp_path: Path) -> None:
    """W18 (a small queue's claims beside a big queue) gets a figure for raw
    (the big queue empty) and jobsched, on both stores; no database is left."""
    pg.require_server()
    prefix = f"jobsched_smoke_{secrets.token_hex(4)}"
    done = _suite(
        "--reps", "1",
        "--systems", "raw,jobsched",
        "--only", "W18",
        "--sizes", "W18=3000",
        "--no-plot",
        "--out", str(tmp_path),
        timeout=140,
        env={"JOBSCHED_BENCH_PG": pg.url_of("").rstrip("/"), "JOBSCHED_BENCH_PREFIX": prefix},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "latest.json").read_text())
    rows = {(e["workload"], e["metric"], e["system"]): e for e in report["summary"]}
    for store in ("sqlite", "pg"):
        for metric in ("p50_ms", "p99_ms"):
            for system in ("raw", "jobsched"):
                entry = rows[("W18", f"{store}_{metric}", system)]
                assert "note" not in entry, entry
                assert entry["value"]["median"] > 0
    assert databases_named(prefix) == []


def _with_peer(peer: str) -> list[str]:
    """raw and jobsched, and ``peer`` where its package is installed (the
    ``bench`` group, which CI does not install)."""
    installed = importlib.util.find_spec(peer) is not None
    return ["raw", "jobsched", *([peer] if installed else [])]


def _figures(out: Path, workload: str, systems: list[str]) -> None:
    """Every system got a throughput and a ratio to raw for ``workload``."""
    report = json.loads((out / "latest.json").read_text())
    rows = {(e["workload"], e["metric"], e["system"]): e for e in report["summary"]}
    for system in systems:
        entry = rows[(workload, "jobs_per_s", system)]
        assert "note" not in entry, entry
        assert entry["value"]["median"] > 0
        assert entry["ratio"]["median"] > 0


def test_the_sqlite_row_at_concurrency_8_runs(tmp_path: Path) -> None:
    """W7c8 gets a figure for raw, raw-indexed, jobsched (8 workers), huey
    (its consumer's 8 threads, where installed) and jobsched-app/-fn
    (registered jobs, the same FunctionJobs), jobsched over raw-indexed and
    jobsched-app over jobsched-fn; other systems are n/a."""
    systems = [*_with_peer("huey"), "raw-indexed", "jobsched-app", "jobsched-fn"]
    done = _suite(
        "--reps", "1",
        "--systems", ",".join([*systems, "store"]),
        "--only", "W7c8",
        "--sizes", "W7c8=200",
        "--no-plot",
        "--out", str(tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    _figures(tmp_path, "W7c8", systems)
    table = (tmp_path / "latest.md").read_text()
    assert "| W7c8 | 200 | throughput" in table
    assert "| jobsched / raw-indexed | W7c8 | 200 | throughput (jobs/s) |" in table
    assert "| jobsched-app / jobsched-fn | W7c8 | 200 | throughput (jobs/s) |" in table
    report = json.loads((tmp_path / "latest.json").read_text())
    (store,) = [e for e in report["summary"] if e["system"] == "store"]
    assert "n/a" in store["note"]


def test_the_indexed_loop_keeps_the_stores_indexes_on_its_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """raw-indexed's table has raw's ready index and the store's status and
    finished-time indexes; raw's has the ready index alone."""
    monkeypatch.syspath_prepend(str(ROOT))
    from benchmarks import _stores

    def indexes(path: Path, indexed: bool) -> set[str]:
        conn = _stores._raw_connect(path, indexed=indexed)
        try:
            rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")
            return {name for (name,) in rows}
        finally:
            conn.close()

    assert indexes(tmp_path / "raw.db", False) == {"jobs_ready"}
    assert indexes(tmp_path / "indexed.db", True) == {"jobs_ready", "jobs_status", "jobs_finished"}


@pytest.mark.postgres
@pytest.mark.timeout(150)
def test_the_postgres_row_at_concurrency_8_runs(tmp_path: Path) -> None:
    """W10c8 gets a figure for raw, jobsched (8 workers), procrastinate
    (concurrency=8, where installed) and jobsched-app/-fn; no database is
    left behind."""
    pg.require_server()
    prefix = f"jobsched_smoke_{secrets.token_hex(4)}"
    systems = [*_with_peer("procrastinate"), "jobsched-app", "jobsched-fn"]
    done = _suite(
        "--reps", "1",
        "--systems", ",".join(systems),
        "--only", "W10c8",
        "--sizes", "W10c8=100",
        "--no-plot",
        "--out", str(tmp_path),
        timeout=140,
        env={"JOBSCHED_BENCH_PG": pg.url_of("").rstrip("/"), "JOBSCHED_BENCH_PREFIX": prefix},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    _figures(tmp_path, "W10c8", systems)
    assert "| jobsched-app / jobsched-fn | W10c8 | 100 |" in (tmp_path / "latest.md").read_text()
    assert databases_named(prefix) == []


@pytest.mark.postgres
@pytest.mark.timeout(150)  # four stores open, twice
def test_the_registered_enqueue_row_runs_on_tiny_sizes(tmp_path: Path) -> None:
    """W21 (a registered job's enqueue over the same FunctionJob's, both
    stores) gets a figure for raw and jobsched; jobsched-app is n/a there;
    no database is left behind."""
    pg.require_server()
    prefix = f"jobsched_smoke_{secrets.token_hex(4)}"
    done = _suite(
        "--reps", "1",
        "--systems", "raw,jobsched,jobsched-app",
        "--only", "W21",
        "--sizes", "W21=40",
        "--no-plot",
        "--out", str(tmp_path),
        timeout=140,
        env={"JOBSCHED_BENCH_PG": pg.url_of("").rstrip("/"), "JOBSCHED_BENCH_PREFIX": prefix},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "latest.json").read_text())
    rows = {(e["workload"], e["metric"], e["system"]): e for e in report["summary"]}
    for store in ("sqlite", "pg"):
        for mode in ("one", "bulk"):
            for system in ("raw", "jobsched"):
                entry = rows[("W21", f"{store}_{mode}_x", system)]
                assert "note" not in entry, entry
                assert entry["value"]["median"] > 0
    assert "n/a" in rows[("W21", "sqlite_one_x", "jobsched-app")]["note"]
    assert (
        "| W21 | 40 | pg submits then one flush, registered / FunctionJob"
        in (tmp_path / "latest.md").read_text()
    )
    assert databases_named(prefix) == []


@pytest.mark.postgres
@pytest.mark.timeout(150)
def test_the_transactional_enqueue_row_runs_on_tiny_sizes(tmp_path: Path) -> None:
    """W22 (a request's row and job in one transaction over the job enqueued
    after the commit, both stores) gets a figure for raw and jobsched, is
    n/a for the others, and leaves no database behind."""
    pg.require_server()
    prefix = f"jobsched_smoke_{secrets.token_hex(4)}"
    done = _suite(
        "--reps", "1",
        "--systems", "raw,jobsched,jobsched-app",
        "--only", "W22",
        "--sizes", "W22=20",
        "--no-plot",
        "--out", str(tmp_path),
        timeout=140,
        env={"JOBSCHED_BENCH_PG": pg.url_of("").rstrip("/"), "JOBSCHED_BENCH_PREFIX": prefix},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "latest.json").read_text())
    rows = {(e["workload"], e["metric"], e["system"]): e for e in report["summary"]}
    for store in ("pg", "sqlite"):
        for system in ("raw", "jobsched"):
            entry = rows[("W22", f"{store}_x", system)]
            assert "note" not in entry, entry
            assert entry["value"]["median"] > 0
    assert "n/a" in rows[("W22", "pg_x", "jobsched-app")]["note"]
    assert databases_named(prefix) == []


@pytest.mark.postgres
@pytest.mark.timeout(150)
def test_the_workflow_row_runs_on_tiny_sizes(tmp_path: Path) -> None:
    """W23 (a workflow fan-out/fan-in) gets every figure on every store for
    raw and jobsched (each run checks its fan-in's sum), is n/a for the
    others, and leaves no database behind."""
    pg.require_server()
    prefix = f"jobsched_smoke_{secrets.token_hex(4)}"
    done = _suite(
        "--reps", "1",
        "--systems", "raw,jobsched,apscheduler4",
        "--only", "W23",
        "--sizes", "W23=20",
        "--no-plot",
        "--out", str(tmp_path),
        timeout=140,
        env={"JOBSCHED_BENCH_PG": pg.url_of("").rstrip("/"), "JOBSCHED_BENCH_PREFIX": prefix},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "latest.json").read_text())
    rows = {(e["workload"], e["metric"], e["system"]): e for e in report["summary"]}
    for store in ("mem", "sqlite", "pg"):
        for metric in ("enqueue_us", "jobs_per_s", "fanin_ms"):
            for system in ("raw", "jobsched"):
                entry = rows[("W23", f"{store}_{metric}", system)]
                assert "note" not in entry, entry
                assert entry["value"]["median"] > 0
            assert rows[("W23", f"{store}_{metric}", "jobsched")]["ratio"]["median"] > 0
    assert "n/a" in rows[("W23", "pg_jobs_per_s", "apscheduler4")]["note"]
    assert databases_named(prefix) == []


def test_the_workflow_row_refuses_a_wrong_sum(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run whose fan-in did not receive every result is an error, not a figure."""
    monkeypatch.syspath_prepend(str(ROOT))
    import anyio

    from benchmarks import _raw_workflow, _workflow

    monkeypatch.setattr(_workflow, "expected", lambda size: -1)
    monkeypatch.setattr(_raw_workflow, "expected", lambda size: -1)
    with pytest.raises(RuntimeError, match=r"summed \d+, not -1"):
        anyio.run(_workflow._jobsched, None, 10)
    with pytest.raises(RuntimeError, match=r"summed \d+, not -1"):
        anyio.run(_raw_workflow._memory_one, 10)


def test_the_workflow_row_runs_raw_and_jobsched_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(ROOT))
    from benchmarks import _suite, _workflow

    with pytest.raises(ValueError, match="W23 on raw and jobsched"):
        _workflow.run("apscheduler4", "W23", 1)
    with pytest.raises(ValueError, match="W23 on raw and jobsched"):
        _workflow.run("raw", "W22", 1)
    args = _suite.parse_args(["--only", "W23"])
    assert _suite.skip_reason("apscheduler4", "W23", 1, args) == "n/a (W23 runs raw and jobsched)"
    assert _suite.skip_reason("jobsched", "W23", 1, args) is None


async def _refused(to: str, order: int, at: object, meta: object) -> None:
    """W7c8's job, failing: a run must not count jobs that did not complete."""
    raise js.NonRetryableError("refused by the test")


@pytest.mark.parametrize("registered", [False, True])
def test_a_concurrency_8_run_whose_jobs_fail_is_an_error(
    registered: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """jobsched-app and jobsched-fn raise, naming the error, when a job does not complete."""
    monkeypatch.syspath_prepend(str(ROOT))
    import anyio

    from benchmarks import _registered

    if registered:
        # Registered on a copy of the app's registry: undone after the test.
        monkeypatch.setattr(_registered.app, "_jobs", dict(_registered.app._jobs))
        refused = _registered.app.job(name="benchmarks.smoke.refused")(_refused)
        monkeypatch.setattr(_registered, "send_email_job", refused)
    else:
        monkeypatch.setattr(_registered, "send_email", _refused)
    with pytest.raises(RuntimeError, match="3 jobs did not complete: .*refused by the test"):
        anyio.run(_registered._throughput, "memory", 3, registered)


def test_the_concurrency_8_rows_name_the_systems_they_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """A system the registered rows do not know is refused, naming those they run."""
    monkeypatch.syspath_prepend(str(ROOT))
    from benchmarks import _registered

    with pytest.raises(ValueError, match="runs jobsched-app, jobsched-fn, not 'jobsched-x'"):
        _registered.c8("jobsched-x", "W7c8", 10)


def test_registered_and_function_jobs_alternate_in_one_process() -> None:
    """`alternate` runs W7c8 as FunctionJobs and as registered jobs, ABBA on
    fresh files, and gives both throughputs, CPU per job and their ratios."""
    done = _module("benchmarks._registered", "alternate", "W7c8", "60", "1")
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    for key in ("jobs_per_s", "cpu_us"):
        assert figures[f"fn_{key}"] > 0 and figures[f"app_{key}"] > 0
        assert figures[f"{key}_x"] == figures[f"app_{key}"] / figures[f"fn_{key}"]
        assert len(figures[f"{key}_x_each"]) == 2  # one ratio per pair of runs


def _autovacuum() -> str:
    import psycopg

    with psycopg.connect(pg.ADMIN_URL, autocommit=True) as admin:
        row = admin.execute("SHOW autovacuum").fetchone()
    assert row is not None
    return str(row[0])


@pytest.mark.postgres
@pytest.mark.timeout(170)  # three backlogs filled and drained, per system
def test_the_backlog_row_runs_on_tiny_sizes(tmp_path: Path) -> None:
    """W19 gets, for raw and jobsched, a throughput at 0 waiting, the ratios
    at the two backlogs and dead row versions per job; the server's
    autovacuum setting is the same after the run as before; no database is
    left behind."""
    pg.require_server()
    prefix = f"jobsched_smoke_{secrets.token_hex(4)}"
    before = _autovacuum()
    done = _suite(
        "--reps", "1",
        "--systems", "raw,jobsched",
        "--only", "W19",
        "--sizes", "W19=2",
        "--no-plot",
        "--out", str(tmp_path),
        timeout=160,
        env={"JOBSCHED_BENCH_PG": pg.url_of("").rstrip("/"), "JOBSCHED_BENCH_PREFIX": prefix,
             "JOBSCHED_BENCH_BACKLOGS": "0,300,1500"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # The report says how autovacuum ran.
    assert "ALTER SYSTEM SET autovacuum = on" in (tmp_path / "latest.md").read_text()
    report = json.loads((tmp_path / "latest.json").read_text())
    rows = {(e["workload"], e["metric"], e["system"]): e for e in report["summary"]}
    for metric in ("jobs_per_s", "x_4k", "x_100k", "dead_0", "dead_4k", "dead_100k"):
        for system in ("raw", "jobsched"):
            entry = rows[("W19", metric, system)]
            assert "note" not in entry, entry
            assert entry["value"]["median"] > 0
    # Every job's claim and completion make a dead version of its row at least.
    assert rows[("W19", "dead_0", "raw")]["value"]["median"] >= 1.5
    assert _autovacuum() == before
    assert databases_named(prefix) == []


@pytest.mark.postgres
@pytest.mark.timeout(150)
def test_the_held_xmin_row_runs_on_a_short_hold(tmp_path: Path) -> None:
    """W20 gets per-phase figures for raw and jobsched at one fixed load; the
    held phase's dead tuples pile up (nothing can be vacuumed behind the
    held xid); the server's autovacuum is restored; no database is left."""
    pg.require_server()
    prefix = f"jobsched_smoke_{secrets.token_hex(4)}"
    before = _autovacuum()
    done = _suite(
        "--reps", "1",
        "--systems", "raw,jobsched",
        "--only", "W20",
        "--sizes", "W20=6",
        "--no-plot",
        "--out", str(tmp_path),
        timeout=140,
        env={"JOBSCHED_BENCH_PG": pg.url_of("").rstrip("/"), "JOBSCHED_BENCH_PREFIX": prefix,
             "JOBSCHED_BENCH_W20_RATE": "200"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "latest.json").read_text())
    rows = {(e["workload"], e["metric"], e["system"]): e for e in report["summary"]}
    for system in ("raw", "jobsched"):
        for phase in ("clean", "held", "recovery"):
            for metric in ("jobs_per_s", "p99_ms"):
                entry = rows[("W20", f"{phase}_{metric}", system)]
                assert "note" not in entry, entry
                assert entry["value"]["median"] > 0
        assert rows[("W20", "load", system)]["value"]["median"] == 200
        assert rows[("W20", "held_dead", system)]["value"]["median"] > 0
    assert _autovacuum() == before
    assert databases_named(prefix) == []
