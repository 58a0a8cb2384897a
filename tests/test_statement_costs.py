"""benchmarks._statement_costs (issue 34): each statement of a member's
round, as the store sends it, with its buffers from auto_explain, from
EXPLAIN, and its backend's CPU."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pg
import psycopg
import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.postgres
@pytest.mark.timeout(150)
def test_each_statement_of_a_round_is_counted_as_the_store_ran_it() -> None:
    pg.require_server()
    prefix = f"jobsched_costs_{secrets.token_hex(4)}"
    env = {**os.environ, "JOBSCHED_BENCH_PG": pg.url_of("").rstrip("/"),
           "JOBSCHED_BENCH_PREFIX": prefix}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks._statement_costs", "300", "768",
         "--batch", "256", "--rounds", "3", "--json"],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    kinds = out["kinds"]
    for name in ("claim", "record_look", "record_write"):
        figures = kinds[name]
        assert figures["calls"] == 3, (name, figures)
        # As it ran (auto_explain's notices) and as EXPLAIN ran it.
        assert figures["run_buffers"] > 0 and figures["explain_buffers"] > 0, (name, figures)
        assert figures["cpu_us_per_job"] > 0, (name, figures)
    # The claim's plan text, and the claim among each session's prepared statements.
    assert "Update on jobsched_jobs" in kinds["claim"]["plan"]
    assert any("WITH held AS" in s[2] for session in out["prepared"] for s in session)
    # A prune ran in the timed rounds (every ~1,000 outcomes: the 4th round
    # of 256): its count of the finished jobs, under the 10,000 kept.
    assert kinds["prune_count"]["calls"] == 1
    assert out["pages"]["table"] > 0 and "jobsched_jobs_ready" in out["pages"]
    with psycopg.connect(pg.ADMIN_URL, autocommit=True) as admin:
        left = admin.execute(
            "SELECT datname FROM pg_database WHERE starts_with(datname, %s)", (prefix,)
        ).fetchall()
    assert left == []
