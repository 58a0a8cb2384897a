"""The store's SQL functions: ``jobsched_add`` (a job written in a caller's
transaction, see ``_txadd``) and ``jobsched_enqueue`` (a registered job
enqueued from SQL: ``psql``, a trigger, another language), with the table
of registered functions the latter reads.

Installed by ``_schema.prepare`` under the schema's advisory lock (two
members replacing one function at once fail with "tuple concurrently
updated"), in the store's schema, when the store's ``sql_api`` mark in
``jobsched_meta`` is older than :data:`VERSION`: no schema version of its
own, so a store of the previous code opens as it was and gains them. Each
function keeps the search_path it was created with, so a caller whose own
search_path does not name the store's schema still writes the store's
tables (it names the function by its schema).

What a job needs that SQL cannot know: the ``jobsched_functions`` row of its
name, written by every scheduler of the app that registers it when it
opens the store (``JobStore.put_functions``): its executor, queue, tenant,
rate key and sort-key recipe (see ``jobsched._engine._functions``). The
arguments are kept as ``{"$args": [...], "$kwargs": {...}}``, which the
worker binds to the function's signature when it runs the job (SQL cannot
know parameter names). An enqueue without ``job_id`` gets one of its own,
``sql-`` and a random UUID, numbered as any id of your own
(``jobsched_own_number``): no counter row is locked for the rest of the
caller's transaction, as reserving from ``next_id`` there would.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from jobsched.store import Registered

from ._blake2b import own_number_sql

#: The functions' version: a store marked older gets them (re)created.
#: 2: jobsched_add keeps the edges to completed upstreams (schema 6).
#: 3: jobsched_enqueue refuses result markers in its arguments.
#: 4: jobsched_add takes the upstreams of "run" edges (a 16th argument); the
#:    15-argument one stays, for jobsched_enqueue and members of version 3.
VERSION = 4

#: ``jobsched_add``'s argument types, for ``to_regprocedure``: the one with
#: the "run" edges, which a store of version 3 lacks.
ADD_SIGNATURE = (
    "jobsched_add(bigint, text, text, text, double precision, double precision, "
    "double precision, double precision, double precision, text, text, bytea, jsonb, "
    "bigint[], double precision, bigint[])"
)

_FUNCTIONS_TABLE = """CREATE TABLE IF NOT EXISTS jobsched_functions (
    name text PRIMARY KEY,
    executor text NOT NULL,
    queue text NOT NULL,
    tenant text,
    rate_key text,
    key_base double precision[],
    key_seq double precision[],
    key_submitted double precision[],
    updated_at double precision NOT NULL
)"""

# The add of _sql.add for one job, in the caller's transaction: the
# upstreams read FOR SHARE (one completing now waits for this transaction
# and then sees its edges), a held own id adds nothing (ON CONFLICT: a
# concurrent insert of it waits for the other transaction, never fails),
# and NOTIFY commits with the caller. Nothing is written when an upstream
# is missing (`missing`), so the caller's Python raises and its
# transaction goes on. Each edge is kept with its policy and state as
# _sql.plan keeps it: an upstream in p_run_on_failure that ended other
# than completed is settled (2) and does not hold the job back, where a
# "cancel" edge's cancels the job at once.
_ADD = """CREATE OR REPLACE FUNCTION jobsched_add(
    p_id bigint, p_name text, p_executor text, p_queue text,
    p_k0 double precision, p_k1 double precision, p_k2 double precision,
    p_run_at double precision, p_submitted_at double precision,
    p_tenant text, p_rate_key text, p_payload bytea, p_args jsonb,
    p_depends_on bigint[], p_now double precision, p_run_on_failure bigint[],
    OUT added boolean, OUT missing bigint[])
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    up record;
    v_status text := 'pending';
    v_queue smallint;
    v_unmet integer := 0;
    v_failed text;
    v_finished double precision;
BEGIN
    added := false;
    missing := ARRAY(
        SELECT u FROM unnest(p_depends_on) u
        WHERE NOT EXISTS (SELECT 1 FROM jobsched_jobs j WHERE j.id = u));
    IF cardinality(missing) > 0 THEN
        RETURN;
    END IF;
    FOR up IN SELECT j.id, j.status FROM jobsched_jobs j WHERE j.id = ANY(p_depends_on)
              ORDER BY j.id FOR SHARE LOOP
        IF up.status = 'completed' THEN
            CONTINUE;
        ELSIF up.status IN ('failed', 'timed_out', 'cancelled') THEN
            IF up.id = ANY(p_run_on_failure) THEN
                CONTINUE;  -- settled: the job runs however this upstream ended
            END IF;
            v_failed := format('upstream job-%s %s', up.id, up.status);
            EXIT;
        END IF;
        v_unmet := v_unmet + 1;
    END LOOP;
    IF v_failed IS NOT NULL THEN
        v_status := 'cancelled';
        v_finished := p_now;
        v_unmet := 0;
    ELSIF v_unmet > 0 THEN
        v_queue := 2;
    ELSIF p_run_at <= p_now THEN
        v_queue := 0;
    ELSE
        v_queue := 1;
    END IF;
    IF p_queue = 'default' THEN
        INSERT INTO jobsched_jobs (id, name, executor, status, queue, k0, k1, k2, run_at,
            submitted_at, unmet, tenant, rate_key, payload, finished_at, last_error, args)
        VALUES (p_id, p_name, p_executor, v_status, v_queue, p_k0, p_k1, p_k2, p_run_at,
            p_submitted_at, v_unmet, p_tenant, p_rate_key, p_payload, v_finished, v_failed,
            p_args)
        ON CONFLICT (id) DO NOTHING;
    ELSE
        -- The column is there: the caller made sure (_queues.add_column).
        INSERT INTO jobsched_jobs (id, name, executor, status, queue, k0, k1, k2, run_at,
            submitted_at, unmet, tenant, rate_key, payload, finished_at, last_error, args,
            queue_name)
        VALUES (p_id, p_name, p_executor, v_status, v_queue, p_k0, p_k1, p_k2, p_run_at,
            p_submitted_at, v_unmet, p_tenant, p_rate_key, p_payload, v_finished, v_failed,
            p_args, p_queue)
        ON CONFLICT (id) DO NOTHING;
    END IF;
    IF NOT FOUND THEN
        RETURN;  -- an id of the caller's own that the store holds: that job stands
    END IF;
    added := true;
    IF v_failed IS NULL AND cardinality(p_depends_on) > 0 THEN
        -- Every edge, kept until the job goes, with its policy (1: "run"):
        -- a completed upstream's met (1), another ended one's settled (2).
        INSERT INTO jobsched_deps (upstream, downstream, on_failure, settled)
        SELECT j.id, p_id, CASE WHEN j.id = ANY(p_run_on_failure) THEN 1 ELSE 0 END,
            CASE WHEN j.status = 'completed' THEN 1
                 WHEN j.status IN ('failed', 'timed_out', 'cancelled') THEN 2 ELSE 0 END
        FROM jobsched_jobs j WHERE j.id = ANY(p_depends_on)
        ON CONFLICT DO NOTHING;
    END IF;
    IF p_tenant IS NOT NULL THEN
        INSERT INTO jobsched_tenants (tenant) VALUES (p_tenant) ON CONFLICT DO NOTHING;
    END IF;
    IF v_failed IS NULL THEN
        PERFORM pg_notify('jobsched', '');
    END IF;
END $$"""

# The add of version 3 (no "run" edges), as jobsched_enqueue and a member
# of that version call it: the add above with none.
_ADD_PLAIN = """CREATE OR REPLACE FUNCTION jobsched_add(
    p_id bigint, p_name text, p_executor text, p_queue text,
    p_k0 double precision, p_k1 double precision, p_k2 double precision,
    p_run_at double precision, p_submitted_at double precision,
    p_tenant text, p_rate_key text, p_payload bytea, p_args jsonb,
    p_depends_on bigint[], p_now double precision,
    OUT added boolean, OUT missing bigint[])
LANGUAGE sql SET search_path FROM CURRENT AS $$
    SELECT * FROM jobsched_add(p_id, p_name, p_executor, p_queue, p_k0, p_k1, p_k2,
        p_run_at, p_submitted_at, p_tenant, p_rate_key, p_payload, p_args, p_depends_on,
        p_now, '{}'::bigint[])
$$"""

_ENQUEUE = r"""CREATE OR REPLACE FUNCTION jobsched_enqueue(
    name text, args jsonb DEFAULT '[]', kwargs jsonb DEFAULT '{}',
    queue text DEFAULT 'default', run_at timestamptz DEFAULT now(),
    job_id text DEFAULT NULL) RETURNS text
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    f jobsched_functions%ROWTYPE;
    v_id text := jobsched_enqueue.job_id;
    v_queue text := jobsched_enqueue.queue;
    v_now double precision := extract(epoch FROM clock_timestamp());
    v_seq double precision := floor(extract(epoch FROM clock_timestamp()) * 1000000);
    k double precision[];
    result record;
BEGIN
    SELECT * INTO f FROM jobsched_functions AS r WHERE r.name = jobsched_enqueue.name;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'jobsched_enqueue: no job named % is registered in this store',
            quote_nullable(jobsched_enqueue.name) USING ERRCODE = 'invalid_parameter_value',
            HINT = 'register it with @app.job (serializer "json") and start a scheduler of '
            'that app on this store once (a worker, or a producer): it records the jobs '
            'the app registers';
    END IF;
    IF args IS NULL OR jsonb_typeof(args) <> 'array' THEN
        RAISE EXCEPTION 'jobsched_enqueue: args must be a JSON array (the positional '
            'arguments), got %', coalesce(args::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value', HINT = 'pass ''[]''::jsonb for none';
    END IF;
    IF kwargs IS NULL OR jsonb_typeof(kwargs) <> 'object' THEN
        RAISE EXCEPTION 'jobsched_enqueue: kwargs must be a JSON object (the arguments by '
            'name), got %', coalesce(kwargs::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value', HINT = 'pass ''{}''::jsonb for none';
    END IF;
    -- A result marker binds to an upstream's result, which SQL cannot name
    -- (no depends_on here): the worker would decode the tag and the job
    -- could never run. A marker is a one-key object anywhere in the
    -- arguments, as the worker's decoder finds it; the dict an "$obj"
    -- escapes is the caller's own (its keys are no tags, its values may be).
    IF EXISTS (
        WITH RECURSIVE walk(v, own) AS (
            VALUES (args, false), (kwargs, false)
            UNION ALL
            SELECT c.v, c.own FROM walk w, LATERAL (
                SELECT e, false FROM jsonb_array_elements(
                    CASE WHEN jsonb_typeof(w.v) = 'array' THEN w.v END) e
                UNION ALL
                SELECT w.v -> '$obj', true
                WHERE jsonb_typeof(w.v) = 'object' AND NOT w.own
                AND w.v ? '$obj' AND (SELECT count(*) FROM jsonb_object_keys(w.v)) = 1
                UNION ALL
                SELECT e.value, false FROM jsonb_each(
                    CASE WHEN jsonb_typeof(w.v) = 'object' AND (w.own OR NOT (w.v ? '$obj'
                        AND (SELECT count(*) FROM jsonb_object_keys(w.v)) = 1))
                    THEN w.v END) e
            ) c(v, own)
        )
        SELECT 1 FROM walk WHERE NOT own AND jsonb_typeof(v) = 'object'
        AND (v ? '$result_of' OR v ? '$results_of')
        AND (SELECT count(*) FROM jsonb_object_keys(v)) = 1
    ) THEN
        RAISE EXCEPTION 'jobsched_enqueue: args hold a result marker ({"$result_of": ...} '
            'or {"$results_of": ...}), which SQL cannot bind: no upstream is named here'
            USING ERRCODE = 'feature_not_supported',
            HINT = 'pass results between jobs from Python: js.result_of(job) in the '
            'arguments of a job submitted with depends_on, or in a js.Workflow; to pass '
            'such a dict as data, escape it as {"$obj": {...}}';
    END IF;
    IF v_queue IS NULL OR v_queue !~ '^[A-Za-z0-9_.-]{1,64}$' THEN
        RAISE EXCEPTION 'jobsched_enqueue: queue must be a name of 1-64 characters from '
            'A-Z a-z 0-9 _ . -, got %', quote_nullable(v_queue)
            USING ERRCODE = 'invalid_parameter_value', HINT = 'e.g. ''emails''';
    END IF;
    IF v_id IS NULL THEN
        v_id := 'sql-' || gen_random_uuid()::text;
    ELSIF v_id = '' THEN
        RAISE EXCEPTION 'jobsched_enqueue: job_id must not be empty'
            USING ERRCODE = 'invalid_parameter_value',
            HINT = 'pass a non-empty id, or NULL to have one made';
    ELSIF length(v_id) > 200 THEN
        RAISE EXCEPTION 'jobsched_enqueue: job_id must be at most 200 characters, got %',
            length(v_id) USING ERRCODE = 'invalid_parameter_value',
            HINT = 'hash a longer key (encode(sha256(convert_to(key, ''UTF8'')), ''hex''))';
    ELSIF starts_with(v_id, 'job-') THEN
        RAISE EXCEPTION 'jobsched_enqueue: job_id % starts with ''job-'', which jobsched''s '
            'own ids use', quote_literal(v_id) USING ERRCODE = 'invalid_parameter_value',
            HINT = 'choose another prefix (e.g. ''order-42'')';
    END IF;
    IF f.key_base IS NULL THEN
        RAISE EXCEPTION 'jobsched_enqueue: the strategy of the app that registered % gives '
            'sort keys SQL cannot compute', quote_literal(f.name)
            USING ERRCODE = 'feature_not_supported',
            HINT = 'use a built-in strategy in that app, or enqueue the job from Python';
    END IF;
    IF v_queue <> 'default' AND NOT EXISTS (
        SELECT 1 FROM pg_attribute WHERE attrelid = 'jobsched_jobs'::regclass
        AND attname = 'queue_name' AND NOT attisdropped) THEN
        RAISE EXCEPTION 'jobsched_enqueue: the store has no named queues yet (queue %)',
            quote_literal(v_queue) USING ERRCODE = 'object_not_in_prerequisite_state',
            HINT = 'start a scheduler of an app that registers a job on a named queue, or '
            'enqueue one such job from Python: either adds the queue column, under a brief '
            'exclusive lock that this transaction must not hold';
    END IF;
    k := ARRAY[
        f.key_base[1] + f.key_seq[1] * v_seq + f.key_submitted[1] * v_now,
        f.key_base[2] + f.key_seq[2] * v_seq + f.key_submitted[2] * v_now,
        f.key_base[3] + f.key_seq[3] * v_seq + f.key_submitted[3] * v_now];
    SELECT * INTO result FROM jobsched_add(
        jobsched_own_number(v_id), f.name, f.executor, v_queue, k[1], k[2], k[3],
        extract(epoch FROM coalesce(jobsched_enqueue.run_at, now())), v_now, f.tenant,
        f.rate_key, '\x4a'::bytea, jsonb_build_object('$args', args, '$kwargs', kwargs),
        '{}'::bigint[], v_now);
    RETURN v_id;
END $$"""


def install(conn: Any) -> None:
    """Create or replace the functions and their table, if the store's mark
    says they are older (inside ``prepare``'s locked transaction)."""
    row = conn.execute("SELECT value FROM jobsched_meta WHERE key = 'sql_api'").fetchone()
    if row is not None and row[0] >= VERSION:
        return
    conn.execute(_FUNCTIONS_TABLE)
    conn.execute(own_number_sql())
    conn.execute(_ADD)
    conn.execute(_ADD_PLAIN)
    conn.execute(_ENQUEUE)
    conn.execute(
        "INSERT INTO jobsched_meta (key, value) VALUES ('sql_api', %s) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (VERSION,),
    )


class Identity(NamedTuple):
    """Where the store lives, as its own connection sees it at open."""

    #: The schema holding the tables, quoted as SQL needs it.
    schema: str
    #: The store's random id, which a caller's connection must see the same.
    store_id: int
    #: The schema's plain name (a ``search_path``-free statement's).
    schema_name: str
    #: The database's name (a caller's connection must be to the same).
    database: str


def identity(conn: Any) -> Identity:
    """The store's :class:`Identity` (its random id made here on first use)."""
    conn.execute(
        "INSERT INTO jobsched_meta (key, value) VALUES ('store_id', "
        "(random() * 9.2e18)::bigint) ON CONFLICT (key) DO NOTHING"
    )
    row = conn.execute(
        "SELECT c.relnamespace::regnamespace::text, "
        "(SELECT value FROM jobsched_meta WHERE key = 'store_id'), "
        "n.nspname, current_database() "
        "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE c.oid = 'jobsched_meta'::regclass"
    ).fetchone()
    assert row is not None
    return Identity(str(row[0]), int(row[1]), str(row[2]), str(row[3]))


def put_functions(conn: Any, functions: list[Registered], now: float) -> None:
    """Store registered functions; one stored as it is changes nothing."""
    rows = [
        (f.name, f.executor, f.queue, f.tenant, f.rate_key, _array(f.key_base),
         _array(f.key_seq), _array(f.key_submitted), now)
        for f in sorted(functions, key=lambda f: f.name)  # one lock order for every member
    ]  # fmt: skip
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO jobsched_functions (name, executor, queue, tenant, rate_key, key_base, "
            "key_seq, key_submitted, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (name) DO UPDATE SET executor = excluded.executor, "
            "queue = excluded.queue, tenant = excluded.tenant, rate_key = excluded.rate_key, "
            "key_base = excluded.key_base, key_seq = excluded.key_seq, "
            "key_submitted = excluded.key_submitted, updated_at = excluded.updated_at "
            "WHERE (jobsched_functions.executor, jobsched_functions.queue, "
            "jobsched_functions.tenant, jobsched_functions.rate_key, "
            "jobsched_functions.key_base, jobsched_functions.key_seq, "
            "jobsched_functions.key_submitted) IS DISTINCT FROM (excluded.executor, "
            "excluded.queue, excluded.tenant, excluded.rate_key, excluded.key_base, "
            "excluded.key_seq, excluded.key_submitted)",
            rows,
        )


def _array(values: tuple[float, ...] | None) -> list[float] | None:
    return None if values is None else list(values)
