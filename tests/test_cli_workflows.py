"""`jobsched workflows`, `jobsched workflow show ID`, `workflow cancel ID` and the workflow fields
of `jobsched show`: the tree's and table's drawing on hand-made graphs, then
the installed script against SQLite and PostgreSQL stores filled through
``add_workflow`` (workflow_rows.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_cli import jobsched, ok
from workflow_rows import EVIL, FETCHES, Filled, empty, fill, graph_job

from jobsched import JobStatus
from jobsched._cli import _wftree
from jobsched.store import ON_FAILURE_CANCEL, ON_FAILURE_RUN, WorkflowGraph, WorkflowRow

S = JobStatus


def _graph(jobs: list, edges: list, truncated: bool = False) -> WorkflowGraph:
    counts: dict[JobStatus, int] = {}
    for job in jobs:
        counts[job.status] = counts.get(job.status, 0) + 1
    return WorkflowGraph(WorkflowRow(7, "wf", 0.0, len(jobs), counts), jobs, edges, truncated)


# ── drawing ─────────────────────────────────────────────────────────────────


def test_the_tree_hangs_each_job_under_its_lowest_numbered_upstream() -> None:
    jobs = [
        graph_job(1, "extract", S.COMPLETED),
        graph_job(2, "transform", S.RUNNING, progress=0.4, message="page 4 of 10"),
        graph_job(3, "cleanup"),
        graph_job(4, "load"),
    ]
    edges = [(1, 2, ON_FAILURE_CANCEL), (1, 3, ON_FAILURE_RUN), (2, 4, ON_FAILURE_CANCEL),
             (3, 4, ON_FAILURE_RUN), (99, 1, ON_FAILURE_CANCEL)]  # fmt: skip
    assert _wftree.tree(_graph(jobs, edges)) == [
        "job-1 extract  completed  (after job-99)",
        "├── job-2 transform  running 40% page 4 of 10",
        "│   └── job-4 load  pending  (also after job-3 [run])",
        "└── [run] job-3 cleanup  pending",
    ]


def test_jobs_with_ids_of_their_own_show_by_them() -> None:
    """Tree, table and JSON name a job by the id given at submit; an
    upstream the graph did not read shows by its number."""
    jobs = [
        graph_job(-11, "extract", S.COMPLETED, own_id="receipt-42"),
        graph_job(-12, "load", own_id="load-42"),
        graph_job(3, "report"),
    ]
    edges = [(-11, -12, ON_FAILURE_CANCEL), (-11, 3, ON_FAILURE_CANCEL),
             (-12, 3, ON_FAILURE_RUN), (-99, -12, ON_FAILURE_CANCEL)]  # fmt: skip
    graph = _graph(jobs, edges)
    assert _wftree.tree(graph) == [
        "receipt-42 extract  completed",
        "└── load-42 load  pending  (also after job--99)",
        "    └── [run] job-3 report  pending  (also after receipt-42)",
    ]
    table = _wftree.table(graph)
    assert "receipt-42" in table and "load-42 [run]" in table and "job--1" not in table
    shown = _wftree.graph_json(graph)["jobs"]
    assert [j["job_id"] for j in shown] == ["receipt-42", "load-42", "job-3"]
    assert shown[1]["upstreams"] == [
        {"job_id": "job--99", "on_failure": "cancel"},
        {"job_id": "receipt-42", "on_failure": "cancel"},
    ]


def test_a_real_payloads_head_holds_its_own_id() -> None:
    """What the stores read for the graph (OWN_ID_HEAD bytes) finds the id
    of a job whose arguments are far bigger: its options come first."""
    import jobsched as js
    from jobsched._jobs._form import stored_form
    from jobsched._jobs._ids import own_number
    from jobsched.store import OWN_ID_HEAD, own_id_in
    from jobsched.store._codec import Codec

    job = js.FunctionJob(len, ("x" * 100_000,), name="load the big file")
    job._set_own_id("receipt-42")
    blob = Codec(b"k" * 32).dumps(stored_form(job), "job")
    assert len(blob) > 100_000
    assert own_id_in(blob[:OWN_ID_HEAD], own_number("receipt-42")) == "receipt-42"


def test_siblings_fold_by_name_past_twenty_and_their_children_hang_below() -> None:
    def fan(n: int) -> list[str]:
        jobs = [graph_job(1, "start", S.COMPLETED)]
        jobs += [graph_job(i, "fetch", S.FAILED if i % 2 else S.COMPLETED) for i in range(2, n + 2)]
        jobs += [graph_job(n + 2, "sum"), graph_job(n + 3, "odd one")]
        edges = [(1, i, ON_FAILURE_CANCEL) for i in range(2, n + 2)]
        edges += [(i, n + 2, ON_FAILURE_RUN) for i in range(2, n + 2)]
        edges.append((1, n + 3, ON_FAILURE_CANCEL))
        return _wftree.tree(_graph(jobs, edges))

    # 20 fetches and the odd one: 21 siblings, folded; 19 and it: 20, not.
    assert len(fan(19)) == 1 + 19 + 1 + 1
    lines = fan(20)
    assert lines == [
        "job-1 start  completed",
        "├── job-2..job-21 fetch x20: 10 completed, 10 failed",
        "│   └── [run] job-22 sum  pending  (also after job-3 [run], job-4 [run], job-5 [run], "
        "job-6 [run], job-7 [run] and 14 more)",
        "└── job-23 odd one  pending",
    ]


def test_a_chain_of_thousands_is_drawn_without_recursion() -> None:
    n = 3_000
    jobs = [graph_job(i, "step") for i in range(1, n + 1)]
    lines = _wftree.tree(_graph(jobs, [(i, i + 1, ON_FAILURE_CANCEL) for i in range(1, n)]))
    assert len(lines) == n
    assert lines[-1] == " " * 4 * (n - 2) + f"└── job-{n} step  pending"


def test_hostile_names_and_messages_reach_no_terminal_raw() -> None:
    hostile = "\x1b[2J\u202eevil"
    graph = _graph([graph_job(1, hostile, S.RUNNING, message=hostile)], [])
    for text in (*_wftree.tree(graph), _wftree.table(graph)):
        assert "\x1b" not in text and "\u202e" not in text and "\\x1b[2J" in text


def test_the_table_lists_each_job_with_its_upstreams_and_policies() -> None:
    jobs = [graph_job(1, "a", S.COMPLETED), graph_job(2, "b", progress=0.5)]
    table = _wftree.table(_graph(jobs, [(1, 2, ON_FAILURE_RUN), (-8, 2, ON_FAILURE_CANCEL)]))
    header, first, second = table.splitlines()
    assert header.split() == ["JOB", "NAME", "STATUS", "PROGRESS", "ATTEMPTS", "FINISHED",
                              "UPSTREAMS"]  # fmt: skip
    assert first.split()[:5] == ["job-1", "a", "completed", "-", "0"]
    assert second.split()[:4] == ["job-2", "b", "pending", "50%"]
    assert second.endswith("job--8, job-1 [run]")


# ── the script, on real stores ──────────────────────────────────────────────


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def filled(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Filled:
    if request.param == "sqlite":
        return fill(f"sqlite:///{tmp_path / 'jobs.db'}")
    from pg import SECRET, schema_url

    monkeypatch.setenv("JOBSCHED_SECRET", SECRET)
    return fill(schema_url(request.getfixturevalue("pg_session_database")))


def test_workflows_lists_newest_first_with_counts(filled: Filled) -> None:
    lines = ok("workflows", "--store", filled.url).splitlines()
    assert lines[0].split() == ["ID", "NAME", "CREATED", "JOBS", "PENDING", "RUNNING",
                                "RETRY_WAIT", "COMPLETED", "FAILED", "TIMED_OUT", "CANCELLED",
                                "FINISHED"]  # fmt: skip
    ids = [line.split()[0] for line in lines[1:]]
    assert ids == [f"wf-{filled.big}", f"wf-{filled.evil}", f"wf-{filled.etl}"]
    etl = lines[3].split()
    # wf-N nightly-etl DATE TIME UTC 4 | pending running retry completed ... | no
    assert etl[1] == "nightly-etl" and etl[5:] == ["4", "2", "1", "0", "1", "0", "0", "0", "no"]
    assert lines[2].split()[-1] == "yes"
    data = json.loads(ok("workflows", "--store", filled.url, "--json", "--unfinished"))
    assert [w["id"] for w in data] == [f"wf-{filled.big}", f"wf-{filled.etl}"]
    assert data[1] == {
        "id": f"wf-{filled.etl}", "name": "nightly-etl", "created_at": data[1]["created_at"],
        "size": 4, "counts": {"pending": 2, "running": 1, "completed": 1}, "finished": False,
    }  # fmt: skip
    assert len(json.loads(ok("workflows", "--store", filled.url, "--json", "--limit", "1"))) == 1


def test_workflow_show_draws_the_tree_and_the_table(filled: Filled) -> None:
    n = {k: f"job-{v}" for k, v in filled.etl_jobs.items()}
    out = ok("workflow", "show", f"wf-{filled.etl}", "--store", filled.url)
    head, tree = out.split("\n\n")
    assert head.splitlines()[0] == f"wf-{filled.etl}  nightly-etl"
    assert "4 added, 4 held: 2 pending, 1 running, 1 completed" in head
    assert tree.splitlines() == [
        f"{n['extract']} extract  completed",
        f"├── {n['transform']} transform  running 40% page 4 of 10",
        f"│   └── {n['load']} load  pending  (also after {n['cleanup']} [run])",
        f"└── [run] {n['cleanup']} cleanup  pending",
    ]
    table = ok("workflow", "show", str(filled.etl), "--table", "--store", filled.url)
    rows = {line.split()[0]: line for line in table.split("\n\n")[1].splitlines()[1:]}
    assert rows[n["load"]].endswith(f"{n['transform']}, {n['cleanup']} [run]")


def test_workflow_show_folds_a_fan_out_and_says_what_the_limit_left_out(filled: Filled) -> None:
    out = ok("workflow", "show", f"wf-{filled.big}", "--store", filled.url)
    assert f"fetch x{FETCHES}: {FETCHES} pending" in out
    assert len(out.split("\n\n")[1].splitlines()) == 3
    out = ok("workflow", "show", f"wf-{filled.big}", "--limit", "10", "--store", filled.url)
    assert out.endswith(
        f"showing the first 10 of {FETCHES + 2} jobs by id: pass --limit to see more\n"
    )


def test_workflow_show_json_has_every_job_and_edge(filled: Filled) -> None:
    data = json.loads(ok("workflow", "show", f"wf-{filled.etl}", "--json", "--store", filled.url))
    n = filled.etl_jobs
    jobs = {j["name"]: j for j in data["jobs"]}
    assert set(jobs) == {"extract", "transform", "cleanup", "load"} and not data["truncated"]
    assert jobs["transform"]["progress"] == pytest.approx(0.4)
    assert jobs["transform"]["progress_message"] == "page 4 of 10"
    assert jobs["load"]["upstreams"] == [
        {"job_id": f"job-{u}", "on_failure": p}
        for u, p in sorted([(n["transform"], "cancel"), (n["cleanup"], "run")])
    ]


def test_an_unknown_or_malformed_workflow_is_one_line(filled: Filled) -> None:
    done = jobsched("workflow", "show", "wf-999999", "--store", filled.url)
    assert done.returncode == 1 and "no workflow wf-999999 in" in done.stderr
    assert len(done.stderr.splitlines()) == 1
    done = jobsched("workflow", "show", "wf-x", "--store", filled.url)
    assert done.returncode == 1 and "'wf-x' is not a workflow id" in done.stderr


def test_workflow_cancel_cancels_its_unfinished_jobs_and_says_how_many(filled: Filled) -> None:
    """The queued jobs end CANCELLED at once, the running one is flagged for
    its owner; the finished one stays. A second cancel, of a workflow that
    still has a job running, says the same of that one job."""
    n = {k: f"job-{v}" for k, v in filled.etl_jobs.items()}
    out = ok("workflow", "cancel", f"wf-{filled.etl}", "--store", filled.url)
    assert out == (
        f"wf-{filled.etl}: 3 unfinished jobs cancelled (a running one stops within a second)\n"
    )
    data = json.loads(ok("workflow", "show", f"wf-{filled.etl}", "--json", "--store", filled.url))
    status = {j["name"]: j["status"] for j in data["jobs"]}
    assert status == {
        "extract": "completed", "transform": "running", "cleanup": "cancelled", "load": "cancelled"
    }  # fmt: skip
    shown = ok("show", n["transform"], "--json", "--store", filled.url)
    assert json.loads(shown)["status"] == "running"  # until its owner's next renewal
    again = ok("workflow", "cancel", str(filled.etl), "--store", filled.url)
    assert again.startswith(f"wf-{filled.etl}: 1 unfinished job cancelled")


def test_workflow_cancel_of_an_unknown_or_finished_workflow_is_one_line(filled: Filled) -> None:
    done = jobsched("workflow", "cancel", "wf-999999", "--store", filled.url)
    assert done.returncode == 1 and "no workflow wf-999999 in" in done.stderr
    assert len(done.stderr.splitlines()) == 1 and done.stdout == ""
    done = jobsched("workflow", "cancel", f"wf-{filled.evil}", "--store", filled.url)
    assert done.returncode == 1
    assert done.stderr.strip().endswith(f"wf-{filled.evil} already finished: nothing to cancel")
    done = jobsched("workflow", "cancel", "wf-x", "--store", filled.url)
    assert done.returncode == 1 and "'wf-x' is not a workflow id" in done.stderr


def test_a_name_like_a_script_prints_as_it_is(filled: Filled) -> None:
    out = ok("workflow", "show", f"wf-{filled.evil}", "--store", filled.url)
    assert out.startswith(f"wf-{filled.evil}  {EVIL}\n")  # no control characters: as it is
    listed = ok("workflows", "--store", filled.url)
    assert EVIL in listed


def test_show_gives_the_workflow_progress_and_every_upstream(filled: Filled) -> None:
    n = filled.etl_jobs
    out = ok("show", f"job-{n['transform']}", "--store", filled.url)
    fields = {line.split(None, 1)[0]: line for line in out.splitlines()[1:] if line.strip()}
    assert fields["workflow"].split()[-1] == f"wf-{filled.etl}"
    assert fields["progress"].split(None, 1)[1] == "40% page 4 of 10"
    out = ok("show", f"job-{n['load']}", "--store", filled.url)
    depends = next(line for line in out.splitlines() if line.strip().startswith("depends on"))
    assert f"job-{n['transform']} (waiting)" in depends
    assert f"job-{n['cleanup']} [run] (waiting)" in depends
    out = ok("show", f"job-{n['transform']}", "--store", filled.url)
    depends = next(line for line in out.splitlines() if line.strip().startswith("depends on"))
    assert depends.split(None, 2)[2] == f"job-{n['extract']} (completed)"
    data = json.loads(ok("show", f"job-{n['load']}", "--json", "--store", filled.url))
    assert data["workflow"] == f"wf-{filled.etl}" and data["progress"] is None
    assert sorted(data["upstreams"], key=lambda u: u["job_id"]) == sorted(
        [{"job_id": f"job-{n['transform']}", "on_failure": "cancel", "state": "waiting"},
         {"job_id": f"job-{n['cleanup']}", "on_failure": "run", "state": "waiting"}],
        key=lambda u: u["job_id"],
    )  # fmt: skip
    plain = json.loads(ok("show", f"job-{filled.plain}", "--json", "--store", filled.url))
    assert plain["workflow"] is None and plain["upstreams"] == []


@pytest.mark.parametrize(
    "command",
    [
        ["workflows"],
        ["workflow", "show", "wf-1"],
        ["workflows", "--unfinished"],
        ["workflow", "cancel", "wf-1"],
    ],
)
def test_a_store_that_keeps_no_workflows_says_so_in_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: list[str],
) -> None:
    """A store written before workflows answers the reads with
    NotImplementedError (WorkflowSide's defaults): one line, exit status 1."""
    from jobsched._cli import main
    from jobsched.store._workflowside import WorkflowSide
    from jobsched_sqlite import SQLiteStore

    url = fill(f"sqlite:///{tmp_path / 'jobs.db'}").url
    monkeypatch.setattr(SQLiteStore, "workflows", WorkflowSide.workflows)
    monkeypatch.setattr(SQLiteStore, "workflow_graph", WorkflowSide.workflow_graph)
    monkeypatch.setattr(SQLiteStore, "workflow", WorkflowSide.workflow)
    assert main([*command, "--store", url]) == 1
    err = capsys.readouterr().err
    assert err == (
        f"jobsched: error: the store {url} cannot answer this: SQLiteStore cannot keep workflows\n"
    )


def test_a_store_without_workflows_says_so(tmp_path: Path) -> None:
    url = empty(f"sqlite:///{tmp_path / 'jobs.db'}")
    assert ok("workflows", "--store", url) == "no workflows\n"
    assert ok("workflows", "--unfinished", "--store", url) == "no unfinished workflows\n"
    assert json.loads(ok("workflows", "--json", "--store", url)) == []
