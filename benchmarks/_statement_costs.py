"""What each statement of a member's round costs on PostgreSQL, as the store
sends it (issue 34, W19 at 100,000 behind).

``python -m benchmarks._statement_costs READY CHURN [--vacuum] [--batch N]
[--rounds N] [--json]`` makes a fresh database (:func:`benchmarks._postgres.database`),
adds READY ready jobs through the store's own ``add``, then churns CHURN
jobs as a member behind by READY does: each round adds ``batch`` jobs at
the back, claims ``batch``, records their completions, and prunes every
~1,000 outcomes keeping 10,000 (W19's member: 64 workers, a claim of 256
ahead). ``--vacuum``: a ``VACUUM ANALYZE`` of the database halfway
(autovacuum's state on a busy table; the server's autovacuum is left as it
is). Then, per kind of statement (claim, the outcomes' look and write, the
prune's reads, the counts' fold):

- ``rounds`` rounds timed: each statement's wall time and its backend's CPU
  time (``/proc/<pid>/schedstat``; Linux, the server on this machine);
- ``rounds`` rounds under ``auto_explain`` (loaded in each pooled session,
  its plans sent to the client as notices): the plans the store's prepared
  statements ran, with their buffers, and whether the server planned them
  anew (``pg_prepared_statements``' custom and generic plan counts);
- ``rounds`` rounds whose statements are first run under ``EXPLAIN
  (ANALYZE, BUFFERS)`` and rolled back (custom plans, and their planning time).

Buffers are the figure to compare across runs on a loaded machine; times
are a rough guide there. Every psycopg ``Cursor.execute`` of the process is
wrapped for the run.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import anyio
import psycopg

from benchmarks._postgres import database

_SECRET = "benchmark-secret"
_MODE = {"explain": False, "time": False, "auto": False, "prepared": False}
_TIMES: dict[str, list[float]] = {}
_CPU: dict[str, list[float]] = {}
_PLANS: dict[str, list[dict[str, Any]]] = {}
_TEXT: dict[str, str] = {}
_AUTO: dict[str, list[dict[str, Any]]] = {}
_SESSION_AUTO: dict[int, bool] = {}
_PREPARED: dict[int, list[Any]] = {}

# A statement's kind, by what its text says (the store's and the old prune's).
_KINDS = (
    ("claim", ("claimed AS", "picked AS")),
    ("record_look", ("SELECT id, owner, attempts, cancel_requested",)),
    ("record_write", ("WITH o AS",)),
    ("prune", ("ORDER BY finished_at",)),
    ("prune_aged", ("finished_at < ",)),
    ("prune_count", ("FROM jobsched_counts WHERE status IN",)),
    ("fold_counts", ("DELETE FROM jobsched_counts",)),
)


def kind(query: str) -> str | None:
    """The kind of a statement the figures are kept by; None: not kept."""
    text = " ".join(query.split())
    if text.startswith(("BEGIN", "SAVEPOINT", "ROLLBACK", "RELEASE", "COMMIT", "SET ", "LOAD ")):
        return None
    for name, parts in _KINDS:
        if all(part in text for part in parts):
            return name
    return "other: " + text[:60]


def _schedstat(pid: int) -> int:
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0])


def _notice(diag: Any) -> None:
    message = diag.message_primary or ""
    if not _MODE["auto"] or "plan:" not in message:
        return
    body = json.loads(message.split("plan:", 1)[1])
    body["duration"] = float(message.split("duration:", 1)[1].split("ms", 1)[0])
    name = kind(body.get("Query Text", ""))
    if name is not None:
        _AUTO.setdefault(name, []).append(body)


def _explain(plain: Any, conn: Any, text: str, params: Any, name: str) -> None:
    idle = conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    cur = conn.cursor()
    plain(cur, "BEGIN" if idle else "SAVEPOINT costs")
    plain(cur, "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + text, params, prepare=False)
    ((plan,),) = cur.fetchall()
    plain(cur, "ROLLBACK" if idle else "ROLLBACK TO SAVEPOINT costs")
    plain(cur, "SAVEPOINT costs" if not idle else "BEGIN")
    plain(cur, "EXPLAIN (ANALYZE, BUFFERS) " + text, params, prepare=False)
    _TEXT[name] = "\n".join(row[0] for row in cur.fetchall())
    plain(cur, "ROLLBACK" if idle else "ROLLBACK TO SAVEPOINT costs")
    _PLANS.setdefault(name, []).append(plan[0])


def _session(plain: Any, conn: Any) -> None:
    """auto_explain on or off in this session, as the run is."""
    cur = conn.cursor()
    if id(conn) not in _SESSION_AUTO:
        plain(cur, "LOAD 'auto_explain'")
        for setting in ("log_analyze = on", "log_buffers = on", "log_format = json",
                        "log_level = notice"):  # fmt: skip
            plain(cur, "SET auto_explain." + setting)
        conn.add_notice_handler(_notice)
    plain(cur, "SET auto_explain.log_min_duration = " + ("0" if _MODE["auto"] else "-1"))
    _SESSION_AUTO[id(conn)] = _MODE["auto"]
    if _MODE["prepared"] and id(conn) not in _PREPARED:
        plain(cur, "SELECT custom_plans, generic_plans, left(statement, 70) "
                   "FROM pg_prepared_statements ORDER BY 3")  # fmt: skip
        _PREPARED[id(conn)] = cur.fetchall()


def patch() -> Callable[[], None]:
    """Wrap psycopg's ``Cursor.execute`` for the run (see the module); what
    puts it back."""
    plain = psycopg.Cursor.execute

    def execute(self: Any, query: Any, params: Any = None, **kw: Any) -> Any:
        text = query if isinstance(query, str) else None
        name = kind(text) if text is not None else None
        conn = self.connection
        if _SESSION_AUTO.get(id(conn), False) != _MODE["auto"] or (
            _MODE["prepared"] and id(conn) not in _PREPARED
        ):
            _session(plain, conn)
        explained = _MODE["explain"] and text is not None and name is not None
        if explained and text is not None and name is not None and not name.startswith("other"):
            _explain(plain, conn, text, params, name)
        timed = name is not None and _MODE["time"]
        pid = conn.info.backend_pid
        cpu0 = _schedstat(pid) if timed else 0
        t0 = time.perf_counter()
        try:
            return plain(self, query, params, **kw)
        finally:
            if timed and name is not None:
                _TIMES.setdefault(name, []).append(1e3 * (time.perf_counter() - t0))
                _CPU.setdefault(name, []).append((_schedstat(pid) - cpu0) / 1e3)

    psycopg.Cursor.execute = execute  # type: ignore[method-assign]

    def restore() -> None:
        psycopg.Cursor.execute = plain  # type: ignore[method-assign]

    return restore


def _new(job_id: int, key: float) -> Any:
    from jobsched.store import NewJob

    return NewJob(job_id, f"j{job_id}", "async", (0.0, key, 0.0), run_at=0.0,
                  submitted_at=0.0, payload=b"P")  # fmt: skip


def _buffers(node: dict[str, Any]) -> int:
    return int(node.get("Shared Hit Blocks", 0) + node.get("Shared Read Blocks", 0))


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


async def _run(url: str, ready: int, churn: int, batch: int, rounds: int, vacuum: bool) -> Any:
    import jobsched as js
    from jobsched.store import Outcome

    store = js.open_store(url, secret=_SECRET)
    await store.open()
    state = {"next": store.reserve_ids(ready + churn + 4 * rounds * batch + 4 * batch), "key": 0.0}

    def rows(n: int) -> list[Any]:
        out = [_new(int(state["next"]) + i, state["key"] + i) for i in range(n)]
        state["next"] += n
        state["key"] += n
        return out

    for start in range(0, ready, 10_000):
        await store.add(rows(min(10_000, ready - start)), time.time())
    outcomes = 0

    async def one_round() -> None:
        nonlocal outcomes
        await store.add(rows(batch), time.time())
        claims = await store.claim("m", batch, {"async": batch}, time.time(), 60.0)
        done = [Outcome(c.id, c.attempt, js.JobStatus.COMPLETED, time.time()) for c in claims]
        await store.record("m", done)
        outcomes += len(done)
        if outcomes >= 1_000:
            outcomes = 0
            await store.prune(10_000)

    try:
        for n in range(churn // batch):
            if vacuum and n == churn // batch // 2:
                with psycopg.connect(url, autocommit=True) as conn:
                    conn.execute("VACUUM ANALYZE")
            await one_round()
        for mode in ("time", "prepared", "auto", "explain"):
            _MODE[mode] = True
            for _ in range(rounds if mode != "prepared" else 3):
                await one_round()
            _MODE[mode] = False
        await one_round()  # each session's auto_explain off again
    finally:
        await store.close()
    return _figures(url, rounds * batch)


def _figures(url: str, jobs: int) -> dict[str, Any]:
    with psycopg.connect(url, autocommit=True) as conn:
        pages = dict(conn.execute(
            "SELECT indexrelname, pg_relation_size(indexrelid) / 8192 FROM pg_stat_user_indexes "
            "WHERE relname = 'jobsched_jobs' UNION ALL "
            "SELECT 'table', pg_relation_size('jobsched_jobs') / 8192").fetchall())  # fmt: skip
    out: dict[str, Any] = {"pages": pages, "prepared": list(_PREPARED.values()), "kinds": {}}
    for name in sorted(set(_TIMES) | set(_AUTO)):
        auto, plans = _AUTO.get(name, []), _PLANS.get(name, [])
        out["kinds"][name] = {
            "calls": len(_TIMES.get(name, [])),
            "wall_ms": _median(_TIMES.get(name, [])),
            "cpu_us": _median(_CPU.get(name, [])),
            "cpu_us_per_job": sum(_CPU.get(name, [])) / jobs,
            "run_ms": _median([p["duration"] for p in auto]),
            "run_buffers": _median([_buffers(p["Plan"]) for p in auto]),
            "explain_ms": _median([p["Execution Time"] for p in plans]),
            "planning_ms": _median([p["Planning Time"] for p in plans]),
            "explain_buffers": _median([_buffers(p["Plan"]) for p in plans]),
            "plan": _TEXT.get(name),
        }
    return out


def _print(out: dict[str, Any]) -> None:
    print("pages: " + ", ".join(f"{k} {v}" for k, v in sorted(out["pages"].items())))
    for name, f in out["kinds"].items():
        if name.startswith("other") and f["cpu_us_per_job"] < 0.5:
            continue
        figures = ", ".join(
            f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}"
            for k, v in f.items() if k != "plan" and v is not None
        )  # fmt: skip
        print(f"{name}: {figures}")
    for session in out["prepared"]:
        print("session's prepared statements (custom, generic plans):", session)


def main(argv: list[str]) -> None:
    args = argv[:2]
    option = {a: argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("--batch", "--rounds")}
    os.environ.setdefault("JOBSCHED_SECRET", _SECRET)
    restore = patch()
    try:
        with database() as url:
            out = anyio.run(_run, url, int(args[0]), int(args[1]),
                            int(option.get("--batch", 256)), int(option.get("--rounds", 40)),
                            "--vacuum" in argv)  # fmt: skip
    finally:
        restore()
    if "--json" in argv:
        print(json.dumps(out, default=str))
    else:
        _print(out)


if __name__ == "__main__":
    main(sys.argv[1:])
