"""What each statement a member sends costs per job while an xid is held, as
the hold goes on (issue 34, W20: "what bounds the held phase").

``python -m benchmarks._held_costs SYSTEM [--marks 0,500000,1000000,2000000]
[--window 20000] [--minutes 30] [--json]`` (SYSTEM: ``jobsched`` or ``raw``)
needs a server with ``pg_stat_statements`` loaded (``shared_preload_libraries``;
a private cluster: ``JOBSCHED_BENCH_PG``); it makes a fresh database, starts
W20's member (8 workers) and a producer that keeps about 512 jobs waiting
(as fast as the member drains: the churn, not a backlog), runs a clean
window, then opens a session holding an xid (``BEGIN; SELECT
txid_current()``, idle) and, each time the jobs done since the hold began
pass a mark, measures a window of ``window`` jobs:

- per statement (``pg_stat_statements`` of the run's database, the window's
  difference by ``queryid``): calls, rows, shared buffers hit + read,
  dirtied, WAL records, execution and planning ms, each per job;
- per index of the run's tables: index entries read (``idx_tup_read``) and
  scans per job; per table: heap and index buffers per job;
- the window's jobs/s, and the jobs table's and its indexes' pages.

Buffers and entries are the figures (deterministic up to the member's
batching); times are the machine's. The server's autovacuum is left as it is
(on, for W20, on the private cluster).
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

import psycopg

from benchmarks._backlog import FLOOR, W20_WORKERS, Member, Producer
from benchmarks._pgserver import held_xid
from benchmarks._postgres import SERVER, database

BATCH = 128

_STATEMENTS = """
SELECT queryid, left(regexp_replace(query, '\\s+', ' ', 'g'), 110), calls, rows,
       shared_blks_hit + shared_blks_read, shared_blks_dirtied, wal_records,
       total_exec_time, total_plan_time, plans
FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = %s
"""
_INDEXES = """
SELECT i.relname || '.' || i.indexrelname, i.idx_scan, i.idx_tup_read, i.idx_tup_fetch,
       s.idx_blks_hit + s.idx_blks_read
FROM pg_stat_user_indexes i JOIN pg_statio_user_indexes s USING (indexrelid)
"""
_TABLES = """
SELECT t.relname, t.seq_scan, t.seq_tup_read, s.heap_blks_hit + s.heap_blks_read,
       coalesce(s.idx_blks_hit, 0) + coalesce(s.idx_blks_read, 0), t.n_dead_tup,
       t.n_tup_upd, t.n_tup_hot_upd, t.autovacuum_count, t.autoanalyze_count
FROM pg_stat_user_tables t JOIN pg_statio_user_tables s USING (relid)
"""
_PAGES = """
SELECT c.relname, pg_relation_size(c.oid) / 8192 FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i') ORDER BY 1
"""


def _snapshot(admin: Any, conn: Any, name: str) -> dict[str, Any]:
    conn.execute("SELECT pg_stat_clear_snapshot()")
    return {
        "statements": {r[0]: r[1:] for r in admin.execute(_STATEMENTS, (name,)).fetchall()},
        "indexes": {r[0]: r[1:] for r in conn.execute(_INDEXES).fetchall()},
        "tables": {r[0]: r[1:] for r in conn.execute(_TABLES).fetchall()},
    }


def _diff(a: dict[str, Any], b: dict[str, Any], jobs: int) -> dict[str, Any]:
    out: dict[str, Any] = {"statements": [], "indexes": {}, "tables": {}}
    for qid, row in b["statements"].items():
        old = a["statements"].get(qid, (row[0], 0, 0, 0, 0, 0, 0.0, 0.0, 0))
        d = [x - y for x, y in zip(row[1:], old[1:], strict=True)]
        calls = d[0]
        if calls <= 0:
            continue
        out["statements"].append({
            "text": row[0], "calls_per_1k_jobs": 1e3 * calls / jobs, "rows_per_call": d[1] / calls,
            "buffers_per_job": d[2] / jobs, "buffers_per_call": d[2] / calls,
            "dirtied_per_job": d[3] / jobs, "wal_per_job": d[4] / jobs,
            "exec_us_per_job": 1e3 * d[5] / jobs, "exec_ms_per_call": d[5] / calls,
            "plan_us_per_job": 1e3 * d[6] / jobs, "plans": d[7],
        })  # fmt: skip
    out["statements"].sort(key=lambda s: -s["buffers_per_job"])
    for key in ("indexes", "tables"):
        for rel, row in b[key].items():
            old = a[key].get(rel, (0,) * len(row))
            out[key][rel] = [round((x - y) / jobs, 3) for x, y in zip(row, old, strict=True)]
            if key == "tables":  # n_dead_tup and the counts after them: levels, not rates
                out[key][rel][4:] = list(row[4:])
    return out


def _window(member: Member, producer: Producer, admin: Any, conn: Any, name: str,
            jobs: int) -> dict[str, Any]:  # fmt: skip
    """Keep the churn going for ``jobs`` jobs; their costs."""
    before = _snapshot(admin, conn, name)
    done0, t0 = member.done, time.monotonic()
    _churn(member, producer, lambda: member.done - done0 >= jobs)
    done, elapsed = member.done - done0, time.monotonic() - t0
    out = _diff(before, _snapshot(admin, conn, name), done)
    out["jobs"], out["jobs_per_s"] = done, done / elapsed
    out["pages"] = dict(conn.execute(_PAGES).fetchall())
    return out


def _churn(member: Member, producer: Producer, until: Any, limit: float = 3600.0) -> None:
    t0 = time.monotonic()
    while not until():
        if time.monotonic() - t0 > limit:
            raise TimeoutError("the churn took longer than its limit")
        if producer.submitted - member.done < FLOOR:
            producer.submit(BATCH)
        else:
            time.sleep(0.002)


def run(system: str, marks: list[int], window: int, minutes: float) -> dict[str, Any]:
    out: dict[str, Any] = {"system": system, "marks": {}}
    deadline = time.monotonic() + 60 * minutes
    with database() as url:
        name = url.rsplit("/", 1)[1]
        admin = psycopg.connect(f"{SERVER}/postgres", autocommit=True)
        admin.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        producer = Producer(system, url)
        member = Member(system, url, W20_WORKERS)
        conn = psycopg.connect(url, autocommit=True)
        try:
            done0 = member.done
            _churn(member, producer, lambda: member.done - done0 >= 2 * window)
            out["clean"] = _window(member, producer, admin, conn, name, window)
            _report("clean", out["clean"])
            with held_xid(url):
                held0 = member.done
                for mark in marks:
                    try:
                        _churn(member, producer, lambda m=mark: member.done - held0 >= m,
                               limit=max(1.0, deadline - time.monotonic()))  # fmt: skip
                    except TimeoutError:
                        print(f"== held {mark}: not reached within the run's minutes",
                              file=sys.stderr)  # fmt: skip
                        break
                    w = _window(member, producer, admin, conn, name, window)
                    out["marks"][mark] = w
                    _report(f"held {mark}", w)
                    if time.monotonic() > deadline:
                        break
        finally:
            conn.close()
            member.close()
            producer.close()
            admin.close()
    return out


def _report(label: str, w: dict[str, Any]) -> None:
    def say(line: str) -> None:
        print(line, file=sys.stderr)

    pages = ", ".join(f"{k} {v}" for k, v in w["pages"].items() if k.startswith("jobsched_jobs"))
    say(f"== {label}: {w['jobs_per_s']:.0f} jobs/s over {w['jobs']} jobs; pages: {pages}")
    say("  buf/job buf/call rows/call calls/1k-jobs wal/job exec-us/job plan-us/job statement")
    for s in w["statements"][:16]:
        say(f"  {s['buffers_per_job']:7.2f} {s['buffers_per_call']:8.1f} {s['rows_per_call']:7.1f} "
            f"{s['calls_per_1k_jobs']:6.2f} {s['wal_per_job']:5.2f} {s['exec_us_per_job']:7.1f} "
            f"{s['plan_us_per_job']:5.1f}  {s['text'][:70]}")  # fmt: skip
    for rel, v in sorted(w["indexes"].items(), key=lambda kv: -kv[1][1])[:8]:
        say(f"  index {rel}: scans/job {v[0]}, entries read/job {v[1]}, "
            f"fetched/job {v[2]}, buffers/job {v[3]}")  # fmt: skip
    for rel, v in w["tables"].items():
        if any(v[:4]):
            say(f"  table {rel}: seq scans/job {v[0]}, seq rows/job {v[1]}, heap buf/job {v[2]}, "
                f"idx buf/job {v[3]}, dead {v[4]}, vacuums {v[7]}, analyzes {v[8]}")  # fmt: skip
    sys.stderr.flush()


def main(argv: list[str]) -> None:
    opt = {a: argv[i + 1] for i, a in enumerate(argv[:-1]) if a.startswith("--")}
    marks = [int(m) for m in opt.get("--marks", "0,500000,1000000,2000000").split(",")]
    os.environ.setdefault("JOBSCHED_SECRET", "benchmark-secret")
    out = run(argv[0], marks, int(opt.get("--window", 20_000)), float(opt.get("--minutes", 30)))
    if "--json" in argv:
        print(json.dumps(out, default=str))


if __name__ == "__main__":
    main(sys.argv[1:])
