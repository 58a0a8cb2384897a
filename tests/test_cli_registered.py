"""The `jobsched` read commands on registered jobs (schema 4): `show` prints
their JSON arguments and result, `jobs --arg KEY=VALUE` finds them by an
argument, `stats` counts those waiting for a member that knows their name.

The rows are written through the store seam, as an app writes them (a name,
``payload`` ``b"J"``, JSON ``args``; a result ``b"J"`` + JSON), so these
tests hold whatever builds the rows.
"""

from __future__ import annotations

import json
import time
from typing import Any

import anyio
import pytest
from durable_store import store_url  # noqa: F401 - the fixture
from test_cli import as_json, jobsched, ok

import jobsched as js
from jobsched.store import Member, NewJob, Outcome

S = js.JobStatus
SEND = "shop.jobs.send_email"
SYNC = "shop.jobs.sync_customer"


def registered(store: js.JobStore, name: str, **args: Any) -> NewJob:
    now = time.time()
    return NewJob(
        store.reserve_ids(1),
        name=name,
        executor="async",
        key=(0.0,),
        run_at=now,
        submitted_at=now,
        payload=b"J",
        args=json.dumps(args),
    )


def fill(url: str) -> dict[str, int]:
    """Registered jobs: one completed with a JSON result, three waiting;
    a member that knows SEND reported."""

    async def main() -> dict[str, int]:
        store = js.open_store(url)
        await store.open()
        try:
            done = registered(
                store, SEND, to="user5@example.com", at={"$dt": "2026-01-01T00:00:00+00:00"}
            )
            await store.add([done], time.time())
            (claim,) = await store.claim("m", 1, {"async": 1}, time.time(), 30, names={SEND})
            result = b'J{"sent": true, "id": 7}'
            outcome = Outcome(claim.id, 1, S.COMPLETED, time.time(), result=result)
            assert (await store.record("m", [outcome])).refused == []
            waiting = [
                registered(store, SEND, to="user6@example.com", n=5),
                registered(store, SEND, to="user5@example.com", n=6),
                registered(store, SYNC, customer=42),
            ]
            await store.add(waiting, time.time())
            member = Member("h:1:a", 4, 0, time.time(), time.time(), names=(SEND,))
            await store.report_member(member)
            return {"done": done.id, "six": waiting[0].id, "again": waiting[1].id}
        finally:
            await store.close()

    return anyio.run(main)


def test_show_prints_the_arguments_and_the_result_as_json(store_url: str) -> None:  # noqa: F811
    """Pretty JSON, tags as stored; --json gives both as JSON values."""
    ids = fill(store_url)
    out = ok("show", f"job-{ids['done']}", "--store", store_url)
    assert "  arguments   {\n" in out
    assert '"to": "user5@example.com"' in out
    assert '"$dt": "2026-01-01T00:00:00+00:00"' in out
    assert "  result      {\n" in out and '"sent": true' in out
    data = as_json("show", f"job-{ids['done']}", "--store", store_url)
    assert data["args"] == {"to": "user5@example.com", "at": {"$dt": "2026-01-01T00:00:00+00:00"}}
    assert data["result"] == {"sent": True, "id": 7}
    assert data["result_error"] is None
    waiting = as_json("show", f"job-{ids['six']}", "--store", store_url)
    assert (waiting["status"], waiting["args"]) == ("pending", {"to": "user6@example.com", "n": 5})


def test_jobs_arg_filters_by_arguments(store_url: str) -> None:  # noqa: F811
    """Every --arg must match; a number as its JSON text."""
    ids = fill(store_url)

    def listed(*args: str) -> list[str]:
        return [j["job_id"] for j in as_json("jobs", "--store", store_url, *args)]

    assert listed("--arg", "to=user5@example.com") == [f"job-{ids['again']}", f"job-{ids['done']}"]
    assert listed("--arg", "to=user5@example.com", "--arg", "n=6") == [f"job-{ids['again']}"]
    assert listed("--arg", "n=5") == [f"job-{ids['six']}"]
    assert listed("--arg", "to=user5@example.com", "--status", "completed") == [
        f"job-{ids['done']}"
    ]
    assert "no jobs with those arguments" in ok(
        "jobs", "--store", store_url, "--arg", "to=nobody@example.com"
    )
    table = ok("jobs", "--store", store_url, "--arg", "customer=42")
    assert SYNC in table


@pytest.mark.parametrize(
    ("arg", "expected"),
    [
        ("to", "'to' has no '='; write KEY=VALUE"),
        ("=a@b", "'=a@b' has no KEY before '='"),
        ("to-be=x", "'to-be' in 'to-be=x' is not a parameter name"),
    ],
)
def test_a_bad_arg_is_a_clear_error(store_url: str, arg: str, expected: str) -> None:  # noqa: F811
    done = jobsched("jobs", "--store", store_url, "--arg", arg)
    assert done.returncode == 1  # the CLI's user errors (see _main.py)
    assert expected in done.stderr
    assert "Traceback" not in done.stderr


def test_stats_counts_jobs_waiting_for_a_member_that_knows_their_name(
    store_url: str,  # noqa: F811
) -> None:
    """The live member knows SEND: only SYNC's job is waiting for one."""
    fill(store_url)
    data = as_json("stats", "--store", store_url)
    assert data["waiting_for_unknown_name"] == {SYNC: 1}
    out = ok("stats", "--store", store_url)
    assert f"waiting for a member that knows {SYNC}: 1" in out
    assert f"knows {SEND}" not in out
