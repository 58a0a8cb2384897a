--
-- PostgreSQL database dump
--


-- Dumped from database version 15.20 (Debian 15.20-0+deb12u1)
-- Dumped by pg_dump version 15.20 (Debian 15.20-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: jobsched_fixture_s5; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA jobsched_fixture_s5;


--
-- Name: jobsched_add(bigint, text, text, text, double precision, double precision, double precision, double precision, double precision, text, text, bytea, jsonb, bigint[], double precision); Type: FUNCTION; Schema: jobsched_fixture_s5; Owner: -
--

CREATE FUNCTION jobsched_fixture_s5.jobsched_add(p_id bigint, p_name text, p_executor text, p_queue text, p_k0 double precision, p_k1 double precision, p_k2 double precision, p_run_at double precision, p_submitted_at double precision, p_tenant text, p_rate_key text, p_payload bytea, p_args jsonb, p_depends_on bigint[], p_now double precision, OUT added boolean, OUT missing bigint[]) RETURNS record
    LANGUAGE plpgsql
    SET search_path TO 'jobsched_fixture_s5'
    AS $$
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
    IF v_unmet > 0 THEN
        INSERT INTO jobsched_deps (upstream, downstream)
        SELECT j.id, p_id FROM jobsched_jobs j
        WHERE j.id = ANY(p_depends_on) AND j.status <> 'completed'
        ON CONFLICT DO NOTHING;
    END IF;
    IF p_tenant IS NOT NULL THEN
        INSERT INTO jobsched_tenants (tenant) VALUES (p_tenant) ON CONFLICT DO NOTHING;
    END IF;
    IF v_failed IS NULL THEN
        PERFORM pg_notify('jobsched', '');
    END IF;
END $$;


--
-- Name: jobsched_count_added(); Type: FUNCTION; Schema: jobsched_fixture_s5; Owner: -
--

CREATE FUNCTION jobsched_fixture_s5.jobsched_count_added() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'jobsched_fixture_s5'
    AS $$ BEGIN
        INSERT INTO jobsched_counts (status, executor, n)
        SELECT status, executor, count(*) FROM jobsched_new GROUP BY 1, 2;
        RETURN NULL;
    END $$;


--
-- Name: jobsched_count_deleted(); Type: FUNCTION; Schema: jobsched_fixture_s5; Owner: -
--

CREATE FUNCTION jobsched_fixture_s5.jobsched_count_deleted() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'jobsched_fixture_s5'
    AS $$ BEGIN
        INSERT INTO jobsched_counts (status, executor, n)
        SELECT status, executor, -count(*) FROM jobsched_old GROUP BY 1, 2;
        RETURN NULL;
    END $$;


--
-- Name: jobsched_count_truncated(); Type: FUNCTION; Schema: jobsched_fixture_s5; Owner: -
--

CREATE FUNCTION jobsched_fixture_s5.jobsched_count_truncated() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'jobsched_fixture_s5'
    AS $$ BEGIN
        DELETE FROM jobsched_counts;
        RETURN NULL;
    END $$;


--
-- Name: jobsched_count_updated(); Type: FUNCTION; Schema: jobsched_fixture_s5; Owner: -
--

CREATE FUNCTION jobsched_fixture_s5.jobsched_count_updated() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'jobsched_fixture_s5'
    AS $$ BEGIN
        INSERT INTO jobsched_counts (status, executor, n)
        SELECT status, executor, sum(n) FROM (
            SELECT status, executor, 1 AS n FROM jobsched_new
            UNION ALL SELECT status, executor, -1 FROM jobsched_old
        ) d GROUP BY 1, 2 HAVING sum(n) <> 0;
        RETURN NULL;
    END $$;


--
-- Name: jobsched_enqueue(text, jsonb, jsonb, text, timestamp with time zone, text); Type: FUNCTION; Schema: jobsched_fixture_s5; Owner: -
--

CREATE FUNCTION jobsched_fixture_s5.jobsched_enqueue(name text, args jsonb DEFAULT '[]'::jsonb, kwargs jsonb DEFAULT '{}'::jsonb, queue text DEFAULT 'default'::text, run_at timestamp with time zone DEFAULT now(), job_id text DEFAULT NULL::text) RETURNS text
    LANGUAGE plpgsql
    SET search_path TO 'jobsched_fixture_s5'
    AS $_$
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
END $_$;


--
-- Name: jobsched_entered_xid(); Type: FUNCTION; Schema: jobsched_fixture_s5; Owner: -
--

CREATE FUNCTION jobsched_fixture_s5.jobsched_entered_xid() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ BEGIN
        NEW.entered_xid := pg_current_xact_id();
        RETURN NEW;
    END $$;


--
-- Name: jobsched_own_number(text); Type: FUNCTION; Schema: jobsched_fixture_s5; Owner: -
--

CREATE FUNCTION jobsched_fixture_s5.jobsched_own_number(job_id text) RETURNS bigint
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
    DECLARE
        data bytea := convert_to(job_id, 'UTF8');
        size integer := length(data);
        padded bytea;
        block bytea;
        blocks integer;
        last boolean;
        t bigint;
        digest bigint;
        h0 bigint := 7640891576939301120; h1 bigint := -4942790177534073029; h2 bigint := 4354685564936845355; h3 bigint := -6534734903238641935; h4 bigint := 5840696475078001361; h5 bigint := -7276294671716946913; h6 bigint := 2270897969802886507; h7 bigint := 6620516959819538809;
        v0 bigint; m0 bigint; v1 bigint; m1 bigint; v2 bigint; m2 bigint; v3 bigint; m3 bigint; v4 bigint; m4 bigint; v5 bigint; m5 bigint; v6 bigint; m6 bigint; v7 bigint; m7 bigint; v8 bigint; m8 bigint; v9 bigint; m9 bigint; v10 bigint; m10 bigint; v11 bigint; m11 bigint; v12 bigint; m12 bigint; v13 bigint; m13 bigint; v14 bigint; m14 bigint; v15 bigint; m15 bigint;
    BEGIN
        blocks := greatest(1, (size + 127) / 128);
        padded := data || decode(repeat('00', blocks * 128 - size), 'hex');
        FOR i IN 0 .. blocks - 1 LOOP
            block := substring(padded FROM i * 128 + 1 FOR 128);
            last := i = blocks - 1;
            t := CASE WHEN last THEN size ELSE (i + 1) * 128 END;
            v0 := h0;
            v1 := h1;
            v2 := h2;
            v3 := h3;
            v4 := h4;
            v5 := h5;
            v6 := h6;
            v7 := h7;
            v8 := 7640891576956012808;
            v9 := -4942790177534073029;
            v10 := 4354685564936845355;
            v11 := -6534734903238641935;
            v12 := 5840696475078001361;
            v13 := -7276294671716946913;
            v14 := 2270897969802886507;
            v15 := 6620516959819538809;
            v12 := v12 # t;
            IF last THEN v14 := ~v14; END IF;
            m0 := (get_byte(block, 0)::bigint << 0) | (get_byte(block, 1)::bigint << 8) | (get_byte(block, 2)::bigint << 16) | (get_byte(block, 3)::bigint << 24) | (get_byte(block, 4)::bigint << 32) | (get_byte(block, 5)::bigint << 40) | (get_byte(block, 6)::bigint << 48) | (get_byte(block, 7)::bigint << 56);
            m1 := (get_byte(block, 8)::bigint << 0) | (get_byte(block, 9)::bigint << 8) | (get_byte(block, 10)::bigint << 16) | (get_byte(block, 11)::bigint << 24) | (get_byte(block, 12)::bigint << 32) | (get_byte(block, 13)::bigint << 40) | (get_byte(block, 14)::bigint << 48) | (get_byte(block, 15)::bigint << 56);
            m2 := (get_byte(block, 16)::bigint << 0) | (get_byte(block, 17)::bigint << 8) | (get_byte(block, 18)::bigint << 16) | (get_byte(block, 19)::bigint << 24) | (get_byte(block, 20)::bigint << 32) | (get_byte(block, 21)::bigint << 40) | (get_byte(block, 22)::bigint << 48) | (get_byte(block, 23)::bigint << 56);
            m3 := (get_byte(block, 24)::bigint << 0) | (get_byte(block, 25)::bigint << 8) | (get_byte(block, 26)::bigint << 16) | (get_byte(block, 27)::bigint << 24) | (get_byte(block, 28)::bigint << 32) | (get_byte(block, 29)::bigint << 40) | (get_byte(block, 30)::bigint << 48) | (get_byte(block, 31)::bigint << 56);
            m4 := (get_byte(block, 32)::bigint << 0) | (get_byte(block, 33)::bigint << 8) | (get_byte(block, 34)::bigint << 16) | (get_byte(block, 35)::bigint << 24) | (get_byte(block, 36)::bigint << 32) | (get_byte(block, 37)::bigint << 40) | (get_byte(block, 38)::bigint << 48) | (get_byte(block, 39)::bigint << 56);
            m5 := (get_byte(block, 40)::bigint << 0) | (get_byte(block, 41)::bigint << 8) | (get_byte(block, 42)::bigint << 16) | (get_byte(block, 43)::bigint << 24) | (get_byte(block, 44)::bigint << 32) | (get_byte(block, 45)::bigint << 40) | (get_byte(block, 46)::bigint << 48) | (get_byte(block, 47)::bigint << 56);
            m6 := (get_byte(block, 48)::bigint << 0) | (get_byte(block, 49)::bigint << 8) | (get_byte(block, 50)::bigint << 16) | (get_byte(block, 51)::bigint << 24) | (get_byte(block, 52)::bigint << 32) | (get_byte(block, 53)::bigint << 40) | (get_byte(block, 54)::bigint << 48) | (get_byte(block, 55)::bigint << 56);
            m7 := (get_byte(block, 56)::bigint << 0) | (get_byte(block, 57)::bigint << 8) | (get_byte(block, 58)::bigint << 16) | (get_byte(block, 59)::bigint << 24) | (get_byte(block, 60)::bigint << 32) | (get_byte(block, 61)::bigint << 40) | (get_byte(block, 62)::bigint << 48) | (get_byte(block, 63)::bigint << 56);
            m8 := (get_byte(block, 64)::bigint << 0) | (get_byte(block, 65)::bigint << 8) | (get_byte(block, 66)::bigint << 16) | (get_byte(block, 67)::bigint << 24) | (get_byte(block, 68)::bigint << 32) | (get_byte(block, 69)::bigint << 40) | (get_byte(block, 70)::bigint << 48) | (get_byte(block, 71)::bigint << 56);
            m9 := (get_byte(block, 72)::bigint << 0) | (get_byte(block, 73)::bigint << 8) | (get_byte(block, 74)::bigint << 16) | (get_byte(block, 75)::bigint << 24) | (get_byte(block, 76)::bigint << 32) | (get_byte(block, 77)::bigint << 40) | (get_byte(block, 78)::bigint << 48) | (get_byte(block, 79)::bigint << 56);
            m10 := (get_byte(block, 80)::bigint << 0) | (get_byte(block, 81)::bigint << 8) | (get_byte(block, 82)::bigint << 16) | (get_byte(block, 83)::bigint << 24) | (get_byte(block, 84)::bigint << 32) | (get_byte(block, 85)::bigint << 40) | (get_byte(block, 86)::bigint << 48) | (get_byte(block, 87)::bigint << 56);
            m11 := (get_byte(block, 88)::bigint << 0) | (get_byte(block, 89)::bigint << 8) | (get_byte(block, 90)::bigint << 16) | (get_byte(block, 91)::bigint << 24) | (get_byte(block, 92)::bigint << 32) | (get_byte(block, 93)::bigint << 40) | (get_byte(block, 94)::bigint << 48) | (get_byte(block, 95)::bigint << 56);
            m12 := (get_byte(block, 96)::bigint << 0) | (get_byte(block, 97)::bigint << 8) | (get_byte(block, 98)::bigint << 16) | (get_byte(block, 99)::bigint << 24) | (get_byte(block, 100)::bigint << 32) | (get_byte(block, 101)::bigint << 40) | (get_byte(block, 102)::bigint << 48) | (get_byte(block, 103)::bigint << 56);
            m13 := (get_byte(block, 104)::bigint << 0) | (get_byte(block, 105)::bigint << 8) | (get_byte(block, 106)::bigint << 16) | (get_byte(block, 107)::bigint << 24) | (get_byte(block, 108)::bigint << 32) | (get_byte(block, 109)::bigint << 40) | (get_byte(block, 110)::bigint << 48) | (get_byte(block, 111)::bigint << 56);
            m14 := (get_byte(block, 112)::bigint << 0) | (get_byte(block, 113)::bigint << 8) | (get_byte(block, 114)::bigint << 16) | (get_byte(block, 115)::bigint << 24) | (get_byte(block, 116)::bigint << 32) | (get_byte(block, 117)::bigint << 40) | (get_byte(block, 118)::bigint << 48) | (get_byte(block, 119)::bigint << 56);
            m15 := (get_byte(block, 120)::bigint << 0) | (get_byte(block, 121)::bigint << 8) | (get_byte(block, 122)::bigint << 16) | (get_byte(block, 123)::bigint << 24) | (get_byte(block, 124)::bigint << 32) | (get_byte(block, 125)::bigint << 40) | (get_byte(block, 126)::bigint << 48) | (get_byte(block, 127)::bigint << 56);
            v0 := ((((((v0 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v0 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m0 >> 32) & 4294967295) + (((v0 & 4294967295) + (m0 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m0 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v0) >> 32) & 4294967295) | ((v12 # v0) << 32));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v8 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v8) >> 24) & 1099511627775) | ((v4 # v8) << 40));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v0 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m1 >> 32) & 4294967295) + (((v0 & 4294967295) + (m1 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m1 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v0) >> 16) & 281474976710655) | ((v12 # v0) << 48));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v8 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v8) >> 63) & 1) | ((v4 # v8) << 1));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v1 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m2 >> 32) & 4294967295) + (((v1 & 4294967295) + (m2 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m2 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v1) >> 32) & 4294967295) | ((v13 # v1) << 32));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v9 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v9) >> 24) & 1099511627775) | ((v5 # v9) << 40));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v1 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m3 >> 32) & 4294967295) + (((v1 & 4294967295) + (m3 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m3 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v1) >> 16) & 281474976710655) | ((v13 # v1) << 48));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v9 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v9) >> 63) & 1) | ((v5 # v9) << 1));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v2 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m4 >> 32) & 4294967295) + (((v2 & 4294967295) + (m4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m4 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v2) >> 32) & 4294967295) | ((v14 # v2) << 32));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v10 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v10) >> 24) & 1099511627775) | ((v6 # v10) << 40));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v2 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m5 >> 32) & 4294967295) + (((v2 & 4294967295) + (m5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m5 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v2) >> 16) & 281474976710655) | ((v14 # v2) << 48));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v10 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v10) >> 63) & 1) | ((v6 # v10) << 1));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v3 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m6 >> 32) & 4294967295) + (((v3 & 4294967295) + (m6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m6 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v3) >> 32) & 4294967295) | ((v15 # v3) << 32));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v11 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v11) >> 24) & 1099511627775) | ((v7 # v11) << 40));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v3 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m7 >> 32) & 4294967295) + (((v3 & 4294967295) + (m7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m7 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v3) >> 16) & 281474976710655) | ((v15 # v3) << 48));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v11 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v11) >> 63) & 1) | ((v7 # v11) << 1));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v0 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m8 >> 32) & 4294967295) + (((v0 & 4294967295) + (m8 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m8 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v0) >> 32) & 4294967295) | ((v15 # v0) << 32));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v10 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v10) >> 24) & 1099511627775) | ((v5 # v10) << 40));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v0 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m9 >> 32) & 4294967295) + (((v0 & 4294967295) + (m9 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m9 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v0) >> 16) & 281474976710655) | ((v15 # v0) << 48));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v10 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v10) >> 63) & 1) | ((v5 # v10) << 1));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v1 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m10 >> 32) & 4294967295) + (((v1 & 4294967295) + (m10 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m10 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v1) >> 32) & 4294967295) | ((v12 # v1) << 32));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v11 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v11) >> 24) & 1099511627775) | ((v6 # v11) << 40));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v1 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m11 >> 32) & 4294967295) + (((v1 & 4294967295) + (m11 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m11 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v1) >> 16) & 281474976710655) | ((v12 # v1) << 48));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v11 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v11) >> 63) & 1) | ((v6 # v11) << 1));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v2 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m12 >> 32) & 4294967295) + (((v2 & 4294967295) + (m12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m12 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v2) >> 32) & 4294967295) | ((v13 # v2) << 32));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v8 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v8) >> 24) & 1099511627775) | ((v7 # v8) << 40));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v2 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m13 >> 32) & 4294967295) + (((v2 & 4294967295) + (m13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m13 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v2) >> 16) & 281474976710655) | ((v13 # v2) << 48));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v8 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v8) >> 63) & 1) | ((v7 # v8) << 1));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v3 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m14 >> 32) & 4294967295) + (((v3 & 4294967295) + (m14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m14 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v3) >> 32) & 4294967295) | ((v14 # v3) << 32));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v9 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v9) >> 24) & 1099511627775) | ((v4 # v9) << 40));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v3 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m15 >> 32) & 4294967295) + (((v3 & 4294967295) + (m15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m15 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v3) >> 16) & 281474976710655) | ((v14 # v3) << 48));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v9 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v9) >> 63) & 1) | ((v4 # v9) << 1));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v0 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m14 >> 32) & 4294967295) + (((v0 & 4294967295) + (m14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m14 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v0) >> 32) & 4294967295) | ((v12 # v0) << 32));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v8 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v8) >> 24) & 1099511627775) | ((v4 # v8) << 40));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v0 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m10 >> 32) & 4294967295) + (((v0 & 4294967295) + (m10 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m10 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v0) >> 16) & 281474976710655) | ((v12 # v0) << 48));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v8 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v8) >> 63) & 1) | ((v4 # v8) << 1));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v1 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m4 >> 32) & 4294967295) + (((v1 & 4294967295) + (m4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m4 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v1) >> 32) & 4294967295) | ((v13 # v1) << 32));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v9 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v9) >> 24) & 1099511627775) | ((v5 # v9) << 40));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v1 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m8 >> 32) & 4294967295) + (((v1 & 4294967295) + (m8 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m8 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v1) >> 16) & 281474976710655) | ((v13 # v1) << 48));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v9 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v9) >> 63) & 1) | ((v5 # v9) << 1));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v2 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m9 >> 32) & 4294967295) + (((v2 & 4294967295) + (m9 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m9 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v2) >> 32) & 4294967295) | ((v14 # v2) << 32));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v10 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v10) >> 24) & 1099511627775) | ((v6 # v10) << 40));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v2 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m15 >> 32) & 4294967295) + (((v2 & 4294967295) + (m15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m15 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v2) >> 16) & 281474976710655) | ((v14 # v2) << 48));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v10 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v10) >> 63) & 1) | ((v6 # v10) << 1));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v3 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m13 >> 32) & 4294967295) + (((v3 & 4294967295) + (m13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m13 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v3) >> 32) & 4294967295) | ((v15 # v3) << 32));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v11 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v11) >> 24) & 1099511627775) | ((v7 # v11) << 40));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v3 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m6 >> 32) & 4294967295) + (((v3 & 4294967295) + (m6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m6 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v3) >> 16) & 281474976710655) | ((v15 # v3) << 48));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v11 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v11) >> 63) & 1) | ((v7 # v11) << 1));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v0 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m1 >> 32) & 4294967295) + (((v0 & 4294967295) + (m1 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m1 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v0) >> 32) & 4294967295) | ((v15 # v0) << 32));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v10 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v10) >> 24) & 1099511627775) | ((v5 # v10) << 40));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v0 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m12 >> 32) & 4294967295) + (((v0 & 4294967295) + (m12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m12 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v0) >> 16) & 281474976710655) | ((v15 # v0) << 48));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v10 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v10) >> 63) & 1) | ((v5 # v10) << 1));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v1 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m0 >> 32) & 4294967295) + (((v1 & 4294967295) + (m0 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m0 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v1) >> 32) & 4294967295) | ((v12 # v1) << 32));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v11 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v11) >> 24) & 1099511627775) | ((v6 # v11) << 40));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v1 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m2 >> 32) & 4294967295) + (((v1 & 4294967295) + (m2 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m2 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v1) >> 16) & 281474976710655) | ((v12 # v1) << 48));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v11 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v11) >> 63) & 1) | ((v6 # v11) << 1));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v2 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m11 >> 32) & 4294967295) + (((v2 & 4294967295) + (m11 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m11 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v2) >> 32) & 4294967295) | ((v13 # v2) << 32));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v8 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v8) >> 24) & 1099511627775) | ((v7 # v8) << 40));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v2 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m7 >> 32) & 4294967295) + (((v2 & 4294967295) + (m7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m7 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v2) >> 16) & 281474976710655) | ((v13 # v2) << 48));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v8 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v8) >> 63) & 1) | ((v7 # v8) << 1));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v3 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m5 >> 32) & 4294967295) + (((v3 & 4294967295) + (m5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m5 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v3) >> 32) & 4294967295) | ((v14 # v3) << 32));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v9 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v9) >> 24) & 1099511627775) | ((v4 # v9) << 40));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v3 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m3 >> 32) & 4294967295) + (((v3 & 4294967295) + (m3 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m3 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v3) >> 16) & 281474976710655) | ((v14 # v3) << 48));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v9 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v9) >> 63) & 1) | ((v4 # v9) << 1));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v0 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m11 >> 32) & 4294967295) + (((v0 & 4294967295) + (m11 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m11 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v0) >> 32) & 4294967295) | ((v12 # v0) << 32));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v8 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v8) >> 24) & 1099511627775) | ((v4 # v8) << 40));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v0 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m8 >> 32) & 4294967295) + (((v0 & 4294967295) + (m8 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m8 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v0) >> 16) & 281474976710655) | ((v12 # v0) << 48));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v8 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v8) >> 63) & 1) | ((v4 # v8) << 1));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v1 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m12 >> 32) & 4294967295) + (((v1 & 4294967295) + (m12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m12 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v1) >> 32) & 4294967295) | ((v13 # v1) << 32));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v9 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v9) >> 24) & 1099511627775) | ((v5 # v9) << 40));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v1 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m0 >> 32) & 4294967295) + (((v1 & 4294967295) + (m0 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m0 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v1) >> 16) & 281474976710655) | ((v13 # v1) << 48));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v9 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v9) >> 63) & 1) | ((v5 # v9) << 1));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v2 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m5 >> 32) & 4294967295) + (((v2 & 4294967295) + (m5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m5 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v2) >> 32) & 4294967295) | ((v14 # v2) << 32));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v10 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v10) >> 24) & 1099511627775) | ((v6 # v10) << 40));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v2 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m2 >> 32) & 4294967295) + (((v2 & 4294967295) + (m2 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m2 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v2) >> 16) & 281474976710655) | ((v14 # v2) << 48));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v10 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v10) >> 63) & 1) | ((v6 # v10) << 1));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v3 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m15 >> 32) & 4294967295) + (((v3 & 4294967295) + (m15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m15 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v3) >> 32) & 4294967295) | ((v15 # v3) << 32));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v11 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v11) >> 24) & 1099511627775) | ((v7 # v11) << 40));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v3 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m13 >> 32) & 4294967295) + (((v3 & 4294967295) + (m13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m13 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v3) >> 16) & 281474976710655) | ((v15 # v3) << 48));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v11 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v11) >> 63) & 1) | ((v7 # v11) << 1));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v0 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m10 >> 32) & 4294967295) + (((v0 & 4294967295) + (m10 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m10 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v0) >> 32) & 4294967295) | ((v15 # v0) << 32));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v10 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v10) >> 24) & 1099511627775) | ((v5 # v10) << 40));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v0 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m14 >> 32) & 4294967295) + (((v0 & 4294967295) + (m14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m14 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v0) >> 16) & 281474976710655) | ((v15 # v0) << 48));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v10 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v10) >> 63) & 1) | ((v5 # v10) << 1));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v1 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m3 >> 32) & 4294967295) + (((v1 & 4294967295) + (m3 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m3 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v1) >> 32) & 4294967295) | ((v12 # v1) << 32));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v11 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v11) >> 24) & 1099511627775) | ((v6 # v11) << 40));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v1 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m6 >> 32) & 4294967295) + (((v1 & 4294967295) + (m6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m6 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v1) >> 16) & 281474976710655) | ((v12 # v1) << 48));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v11 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v11) >> 63) & 1) | ((v6 # v11) << 1));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v2 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m7 >> 32) & 4294967295) + (((v2 & 4294967295) + (m7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m7 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v2) >> 32) & 4294967295) | ((v13 # v2) << 32));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v8 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v8) >> 24) & 1099511627775) | ((v7 # v8) << 40));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v2 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m1 >> 32) & 4294967295) + (((v2 & 4294967295) + (m1 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m1 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v2) >> 16) & 281474976710655) | ((v13 # v2) << 48));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v8 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v8) >> 63) & 1) | ((v7 # v8) << 1));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v3 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m9 >> 32) & 4294967295) + (((v3 & 4294967295) + (m9 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m9 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v3) >> 32) & 4294967295) | ((v14 # v3) << 32));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v9 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v9) >> 24) & 1099511627775) | ((v4 # v9) << 40));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v3 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m4 >> 32) & 4294967295) + (((v3 & 4294967295) + (m4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m4 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v3) >> 16) & 281474976710655) | ((v14 # v3) << 48));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v9 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v9) >> 63) & 1) | ((v4 # v9) << 1));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v0 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m7 >> 32) & 4294967295) + (((v0 & 4294967295) + (m7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m7 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v0) >> 32) & 4294967295) | ((v12 # v0) << 32));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v8 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v8) >> 24) & 1099511627775) | ((v4 # v8) << 40));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v0 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m9 >> 32) & 4294967295) + (((v0 & 4294967295) + (m9 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m9 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v0) >> 16) & 281474976710655) | ((v12 # v0) << 48));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v8 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v8) >> 63) & 1) | ((v4 # v8) << 1));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v1 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m3 >> 32) & 4294967295) + (((v1 & 4294967295) + (m3 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m3 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v1) >> 32) & 4294967295) | ((v13 # v1) << 32));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v9 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v9) >> 24) & 1099511627775) | ((v5 # v9) << 40));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v1 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m1 >> 32) & 4294967295) + (((v1 & 4294967295) + (m1 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m1 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v1) >> 16) & 281474976710655) | ((v13 # v1) << 48));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v9 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v9) >> 63) & 1) | ((v5 # v9) << 1));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v2 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m13 >> 32) & 4294967295) + (((v2 & 4294967295) + (m13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m13 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v2) >> 32) & 4294967295) | ((v14 # v2) << 32));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v10 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v10) >> 24) & 1099511627775) | ((v6 # v10) << 40));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v2 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m12 >> 32) & 4294967295) + (((v2 & 4294967295) + (m12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m12 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v2) >> 16) & 281474976710655) | ((v14 # v2) << 48));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v10 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v10) >> 63) & 1) | ((v6 # v10) << 1));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v3 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m11 >> 32) & 4294967295) + (((v3 & 4294967295) + (m11 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m11 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v3) >> 32) & 4294967295) | ((v15 # v3) << 32));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v11 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v11) >> 24) & 1099511627775) | ((v7 # v11) << 40));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v3 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m14 >> 32) & 4294967295) + (((v3 & 4294967295) + (m14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m14 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v3) >> 16) & 281474976710655) | ((v15 # v3) << 48));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v11 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v11) >> 63) & 1) | ((v7 # v11) << 1));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v0 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m2 >> 32) & 4294967295) + (((v0 & 4294967295) + (m2 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m2 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v0) >> 32) & 4294967295) | ((v15 # v0) << 32));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v10 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v10) >> 24) & 1099511627775) | ((v5 # v10) << 40));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v0 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m6 >> 32) & 4294967295) + (((v0 & 4294967295) + (m6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m6 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v0) >> 16) & 281474976710655) | ((v15 # v0) << 48));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v10 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v10) >> 63) & 1) | ((v5 # v10) << 1));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v1 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m5 >> 32) & 4294967295) + (((v1 & 4294967295) + (m5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m5 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v1) >> 32) & 4294967295) | ((v12 # v1) << 32));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v11 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v11) >> 24) & 1099511627775) | ((v6 # v11) << 40));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v1 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m10 >> 32) & 4294967295) + (((v1 & 4294967295) + (m10 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m10 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v1) >> 16) & 281474976710655) | ((v12 # v1) << 48));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v11 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v11) >> 63) & 1) | ((v6 # v11) << 1));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v2 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m4 >> 32) & 4294967295) + (((v2 & 4294967295) + (m4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m4 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v2) >> 32) & 4294967295) | ((v13 # v2) << 32));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v8 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v8) >> 24) & 1099511627775) | ((v7 # v8) << 40));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v2 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m0 >> 32) & 4294967295) + (((v2 & 4294967295) + (m0 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m0 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v2) >> 16) & 281474976710655) | ((v13 # v2) << 48));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v8 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v8) >> 63) & 1) | ((v7 # v8) << 1));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v3 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m15 >> 32) & 4294967295) + (((v3 & 4294967295) + (m15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m15 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v3) >> 32) & 4294967295) | ((v14 # v3) << 32));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v9 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v9) >> 24) & 1099511627775) | ((v4 # v9) << 40));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v3 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m8 >> 32) & 4294967295) + (((v3 & 4294967295) + (m8 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m8 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v3) >> 16) & 281474976710655) | ((v14 # v3) << 48));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v9 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v9) >> 63) & 1) | ((v4 # v9) << 1));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v0 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m9 >> 32) & 4294967295) + (((v0 & 4294967295) + (m9 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m9 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v0) >> 32) & 4294967295) | ((v12 # v0) << 32));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v8 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v8) >> 24) & 1099511627775) | ((v4 # v8) << 40));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v0 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m0 >> 32) & 4294967295) + (((v0 & 4294967295) + (m0 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m0 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v0) >> 16) & 281474976710655) | ((v12 # v0) << 48));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v8 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v8) >> 63) & 1) | ((v4 # v8) << 1));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v1 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m5 >> 32) & 4294967295) + (((v1 & 4294967295) + (m5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m5 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v1) >> 32) & 4294967295) | ((v13 # v1) << 32));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v9 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v9) >> 24) & 1099511627775) | ((v5 # v9) << 40));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v1 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m7 >> 32) & 4294967295) + (((v1 & 4294967295) + (m7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m7 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v1) >> 16) & 281474976710655) | ((v13 # v1) << 48));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v9 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v9) >> 63) & 1) | ((v5 # v9) << 1));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v2 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m2 >> 32) & 4294967295) + (((v2 & 4294967295) + (m2 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m2 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v2) >> 32) & 4294967295) | ((v14 # v2) << 32));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v10 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v10) >> 24) & 1099511627775) | ((v6 # v10) << 40));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v2 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m4 >> 32) & 4294967295) + (((v2 & 4294967295) + (m4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m4 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v2) >> 16) & 281474976710655) | ((v14 # v2) << 48));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v10 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v10) >> 63) & 1) | ((v6 # v10) << 1));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v3 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m10 >> 32) & 4294967295) + (((v3 & 4294967295) + (m10 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m10 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v3) >> 32) & 4294967295) | ((v15 # v3) << 32));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v11 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v11) >> 24) & 1099511627775) | ((v7 # v11) << 40));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v3 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m15 >> 32) & 4294967295) + (((v3 & 4294967295) + (m15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m15 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v3) >> 16) & 281474976710655) | ((v15 # v3) << 48));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v11 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v11) >> 63) & 1) | ((v7 # v11) << 1));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v0 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m14 >> 32) & 4294967295) + (((v0 & 4294967295) + (m14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m14 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v0) >> 32) & 4294967295) | ((v15 # v0) << 32));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v10 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v10) >> 24) & 1099511627775) | ((v5 # v10) << 40));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v0 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m1 >> 32) & 4294967295) + (((v0 & 4294967295) + (m1 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m1 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v0) >> 16) & 281474976710655) | ((v15 # v0) << 48));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v10 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v10) >> 63) & 1) | ((v5 # v10) << 1));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v1 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m11 >> 32) & 4294967295) + (((v1 & 4294967295) + (m11 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m11 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v1) >> 32) & 4294967295) | ((v12 # v1) << 32));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v11 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v11) >> 24) & 1099511627775) | ((v6 # v11) << 40));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v1 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m12 >> 32) & 4294967295) + (((v1 & 4294967295) + (m12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m12 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v1) >> 16) & 281474976710655) | ((v12 # v1) << 48));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v11 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v11) >> 63) & 1) | ((v6 # v11) << 1));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v2 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m6 >> 32) & 4294967295) + (((v2 & 4294967295) + (m6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m6 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v2) >> 32) & 4294967295) | ((v13 # v2) << 32));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v8 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v8) >> 24) & 1099511627775) | ((v7 # v8) << 40));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v2 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m8 >> 32) & 4294967295) + (((v2 & 4294967295) + (m8 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m8 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v2) >> 16) & 281474976710655) | ((v13 # v2) << 48));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v8 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v8) >> 63) & 1) | ((v7 # v8) << 1));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v3 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m3 >> 32) & 4294967295) + (((v3 & 4294967295) + (m3 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m3 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v3) >> 32) & 4294967295) | ((v14 # v3) << 32));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v9 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v9) >> 24) & 1099511627775) | ((v4 # v9) << 40));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v3 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m13 >> 32) & 4294967295) + (((v3 & 4294967295) + (m13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m13 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v3) >> 16) & 281474976710655) | ((v14 # v3) << 48));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v9 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v9) >> 63) & 1) | ((v4 # v9) << 1));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v0 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m2 >> 32) & 4294967295) + (((v0 & 4294967295) + (m2 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m2 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v0) >> 32) & 4294967295) | ((v12 # v0) << 32));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v8 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v8) >> 24) & 1099511627775) | ((v4 # v8) << 40));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v0 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m12 >> 32) & 4294967295) + (((v0 & 4294967295) + (m12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m12 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v0) >> 16) & 281474976710655) | ((v12 # v0) << 48));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v8 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v8) >> 63) & 1) | ((v4 # v8) << 1));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v1 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m6 >> 32) & 4294967295) + (((v1 & 4294967295) + (m6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m6 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v1) >> 32) & 4294967295) | ((v13 # v1) << 32));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v9 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v9) >> 24) & 1099511627775) | ((v5 # v9) << 40));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v1 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m10 >> 32) & 4294967295) + (((v1 & 4294967295) + (m10 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m10 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v1) >> 16) & 281474976710655) | ((v13 # v1) << 48));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v9 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v9) >> 63) & 1) | ((v5 # v9) << 1));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v2 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m0 >> 32) & 4294967295) + (((v2 & 4294967295) + (m0 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m0 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v2) >> 32) & 4294967295) | ((v14 # v2) << 32));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v10 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v10) >> 24) & 1099511627775) | ((v6 # v10) << 40));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v2 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m11 >> 32) & 4294967295) + (((v2 & 4294967295) + (m11 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m11 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v2) >> 16) & 281474976710655) | ((v14 # v2) << 48));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v10 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v10) >> 63) & 1) | ((v6 # v10) << 1));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v3 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m8 >> 32) & 4294967295) + (((v3 & 4294967295) + (m8 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m8 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v3) >> 32) & 4294967295) | ((v15 # v3) << 32));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v11 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v11) >> 24) & 1099511627775) | ((v7 # v11) << 40));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v3 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m3 >> 32) & 4294967295) + (((v3 & 4294967295) + (m3 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m3 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v3) >> 16) & 281474976710655) | ((v15 # v3) << 48));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v11 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v11) >> 63) & 1) | ((v7 # v11) << 1));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v0 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m4 >> 32) & 4294967295) + (((v0 & 4294967295) + (m4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m4 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v0) >> 32) & 4294967295) | ((v15 # v0) << 32));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v10 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v10) >> 24) & 1099511627775) | ((v5 # v10) << 40));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v0 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m13 >> 32) & 4294967295) + (((v0 & 4294967295) + (m13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m13 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v0) >> 16) & 281474976710655) | ((v15 # v0) << 48));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v10 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v10) >> 63) & 1) | ((v5 # v10) << 1));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v1 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m7 >> 32) & 4294967295) + (((v1 & 4294967295) + (m7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m7 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v1) >> 32) & 4294967295) | ((v12 # v1) << 32));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v11 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v11) >> 24) & 1099511627775) | ((v6 # v11) << 40));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v1 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m5 >> 32) & 4294967295) + (((v1 & 4294967295) + (m5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m5 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v1) >> 16) & 281474976710655) | ((v12 # v1) << 48));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v11 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v11) >> 63) & 1) | ((v6 # v11) << 1));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v2 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m15 >> 32) & 4294967295) + (((v2 & 4294967295) + (m15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m15 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v2) >> 32) & 4294967295) | ((v13 # v2) << 32));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v8 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v8) >> 24) & 1099511627775) | ((v7 # v8) << 40));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v2 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m14 >> 32) & 4294967295) + (((v2 & 4294967295) + (m14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m14 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v2) >> 16) & 281474976710655) | ((v13 # v2) << 48));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v8 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v8) >> 63) & 1) | ((v7 # v8) << 1));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v3 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m1 >> 32) & 4294967295) + (((v3 & 4294967295) + (m1 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m1 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v3) >> 32) & 4294967295) | ((v14 # v3) << 32));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v9 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v9) >> 24) & 1099511627775) | ((v4 # v9) << 40));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v3 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m9 >> 32) & 4294967295) + (((v3 & 4294967295) + (m9 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m9 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v3) >> 16) & 281474976710655) | ((v14 # v3) << 48));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v9 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v9) >> 63) & 1) | ((v4 # v9) << 1));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v0 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m12 >> 32) & 4294967295) + (((v0 & 4294967295) + (m12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m12 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v0) >> 32) & 4294967295) | ((v12 # v0) << 32));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v8 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v8) >> 24) & 1099511627775) | ((v4 # v8) << 40));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v0 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m5 >> 32) & 4294967295) + (((v0 & 4294967295) + (m5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m5 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v0) >> 16) & 281474976710655) | ((v12 # v0) << 48));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v8 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v8) >> 63) & 1) | ((v4 # v8) << 1));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v1 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m1 >> 32) & 4294967295) + (((v1 & 4294967295) + (m1 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m1 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v1) >> 32) & 4294967295) | ((v13 # v1) << 32));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v9 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v9) >> 24) & 1099511627775) | ((v5 # v9) << 40));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v1 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m15 >> 32) & 4294967295) + (((v1 & 4294967295) + (m15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m15 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v1) >> 16) & 281474976710655) | ((v13 # v1) << 48));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v9 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v9) >> 63) & 1) | ((v5 # v9) << 1));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v2 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m14 >> 32) & 4294967295) + (((v2 & 4294967295) + (m14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m14 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v2) >> 32) & 4294967295) | ((v14 # v2) << 32));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v10 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v10) >> 24) & 1099511627775) | ((v6 # v10) << 40));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v2 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m13 >> 32) & 4294967295) + (((v2 & 4294967295) + (m13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m13 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v2) >> 16) & 281474976710655) | ((v14 # v2) << 48));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v10 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v10) >> 63) & 1) | ((v6 # v10) << 1));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v3 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m4 >> 32) & 4294967295) + (((v3 & 4294967295) + (m4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m4 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v3) >> 32) & 4294967295) | ((v15 # v3) << 32));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v11 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v11) >> 24) & 1099511627775) | ((v7 # v11) << 40));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v3 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m10 >> 32) & 4294967295) + (((v3 & 4294967295) + (m10 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m10 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v3) >> 16) & 281474976710655) | ((v15 # v3) << 48));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v11 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v11) >> 63) & 1) | ((v7 # v11) << 1));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v0 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m0 >> 32) & 4294967295) + (((v0 & 4294967295) + (m0 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m0 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v0) >> 32) & 4294967295) | ((v15 # v0) << 32));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v10 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v10) >> 24) & 1099511627775) | ((v5 # v10) << 40));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v0 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m7 >> 32) & 4294967295) + (((v0 & 4294967295) + (m7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m7 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v0) >> 16) & 281474976710655) | ((v15 # v0) << 48));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v10 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v10) >> 63) & 1) | ((v5 # v10) << 1));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v1 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m6 >> 32) & 4294967295) + (((v1 & 4294967295) + (m6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m6 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v1) >> 32) & 4294967295) | ((v12 # v1) << 32));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v11 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v11) >> 24) & 1099511627775) | ((v6 # v11) << 40));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v1 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m3 >> 32) & 4294967295) + (((v1 & 4294967295) + (m3 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m3 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v1) >> 16) & 281474976710655) | ((v12 # v1) << 48));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v11 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v11) >> 63) & 1) | ((v6 # v11) << 1));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v2 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m9 >> 32) & 4294967295) + (((v2 & 4294967295) + (m9 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m9 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v2) >> 32) & 4294967295) | ((v13 # v2) << 32));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v8 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v8) >> 24) & 1099511627775) | ((v7 # v8) << 40));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v2 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m2 >> 32) & 4294967295) + (((v2 & 4294967295) + (m2 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m2 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v2) >> 16) & 281474976710655) | ((v13 # v2) << 48));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v8 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v8) >> 63) & 1) | ((v7 # v8) << 1));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v3 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m8 >> 32) & 4294967295) + (((v3 & 4294967295) + (m8 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m8 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v3) >> 32) & 4294967295) | ((v14 # v3) << 32));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v9 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v9) >> 24) & 1099511627775) | ((v4 # v9) << 40));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v3 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m11 >> 32) & 4294967295) + (((v3 & 4294967295) + (m11 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m11 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v3) >> 16) & 281474976710655) | ((v14 # v3) << 48));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v9 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v9) >> 63) & 1) | ((v4 # v9) << 1));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v0 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m13 >> 32) & 4294967295) + (((v0 & 4294967295) + (m13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m13 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v0) >> 32) & 4294967295) | ((v12 # v0) << 32));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v8 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v8) >> 24) & 1099511627775) | ((v4 # v8) << 40));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v0 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m11 >> 32) & 4294967295) + (((v0 & 4294967295) + (m11 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m11 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v0) >> 16) & 281474976710655) | ((v12 # v0) << 48));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v8 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v8) >> 63) & 1) | ((v4 # v8) << 1));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v1 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m7 >> 32) & 4294967295) + (((v1 & 4294967295) + (m7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m7 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v1) >> 32) & 4294967295) | ((v13 # v1) << 32));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v9 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v9) >> 24) & 1099511627775) | ((v5 # v9) << 40));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v1 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m14 >> 32) & 4294967295) + (((v1 & 4294967295) + (m14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m14 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v1) >> 16) & 281474976710655) | ((v13 # v1) << 48));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v9 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v9) >> 63) & 1) | ((v5 # v9) << 1));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v2 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m12 >> 32) & 4294967295) + (((v2 & 4294967295) + (m12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m12 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v2) >> 32) & 4294967295) | ((v14 # v2) << 32));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v10 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v10) >> 24) & 1099511627775) | ((v6 # v10) << 40));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v2 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m1 >> 32) & 4294967295) + (((v2 & 4294967295) + (m1 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m1 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v2) >> 16) & 281474976710655) | ((v14 # v2) << 48));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v10 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v10) >> 63) & 1) | ((v6 # v10) << 1));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v3 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m3 >> 32) & 4294967295) + (((v3 & 4294967295) + (m3 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m3 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v3) >> 32) & 4294967295) | ((v15 # v3) << 32));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v11 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v11) >> 24) & 1099511627775) | ((v7 # v11) << 40));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v3 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m9 >> 32) & 4294967295) + (((v3 & 4294967295) + (m9 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m9 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v3) >> 16) & 281474976710655) | ((v15 # v3) << 48));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v11 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v11) >> 63) & 1) | ((v7 # v11) << 1));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v0 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m5 >> 32) & 4294967295) + (((v0 & 4294967295) + (m5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m5 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v0) >> 32) & 4294967295) | ((v15 # v0) << 32));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v10 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v10) >> 24) & 1099511627775) | ((v5 # v10) << 40));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v0 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m0 >> 32) & 4294967295) + (((v0 & 4294967295) + (m0 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m0 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v0) >> 16) & 281474976710655) | ((v15 # v0) << 48));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v10 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v10) >> 63) & 1) | ((v5 # v10) << 1));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v1 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m15 >> 32) & 4294967295) + (((v1 & 4294967295) + (m15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m15 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v1) >> 32) & 4294967295) | ((v12 # v1) << 32));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v11 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v11) >> 24) & 1099511627775) | ((v6 # v11) << 40));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v1 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m4 >> 32) & 4294967295) + (((v1 & 4294967295) + (m4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m4 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v1) >> 16) & 281474976710655) | ((v12 # v1) << 48));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v11 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v11) >> 63) & 1) | ((v6 # v11) << 1));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v2 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m8 >> 32) & 4294967295) + (((v2 & 4294967295) + (m8 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m8 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v2) >> 32) & 4294967295) | ((v13 # v2) << 32));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v8 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v8) >> 24) & 1099511627775) | ((v7 # v8) << 40));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v2 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m6 >> 32) & 4294967295) + (((v2 & 4294967295) + (m6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m6 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v2) >> 16) & 281474976710655) | ((v13 # v2) << 48));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v8 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v8) >> 63) & 1) | ((v7 # v8) << 1));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v3 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m2 >> 32) & 4294967295) + (((v3 & 4294967295) + (m2 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m2 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v3) >> 32) & 4294967295) | ((v14 # v3) << 32));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v9 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v9) >> 24) & 1099511627775) | ((v4 # v9) << 40));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v3 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m10 >> 32) & 4294967295) + (((v3 & 4294967295) + (m10 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m10 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v3) >> 16) & 281474976710655) | ((v14 # v3) << 48));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v9 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v9) >> 63) & 1) | ((v4 # v9) << 1));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v0 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m6 >> 32) & 4294967295) + (((v0 & 4294967295) + (m6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m6 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v0) >> 32) & 4294967295) | ((v12 # v0) << 32));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v8 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v8) >> 24) & 1099511627775) | ((v4 # v8) << 40));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v0 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m15 >> 32) & 4294967295) + (((v0 & 4294967295) + (m15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m15 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v0) >> 16) & 281474976710655) | ((v12 # v0) << 48));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v8 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v8) >> 63) & 1) | ((v4 # v8) << 1));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v1 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m14 >> 32) & 4294967295) + (((v1 & 4294967295) + (m14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m14 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v1) >> 32) & 4294967295) | ((v13 # v1) << 32));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v9 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v9) >> 24) & 1099511627775) | ((v5 # v9) << 40));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v1 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m9 >> 32) & 4294967295) + (((v1 & 4294967295) + (m9 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m9 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v1) >> 16) & 281474976710655) | ((v13 # v1) << 48));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v9 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v9) >> 63) & 1) | ((v5 # v9) << 1));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v2 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m11 >> 32) & 4294967295) + (((v2 & 4294967295) + (m11 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m11 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v2) >> 32) & 4294967295) | ((v14 # v2) << 32));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v10 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v10) >> 24) & 1099511627775) | ((v6 # v10) << 40));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v2 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m3 >> 32) & 4294967295) + (((v2 & 4294967295) + (m3 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m3 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v2) >> 16) & 281474976710655) | ((v14 # v2) << 48));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v10 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v10) >> 63) & 1) | ((v6 # v10) << 1));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v3 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m0 >> 32) & 4294967295) + (((v3 & 4294967295) + (m0 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m0 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v3) >> 32) & 4294967295) | ((v15 # v3) << 32));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v11 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v11) >> 24) & 1099511627775) | ((v7 # v11) << 40));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v3 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m8 >> 32) & 4294967295) + (((v3 & 4294967295) + (m8 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m8 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v3) >> 16) & 281474976710655) | ((v15 # v3) << 48));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v11 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v11) >> 63) & 1) | ((v7 # v11) << 1));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v0 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m12 >> 32) & 4294967295) + (((v0 & 4294967295) + (m12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m12 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v0) >> 32) & 4294967295) | ((v15 # v0) << 32));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v10 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v10) >> 24) & 1099511627775) | ((v5 # v10) << 40));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v0 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m2 >> 32) & 4294967295) + (((v0 & 4294967295) + (m2 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m2 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v0) >> 16) & 281474976710655) | ((v15 # v0) << 48));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v10 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v10) >> 63) & 1) | ((v5 # v10) << 1));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v1 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m13 >> 32) & 4294967295) + (((v1 & 4294967295) + (m13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m13 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v1) >> 32) & 4294967295) | ((v12 # v1) << 32));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v11 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v11) >> 24) & 1099511627775) | ((v6 # v11) << 40));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v1 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m7 >> 32) & 4294967295) + (((v1 & 4294967295) + (m7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m7 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v1) >> 16) & 281474976710655) | ((v12 # v1) << 48));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v11 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v11) >> 63) & 1) | ((v6 # v11) << 1));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v2 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m1 >> 32) & 4294967295) + (((v2 & 4294967295) + (m1 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m1 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v2) >> 32) & 4294967295) | ((v13 # v2) << 32));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v8 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v8) >> 24) & 1099511627775) | ((v7 # v8) << 40));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v2 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m4 >> 32) & 4294967295) + (((v2 & 4294967295) + (m4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m4 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v2) >> 16) & 281474976710655) | ((v13 # v2) << 48));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v8 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v8) >> 63) & 1) | ((v7 # v8) << 1));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v3 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m10 >> 32) & 4294967295) + (((v3 & 4294967295) + (m10 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m10 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v3) >> 32) & 4294967295) | ((v14 # v3) << 32));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v9 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v9) >> 24) & 1099511627775) | ((v4 # v9) << 40));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v3 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m5 >> 32) & 4294967295) + (((v3 & 4294967295) + (m5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m5 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v3) >> 16) & 281474976710655) | ((v14 # v3) << 48));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v9 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v9) >> 63) & 1) | ((v4 # v9) << 1));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v0 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m10 >> 32) & 4294967295) + (((v0 & 4294967295) + (m10 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m10 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v0) >> 32) & 4294967295) | ((v12 # v0) << 32));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v8 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v8) >> 24) & 1099511627775) | ((v4 # v8) << 40));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v0 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m2 >> 32) & 4294967295) + (((v0 & 4294967295) + (m2 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m2 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v0) >> 16) & 281474976710655) | ((v12 # v0) << 48));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v8 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v8) >> 63) & 1) | ((v4 # v8) << 1));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v1 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m8 >> 32) & 4294967295) + (((v1 & 4294967295) + (m8 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m8 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v1) >> 32) & 4294967295) | ((v13 # v1) << 32));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v9 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v9) >> 24) & 1099511627775) | ((v5 # v9) << 40));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v1 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m4 >> 32) & 4294967295) + (((v1 & 4294967295) + (m4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m4 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v1) >> 16) & 281474976710655) | ((v13 # v1) << 48));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v9 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v9) >> 63) & 1) | ((v5 # v9) << 1));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v2 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m7 >> 32) & 4294967295) + (((v2 & 4294967295) + (m7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m7 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v2) >> 32) & 4294967295) | ((v14 # v2) << 32));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v10 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v10) >> 24) & 1099511627775) | ((v6 # v10) << 40));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v2 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m6 >> 32) & 4294967295) + (((v2 & 4294967295) + (m6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m6 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v2) >> 16) & 281474976710655) | ((v14 # v2) << 48));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v10 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v10) >> 63) & 1) | ((v6 # v10) << 1));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v3 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m1 >> 32) & 4294967295) + (((v3 & 4294967295) + (m1 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m1 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v3) >> 32) & 4294967295) | ((v15 # v3) << 32));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v11 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v11) >> 24) & 1099511627775) | ((v7 # v11) << 40));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v3 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m5 >> 32) & 4294967295) + (((v3 & 4294967295) + (m5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m5 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v3) >> 16) & 281474976710655) | ((v15 # v3) << 48));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v11 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v11) >> 63) & 1) | ((v7 # v11) << 1));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v0 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m15 >> 32) & 4294967295) + (((v0 & 4294967295) + (m15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m15 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v0) >> 32) & 4294967295) | ((v15 # v0) << 32));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v10 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v10) >> 24) & 1099511627775) | ((v5 # v10) << 40));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v0 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m11 >> 32) & 4294967295) + (((v0 & 4294967295) + (m11 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m11 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v0) >> 16) & 281474976710655) | ((v15 # v0) << 48));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v10 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v10) >> 63) & 1) | ((v5 # v10) << 1));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v1 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m9 >> 32) & 4294967295) + (((v1 & 4294967295) + (m9 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m9 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v1) >> 32) & 4294967295) | ((v12 # v1) << 32));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v11 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v11) >> 24) & 1099511627775) | ((v6 # v11) << 40));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v1 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m14 >> 32) & 4294967295) + (((v1 & 4294967295) + (m14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m14 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v1) >> 16) & 281474976710655) | ((v12 # v1) << 48));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v11 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v11) >> 63) & 1) | ((v6 # v11) << 1));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v2 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m3 >> 32) & 4294967295) + (((v2 & 4294967295) + (m3 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m3 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v2) >> 32) & 4294967295) | ((v13 # v2) << 32));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v8 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v8) >> 24) & 1099511627775) | ((v7 # v8) << 40));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v2 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m12 >> 32) & 4294967295) + (((v2 & 4294967295) + (m12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m12 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v2) >> 16) & 281474976710655) | ((v13 # v2) << 48));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v8 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v8) >> 63) & 1) | ((v7 # v8) << 1));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v3 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m13 >> 32) & 4294967295) + (((v3 & 4294967295) + (m13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m13 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v3) >> 32) & 4294967295) | ((v14 # v3) << 32));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v9 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v9) >> 24) & 1099511627775) | ((v4 # v9) << 40));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v3 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m0 >> 32) & 4294967295) + (((v3 & 4294967295) + (m0 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m0 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v3) >> 16) & 281474976710655) | ((v14 # v3) << 48));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v9 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v9) >> 63) & 1) | ((v4 # v9) << 1));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v0 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m0 >> 32) & 4294967295) + (((v0 & 4294967295) + (m0 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m0 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v0) >> 32) & 4294967295) | ((v12 # v0) << 32));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v8 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v8) >> 24) & 1099511627775) | ((v4 # v8) << 40));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v0 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m1 >> 32) & 4294967295) + (((v0 & 4294967295) + (m1 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m1 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v0) >> 16) & 281474976710655) | ((v12 # v0) << 48));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v8 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v8) >> 63) & 1) | ((v4 # v8) << 1));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v1 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m2 >> 32) & 4294967295) + (((v1 & 4294967295) + (m2 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m2 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v1) >> 32) & 4294967295) | ((v13 # v1) << 32));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v9 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v9) >> 24) & 1099511627775) | ((v5 # v9) << 40));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v1 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m3 >> 32) & 4294967295) + (((v1 & 4294967295) + (m3 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m3 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v1) >> 16) & 281474976710655) | ((v13 # v1) << 48));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v9 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v9) >> 63) & 1) | ((v5 # v9) << 1));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v2 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m4 >> 32) & 4294967295) + (((v2 & 4294967295) + (m4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m4 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v2) >> 32) & 4294967295) | ((v14 # v2) << 32));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v10 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v10) >> 24) & 1099511627775) | ((v6 # v10) << 40));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v2 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m5 >> 32) & 4294967295) + (((v2 & 4294967295) + (m5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m5 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v2) >> 16) & 281474976710655) | ((v14 # v2) << 48));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v10 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v10) >> 63) & 1) | ((v6 # v10) << 1));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v3 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m6 >> 32) & 4294967295) + (((v3 & 4294967295) + (m6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m6 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v3) >> 32) & 4294967295) | ((v15 # v3) << 32));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v11 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v11) >> 24) & 1099511627775) | ((v7 # v11) << 40));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v3 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m7 >> 32) & 4294967295) + (((v3 & 4294967295) + (m7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m7 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v3) >> 16) & 281474976710655) | ((v15 # v3) << 48));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v11 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v11) >> 63) & 1) | ((v7 # v11) << 1));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v0 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m8 >> 32) & 4294967295) + (((v0 & 4294967295) + (m8 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m8 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v0) >> 32) & 4294967295) | ((v15 # v0) << 32));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v10 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v10) >> 24) & 1099511627775) | ((v5 # v10) << 40));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v0 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m9 >> 32) & 4294967295) + (((v0 & 4294967295) + (m9 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m9 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v0) >> 16) & 281474976710655) | ((v15 # v0) << 48));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v10 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v10) >> 63) & 1) | ((v5 # v10) << 1));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v1 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m10 >> 32) & 4294967295) + (((v1 & 4294967295) + (m10 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m10 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v1) >> 32) & 4294967295) | ((v12 # v1) << 32));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v11 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v11) >> 24) & 1099511627775) | ((v6 # v11) << 40));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v1 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m11 >> 32) & 4294967295) + (((v1 & 4294967295) + (m11 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m11 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v1) >> 16) & 281474976710655) | ((v12 # v1) << 48));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v11 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v11) >> 63) & 1) | ((v6 # v11) << 1));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v2 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m12 >> 32) & 4294967295) + (((v2 & 4294967295) + (m12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m12 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v2) >> 32) & 4294967295) | ((v13 # v2) << 32));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v8 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v8) >> 24) & 1099511627775) | ((v7 # v8) << 40));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v2 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m13 >> 32) & 4294967295) + (((v2 & 4294967295) + (m13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m13 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v2) >> 16) & 281474976710655) | ((v13 # v2) << 48));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v8 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v8) >> 63) & 1) | ((v7 # v8) << 1));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v3 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m14 >> 32) & 4294967295) + (((v3 & 4294967295) + (m14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m14 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v3) >> 32) & 4294967295) | ((v14 # v3) << 32));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v9 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v9) >> 24) & 1099511627775) | ((v4 # v9) << 40));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v3 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m15 >> 32) & 4294967295) + (((v3 & 4294967295) + (m15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m15 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v3) >> 16) & 281474976710655) | ((v14 # v3) << 48));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v9 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v9) >> 63) & 1) | ((v4 # v9) << 1));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v0 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m14 >> 32) & 4294967295) + (((v0 & 4294967295) + (m14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m14 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v0) >> 32) & 4294967295) | ((v12 # v0) << 32));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v8 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v8) >> 24) & 1099511627775) | ((v4 # v8) << 40));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v0 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m10 >> 32) & 4294967295) + (((v0 & 4294967295) + (m10 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m10 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v0) >> 16) & 281474976710655) | ((v12 # v0) << 48));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v8 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v8) >> 63) & 1) | ((v4 # v8) << 1));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v1 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m4 >> 32) & 4294967295) + (((v1 & 4294967295) + (m4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m4 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v1) >> 32) & 4294967295) | ((v13 # v1) << 32));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v9 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v9) >> 24) & 1099511627775) | ((v5 # v9) << 40));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v1 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m8 >> 32) & 4294967295) + (((v1 & 4294967295) + (m8 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m8 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v1) >> 16) & 281474976710655) | ((v13 # v1) << 48));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v9 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v9) >> 63) & 1) | ((v5 # v9) << 1));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v2 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m9 >> 32) & 4294967295) + (((v2 & 4294967295) + (m9 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m9 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v2) >> 32) & 4294967295) | ((v14 # v2) << 32));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v10 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v10) >> 24) & 1099511627775) | ((v6 # v10) << 40));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v2 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m15 >> 32) & 4294967295) + (((v2 & 4294967295) + (m15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m15 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v2) >> 16) & 281474976710655) | ((v14 # v2) << 48));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v10 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v10) >> 63) & 1) | ((v6 # v10) << 1));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v3 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m13 >> 32) & 4294967295) + (((v3 & 4294967295) + (m13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m13 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v3) >> 32) & 4294967295) | ((v15 # v3) << 32));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v11 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v11) >> 24) & 1099511627775) | ((v7 # v11) << 40));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v3 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m6 >> 32) & 4294967295) + (((v3 & 4294967295) + (m6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m6 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v3) >> 16) & 281474976710655) | ((v15 # v3) << 48));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v11 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v11) >> 63) & 1) | ((v7 # v11) << 1));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v0 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m1 >> 32) & 4294967295) + (((v0 & 4294967295) + (m1 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m1 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v0) >> 32) & 4294967295) | ((v15 # v0) << 32));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v10 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v10) >> 24) & 1099511627775) | ((v5 # v10) << 40));
            v0 := ((((((v0 >> 32) & 4294967295) + ((v5 >> 32) & 4294967295) + (((v0 & 4294967295) + (v5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (v5 & 4294967295)) & 4294967295));
            v0 := ((((((v0 >> 32) & 4294967295) + ((m12 >> 32) & 4294967295) + (((v0 & 4294967295) + (m12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v0 & 4294967295) + (m12 & 4294967295)) & 4294967295));
            v15 := ((((v15 # v0) >> 16) & 281474976710655) | ((v15 # v0) << 48));
            v10 := ((((((v10 >> 32) & 4294967295) + ((v15 >> 32) & 4294967295) + (((v10 & 4294967295) + (v15 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v10 & 4294967295) + (v15 & 4294967295)) & 4294967295));
            v5 := ((((v5 # v10) >> 63) & 1) | ((v5 # v10) << 1));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v1 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m0 >> 32) & 4294967295) + (((v1 & 4294967295) + (m0 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m0 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v1) >> 32) & 4294967295) | ((v12 # v1) << 32));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v11 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v11) >> 24) & 1099511627775) | ((v6 # v11) << 40));
            v1 := ((((((v1 >> 32) & 4294967295) + ((v6 >> 32) & 4294967295) + (((v1 & 4294967295) + (v6 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (v6 & 4294967295)) & 4294967295));
            v1 := ((((((v1 >> 32) & 4294967295) + ((m2 >> 32) & 4294967295) + (((v1 & 4294967295) + (m2 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v1 & 4294967295) + (m2 & 4294967295)) & 4294967295));
            v12 := ((((v12 # v1) >> 16) & 281474976710655) | ((v12 # v1) << 48));
            v11 := ((((((v11 >> 32) & 4294967295) + ((v12 >> 32) & 4294967295) + (((v11 & 4294967295) + (v12 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v11 & 4294967295) + (v12 & 4294967295)) & 4294967295));
            v6 := ((((v6 # v11) >> 63) & 1) | ((v6 # v11) << 1));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v2 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m11 >> 32) & 4294967295) + (((v2 & 4294967295) + (m11 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m11 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v2) >> 32) & 4294967295) | ((v13 # v2) << 32));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v8 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v8) >> 24) & 1099511627775) | ((v7 # v8) << 40));
            v2 := ((((((v2 >> 32) & 4294967295) + ((v7 >> 32) & 4294967295) + (((v2 & 4294967295) + (v7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (v7 & 4294967295)) & 4294967295));
            v2 := ((((((v2 >> 32) & 4294967295) + ((m7 >> 32) & 4294967295) + (((v2 & 4294967295) + (m7 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v2 & 4294967295) + (m7 & 4294967295)) & 4294967295));
            v13 := ((((v13 # v2) >> 16) & 281474976710655) | ((v13 # v2) << 48));
            v8 := ((((((v8 >> 32) & 4294967295) + ((v13 >> 32) & 4294967295) + (((v8 & 4294967295) + (v13 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v8 & 4294967295) + (v13 & 4294967295)) & 4294967295));
            v7 := ((((v7 # v8) >> 63) & 1) | ((v7 # v8) << 1));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v3 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m5 >> 32) & 4294967295) + (((v3 & 4294967295) + (m5 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m5 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v3) >> 32) & 4294967295) | ((v14 # v3) << 32));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v9 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v9) >> 24) & 1099511627775) | ((v4 # v9) << 40));
            v3 := ((((((v3 >> 32) & 4294967295) + ((v4 >> 32) & 4294967295) + (((v3 & 4294967295) + (v4 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (v4 & 4294967295)) & 4294967295));
            v3 := ((((((v3 >> 32) & 4294967295) + ((m3 >> 32) & 4294967295) + (((v3 & 4294967295) + (m3 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v3 & 4294967295) + (m3 & 4294967295)) & 4294967295));
            v14 := ((((v14 # v3) >> 16) & 281474976710655) | ((v14 # v3) << 48));
            v9 := ((((((v9 >> 32) & 4294967295) + ((v14 >> 32) & 4294967295) + (((v9 & 4294967295) + (v14 & 4294967295)) >> 32)) & 4294967295) << 32) | (((v9 & 4294967295) + (v14 & 4294967295)) & 4294967295));
            v4 := ((((v4 # v9) >> 63) & 1) | ((v4 # v9) << 1));
            h0 := h0 # v0 # v8;
            h1 := h1 # v1 # v9;
            h2 := h2 # v2 # v10;
            h3 := h3 # v3 # v11;
            h4 := h4 # v4 # v12;
            h5 := h5 # v5 # v13;
            h6 := h6 # v6 # v14;
            h7 := h7 # v7 # v15;
        END LOOP;
        digest := (((h0 >> 0) & 255) << 56) | (((h0 >> 8) & 255) << 48) | (((h0 >> 16) & 255) << 40) | (((h0 >> 24) & 255) << 32) | (((h0 >> 32) & 255) << 24) | (((h0 >> 40) & 255) << 16) | (((h0 >> 48) & 255) << 8) | (((h0 >> 56) & 255) << 0);
        RETURN -((digest >> 1) & 9223372036854775807) - 1;
    END $$;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: jobsched_attempts; Type: TABLE; Schema: jobsched_fixture_s5; Owner: -
--

CREATE TABLE jobsched_fixture_s5.jobsched_attempts (
    job_id bigint NOT NULL,
    attempt integer NOT NULL,
    owner text,
    started_at double precision NOT NULL,
    finished_at double precision,
    status text NOT NULL,
    error text
);


--
-- Name: jobsched_buckets; Type: TABLE; Schema: jobsched_fixture_s5; Owner: -
--

CREATE TABLE jobsched_fixture_s5.jobsched_buckets (
    key text NOT NULL,
    tokens double precision NOT NULL,
    updated double precision NOT NULL
);


--
-- Name: jobsched_counts; Type: TABLE; Schema: jobsched_fixture_s5; Owner: -
--

CREATE TABLE jobsched_fixture_s5.jobsched_counts (
    status text NOT NULL,
    executor text NOT NULL,
    n bigint NOT NULL
);


--
-- Name: jobsched_deps; Type: TABLE; Schema: jobsched_fixture_s5; Owner: -
--

CREATE TABLE jobsched_fixture_s5.jobsched_deps (
    upstream bigint NOT NULL,
    downstream bigint NOT NULL
);


--
-- Name: jobsched_functions; Type: TABLE; Schema: jobsched_fixture_s5; Owner: -
--

CREATE TABLE jobsched_fixture_s5.jobsched_functions (
    name text NOT NULL,
    executor text NOT NULL,
    queue text NOT NULL,
    tenant text,
    rate_key text,
    key_base double precision[],
    key_seq double precision[],
    key_submitted double precision[],
    updated_at double precision NOT NULL
);


--
-- Name: jobsched_jobs; Type: TABLE; Schema: jobsched_fixture_s5; Owner: -
--

CREATE TABLE jobsched_fixture_s5.jobsched_jobs (
    id bigint NOT NULL,
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
    attempts integer DEFAULT 0 NOT NULL,
    owner text,
    ran_by text,
    lease_until double precision,
    cancel_requested boolean DEFAULT false NOT NULL,
    unmet integer DEFAULT 0 NOT NULL,
    tenant text,
    rate_key text,
    payload bytea NOT NULL,
    result bytea,
    last_error text,
    last_traceback text,
    schedule text,
    fire_time double precision,
    args jsonb,
    entered_xid xid8 DEFAULT pg_current_xact_id()
);


--
-- Name: jobsched_meta; Type: TABLE; Schema: jobsched_fixture_s5; Owner: -
--

CREATE TABLE jobsched_fixture_s5.jobsched_meta (
    key text NOT NULL,
    value bigint NOT NULL
);


--
-- Name: jobsched_schedules; Type: TABLE; Schema: jobsched_fixture_s5; Owner: -
--

CREATE TABLE jobsched_fixture_s5.jobsched_schedules (
    id text NOT NULL,
    payload bytea NOT NULL,
    next_fire double precision NOT NULL,
    last_job bigint,
    owner text,
    lease_until double precision
);


--
-- Name: jobsched_tenants; Type: TABLE; Schema: jobsched_fixture_s5; Owner: -
--

CREATE TABLE jobsched_fixture_s5.jobsched_tenants (
    tenant text NOT NULL,
    served bigint DEFAULT 0 NOT NULL,
    credit integer DEFAULT 0 NOT NULL
);


--
-- Data for Name: jobsched_attempts; Type: TABLE DATA; Schema: jobsched_fixture_s5; Owner: -
--

INSERT INTO jobsched_fixture_s5.jobsched_attempts VALUES (2, 1, 'vm:7899:2461ae10', 1796574744.5759947, 1796574744.5771697, 'failed', 'ValueError: broken');


--
-- Data for Name: jobsched_buckets; Type: TABLE DATA; Schema: jobsched_fixture_s5; Owner: -
--



--
-- Data for Name: jobsched_counts; Type: TABLE DATA; Schema: jobsched_fixture_s5; Owner: -
--

INSERT INTO jobsched_fixture_s5.jobsched_counts VALUES ('completed', 'thread', 1);
INSERT INTO jobsched_fixture_s5.jobsched_counts VALUES ('failed', 'thread', 1);
INSERT INTO jobsched_fixture_s5.jobsched_counts VALUES ('pending', 'thread', 1);
INSERT INTO jobsched_fixture_s5.jobsched_counts VALUES ('pending', 'thread', 1);
INSERT INTO jobsched_fixture_s5.jobsched_counts VALUES ('pending', 'thread', 1);
INSERT INTO jobsched_fixture_s5.jobsched_counts VALUES ('pending', 'thread', 1);
INSERT INTO jobsched_fixture_s5.jobsched_counts VALUES ('pending', 'thread', 1);
INSERT INTO jobsched_fixture_s5.jobsched_counts VALUES ('cancelled', 'thread', 1);


--
-- Data for Name: jobsched_deps; Type: TABLE DATA; Schema: jobsched_fixture_s5; Owner: -
--

INSERT INTO jobsched_fixture_s5.jobsched_deps VALUES (2049, 2050);
INSERT INTO jobsched_fixture_s5.jobsched_deps VALUES (2049, 2051);


--
-- Data for Name: jobsched_functions; Type: TABLE DATA; Schema: jobsched_fixture_s5; Owner: -
--



--
-- Data for Name: jobsched_jobs; Type: TABLE DATA; Schema: jobsched_fixture_s5; Owner: -
--

INSERT INTO jobsched_fixture_s5.jobsched_jobs VALUES (1, 'done add', 'thread', 'completed', NULL, -1, 1.796574744491675e+15, 0, 1796574744.4916737, 1796574744.4916737, 1796574744.5401247, 1796574744.5410264, 1, NULL, 'vm:7899:2461ae10', NULL, false, 0, NULL, NULL, '\x4b4ae6533385945a2836b57fcfc540b40fc485ce52bf99768887566fffbc009f3cb031ddd5f3df10ff800595b7000000000000008c116a6f6273636865642e5f6a6f62666f726d948c07726573746f7265949394288c166a6f6273636865642e5f66756e6374696f6e5f6a6f62948c0b46756e6374696f6e4a6f629493948c08646f6e6520616464944e47403e0000000000004e4e7d94288c0461726773944b024b0386948c086578656375746f72948c06746872656164948c0466756e63948c0e6d6967726174696f6e5f6a6f6273948c036164649493948c066b7761726773947d94754e749452942e', '\x4b4ae6533385945a2800cb072928adaf1c1a78b4ba6adc3aec3e9d0af88815a91c73e573e407b1736080054b052e', NULL, NULL, NULL, NULL, NULL, '6055');
INSERT INTO jobsched_fixture_s5.jobsched_jobs VALUES (2, 'broken', 'thread', 'failed', NULL, -1, 1.796574744491818e+15, 0, 1796574744.4918177, 1796574744.4918177, 1796574744.5759947, 1796574744.5771697, 1, NULL, 'vm:7899:2461ae10', NULL, false, 0, NULL, NULL, '\x4b4ae6533385945a280d15491804d28f0dda6df0971c63c09a8cb002ce5a86b06bbbf29bb5d31f8b1880059522010000000000008c116a6f6273636865642e5f6a6f62666f726d948c07726573746f7265949394288c166a6f6273636865642e5f66756e6374696f6e5f6a6f62948c0b46756e6374696f6e4a6f629493948c0662726f6b656e944e47403e0000000000008c0f6a6f6273636865642e5f7265747279948c0b5265747279506f6c6963799493942981947d94288c0b6d61785f72657472696573944b008c0a626173655f64656c617994473ff00000000000008c096d61785f64656c61799447404e0000000000008c066a6974746572948875624e7d94288c046172677394680685948c086578656375746f72948c06746872656164948c0466756e63948c0e6d6967726174696f6e5f6a6f6273948c046661696c9493948c066b7761726773947d94754e749452942e', NULL, 'ValueError: broken', 'Traceback (most recent call last):
  File "/work/wt-wfstore/packages/core/src/jobsched/_engine/_dispatch.py", line 284, in _continue_attempt
    result = await Resume(it, first, scope, self._clock)
             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/work/wt-wfstore/packages/core/src/jobsched/_engine/_resume.py", line 102, in __await__
    value = it.send(sent) if thrown is None else it.throw(thrown)
            ^^^^^^^^^^^^^
  File "/work/wt-wfstore/packages/exec-thread/src/jobsched_thread/_executor.py", line 150, in run
    raise error
  File "/work/wt-wfstore/packages/exec-thread/src/jobsched_thread/_executor.py", line 268, in __call__
    return self.token.run(self.func)
           ^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/work/wt-wfstore/packages/core/src/jobsched/_jobs/_executor.py", line 74, in run
    return func(*args)
           ^^^^^^^^^^^
  File "/work/wt-wfstore/packages/core/src/jobsched/_jobs/_function.py", line 201, in run_sync
    return self.func(*self.args, **self.kwargs)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/work/wt-wfstore/tests/migration_jobs.py", line 16, in fail
    raise ValueError(message)
ValueError: broken
', NULL, NULL, NULL, '6058');
INSERT INTO jobsched_fixture_s5.jobsched_jobs VALUES (1025, 'pending 1', 'thread', 'pending', 0, -1, 1.796574744679488e+15, 0, 1796574744.6794863, 1796574744.6794863, NULL, NULL, 0, NULL, NULL, NULL, false, 0, NULL, NULL, '\x4b4ae6533385945a289117e813dfdf39da5582597748df5a0fd8393c37bf3466dc5307867aec55de7b800595b8000000000000008c116a6f6273636865642e5f6a6f62666f726d948c07726573746f7265949394288c166a6f6273636865642e5f66756e6374696f6e5f6a6f62948c0b46756e6374696f6e4a6f629493948c0970656e64696e672031944e47403e0000000000004e4e7d94288c0461726773944b014b0186948c086578656375746f72948c06746872656164948c0466756e63948c0e6d6967726174696f6e5f6a6f6273948c036164649493948c066b7761726773947d94754e749452942e', NULL, NULL, NULL, NULL, NULL, NULL, '6064');
INSERT INTO jobsched_fixture_s5.jobsched_jobs VALUES (1026, 'pending 2', 'thread', 'pending', 0, -1, 1.79657474469172e+15, 0, 1796574744.6917188, 1796574744.6917188, NULL, NULL, 0, NULL, NULL, NULL, false, 0, NULL, NULL, '\x4b4ae6533385945a28a97d88b67079ab9128408369744f70c3248b057845b06e4bdd6db8f9063b96dc800595b8000000000000008c116a6f6273636865642e5f6a6f62666f726d948c07726573746f7265949394288c166a6f6273636865642e5f66756e6374696f6e5f6a6f62948c0b46756e6374696f6e4a6f629493948c0970656e64696e672032944e47403e0000000000004e4e7d94288c0461726773944b284b0286948c086578656375746f72948c06746872656164948c0466756e63948c0e6d6967726174696f6e5f6a6f6273948c036164649493948c066b7761726773947d94754e749452942e', NULL, NULL, NULL, NULL, NULL, NULL, '6065');
INSERT INTO jobsched_fixture_s5.jobsched_jobs VALUES (2049, 'up', 'thread', 'pending', 0, -1, 1.796574744759482e+15, 0, 1796574744.7594798, 1796574744.7594798, NULL, NULL, 0, NULL, NULL, NULL, false, 0, NULL, NULL, '\x4b4ae6533385945a28529532602e56b1cd956728d65a8a67a5ecf2c5c2fc2c04a0c3ea571382eb15b4800595b1000000000000008c116a6f6273636865642e5f6a6f62666f726d948c07726573746f7265949394288c166a6f6273636865642e5f66756e6374696f6e5f6a6f62948c0b46756e6374696f6e4a6f629493948c027570944e47403e0000000000004e4e7d94288c0461726773944b034b0486948c086578656375746f72948c06746872656164948c0466756e63948c0e6d6967726174696f6e5f6a6f6273948c036164649493948c066b7761726773947d94754e749452942e', NULL, NULL, NULL, NULL, NULL, NULL, '6067');
INSERT INTO jobsched_fixture_s5.jobsched_jobs VALUES (2050, 'down', 'thread', 'pending', 2, -1, 1.796574744784078e+15, 0, 1796574744.7840765, 1796574744.7840765, NULL, NULL, 0, NULL, NULL, NULL, false, 1, NULL, NULL, '\x4b4ae6533385945a281e7fec8d48776b077efb730020802ac3a4f21d06f08252d57ba5671980baf3ae800595b3000000000000008c116a6f6273636865642e5f6a6f62666f726d948c07726573746f7265949394288c166a6f6273636865642e5f66756e6374696f6e5f6a6f62948c0b46756e6374696f6e4a6f629493948c04646f776e944e47403e0000000000004e4e7d94288c0461726773944b0a4b0186948c086578656375746f72948c06746872656164948c0466756e63948c0e6d6967726174696f6e5f6a6f6273948c036164649493948c066b7761726773947d94754e749452942e', NULL, NULL, NULL, NULL, NULL, NULL, '6068');
INSERT INTO jobsched_fixture_s5.jobsched_jobs VALUES (2051, 'fan-in', 'thread', 'pending', 2, -1, 1.796574744793348e+15, 0, 1796574744.7933464, 1796574744.7933464, NULL, NULL, 0, NULL, NULL, NULL, false, 1, NULL, NULL, '\x4b4ae6533385945a28f4d09b5105760ef72e50ff7fb7a924a7f30705a07193461cb13365355e4ea0a1800595b5000000000000008c116a6f6273636865642e5f6a6f62666f726d948c07726573746f7265949394288c166a6f6273636865642e5f66756e6374696f6e5f6a6f62948c0b46756e6374696f6e4a6f629493948c0666616e2d696e944e47403e0000000000004e4e7d94288c0461726773944b014b0286948c086578656375746f72948c06746872656164948c0466756e63948c0e6d6967726174696f6e5f6a6f6273948c036164649493948c066b7761726773947d94754e749452942e', NULL, NULL, NULL, NULL, NULL, NULL, '6069');
INSERT INTO jobsched_fixture_s5.jobsched_jobs VALUES (2052, 'orphan', 'thread', 'cancelled', NULL, -1, 1.796574744804967e+15, 0, 1796574744.804966, 1796574744.804966, NULL, 1796574744.8050356, 0, NULL, NULL, NULL, false, 0, NULL, NULL, '\x4b4ae6533385945a289de7469a611c9755b1062d6bb4aab3359f8ee50456baf3580a809c5cd9a02751800595b5000000000000008c116a6f6273636865642e5f6a6f62666f726d948c07726573746f7265949394288c166a6f6273636865642e5f66756e6374696f6e5f6a6f62948c0b46756e6374696f6e4a6f629493948c066f727068616e944e47403e0000000000004e4e7d94288c0461726773944b004b0086948c086578656375746f72948c06746872656164948c0466756e63948c0e6d6967726174696f6e5f6a6f6273948c036164649493948c066b7761726773947d94754e749452942e', NULL, 'upstream job-2 failed', NULL, NULL, NULL, NULL, '6070');


--
-- Data for Name: jobsched_meta; Type: TABLE DATA; Schema: jobsched_fixture_s5; Owner: -
--

INSERT INTO jobsched_fixture_s5.jobsched_meta VALUES ('schema', 5);
INSERT INTO jobsched_fixture_s5.jobsched_meta VALUES ('sql_api', 1);
INSERT INTO jobsched_fixture_s5.jobsched_meta VALUES ('store_id', 678276072233779456);
INSERT INTO jobsched_fixture_s5.jobsched_meta VALUES ('next_id', 3073);


--
-- Data for Name: jobsched_schedules; Type: TABLE DATA; Schema: jobsched_fixture_s5; Owner: -
--

INSERT INTO jobsched_fixture_s5.jobsched_schedules VALUES ('hourly', '\x4b4ae6533385945a287a1fd6a34bd8c7f4eab7d19d45adf54bb3e29af05aa5a3c56f57192d124a1b6280059554000000000000008c136a6f6273636865642e5f726563757272696e67948c0e53746f7265645363686564756c65949394288c0e6d6967726174696f6e5f6a6f6273948c0a686f75726c795f6a6f629493944d100e4e89749452942e', 1796578344.6029289, NULL, NULL, NULL);


--
-- Data for Name: jobsched_tenants; Type: TABLE DATA; Schema: jobsched_fixture_s5; Owner: -
--

INSERT INTO jobsched_fixture_s5.jobsched_tenants VALUES ('', 0, 0);


--
-- Name: jobsched_attempts jobsched_attempts_pkey; Type: CONSTRAINT; Schema: jobsched_fixture_s5; Owner: -
--

ALTER TABLE ONLY jobsched_fixture_s5.jobsched_attempts
    ADD CONSTRAINT jobsched_attempts_pkey PRIMARY KEY (job_id, attempt);


--
-- Name: jobsched_buckets jobsched_buckets_pkey; Type: CONSTRAINT; Schema: jobsched_fixture_s5; Owner: -
--

ALTER TABLE ONLY jobsched_fixture_s5.jobsched_buckets
    ADD CONSTRAINT jobsched_buckets_pkey PRIMARY KEY (key);


--
-- Name: jobsched_deps jobsched_deps_pkey; Type: CONSTRAINT; Schema: jobsched_fixture_s5; Owner: -
--

ALTER TABLE ONLY jobsched_fixture_s5.jobsched_deps
    ADD CONSTRAINT jobsched_deps_pkey PRIMARY KEY (upstream, downstream);


--
-- Name: jobsched_functions jobsched_functions_pkey; Type: CONSTRAINT; Schema: jobsched_fixture_s5; Owner: -
--

ALTER TABLE ONLY jobsched_fixture_s5.jobsched_functions
    ADD CONSTRAINT jobsched_functions_pkey PRIMARY KEY (name);


--
-- Name: jobsched_jobs jobsched_jobs_pkey; Type: CONSTRAINT; Schema: jobsched_fixture_s5; Owner: -
--

ALTER TABLE ONLY jobsched_fixture_s5.jobsched_jobs
    ADD CONSTRAINT jobsched_jobs_pkey PRIMARY KEY (id);


--
-- Name: jobsched_meta jobsched_meta_pkey; Type: CONSTRAINT; Schema: jobsched_fixture_s5; Owner: -
--

ALTER TABLE ONLY jobsched_fixture_s5.jobsched_meta
    ADD CONSTRAINT jobsched_meta_pkey PRIMARY KEY (key);


--
-- Name: jobsched_schedules jobsched_schedules_pkey; Type: CONSTRAINT; Schema: jobsched_fixture_s5; Owner: -
--

ALTER TABLE ONLY jobsched_fixture_s5.jobsched_schedules
    ADD CONSTRAINT jobsched_schedules_pkey PRIMARY KEY (id);


--
-- Name: jobsched_tenants jobsched_tenants_pkey; Type: CONSTRAINT; Schema: jobsched_fixture_s5; Owner: -
--

ALTER TABLE ONLY jobsched_fixture_s5.jobsched_tenants
    ADD CONSTRAINT jobsched_tenants_pkey PRIMARY KEY (tenant);


--
-- Name: jobsched_attempts_finished; Type: INDEX; Schema: jobsched_fixture_s5; Owner: -
--

CREATE INDEX jobsched_attempts_finished ON jobsched_fixture_s5.jobsched_attempts USING btree (finished_at);


--
-- Name: jobsched_deps_downstream; Type: INDEX; Schema: jobsched_fixture_s5; Owner: -
--

CREATE INDEX jobsched_deps_downstream ON jobsched_fixture_s5.jobsched_deps USING btree (downstream);


--
-- Name: jobsched_jobs_blocked; Type: INDEX; Schema: jobsched_fixture_s5; Owner: -
--

CREATE INDEX jobsched_jobs_blocked ON jobsched_fixture_s5.jobsched_jobs USING btree (id) WHERE (queue = 2);


--
-- Name: jobsched_jobs_entered; Type: INDEX; Schema: jobsched_fixture_s5; Owner: -
--

CREATE INDEX jobsched_jobs_entered ON jobsched_fixture_s5.jobsched_jobs USING btree (entered_xid, executor) WHERE (NOT (queue IS DISTINCT FROM 0));


--
-- Name: jobsched_jobs_finished; Type: INDEX; Schema: jobsched_fixture_s5; Owner: -
--

CREATE INDEX jobsched_jobs_finished ON jobsched_fixture_s5.jobsched_jobs USING btree (finished_at, id) WHERE (finished_at IS NOT NULL);


--
-- Name: jobsched_jobs_fires; Type: INDEX; Schema: jobsched_fixture_s5; Owner: -
--

CREATE UNIQUE INDEX jobsched_jobs_fires ON jobsched_fixture_s5.jobsched_jobs USING btree (schedule, fire_time) WHERE (schedule IS NOT NULL);


--
-- Name: jobsched_jobs_ready; Type: INDEX; Schema: jobsched_fixture_s5; Owner: -
--

CREATE INDEX jobsched_jobs_ready ON jobsched_fixture_s5.jobsched_jobs USING btree (executor, k0, k1, k2, id) WHERE (queue = 0);


--
-- Name: jobsched_jobs_running; Type: INDEX; Schema: jobsched_fixture_s5; Owner: -
--

CREATE INDEX jobsched_jobs_running ON jobsched_fixture_s5.jobsched_jobs USING btree (entered_xid) WHERE (status = 'running'::text);


--
-- Name: jobsched_jobs_status; Type: INDEX; Schema: jobsched_fixture_s5; Owner: -
--

CREATE INDEX jobsched_jobs_status ON jobsched_fixture_s5.jobsched_jobs USING btree (status, id) WHERE (status <> 'completed'::text);


--
-- Name: jobsched_jobs_tenant_ready; Type: INDEX; Schema: jobsched_fixture_s5; Owner: -
--

CREATE INDEX jobsched_jobs_tenant_ready ON jobsched_fixture_s5.jobsched_jobs USING btree (executor, tenant, k0, k1, k2, id) WHERE ((queue = 0) AND (tenant IS NOT NULL));


--
-- Name: jobsched_jobs_waiting; Type: INDEX; Schema: jobsched_fixture_s5; Owner: -
--

CREATE INDEX jobsched_jobs_waiting ON jobsched_fixture_s5.jobsched_jobs USING btree (run_at) WHERE (queue = 1);


--
-- Name: jobsched_schedules_due; Type: INDEX; Schema: jobsched_fixture_s5; Owner: -
--

CREATE INDEX jobsched_schedules_due ON jobsched_fixture_s5.jobsched_schedules USING btree (next_fire);


--
-- Name: jobsched_jobs jobsched_count_added; Type: TRIGGER; Schema: jobsched_fixture_s5; Owner: -
--

CREATE TRIGGER jobsched_count_added AFTER INSERT ON jobsched_fixture_s5.jobsched_jobs REFERENCING NEW TABLE AS jobsched_new FOR EACH STATEMENT EXECUTE FUNCTION jobsched_fixture_s5.jobsched_count_added();


--
-- Name: jobsched_jobs jobsched_count_deleted; Type: TRIGGER; Schema: jobsched_fixture_s5; Owner: -
--

CREATE TRIGGER jobsched_count_deleted AFTER DELETE ON jobsched_fixture_s5.jobsched_jobs REFERENCING OLD TABLE AS jobsched_old FOR EACH STATEMENT EXECUTE FUNCTION jobsched_fixture_s5.jobsched_count_deleted();


--
-- Name: jobsched_jobs jobsched_count_truncated; Type: TRIGGER; Schema: jobsched_fixture_s5; Owner: -
--

CREATE TRIGGER jobsched_count_truncated AFTER TRUNCATE ON jobsched_fixture_s5.jobsched_jobs FOR EACH STATEMENT EXECUTE FUNCTION jobsched_fixture_s5.jobsched_count_truncated();


--
-- Name: jobsched_jobs jobsched_count_updated; Type: TRIGGER; Schema: jobsched_fixture_s5; Owner: -
--

CREATE TRIGGER jobsched_count_updated AFTER UPDATE ON jobsched_fixture_s5.jobsched_jobs REFERENCING OLD TABLE AS jobsched_old NEW TABLE AS jobsched_new FOR EACH STATEMENT EXECUTE FUNCTION jobsched_fixture_s5.jobsched_count_updated();


--
-- Name: jobsched_jobs jobsched_entered_xid; Type: TRIGGER; Schema: jobsched_fixture_s5; Owner: -
--

CREATE TRIGGER jobsched_entered_xid BEFORE UPDATE OF queue, status, executor, k0, k1, k2, name, args, payload ON jobsched_fixture_s5.jobsched_jobs FOR EACH ROW WHEN ((((new.queue = 0) AND ((old.queue IS DISTINCT FROM 0) OR (old.executor <> new.executor) OR (old.k0 <> new.k0) OR (old.k1 <> new.k1) OR (old.k2 <> new.k2) OR (old.name <> new.name) OR (old.args IS DISTINCT FROM new.args) OR (old.payload <> new.payload))) OR ((new.status = 'running'::text) AND (old.status <> 'running'::text) AND (NOT (new.entered_xid IS DISTINCT FROM old.entered_xid))))) EXECUTE FUNCTION jobsched_fixture_s5.jobsched_entered_xid();


--
-- PostgreSQL database dump complete
--


