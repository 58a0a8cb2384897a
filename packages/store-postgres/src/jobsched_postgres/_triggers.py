"""The PostgreSQL schema's triggers: the counts' deltas and the rows'
entered_xid, in a new schema and in the migrations that add them."""

from __future__ import annotations

# jobsched_counts: how many jobs have each (status, executor), as rows of
# deltas that counts() sums: every statement that writes jobsched_jobs
# appends its net change per status and executor (a statement-level trigger
# over its transition tables: one INSERT per statement, not per row), so a
# read of the counts costs the deltas since they were last folded into one
# row each (fold_counts(): by counts() when they pile up, and by prune)
# instead of a GROUP BY over every job (1.2-1.8 s at 1M). Appending, never
# updating, a row: a single counter row per status updated by every
# outcome would serialise the fleet's commits on its row lock. The functions
# keep the search_path they were created with, so a session that names the
# table by its schema (an operator's psql) counts into the same table.
COUNTS = [
    "CREATE TABLE IF NOT EXISTS jobsched_counts ("
    "status text NOT NULL, executor text NOT NULL, n bigint NOT NULL)",
    """CREATE OR REPLACE FUNCTION jobsched_count_added() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT AS $$ BEGIN
        INSERT INTO jobsched_counts (status, executor, n)
        SELECT status, executor, count(*) FROM jobsched_new GROUP BY 1, 2;
        RETURN NULL;
    END $$""",
    """CREATE OR REPLACE FUNCTION jobsched_count_deleted() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT AS $$ BEGIN
        INSERT INTO jobsched_counts (status, executor, n)
        SELECT status, executor, -count(*) FROM jobsched_old GROUP BY 1, 2;
        RETURN NULL;
    END $$""",
    # An UPDATE that changes no status (a heartbeat, a promotion) nets to
    # nothing and appends no row.
    """CREATE OR REPLACE FUNCTION jobsched_count_updated() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT AS $$ BEGIN
        INSERT INTO jobsched_counts (status, executor, n)
        SELECT status, executor, sum(n) FROM (
            SELECT status, executor, 1 AS n FROM jobsched_new
            UNION ALL SELECT status, executor, -1 FROM jobsched_old
        ) d GROUP BY 1, 2 HAVING sum(n) <> 0;
        RETURN NULL;
    END $$""",
    # A TRUNCATE (an operator emptying the store by hand) leaves nothing to count.
    """CREATE OR REPLACE FUNCTION jobsched_count_truncated() RETURNS trigger
    LANGUAGE plpgsql SET search_path FROM CURRENT AS $$ BEGIN
        DELETE FROM jobsched_counts;
        RETURN NULL;
    END $$""",
    "DROP TRIGGER IF EXISTS jobsched_count_truncated ON jobsched_jobs",
    "CREATE TRIGGER jobsched_count_truncated AFTER TRUNCATE ON jobsched_jobs "
    "FOR EACH STATEMENT EXECUTE FUNCTION jobsched_count_truncated()",
    "DROP TRIGGER IF EXISTS jobsched_count_added ON jobsched_jobs",
    "CREATE TRIGGER jobsched_count_added AFTER INSERT ON jobsched_jobs "
    "REFERENCING NEW TABLE AS jobsched_new FOR EACH STATEMENT "
    "EXECUTE FUNCTION jobsched_count_added()",
    "DROP TRIGGER IF EXISTS jobsched_count_deleted ON jobsched_jobs",
    "CREATE TRIGGER jobsched_count_deleted AFTER DELETE ON jobsched_jobs "
    "REFERENCING OLD TABLE AS jobsched_old FOR EACH STATEMENT "
    "EXECUTE FUNCTION jobsched_count_deleted()",
    "DROP TRIGGER IF EXISTS jobsched_count_updated ON jobsched_jobs",
    "CREATE TRIGGER jobsched_count_updated AFTER UPDATE ON jobsched_jobs "
    "REFERENCING OLD TABLE AS jobsched_old NEW TABLE AS jobsched_new FOR EACH STATEMENT "
    "EXECUTE FUNCTION jobsched_count_updated()",
]
# entered_xid: the transaction that last put the row in the ready queue
# (queue 0) or made it running, so that a claim finds the rows made ready
# since its last snapshot, and a look for lost attempts the rows made
# running since its last one, without walking an index from its front
# (see _frontier and _running). An insert takes it from the column's
# default; a row that an UPDATE makes ready (a promotion, a release, a
# hand-back, a retry, a dependency met: every path, this store's own and
# any other's) from the trigger; a claim (_claim._TAKE) sets it itself,
# and the trigger sets it for an update that makes a row running without
# setting it (the claim of a member still on schema 4's code, which keeps
# running through a rolling upgrade: its rows would be missed by every
# look for lost attempts of the members started before them).
# Its indexes serve those looks: the ready rows by entered_xid and
# executor, the running rows by entered_xid.
# The running rows by the transaction that made them running. It replaced
# an index of their leases (`lease_until`), which every heartbeat wrote to
# (no heartbeat could be a HOT update) and every look for lost attempts
# walked from its oldest lease, through every entry a finished job left
# there since the xmin horizon last moved.
RUNNING_INDEX = (
    "CREATE INDEX IF NOT EXISTS jobsched_jobs_running ON jobsched_jobs (entered_xid) "
    "WHERE status = 'running'"
)
ENTERED_XID = [
    """CREATE OR REPLACE FUNCTION jobsched_entered_xid() RETURNS trigger
    LANGUAGE plpgsql AS $$ BEGIN
        NEW.entered_xid := pg_current_xact_id();
        RETURN NEW;
    END $$""",
    "DROP TRIGGER IF EXISTS jobsched_entered_xid ON jobsched_jobs",
    # A ready row whose key, executor or gate (what a member may claim: its
    # name, arguments, signing key) changes is made ready anew too. The WHEN
    # is evaluated without calling the function: a claim's or an outcome's
    # rows (queue NULL) cost a comparison each, a heartbeat's nothing.
    "CREATE TRIGGER jobsched_entered_xid BEFORE UPDATE OF queue, status, executor, k0, k1, k2, "
    "name, args, payload ON jobsched_jobs FOR EACH ROW WHEN ((NEW.queue = 0 AND ("
    "OLD.queue IS DISTINCT FROM 0 OR OLD.executor <> NEW.executor OR OLD.k0 <> NEW.k0 "
    "OR OLD.k1 <> NEW.k1 OR OLD.k2 <> NEW.k2 OR OLD.name <> NEW.name "
    "OR OLD.args IS DISTINCT FROM NEW.args OR OLD.payload <> NEW.payload)) "
    "OR (NEW.status = 'running' AND OLD.status <> 'running' "
    "AND NEW.entered_xid IS NOT DISTINCT FROM OLD.entered_xid)) "
    "EXECUTE FUNCTION jobsched_entered_xid()",
    # The planner must never take it for the ready index, nor the ready
    # index for it: led by executor, it was its choice for a claim's read in
    # key order (a smaller index, sorted after: at 100,000 ready rows, all
    # of them). `queue IS NOT DISTINCT FROM 0` says `queue = 0` in a form
    # the claims' `queue = 0` does not imply (no other read can use it) and
    # only _frontier's reads of the new rows say (they can use no other).
    "CREATE INDEX IF NOT EXISTS jobsched_jobs_entered ON jobsched_jobs (entered_xid, executor) "
    "WHERE queue IS NOT DISTINCT FROM 0",
    RUNNING_INDEX,
]
