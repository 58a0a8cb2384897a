"""The PostgreSQL schema: its tables and indexes, creation, versions and migrations."""

from __future__ import annotations

from typing import Any

import psycopg

from jobsched import StoreUnavailableError
from jobsched.store import mask_password

from . import _pauses, _prune, _sqlapi
from ._connect import masked_error, require_version
from ._triggers import COUNTS as _COUNTS
from ._triggers import ENTERED_XID as _ENTERED_XID

#: The schema this code writes. A database with a newer one was written by a
#: newer jobsched, and this one refuses it rather than guess.
VERSION = 6

#: The channel every member LISTENs on; a commit that makes work claimable
#: NOTIFYs it.
CHANNEL = "jobsched"

#: The schema's creation or migration (``prepare``): it waits for the other
#: members starting at once (an advisory lock) and may rewrite a table.
PREPARE_LOCK_TIMEOUT = 60.0
PREPARE_STATEMENT_TIMEOUT = 600.0

# Creating the schema (and adding named queues' column, _queues) is
# serialised across members by this advisory lock (any 64-bit number that
# no other application is likely to pick).
SCHEMA_LOCK = 0x6A6F627363686564  # "jobsched"

# queue: where a PENDING or RETRY_WAIT job waits. 0: ready (a claim takes it
# in key order), 1: waiting for run_at (a delay or a retry backoff), 2:
# blocked on dependencies (unmet > 0). NULL: running or finished. Each queue
# has a partial index, so a claim reads only ready rows in key order (per
# executor: a member claims only its executors' jobs) and promotion reads
# only due waiting rows.
# The blocked queue's own index: with the ready and waiting ones and the
# running rows' (jobsched_jobs_running), it counts the unfinished jobs.
_BLOCKED_INDEX = (
    "CREATE INDEX IF NOT EXISTS jobsched_jobs_blocked ON jobsched_jobs (id) WHERE queue = 2"
)
# Finished rows oldest first, in prune's order.
_FINISHED_INDEX = (
    "CREATE INDEX IF NOT EXISTS jobsched_jobs_finished ON jobsched_jobs (finished_at, id) "
    "WHERE finished_at IS NOT NULL"
)
# Every row but the completed ones (the bulk of a long history) by status
# in id order: the operator's lists by status (the queued jobs, the
# failures) read a page of it (see _reads.jobs_query).
_STATUS_INDEX = (
    "CREATE INDEX IF NOT EXISTS jobsched_jobs_status ON jobsched_jobs (status, id) "
    "WHERE status <> 'completed'"
)
# Workflows (issue 37): their rows (ids from next_id, as jobs'), and a
# workflow's jobs by id. An edge of jobsched_deps says its policy
# (on_failure 0: an upstream that did not complete cancels the dependent,
# 1: the dependent runs anyway) and its state (settled 0: waiting, 1: met,
# 2: settled by an end other than COMPLETED), and stays until its dependent
# goes. progress and progress_message are in no index and not in the
# entered_xid trigger's columns: a progress write fires no row trigger and
# may be a HOT update.
_WORKFLOWS = [
    """CREATE TABLE IF NOT EXISTS jobsched_workflows (
        id bigint PRIMARY KEY,
        name text NOT NULL,
        created_at double precision NOT NULL,
        size integer NOT NULL
    )""",
    # INCLUDE status: the list's counts are an index-only read, not a heap
    # visit per job of a big workflow. No update is made non-HOT by it: a
    # status change is not HOT anyway (jobsched_jobs_status).
    "CREATE INDEX IF NOT EXISTS jobsched_jobs_workflow ON jobsched_jobs (workflow, id) "
    "INCLUDE (status) WHERE workflow IS NOT NULL",
]
_DDL = [
    "CREATE TABLE jobsched_meta (key text PRIMARY KEY, value bigint NOT NULL)",
    """CREATE TABLE jobsched_jobs (
        id bigint PRIMARY KEY,
        name text NOT NULL,
        executor text NOT NULL,
        status text NOT NULL,
        queue smallint,
        k0 double precision NOT NULL,
        k1 double precision NOT NULL,
        k2 double precision NOT NULL,
        run_at double precision NOT NULL,
        submitted_at double precision NOT NULL,
        started_at double precision,
        finished_at double precision,
        attempts integer NOT NULL DEFAULT 0,
        owner text,
        ran_by text,
        lease_until double precision,
        cancel_requested boolean NOT NULL DEFAULT false,
        unmet integer NOT NULL DEFAULT 0,
        tenant text,
        rate_key text,
        payload bytea NOT NULL,
        result bytea,
        last_error text,
        last_traceback text,
        schedule text,
        fire_time double precision,
        args jsonb,
        entered_xid xid8 DEFAULT pg_current_xact_id(),
        workflow bigint,
        progress double precision,
        progress_message text
    )""",
    """CREATE TABLE jobsched_deps (
        upstream bigint NOT NULL,
        downstream bigint NOT NULL,
        on_failure smallint NOT NULL DEFAULT 0,
        settled smallint NOT NULL DEFAULT 0,
        PRIMARY KEY (upstream, downstream)
    )""",
    "CREATE INDEX jobsched_deps_downstream ON jobsched_deps (downstream)",
    "CREATE INDEX jobsched_jobs_ready ON jobsched_jobs (executor, k0, k1, k2, id) WHERE queue = 0",
    # Fair share reads each tenant's best ready rows.
    "CREATE INDEX jobsched_jobs_tenant_ready ON jobsched_jobs (executor, tenant, k0, k1, k2, id) "
    "WHERE queue = 0 AND tenant IS NOT NULL",
    "CREATE INDEX jobsched_jobs_waiting ON jobsched_jobs (run_at) WHERE queue = 1",
    _BLOCKED_INDEX,
    _FINISHED_INDEX,
    _STATUS_INDEX,
    "CREATE UNIQUE INDEX jobsched_jobs_fires ON jobsched_jobs (schedule, fire_time) "
    "WHERE schedule IS NOT NULL",
    # One row per attempt that ended other than COMPLETED, written with its
    # outcome: what a timeline of the fleet draws, with the running and the
    # completed attempts read from their jobs' rows (ran_by: the member that
    # started the job's last attempt).
    """CREATE TABLE jobsched_attempts (
        job_id bigint NOT NULL,
        attempt integer NOT NULL,
        owner text,
        started_at double precision NOT NULL,
        finished_at double precision,
        status text NOT NULL,
        error text,
        PRIMARY KEY (job_id, attempt)
    )""",
    "CREATE INDEX jobsched_attempts_finished ON jobsched_attempts (finished_at)",
    # Token buckets of rate keys, shared by the fleet, taken in claims.
    """CREATE TABLE jobsched_buckets (
        key text PRIMARY KEY,
        tokens double precision NOT NULL,
        updated double precision NOT NULL
    )""",
    # Fair share's rotation (docs/stores.md): per tenant ('' for None) the
    # turn it was last served in (0: never) and the credit left in its turn.
    # add() makes a tenant's row; the None tenant's, made here, is the lock
    # a fair-share claim holds.
    """CREATE TABLE jobsched_tenants (
        tenant text PRIMARY KEY,
        served bigint NOT NULL DEFAULT 0,
        credit integer NOT NULL DEFAULT 0
    )""",
    "INSERT INTO jobsched_tenants (tenant) VALUES ('')",
    """CREATE TABLE jobsched_schedules (
        id text PRIMARY KEY,
        payload bytea NOT NULL,
        next_fire double precision NOT NULL,
        last_job bigint,
        owner text,
        lease_until double precision
    )""",
    "CREATE INDEX jobsched_schedules_due ON jobsched_schedules (next_fire)",
    *_COUNTS,
    *_ENTERED_XID,
    *_WORKFLOWS,
    f"INSERT INTO jobsched_meta (key, value) VALUES ('schema', {VERSION}), ('next_id', 1)",
]


#: Statements that bring a schema from version ``v - 1`` to ``v``, by ``v``;
#: run in the same locked transaction as the check, so one member migrates.
MIGRATIONS: dict[int, list[str]] = {
    # Unfinished jobs are counted queue by queue (PostgresStore.unfinished):
    # an index of every unfinished row took an entry at each claim.
    # And prune reads the oldest finished rows in (finished_at, id) order
    # from an index, where it sorted every finished row (20 ms at 20k rows).
    # And an attempt's row is written when it ends, unless it completed (its
    # job's row says it all, with ran_by): a running attempt's row, which
    # schema 1 wrote at the claim, goes, its member kept in ran_by.
    2: [
        "DROP INDEX IF EXISTS jobsched_jobs_unfinished",
        _BLOCKED_INDEX,
        "DROP INDEX IF EXISTS jobsched_jobs_finished",
        _FINISHED_INDEX,
        "ALTER TABLE jobsched_jobs ADD COLUMN IF NOT EXISTS ran_by text",
        "UPDATE jobsched_jobs j SET ran_by = a.owner FROM jobsched_attempts a "
        "WHERE a.job_id = j.id AND a.attempt = j.attempts",
        "DELETE FROM jobsched_attempts a USING jobsched_jobs j WHERE a.job_id = j.id "
        "AND a.attempt = j.attempts AND j.status = 'running'",
    ],
    # The status index, and the counts (see _COUNTS), from one count of the
    # rows there. The lock
    # waits for the transactions writing jobs now and holds off new ones
    # until this one commits with the triggers: no change is missed or
    # counted twice.
    3: [
        "LOCK TABLE jobsched_jobs IN SHARE ROW EXCLUSIVE MODE",
        _STATUS_INDEX,
        *_COUNTS,
        "DELETE FROM jobsched_counts",
        "INSERT INTO jobsched_counts (status, executor, n) "
        "SELECT status, executor, count(*) FROM jobsched_jobs GROUP BY 1, 2",
    ],
    # A registered job's arguments (jsonb), NULL on every row there: a
    # pickled job's. A nullable column without a default is a catalog
    # change, no row is rewritten; its ACCESS EXCLUSIVE lock is held for
    # that instant (the prepare lock_timeout bounds the wait for it).
    # And the names a member runs in the members list (a table made on
    # demand, so it may not be there).
    4: [
        "ALTER TABLE jobsched_jobs ADD COLUMN IF NOT EXISTS args jsonb",
        "ALTER TABLE IF EXISTS jobsched_members ADD COLUMN IF NOT EXISTS names text[]",
    ],
    # The transaction that made each ready or running row so (see
    # _ENTERED_XID), for claims and looks that seek past the entries
    # earlier ones left (_frontier, _running). The column is added without
    # a default (no row rewritten: the rows there read NULL, "before any
    # snapshot", which the first claim and look of every member read from
    # the front); the default then applies to later inserts. The indexes
    # are built under the migration's lock: each build reads the table once.
    # The leases' index goes (see _triggers.RUNNING_INDEX).
    5: [
        "ALTER TABLE jobsched_jobs ADD COLUMN IF NOT EXISTS entered_xid xid8",
        "ALTER TABLE jobsched_jobs ALTER COLUMN entered_xid SET DEFAULT pg_current_xact_id()",
        *_ENTERED_XID,
        "DROP INDEX IF EXISTS jobsched_jobs_leases",
    ],
    # Workflows (see _WORKFLOWS). Nullable columns, and NOT NULL ones with a
    # constant default: catalog changes since PostgreSQL 11, no row
    # rewritten. The edges there are the waiting ones (schema 5 deleted the
    # met ones), so settled 0 is right for each. The workflow index is
    # built on an empty set of rows (one read of the table). And the
    # members' level (see _members).
    6: [
        "ALTER TABLE jobsched_jobs ADD COLUMN IF NOT EXISTS workflow bigint",
        "ALTER TABLE jobsched_jobs ADD COLUMN IF NOT EXISTS progress double precision",
        "ALTER TABLE jobsched_jobs ADD COLUMN IF NOT EXISTS progress_message text",
        "ALTER TABLE jobsched_deps ADD COLUMN IF NOT EXISTS on_failure smallint NOT NULL DEFAULT 0",
        "ALTER TABLE jobsched_deps ADD COLUMN IF NOT EXISTS settled smallint NOT NULL DEFAULT 0",
        *_WORKFLOWS,
        "ALTER TABLE IF EXISTS jobsched_members ADD COLUMN IF NOT EXISTS level smallint",
    ],
}


def has_schema(conn: psycopg.Connection[Any], url: str) -> bool:
    """Whether the database (on the connection's search_path) holds jobsched's tables.

    :raises StoreUnavailableError: the server refuses the query.
    """
    try:
        row = conn.execute("SELECT to_regclass('jobsched_meta') IS NOT NULL").fetchone()
    except psycopg.Error as exc:
        raise StoreUnavailableError(
            f"cannot read the PostgreSQL store {mask_password(url)!r}: {masked_error(exc, url)}"
        ) from None
    return bool(row is not None and row[0])


def prepare(conn: psycopg.Connection[Any], url: str) -> None:
    """Create the schema on first start, or check the one there.

    One transaction under an advisory lock, so members starting together
    create it once.

    :raises StoreUnavailableError: the schema is from a newer jobsched, or
        cannot be created (no permission), or the server is too old.
    """
    require_version(conn, url)
    masked = mask_password(url)
    try:
        with conn.transaction():
            conn.execute(
                "SELECT set_config('lock_timeout', %s, true), "
                "set_config('statement_timeout', %s, true)",
                (
                    f"{round(PREPARE_LOCK_TIMEOUT * 1000)}ms",
                    f"{round(PREPARE_STATEMENT_TIMEOUT * 1000)}ms",
                ),
            )
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
            exists = conn.execute("SELECT to_regclass('jobsched_meta') IS NOT NULL").fetchone()
            if exists is not None and exists[0]:
                row = conn.execute(
                    "SELECT value FROM jobsched_meta WHERE key = 'schema'"
                ).fetchone()
                version = int(row[0]) if row is not None else 0
                if 1 <= version < VERSION:
                    for step in range(version + 1, VERSION + 1):
                        for statement in MIGRATIONS.get(step, ()):
                            conn.execute(statement)
                    conn.execute(
                        "UPDATE jobsched_meta SET value = %s WHERE key = 'schema'", (VERSION,)
                    )
                    version = VERSION
            else:
                for statement in _DDL:
                    conn.execute(statement)
                version = VERSION
            if version == VERSION:
                # The SQL functions, under this lock too (see _sqlapi).
                _sqlapi.install(conn)
                _prune.index_ended(conn)
                _pauses.ensure(conn)
    except psycopg.Error as exc:
        raise StoreUnavailableError(
            f"cannot create or read the jobsched schema in {masked!r}: {masked_error(exc, url)}; "
            "check that the user may create tables in that database"
        ) from None
    if version > VERSION:
        raise StoreUnavailableError(
            f"the PostgreSQL store {masked!r} has schema version {version}, written by a "
            f"newer jobsched (this one knows up to {VERSION}); upgrade jobsched-store-postgres"
        )
    if version < 1:
        raise StoreUnavailableError(
            f"the PostgreSQL store {masked!r} has no valid jobsched schema version; its "
            "jobsched_meta table is damaged or not jobsched's"
        )
