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
-- Name: jobsched_fixture_s4; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA jobsched_fixture_s4;


--
-- Name: jobsched_count_added(); Type: FUNCTION; Schema: jobsched_fixture_s4; Owner: -
--

CREATE FUNCTION jobsched_fixture_s4.jobsched_count_added() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'jobsched_fixture_s4'
    AS $$ BEGIN
        INSERT INTO jobsched_counts (status, executor, n)
        SELECT status, executor, count(*) FROM jobsched_new GROUP BY 1, 2;
        RETURN NULL;
    END $$;


--
-- Name: jobsched_count_deleted(); Type: FUNCTION; Schema: jobsched_fixture_s4; Owner: -
--

CREATE FUNCTION jobsched_fixture_s4.jobsched_count_deleted() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'jobsched_fixture_s4'
    AS $$ BEGIN
        INSERT INTO jobsched_counts (status, executor, n)
        SELECT status, executor, -count(*) FROM jobsched_old GROUP BY 1, 2;
        RETURN NULL;
    END $$;


--
-- Name: jobsched_count_truncated(); Type: FUNCTION; Schema: jobsched_fixture_s4; Owner: -
--

CREATE FUNCTION jobsched_fixture_s4.jobsched_count_truncated() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'jobsched_fixture_s4'
    AS $$ BEGIN
        DELETE FROM jobsched_counts;
        RETURN NULL;
    END $$;


--
-- Name: jobsched_count_updated(); Type: FUNCTION; Schema: jobsched_fixture_s4; Owner: -
--

CREATE FUNCTION jobsched_fixture_s4.jobsched_count_updated() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'jobsched_fixture_s4'
    AS $$ BEGIN
        INSERT INTO jobsched_counts (status, executor, n)
        SELECT status, executor, sum(n) FROM (
            SELECT status, executor, 1 AS n FROM jobsched_new
            UNION ALL SELECT status, executor, -1 FROM jobsched_old
        ) d GROUP BY 1, 2 HAVING sum(n) <> 0;
        RETURN NULL;
    END $$;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: jobsched_attempts; Type: TABLE; Schema: jobsched_fixture_s4; Owner: -
--

CREATE TABLE jobsched_fixture_s4.jobsched_attempts (
    job_id bigint NOT NULL,
    attempt integer NOT NULL,
    owner text,
    started_at double precision NOT NULL,
    finished_at double precision,
    status text NOT NULL,
    error text
);


--
-- Name: jobsched_buckets; Type: TABLE; Schema: jobsched_fixture_s4; Owner: -
--

CREATE TABLE jobsched_fixture_s4.jobsched_buckets (
    key text NOT NULL,
    tokens double precision NOT NULL,
    updated double precision NOT NULL
);


--
-- Name: jobsched_counts; Type: TABLE; Schema: jobsched_fixture_s4; Owner: -
--

CREATE TABLE jobsched_fixture_s4.jobsched_counts (
    status text NOT NULL,
    executor text NOT NULL,
    n bigint NOT NULL
);


--
-- Name: jobsched_deps; Type: TABLE; Schema: jobsched_fixture_s4; Owner: -
--

CREATE TABLE jobsched_fixture_s4.jobsched_deps (
    upstream bigint NOT NULL,
    downstream bigint NOT NULL
);


--
-- Name: jobsched_jobs; Type: TABLE; Schema: jobsched_fixture_s4; Owner: -
--

CREATE TABLE jobsched_fixture_s4.jobsched_jobs (
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
    args jsonb
);


--
-- Name: jobsched_meta; Type: TABLE; Schema: jobsched_fixture_s4; Owner: -
--

CREATE TABLE jobsched_fixture_s4.jobsched_meta (
    key text NOT NULL,
    value bigint NOT NULL
);


--
-- Name: jobsched_schedules; Type: TABLE; Schema: jobsched_fixture_s4; Owner: -
--

CREATE TABLE jobsched_fixture_s4.jobsched_schedules (
    id text NOT NULL,
    payload bytea NOT NULL,
    next_fire double precision NOT NULL,
    last_job bigint,
    owner text,
    lease_until double precision
);


--
-- Name: jobsched_tenants; Type: TABLE; Schema: jobsched_fixture_s4; Owner: -
--

CREATE TABLE jobsched_fixture_s4.jobsched_tenants (
    tenant text NOT NULL,
    served bigint DEFAULT 0 NOT NULL,
    credit integer DEFAULT 0 NOT NULL
);


--
-- Data for Name: jobsched_attempts; Type: TABLE DATA; Schema: jobsched_fixture_s4; Owner: -
--

INSERT INTO jobsched_fixture_s4.jobsched_attempts VALUES (2, 1, 'vm:4939:75e43181', 1796541695.8200357, 1796541695.823869, 'failed', 'ValueError: broken');


--
-- Data for Name: jobsched_buckets; Type: TABLE DATA; Schema: jobsched_fixture_s4; Owner: -
--



--
-- Data for Name: jobsched_counts; Type: TABLE DATA; Schema: jobsched_fixture_s4; Owner: -
--

INSERT INTO jobsched_fixture_s4.jobsched_counts VALUES ('completed', 'thread', 1);
INSERT INTO jobsched_fixture_s4.jobsched_counts VALUES ('failed', 'thread', 1);
INSERT INTO jobsched_fixture_s4.jobsched_counts VALUES ('pending', 'thread', 1);
INSERT INTO jobsched_fixture_s4.jobsched_counts VALUES ('pending', 'thread', 1);
INSERT INTO jobsched_fixture_s4.jobsched_counts VALUES ('pending', 'thread', 1);
INSERT INTO jobsched_fixture_s4.jobsched_counts VALUES ('pending', 'async', 1);


--
-- Data for Name: jobsched_deps; Type: TABLE DATA; Schema: jobsched_fixture_s4; Owner: -
--



--
-- Data for Name: jobsched_jobs; Type: TABLE DATA; Schema: jobsched_fixture_s4; Owner: -
--

INSERT INTO jobsched_fixture_s4.jobsched_jobs VALUES (1, 'done add', 'thread', 'completed', NULL, -1, 1.796541695770898e+15, 0, 1796541695.770894, 1796541695.770894, 1796541695.7997537, 1796541695.8007846, 1, NULL, 'vm:4939:75e43181', NULL, false, 0, NULL, NULL, '\x4b4ae6533385945a2836b57fcfc540b40fc485ce52bf99768887566fffbc009f3cb031ddd5f3df10ff800595b7000000000000008c116a6f6273636865642e5f6a6f62666f726d948c07726573746f7265949394288c166a6f6273636865642e5f66756e6374696f6e5f6a6f62948c0b46756e6374696f6e4a6f629493948c08646f6e6520616464944e47403e0000000000004e4e7d94288c0461726773944b024b0386948c086578656375746f72948c06746872656164948c0466756e63948c0e6d6967726174696f6e5f6a6f6273948c036164649493948c066b7761726773947d94754e749452942e', '\x4b4ae6533385945a2800cb072928adaf1c1a78b4ba6adc3aec3e9d0af88815a91c73e573e407b1736080054b052e', NULL, NULL, NULL, NULL, NULL);
INSERT INTO jobsched_fixture_s4.jobsched_jobs VALUES (2, 'broken', 'thread', 'failed', NULL, -1, 1.796541695771411e+15, 0, 1796541695.7714088, 1796541695.7714088, 1796541695.8200357, 1796541695.823869, 1, NULL, 'vm:4939:75e43181', NULL, false, 0, NULL, NULL, '\x4b4ae6533385945a280d15491804d28f0dda6df0971c63c09a8cb002ce5a86b06bbbf29bb5d31f8b1880059522010000000000008c116a6f6273636865642e5f6a6f62666f726d948c07726573746f7265949394288c166a6f6273636865642e5f66756e6374696f6e5f6a6f62948c0b46756e6374696f6e4a6f629493948c0662726f6b656e944e47403e0000000000008c0f6a6f6273636865642e5f7265747279948c0b5265747279506f6c6963799493942981947d94288c0b6d61785f72657472696573944b008c0a626173655f64656c617994473ff00000000000008c096d61785f64656c61799447404e0000000000008c066a6974746572948875624e7d94288c046172677394680685948c086578656375746f72948c06746872656164948c0466756e63948c0e6d6967726174696f6e5f6a6f6273948c046661696c9493948c066b7761726773947d94754e749452942e', NULL, 'ValueError: broken', 'Traceback (most recent call last):
  File "/tmp/ab-main/packages/core/src/jobsched/_engine/_dispatch.py", line 190, in _continue_attempt
    result = await Resume(it, first, scope, self._clock)
             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/tmp/ab-main/packages/core/src/jobsched/_engine/_resume.py", line 102, in __await__
    value = it.send(sent) if thrown is None else it.throw(thrown)
            ^^^^^^^^^^^^^
  File "/tmp/ab-main/packages/exec-thread/src/jobsched_thread/_executor.py", line 150, in run
    raise error
  File "/tmp/ab-main/packages/exec-thread/src/jobsched_thread/_executor.py", line 268, in __call__
    return self.token.run(self.func)
           ^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/tmp/ab-main/packages/core/src/jobsched/_jobs/_executor.py", line 71, in run
    return func(*args)
           ^^^^^^^^^^^
  File "/tmp/ab-main/packages/core/src/jobsched/_jobs/_function.py", line 201, in run_sync
    return self.func(*self.args, **self.kwargs)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/work/wt-backlog/tests/migration_jobs.py", line 16, in fail
    raise ValueError(message)
ValueError: broken
', NULL, NULL, NULL);
INSERT INTO jobsched_fixture_s4.jobsched_jobs VALUES (1025, 'pending 1', 'thread', 'pending', 0, -1, 1.796541695859969e+15, 0, 1796541695.8599668, 1796541695.8599668, NULL, NULL, 0, NULL, NULL, NULL, false, 0, NULL, NULL, '\x4b4ae6533385945a289117e813dfdf39da5582597748df5a0fd8393c37bf3466dc5307867aec55de7b800595b8000000000000008c116a6f6273636865642e5f6a6f62666f726d948c07726573746f7265949394288c166a6f6273636865642e5f66756e6374696f6e5f6a6f62948c0b46756e6374696f6e4a6f629493948c0970656e64696e672031944e47403e0000000000004e4e7d94288c0461726773944b014b0186948c086578656375746f72948c06746872656164948c0466756e63948c0e6d6967726174696f6e5f6a6f6273948c036164649493948c066b7761726773947d94754e749452942e', NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO jobsched_fixture_s4.jobsched_jobs VALUES (1026, 'pending 2', 'thread', 'pending', 0, -1, 1.796541695868229e+15, 0, 1796541695.8682272, 1796541695.8682272, NULL, NULL, 0, NULL, NULL, NULL, false, 0, NULL, NULL, '\x4b4ae6533385945a28a97d88b67079ab9128408369744f70c3248b057845b06e4bdd6db8f9063b96dc800595b8000000000000008c116a6f6273636865642e5f6a6f62666f726d948c07726573746f7265949394288c166a6f6273636865642e5f66756e6374696f6e5f6a6f62948c0b46756e6374696f6e4a6f629493948c0970656e64696e672032944e47403e0000000000004e4e7d94288c0461726773944b284b0286948c086578656375746f72948c06746872656164948c0466756e63948c0e6d6967726174696f6e5f6a6f6273948c036164649493948c066b7761726773947d94754e749452942e', NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO jobsched_fixture_s4.jobsched_jobs VALUES (2049, 'later', 'thread', 'pending', 1, -1, 1.796541695901598e+15, 0, 1796545295.9015963, 1796541695.9015963, NULL, NULL, 0, NULL, NULL, NULL, false, 0, NULL, NULL, '\x4b4ae6533385945a28511501a3b96255468b3c9ee0ff18729e04cbfdb7341c6ede6a9c0a3c2ee73f14800595b4000000000000008c116a6f6273636865642e5f6a6f62666f726d948c07726573746f7265949394288c166a6f6273636865642e5f66756e6374696f6e5f6a6f62948c0b46756e6374696f6e4a6f629493948c056c61746572944e47403e0000000000004e4e7d94288c0461726773944b054b0586948c086578656375746f72948c06746872656164948c0466756e63948c0e6d6967726174696f6e5f6a6f6273948c036164649493948c066b7761726773947d94754e749452942e', NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO jobsched_fixture_s4.jobsched_jobs VALUES (3073, 'shop.jobs.send_email', 'async', 'pending', 0, 0, 0, 0, 1796541695.930791, 1796541695.930791, NULL, NULL, 0, NULL, NULL, NULL, false, 0, NULL, NULL, '\x4a', NULL, NULL, NULL, NULL, NULL, '{"to": "a@b"}');


--
-- Data for Name: jobsched_meta; Type: TABLE DATA; Schema: jobsched_fixture_s4; Owner: -
--

INSERT INTO jobsched_fixture_s4.jobsched_meta VALUES ('schema', 4);
INSERT INTO jobsched_fixture_s4.jobsched_meta VALUES ('next_id', 3074);


--
-- Data for Name: jobsched_schedules; Type: TABLE DATA; Schema: jobsched_fixture_s4; Owner: -
--

INSERT INTO jobsched_fixture_s4.jobsched_schedules VALUES ('hourly', '\x4b4ae6533385945a287a1fd6a34bd8c7f4eab7d19d45adf54bb3e29af05aa5a3c56f57192d124a1b6280059554000000000000008c136a6f6273636865642e5f726563757272696e67948c0e53746f7265645363686564756c65949394288c0e6d6967726174696f6e5f6a6f6273948c0a686f75726c795f6a6f629493944d100e4e89749452942e', 1796545295.8345861, NULL, NULL, NULL);


--
-- Data for Name: jobsched_tenants; Type: TABLE DATA; Schema: jobsched_fixture_s4; Owner: -
--

INSERT INTO jobsched_fixture_s4.jobsched_tenants VALUES ('', 0, 0);


--
-- Name: jobsched_attempts jobsched_attempts_pkey; Type: CONSTRAINT; Schema: jobsched_fixture_s4; Owner: -
--

ALTER TABLE ONLY jobsched_fixture_s4.jobsched_attempts
    ADD CONSTRAINT jobsched_attempts_pkey PRIMARY KEY (job_id, attempt);


--
-- Name: jobsched_buckets jobsched_buckets_pkey; Type: CONSTRAINT; Schema: jobsched_fixture_s4; Owner: -
--

ALTER TABLE ONLY jobsched_fixture_s4.jobsched_buckets
    ADD CONSTRAINT jobsched_buckets_pkey PRIMARY KEY (key);


--
-- Name: jobsched_deps jobsched_deps_pkey; Type: CONSTRAINT; Schema: jobsched_fixture_s4; Owner: -
--

ALTER TABLE ONLY jobsched_fixture_s4.jobsched_deps
    ADD CONSTRAINT jobsched_deps_pkey PRIMARY KEY (upstream, downstream);


--
-- Name: jobsched_jobs jobsched_jobs_pkey; Type: CONSTRAINT; Schema: jobsched_fixture_s4; Owner: -
--

ALTER TABLE ONLY jobsched_fixture_s4.jobsched_jobs
    ADD CONSTRAINT jobsched_jobs_pkey PRIMARY KEY (id);


--
-- Name: jobsched_meta jobsched_meta_pkey; Type: CONSTRAINT; Schema: jobsched_fixture_s4; Owner: -
--

ALTER TABLE ONLY jobsched_fixture_s4.jobsched_meta
    ADD CONSTRAINT jobsched_meta_pkey PRIMARY KEY (key);


--
-- Name: jobsched_schedules jobsched_schedules_pkey; Type: CONSTRAINT; Schema: jobsched_fixture_s4; Owner: -
--

ALTER TABLE ONLY jobsched_fixture_s4.jobsched_schedules
    ADD CONSTRAINT jobsched_schedules_pkey PRIMARY KEY (id);


--
-- Name: jobsched_tenants jobsched_tenants_pkey; Type: CONSTRAINT; Schema: jobsched_fixture_s4; Owner: -
--

ALTER TABLE ONLY jobsched_fixture_s4.jobsched_tenants
    ADD CONSTRAINT jobsched_tenants_pkey PRIMARY KEY (tenant);


--
-- Name: jobsched_attempts_finished; Type: INDEX; Schema: jobsched_fixture_s4; Owner: -
--

CREATE INDEX jobsched_attempts_finished ON jobsched_fixture_s4.jobsched_attempts USING btree (finished_at);


--
-- Name: jobsched_deps_downstream; Type: INDEX; Schema: jobsched_fixture_s4; Owner: -
--

CREATE INDEX jobsched_deps_downstream ON jobsched_fixture_s4.jobsched_deps USING btree (downstream);


--
-- Name: jobsched_jobs_blocked; Type: INDEX; Schema: jobsched_fixture_s4; Owner: -
--

CREATE INDEX jobsched_jobs_blocked ON jobsched_fixture_s4.jobsched_jobs USING btree (id) WHERE (queue = 2);


--
-- Name: jobsched_jobs_finished; Type: INDEX; Schema: jobsched_fixture_s4; Owner: -
--

CREATE INDEX jobsched_jobs_finished ON jobsched_fixture_s4.jobsched_jobs USING btree (finished_at, id) WHERE (finished_at IS NOT NULL);


--
-- Name: jobsched_jobs_fires; Type: INDEX; Schema: jobsched_fixture_s4; Owner: -
--

CREATE UNIQUE INDEX jobsched_jobs_fires ON jobsched_fixture_s4.jobsched_jobs USING btree (schedule, fire_time) WHERE (schedule IS NOT NULL);


--
-- Name: jobsched_jobs_leases; Type: INDEX; Schema: jobsched_fixture_s4; Owner: -
--

CREATE INDEX jobsched_jobs_leases ON jobsched_fixture_s4.jobsched_jobs USING btree (lease_until) WHERE (status = 'running'::text);


--
-- Name: jobsched_jobs_ready; Type: INDEX; Schema: jobsched_fixture_s4; Owner: -
--

CREATE INDEX jobsched_jobs_ready ON jobsched_fixture_s4.jobsched_jobs USING btree (executor, k0, k1, k2, id) WHERE (queue = 0);


--
-- Name: jobsched_jobs_status; Type: INDEX; Schema: jobsched_fixture_s4; Owner: -
--

CREATE INDEX jobsched_jobs_status ON jobsched_fixture_s4.jobsched_jobs USING btree (status, id) WHERE (status <> 'completed'::text);


--
-- Name: jobsched_jobs_tenant_ready; Type: INDEX; Schema: jobsched_fixture_s4; Owner: -
--

CREATE INDEX jobsched_jobs_tenant_ready ON jobsched_fixture_s4.jobsched_jobs USING btree (executor, tenant, k0, k1, k2, id) WHERE ((queue = 0) AND (tenant IS NOT NULL));


--
-- Name: jobsched_jobs_waiting; Type: INDEX; Schema: jobsched_fixture_s4; Owner: -
--

CREATE INDEX jobsched_jobs_waiting ON jobsched_fixture_s4.jobsched_jobs USING btree (run_at) WHERE (queue = 1);


--
-- Name: jobsched_schedules_due; Type: INDEX; Schema: jobsched_fixture_s4; Owner: -
--

CREATE INDEX jobsched_schedules_due ON jobsched_fixture_s4.jobsched_schedules USING btree (next_fire);


--
-- Name: jobsched_jobs jobsched_count_added; Type: TRIGGER; Schema: jobsched_fixture_s4; Owner: -
--

CREATE TRIGGER jobsched_count_added AFTER INSERT ON jobsched_fixture_s4.jobsched_jobs REFERENCING NEW TABLE AS jobsched_new FOR EACH STATEMENT EXECUTE FUNCTION jobsched_fixture_s4.jobsched_count_added();


--
-- Name: jobsched_jobs jobsched_count_deleted; Type: TRIGGER; Schema: jobsched_fixture_s4; Owner: -
--

CREATE TRIGGER jobsched_count_deleted AFTER DELETE ON jobsched_fixture_s4.jobsched_jobs REFERENCING OLD TABLE AS jobsched_old FOR EACH STATEMENT EXECUTE FUNCTION jobsched_fixture_s4.jobsched_count_deleted();


--
-- Name: jobsched_jobs jobsched_count_truncated; Type: TRIGGER; Schema: jobsched_fixture_s4; Owner: -
--

CREATE TRIGGER jobsched_count_truncated AFTER TRUNCATE ON jobsched_fixture_s4.jobsched_jobs FOR EACH STATEMENT EXECUTE FUNCTION jobsched_fixture_s4.jobsched_count_truncated();


--
-- Name: jobsched_jobs jobsched_count_updated; Type: TRIGGER; Schema: jobsched_fixture_s4; Owner: -
--

CREATE TRIGGER jobsched_count_updated AFTER UPDATE ON jobsched_fixture_s4.jobsched_jobs REFERENCING OLD TABLE AS jobsched_old NEW TABLE AS jobsched_new FOR EACH STATEMENT EXECUTE FUNCTION jobsched_fixture_s4.jobsched_count_updated();


--
-- PostgreSQL database dump complete
--


