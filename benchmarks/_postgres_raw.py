"""The hand-written psycopg loop of W10-W12: the physical limit of the same work.

One table (id, status, priority, pickled payload, owner, attempt, lease), a
partial index on the ready rows in claim order, and the batches a fleet
member can use: every job inserted in one transaction (``executemany``,
which psycopg pipelines), claims of up to :data:`WORKERS` jobs in one
``FOR UPDATE SKIP LOCKED`` statement that sets owner, attempt and lease, each
batch run and its completions written in one statement fenced on the owner.
Durability is the server's default (``synchronous_commit = on``), as for the
store.

A member process (``python -m benchmarks._postgres_raw URL``) LISTENs on a
channel the submitter NOTIFYs in its insert's transaction, claims until the
queue is empty, then waits for the next notification; it prints ``ready``
once listening and ``started ID MONOTONIC`` as each job starts (W11), and
stops when its standard input closes.
"""

from __future__ import annotations

import os
import pickle
import select
import sys
import time
import uuid
from typing import Any

import psycopg

from benchmarks._postgres import WORKERS
from benchmarks._work import noop

CHANNEL = "raw_jobs"

_DDL = (
    "CREATE TABLE jobs (id BIGSERIAL PRIMARY KEY, status TEXT NOT NULL, "
    "priority INTEGER NOT NULL, payload BYTEA NOT NULL, owner TEXT, "
    "attempt INTEGER NOT NULL DEFAULT 0, lease_until TIMESTAMPTZ, finished_at TIMESTAMPTZ)",
    "CREATE INDEX jobs_ready ON jobs (priority, id) WHERE status = 'pending'",
)
_CLAIM = (
    "WITH ready AS (SELECT id FROM jobs WHERE status = 'pending' ORDER BY priority, id "
    "LIMIT %s FOR UPDATE SKIP LOCKED) "
    "UPDATE jobs SET status = 'running', owner = %s, attempt = jobs.attempt + 1, "
    "lease_until = now() + interval '30 seconds' FROM ready WHERE jobs.id = ready.id "
    "RETURNING jobs.id, jobs.payload"
)
_DONE = (
    "UPDATE jobs SET status = 'completed', finished_at = now(), owner = NULL "
    "WHERE id = ANY(%s) AND owner = %s"
)
_LEFT = "SELECT count(*) FROM jobs WHERE status <> 'completed'"


def connect(url: str) -> psycopg.Connection[Any]:
    return psycopg.connect(url, autocommit=True)


def create_schema(url: str) -> None:
    with connect(url) as conn:
        for statement in _DDL:
            conn.execute(statement)


def insert(conn: psycopg.Connection[Any], count: int) -> None:
    """``count`` no-op jobs in one transaction that also wakes the listening members."""
    payload = pickle.dumps((noop, ()))
    with conn.transaction(), conn.cursor() as cursor:
        cursor.executemany(
            "INSERT INTO jobs (status, priority, payload) VALUES ('pending', 0, %s)",
            [(payload,)] * count,
        )
        cursor.execute(f"NOTIFY {CHANNEL}")


def insert_one(conn: psycopg.Connection[Any]) -> int:
    """One no-op job and its notification, committed; its id."""
    with conn.transaction():
        (job_id,) = conn.execute(
            "INSERT INTO jobs (status, priority, payload) VALUES ('pending', 0, %s) RETURNING id",
            (pickle.dumps((noop, ())),),
        ).fetchone()  # type: ignore[misc]
        conn.execute(f"NOTIFY {CHANNEL}")
    return job_id  # type: ignore[no-any-return]


def claim(conn: psycopg.Connection[Any], owner: str) -> list[tuple[int, bytes]]:
    return conn.execute(_CLAIM, (WORKERS, owner)).fetchall()


async def dispatch(conn: psycopg.Connection[Any], owner: str, started: Any = None) -> int:
    """Claim, run and complete batches until the queue has no ready job; the number run."""
    done = 0
    while rows := claim(conn, owner):
        for job_id, payload in rows:
            func, args = pickle.loads(payload)
            if started is not None:
                started(job_id)
            await func(*args)
        conn.execute(_DONE, ([job_id for job_id, _ in rows], owner))
        done += len(rows)
    return done


def left(conn: psycopg.Connection[Any]) -> int:
    row = conn.execute(_LEFT).fetchone()
    assert row is not None
    return int(row[0])


def member(url: str, *, report: bool) -> None:
    """A listening member: claims whenever notified, until standard input closes."""
    import asyncio

    owner = f"raw-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    conn = connect(url)
    listener = connect(url)
    listener.execute(f"LISTEN {CHANNEL}")

    def started(job_id: int) -> None:
        sys.stdout.write(f"started {job_id} {time.monotonic()}\n")
        sys.stdout.flush()

    async def serve() -> None:
        print("ready", flush=True)
        while True:
            await dispatch(conn, owner, started if report else None)
            readable, _, _ = select.select([listener.fileno(), sys.stdin], [], [])
            if sys.stdin in readable and not sys.stdin.readline():
                return
            # Drain every pending notification: one claim round serves them all.
            for _ in listener.notifies(timeout=0):
                pass

    asyncio.run(serve())


if __name__ == "__main__":
    member(sys.argv[1], report="--report" in sys.argv[2:])
