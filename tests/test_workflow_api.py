"""Workflows' public objects (issue 37, step A1): result markers, After edges,
Workflow building, WorkflowInfo, UpstreamFailedError, finding markers,
binding upstreams' results, and the JSON tags of registered jobs. No
scheduler runs here: these are the pieces the engine builds on."""

from __future__ import annotations

import copy
import datetime as dt
import json
import pickle
import subprocess
import sys
from typing import Any

import anyio
import cloudpickle
import pytest

import jobsched as js
from jobsched._jobs import _json, _markers
from jobsched._jobs._form import StoredForm
from jobsched._jobs._ids import id_number
from jobsched._jobs._markers import ResultOf, ResultsOf
from jobsched._workflows._bind import RaiseUpstream, Upstream, bind
from jobsched._workflows._edges import edges, with_inputs
from jobsched._workflows._inputs import find_inputs

app = js.App()


@app.job
def total(values: list[int], start: int = 0) -> int:
    return sum(values, start)


@app.job
def pair(first: Any, second: Any = None) -> list[Any]:
    return [first, second]


def add(a: int, b: int = 0) -> int:
    return a + b


def collect(*values: Any, **named: Any) -> tuple[Any, ...]:
    return (values, named)


class Report(js.BlockingJob):
    """A subclass job taking its inputs as attributes (it has a __dict__)."""

    def __init__(self, rows: Any, extra: Any = None) -> None:
        super().__init__("report")
        self.rows = rows
        self.extra = extra

    def run_sync(self) -> Any:
        return (self.rows, self.extra)


class AsyncReport(js.AsyncJob):
    """A slotted async subclass job: its markers sit in its own slots."""

    __slots__ = ("rows",)

    def __init__(self, rows: Any) -> None:
        super().__init__("async report")
        self.rows = rows

    async def run(self) -> Any:
        return self.rows


def job(*args: Any, **kwargs: Any) -> js.FunctionJob[Any]:
    return js.FunctionJob(collect, args=args, kwargs=kwargs)


def ended(status: js.JobStatus, value: Any = None, error: str | None = None) -> Upstream:
    return Upstream(status, value, error)


def ends_for(**by_id: Upstream) -> dict[int, Upstream]:
    return {id_number(key.replace("_", "-")): end for key, end in by_id.items()}


# Markers


def test_result_of_takes_an_id_or_a_job() -> None:
    """result_of keeps its target as given and names it by id; equal markers
    are those of one upstream."""
    upstream = job()
    by_job, by_id = js.result_of(upstream), js.result_of(upstream.job_id)
    assert type(by_job) is ResultOf
    assert by_job.target is upstream and by_id.target == upstream.job_id
    assert by_job.job_id == upstream.job_id
    assert by_job == by_id and hash(by_job) == hash(by_id)
    assert repr(by_id) == f"js.result_of({upstream.job_id!r})"
    assert js.result_of("order-42").job_id == "order-42"


@pytest.mark.parametrize("bad", [42, None, b"job-1", 1.5, ["job-1"]], ids=repr)
def test_result_of_refuses_what_is_no_job(bad: object) -> None:
    """Anything but a str or a Job is a TypeError naming it."""
    with pytest.raises(TypeError, match="result_of takes a job or a job id"):
        js.result_of(bad)  # type: ignore[arg-type]


def test_result_of_an_after_says_where_it_belongs() -> None:
    """An After passed to result_of is refused with a pointer to depends_on."""
    with pytest.raises(TypeError, match="belongs in depends_on"):
        js.result_of(js.After("job-1"))  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", ["", "job-0", "job-007", "x" * 201], ids=repr)
def test_result_of_refuses_a_str_that_is_no_id(bad: str) -> None:
    """A str no job id can be (empty, job-0, leading zeros, too long) is a ValueError."""
    with pytest.raises(ValueError, match="that is no job id"):
        js.result_of(bad)


def test_results_of_lists_targets_in_order() -> None:
    """results_of keeps its targets' order, duplicates included."""
    a, b = job(), job()
    marker = js.results_of([a, "job-5", b, a])
    assert type(marker) is ResultsOf
    assert marker.job_ids == (a.job_id, "job-5", b.job_id, a.job_id)
    assert marker == js.results_of(x for x in [a.job_id, "job-5", b.job_id, a.job_id])
    assert repr(js.results_of(["job-5"])) == "js.results_of(['job-5'])"


def test_results_of_refuses_empty_single_and_bad_items() -> None:
    """Empty is a ValueError; a single id or job, a non-iterable or a bad
    item is a TypeError saying what to pass."""
    with pytest.raises(ValueError, match="at least one job"):
        js.results_of([])
    with pytest.raises(TypeError, match="use js.result_of for one upstream"):
        js.results_of("job-1")
    with pytest.raises(TypeError, match="use js.result_of for one upstream"):
        js.results_of(job())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="takes a list of jobs"):
        js.results_of(7)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="results_of takes a job or a job id"):
        js.results_of(["job-1", 2])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="that is no job id"):
        js.results_of(["job-1", ""])


def test_markers_made_counts_every_marker() -> None:
    """Making, unpickling or decoding a marker bumps MARKERS_MADE, which the
    engine tests to skip the search for markers while none exists."""
    before = _markers.MARKERS_MADE
    marker = js.result_of("job-1")
    js.results_of(["job-1"])
    made = _markers.MARKERS_MADE
    assert made == before + 2
    marker._seen = True
    pickle.loads(pickle.dumps(marker))
    _json.loads(_json.dumps({"a": js.result_of("job-2")}, "v"))
    made = _markers.MARKERS_MADE
    assert made >= before + 5


def test_importing_jobsched_loads_no_workflow_classes() -> None:
    """`import jobsched` loads the markers and After only: the Workflow
    classes, finding markers and the binding load on first use (reading
    jobsched.Workflow loads the workflow module)."""
    code = (
        "import sys, jobsched\n"
        "mods = ['jobsched._workflows._workflow', 'jobsched._workflows._bind',\n"
        "        'jobsched._workflows._inputs']\n"
        "print([m for m in mods if m in sys.modules])\n"
        "jobsched.Workflow\n"
        "print([m for m in mods if m in sys.modules])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split("\n")
    assert out[:2] == ["[]", "['jobsched._workflows._workflow', 'jobsched._workflows._inputs']"]


# After and depends_on


def test_after_defaults_to_cancel() -> None:
    """After(job) is a cancel edge; it is frozen and names its upstream by id."""
    upstream = job()
    edge = js.After(upstream)
    assert edge.on_failure == "cancel" and edge.job is upstream
    assert edge.job_id == upstream.job_id
    assert js.After("job-3", on_failure="run").on_failure == "run"
    with pytest.raises(AttributeError):
        edge.on_failure = "run"  # type: ignore[misc]


@pytest.mark.parametrize("bad", ["Run", "ignore", "", None, True], ids=repr)
def test_after_refuses_an_unknown_policy(bad: object) -> None:
    """A policy other than the two is a ValueError naming both."""
    with pytest.raises(ValueError, match="'cancel'.*'run'") as caught:
        js.After("job-1", on_failure=bad)  # type: ignore[arg-type]
    assert repr(bad) in str(caught.value)


def test_after_refuses_what_is_no_job() -> None:
    """After takes a str id or a Job: anything else, or a str no id can be,
    is refused with what to pass."""
    for bad in (3, None, b"job-1"):
        with pytest.raises(TypeError, match="After takes a job or a job id"):
            js.After(bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="pass the upstream itself"):
        js.After(js.After("job-1"))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="that is no job id"):
        js.After("")


def test_edges_normalise_depends_on() -> None:
    """depends_on as edges: one item or many; an upstream named twice is one
    edge; an After's policy wins over a plain mention of its upstream."""
    a = job()
    assert edges("job-1") == [js.After("job-1")]
    assert edges(a) == [js.After(a)]
    assert edges(js.After("job-1", "run")) == [js.After("job-1", "run")]
    got = edges(["job-1", a, js.After("job-1", on_failure="run"), a.job_id, "job-2"])
    assert [(e.job_id, e.on_failure) for e in got] == [
        ("job-1", "run"),
        (a.job_id, "cancel"),
        ("job-2", "cancel"),
    ]
    assert edges(()) == []


def test_edges_refuse_bad_items_and_contradictions() -> None:
    """Something else than ids, jobs and Afters is a TypeError naming it; two
    Afters with different policies for one upstream are a ValueError."""
    with pytest.raises(TypeError, match=r"got 5 \(a int\)"):
        edges(["job-1", 5])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="depends_on takes job ids"):
        edges(5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="both on_failure='run' and on_failure='cancel'"):
        edges([js.After("job-1", "run"), js.After("job-1")])
    with pytest.raises(ValueError, match="that is no job id"):
        edges(["nope-" * 50])


def test_markers_imply_cancel_edges_unless_an_after_says_otherwise() -> None:
    """Each marker's target becomes a cancel edge, once, unless depends_on
    has an After for it, whose policy stays."""
    a, b = job(), job()
    dependent = job(js.result_of(a), js.results_of([a, b, "job-9"]))
    inputs = find_inputs(dependent)
    assert inputs is not None
    got = with_inputs(edges([js.After(b, on_failure="run")]), inputs)
    assert [(e.job, e.on_failure) for e in got] == [
        (b, "run"),
        (a, "cancel"),
        ("job-9", "cancel"),
    ]
    assert with_inputs(edges("job-1"), None) == [js.After("job-1")]


# Finding markers


def test_find_inputs_in_args_kwargs_and_one_level_in() -> None:
    """Markers at the top of args and kwargs and one level into a list, tuple
    or dict are found, in order, and marked seen; a job without any has none."""
    assert find_inputs(job(1, [2], x={"a": 3})) is None
    one, two = js.result_of("job-1"), js.result_of("job-2")
    three = js.results_of(["job-3"])
    four = js.result_of("job-4")
    dependent = job(one, [5, two], (three,), x={"k": four}, y=6)
    inputs = find_inputs(dependent)
    assert inputs is not None and inputs.kind == "call"
    assert inputs.places == [
        ("args", 0, None, one),
        ("args", 1, 1, two),
        ("args", 2, 0, three),
        ("kwargs", "x", "k", four),
    ]
    assert inputs.upstreams == ("job-1", "job-2", "job-3", "job-4")
    assert all(m._seen for m in (one, two, three, four))


def test_a_deeper_marker_is_not_found_and_cannot_be_pickled() -> None:
    """A marker two levels in is not found, and pickling it (as a durable
    store's submit does) says why and what to do."""
    deep = js.result_of("job-1")
    dependent = job([[deep]])
    assert find_inputs(dependent) is None
    with pytest.raises(TypeError, match="cannot be pickled where it is.*too deep"):
        pickle.dumps(dependent)
    with pytest.raises(TypeError, match="too deep"):
        pickle.dumps(js.results_of(["job-1"]))
    copied = copy.deepcopy(dependent)
    assert copied.args[0][0][0] is deep and copy.copy(deep) is deep


def test_a_found_marker_pickles_as_its_ids_only() -> None:
    """A marker naming a Job pickles as the id: the dependent's payload
    does not carry its upstreams."""
    upstream = js.FunctionJob(add, args=(1,), name="x" * 1000)
    dependent = js.FunctionJob(add, args=(js.result_of(upstream),))
    assert find_inputs(dependent) is not None
    blob = pickle.dumps(StoredForm(dependent))
    assert len(blob) < 1000
    back = pickle.loads(blob)
    assert back.args == (js.result_of(upstream.job_id),)
    assert back.args[0].target == upstream.job_id


def test_find_inputs_in_a_subclass_job_attributes_and_slots() -> None:
    """A subclass job's attributes (its __dict__ and its class's own slots)
    are looked at; the engine's own slots are not."""
    report = Report(js.results_of(["job-1", "job-2"]), extra={"x": js.result_of("job-3")})
    inputs = find_inputs(report)
    assert inputs is not None and inputs.kind == "attrs"
    assert [(w, k, i) for w, k, i, _ in inputs.places] == [
        ("attrs", "rows", None),
        ("attrs", "extra", "x"),
    ]
    slotted = AsyncReport([js.result_of("job-4")])
    inputs = find_inputs(slotted)
    assert inputs is not None and inputs.upstreams == ("job-4",)
    assert find_inputs(Report([1, 2])) is None


def test_find_inputs_in_a_registered_job() -> None:
    """A registered job's markers are in its JSON arguments as tags; found
    after decoding; one two levels in is a TypeError at once."""
    dependent = total.job(js.results_of(["job-1", "job-2"]), start=js.result_of("job-3"))
    assert json.loads(dependent.args_json) == {  # type: ignore[attr-defined]
        "values": {"$results_of": ["job-1", "job-2"]},
        "start": {"$result_of": "job-3"},
    }
    inputs = find_inputs(dependent)
    assert inputs is not None and inputs.kind == "json"
    assert inputs.upstreams == ("job-1", "job-2", "job-3")
    assert find_inputs(total.job([1, 2])) is None
    with pytest.raises(TypeError, match=r"argument 'first'\[0\] holds a result marker where"):
        find_inputs(pair.job([[js.result_of("job-1")]]))
    with pytest.raises(TypeError, match="argument 'second' holds a result marker where"):
        find_inputs(pair.job(1, {js.result_of("job-1")}))


# Binding


ALL_ENDS = [js.JobStatus.FAILED, js.JobStatus.TIMED_OUT, js.JobStatus.CANCELLED]


def test_bind_a_function_job() -> None:
    """Results go in the markers' places, nested ones in copies: the job as
    submitted (kept in Inputs) is unchanged, so binding twice binds alike."""
    inner = [10, js.result_of("job-2")]
    dependent = job(js.result_of("job-1"), inner, k={"z": js.results_of(["job-1", "job-2"])})
    inputs = find_inputs(dependent)
    assert inputs is not None
    ends = ends_for(job_1=ended(js.JobStatus.COMPLETED, 1), job_2=ended(js.JobStatus.COMPLETED, 2))
    for _ in range(2):
        bind(dependent, inputs, ends)
        assert dependent.args == (1, [10, 2])
        assert dependent.kwargs == {"k": {"z": [1, 2]}}
        assert dependent.run_sync() == ((1, [10, 2]), {"k": {"z": [1, 2]}})
    assert inner[1] == js.result_of("job-2")
    assert inputs.original[1][1] is inner


@pytest.mark.parametrize("status", ALL_ENDS, ids=lambda s: s.value)
def test_bind_a_failed_result_of_raises_in_the_job(status: js.JobStatus) -> None:
    """An upstream that ended FAILED, TIMED_OUT or CANCELLED makes the job
    raise UpstreamFailedError when it runs (and in a process worker); a
    later bind with a completed upstream restores the function."""
    dependent = js.FunctionJob(add, args=(js.result_of("job-1"),), kwargs={"b": 1})
    inputs = find_inputs(dependent)
    assert inputs is not None
    bind(dependent, inputs, ends_for(job_1=ended(status, None, "boom")))
    assert isinstance(dependent.func, RaiseUpstream)
    with pytest.raises(js.UpstreamFailedError) as caught:
        dependent.run_sync()
    error = caught.value
    assert (error.job_id, error.status, error.last_error) == ("job-1", status, "boom")
    assert isinstance(error, js.NonRetryableError)
    shipped = cloudpickle.loads(cloudpickle.dumps(dependent))
    with pytest.raises(js.UpstreamFailedError, match=f"job-1 ended {status.value}"):
        shipped.run_sync()
    bind(dependent, inputs, ends_for(job_1=ended(js.JobStatus.COMPLETED, 5)))
    assert dependent.func is add and dependent.run_sync() == 6


@pytest.mark.parametrize("status", ALL_ENDS, ids=lambda s: s.value)
def test_bind_results_of_puts_the_error_in_the_failed_slot(status: js.JobStatus) -> None:
    """In results_of a failed upstream's slot holds its UpstreamFailedError;
    the job runs over the others."""
    dependent = job(js.results_of(["job-1", "job-2", "job-1"]))
    inputs = find_inputs(dependent)
    assert inputs is not None
    bind(dependent, inputs, ends_for(job_1=ended(js.JobStatus.COMPLETED, "a"), job_2=ended(status)))
    got = dependent.run_sync()[0][0]
    assert got[0] == "a" and got[2] == "a"
    assert isinstance(got[1], js.UpstreamFailedError) and got[1].status is status
    assert dependent.func is collect


def test_bind_a_registered_job() -> None:
    """A registered job runs with the bound values (its stored arguments keep
    the tags); a failed result_of raises in it."""
    dependent = total.job(js.results_of(["job-1", "job-2"]), start=js.result_of("job-3"))
    inputs = find_inputs(dependent)
    assert inputs is not None
    ok = ended(js.JobStatus.COMPLETED, 1)
    bind(dependent, inputs, ends_for(job_1=ok, job_2=ok, job_3=ended(js.JobStatus.COMPLETED, 10)))
    assert dependent.run_sync() == 12
    assert "$result_of" in dependent.args_json  # type: ignore[attr-defined]
    bind(dependent, inputs, ends_for(job_1=ok, job_2=ok, job_3=ended(js.JobStatus.FAILED)))
    with pytest.raises(js.UpstreamFailedError, match="job-3 ended failed"):
        dependent.run_sync()
    bind(dependent, inputs, ends_for(job_1=ok, job_2=ended(js.JobStatus.CANCELLED), job_3=ok))
    assert dependent._flow is not None and dependent._flow.failed is None
    values = dependent._flow.bound["values"]  # type: ignore[index]
    assert values[0] == 1 and isinstance(values[1], js.UpstreamFailedError)


def test_bind_a_subclass_job() -> None:
    """A subclass job's attributes are set; a failed result_of swaps in a
    failing class of the same layout (run and run_sync raise, it ships to a
    process worker); a later bind restores the class."""
    report = Report([js.result_of("job-1"), 2], extra=js.result_of("job-2"))
    inputs = find_inputs(report)
    assert inputs is not None
    done = ended(js.JobStatus.COMPLETED, 1)
    bind(report, inputs, ends_for(job_1=done, job_2=done))
    assert report.run_sync() == ([1, 2], 1) and type(report) is Report
    bind(report, inputs, ends_for(job_1=done, job_2=ended(js.JobStatus.TIMED_OUT)))
    assert isinstance(report, Report) and type(report) is not Report
    assert type(report).__name__ == "Report"
    with pytest.raises(js.UpstreamFailedError, match="job-2 ended timed_out"):
        report.run_sync()
    with pytest.raises(js.UpstreamFailedError):
        cloudpickle.loads(cloudpickle.dumps(report)).run_sync()
    bind(report, inputs, ends_for(job_1=done, job_2=done))
    assert type(report) is Report and report.run_sync() == ([1, 2], 1)


def test_bind_an_async_subclass_job() -> None:
    """A failing async subclass job raises when its run is awaited."""
    slotted = AsyncReport(js.result_of("job-1"))
    inputs = find_inputs(slotted)
    assert inputs is not None
    bind(slotted, inputs, ends_for(job_1=ended(js.JobStatus.CANCELLED)))

    async def main() -> None:
        with pytest.raises(js.UpstreamFailedError, match="cancelled"):
            await slotted.run()

    anyio.run(main)
    bind(slotted, inputs, ends_for(job_1=ended(js.JobStatus.COMPLETED, 3)))
    assert anyio.run(slotted.run) == 3


def test_bind_needs_every_upstream() -> None:
    """A missing upstream is the caller's error, not a silent None."""
    dependent = job(js.result_of("job-1"))
    inputs = find_inputs(dependent)
    assert inputs is not None
    with pytest.raises(KeyError):
        bind(dependent, inputs, {})


# UpstreamFailedError


def test_upstream_failed_error_pickles_and_says_what_ended() -> None:
    """Its message names the upstream, how it ended and its error; it
    survives pickle and cloudpickle with its fields."""
    error = js.UpstreamFailedError("job-7", js.JobStatus.TIMED_OUT, "took too long")
    assert str(error) == "upstream job-7 ended timed_out, not completed: took too long"
    assert str(js.UpstreamFailedError("job-7", js.JobStatus.CANCELLED)) == (
        "upstream job-7 ended cancelled, not completed"
    )
    for dumps, loads in ((pickle.dumps, pickle.loads), (cloudpickle.dumps, cloudpickle.loads)):
        back = loads(dumps(error))
        assert type(back) is js.UpstreamFailedError
        assert (back.job_id, back.status, back.last_error) == (
            "job-7",
            js.JobStatus.TIMED_OUT,
            "took too long",
        )
        assert str(back) == str(error)


# Workflow


def test_workflow_collects_jobs_in_order_with_their_edges() -> None:
    """add returns the job and records its edges (markers' included) and
    options; its own id is given at once, so later jobs name it."""
    wf = js.Workflow("nightly")
    parts = [wf.add(js.FunctionJob(add, args=(i,))) for i in range(3)]
    merged = wf.add(js.FunctionJob(sum, args=(js.results_of(parts),)), job_id="merge-1", delay=5)
    assert merged.job_id == "merge-1"
    last = wf.add(
        job(js.result_of("merge-1")),
        depends_on=[js.After(p, on_failure="run") for p in parts],
        at=dt.datetime(2030, 1, 1, tzinfo=dt.timezone.utc),
    )
    assert len(wf) == 5 and repr(wf) == "Workflow('nightly', 5 jobs)"
    assert [j for j, _, _ in wf.jobs] == [*parts, merged, last]
    assert wf.jobs[3][1] == tuple(js.After(p) for p in parts)
    assert wf.jobs[3][2] == {"job_id": "merge-1", "delay": 5}
    assert [(e.job_id, e.on_failure) for e in wf.jobs[4][1]] == [
        *[(p.job_id, "run") for p in parts],
        ("merge-1", "cancel"),
    ]
    assert all(j.workflow_id is None for j, _, _ in wf.jobs)  # numbered at enqueue


def test_workflow_takes_submitted_upstreams_and_ids() -> None:
    """An upstream submitted already, or named by id, needs no adding."""
    s = js.JobScheduler()
    outside = js.FunctionJob(add, args=(1,))
    s.submit(outside)
    wf = js.Workflow("w")
    wf.add(job(js.result_of(outside)), depends_on=["job-123456789", "order-9"])


@pytest.mark.parametrize("bad", ["", "a\x00b"], ids=repr)
def test_workflow_name_must_be_storable_text(bad: str) -> None:
    """An empty name or one with NUL is a ValueError; not a str, a TypeError."""
    with pytest.raises(ValueError, match="name"):
        js.Workflow(bad)
    with pytest.raises(TypeError, match="name must be a str"):
        js.Workflow(3)  # type: ignore[arg-type]


def test_workflow_refuses_a_job_twice_or_in_two_workflows() -> None:
    """A job joins one workflow, once; not a job at all is a TypeError."""
    wf, other = js.Workflow("a"), js.Workflow("b")
    once = wf.add(job())
    with pytest.raises(ValueError, match="in workflow 'a' already"):
        wf.add(once)
    with pytest.raises(ValueError, match="belongs to another workflow"):
        other.add(once)
    with pytest.raises(TypeError, match="takes a jobsched.Job"):
        wf.add(add)  # type: ignore[arg-type]


def test_workflow_refuses_a_submitted_job() -> None:
    """A job submitted already cannot join a workflow."""
    s = js.JobScheduler()
    submitted = job()
    s.submit(submitted)
    with pytest.raises(js.SchedulerError, match="submitted already"):
        js.Workflow("w").add(submitted)


def test_workflow_refuses_unknown_upstreams_and_self_edges() -> None:
    """An upstream Job neither added earlier nor submitted is an
    UnknownJobError (in depends_on, After or a marker); a job naming itself
    is a ValueError. Nothing is recorded for a refused add."""
    wf = js.Workflow("w")
    stranger = job()
    for dependent, deps in [
        (job(), [stranger]),
        (job(), [js.After(stranger, on_failure="run")]),
        (job(js.result_of(stranger)), []),
        (job(js.results_of(["job-1", stranger])), []),
    ]:
        with pytest.raises(js.UnknownJobError, match="add it to the workflow before"):
            wf.add(dependent, depends_on=deps)
    selfish = job()
    with pytest.raises(ValueError, match="depends on itself"):
        wf.add(selfish, depends_on=[selfish])
    with pytest.raises(ValueError, match="depends on itself"):
        wf.add(selfish, depends_on=[selfish.job_id])
    looped = js.FunctionJob(collect)
    looped.args = (js.result_of(looped),)
    with pytest.raises(ValueError, match="depends on itself"):
        wf.add(looped)
    with pytest.raises(ValueError, match="depends on itself"):
        wf.add(job(), depends_on=["mine"], job_id="mine")
    assert len(wf) == 0
    assert selfish._flow is None and looped._flow is None


def test_workflow_cannot_close_a_cycle_through_ids() -> None:
    """A job whose id an earlier job named (before it was added) is refused:
    with the edges it could take it would close a cycle."""
    wf = js.Workflow("w")
    first = wf.add(job(), depends_on=["later"])
    with pytest.raises(ValueError, match="depends on 'later': add later before"):
        wf.add(job(), depends_on=[first], job_id="later")
    numbered = job()
    wf.add(job(js.result_of(numbered.job_id)))
    with pytest.raises(ValueError, match=f"depends on {numbered.job_id!r}"):
        wf.add(numbered)


def test_workflow_ids_are_unique_within_it() -> None:
    """Two jobs with one own id are refused."""
    wf = js.Workflow("w")
    wf.add(job(), job_id="a")
    with pytest.raises(ValueError, match="job id 'a' is in workflow 'w' already"):
        wf.add(job(), job_id="a")


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"queue": "x"}, TypeError, r"unknown option\(s\) \['queue'\].*delay, at, job_id"),
        ({"connection": object()}, TypeError, "connection= is enqueue's"),
        ({"delay": -1}, ValueError, "finite number of seconds"),
        ({"delay": float("inf")}, ValueError, "finite number of seconds"),
        ({"delay": "5"}, TypeError, "number of seconds"),
        ({"delay": True}, TypeError, "number of seconds"),
        ({"at": "2030-01-01"}, TypeError, "aware datetime"),
        ({"at": dt.datetime(2030, 1, 1)}, ValueError, "naive"),
        (
            {"at": dt.datetime(2030, 1, 1, tzinfo=dt.timezone.utc), "delay": 1},
            ValueError,
            "not both",
        ),
        ({"job_id": "job-5"}, ValueError, "starts with 'job-'"),
        ({"job_id": ""}, ValueError, "must not be empty"),
        ({"job_id": 5}, TypeError, "job_id must be a str"),
    ],
    ids=lambda v: repr(v)[:40],
)
def test_workflow_add_checks_submit_options(
    options: dict[str, Any], error: type[Exception], match: str
) -> None:
    """Options are submit's (delay, at, job_id), checked at add."""
    wf = js.Workflow("w")
    refused = job()
    with pytest.raises(error, match=match):
        wf.add(refused, **options)
    assert len(wf) == 0 and refused._flow is None


def test_workflow_add_checks_depends_on() -> None:
    """depends_on's items are checked as everywhere (ids, jobs, Afters)."""
    with pytest.raises(TypeError, match="depends_on takes job ids"):
        js.Workflow("w").add(job(), depends_on=[3])  # type: ignore[list-item]


# WorkflowInfo


def test_workflow_info() -> None:
    """WorkflowInfo holds the contract's fields plus created_at and size; frozen."""
    counts = {js.JobStatus.COMPLETED: 3, js.JobStatus.PENDING: 1}
    info = js.WorkflowInfo("wf-1", "nightly", counts, False)
    assert (info.id, info.name, info.counts, info.finished) == ("wf-1", "nightly", counts, False)
    assert info.created_at is None and info.size == 0
    with pytest.raises(AttributeError):
        info.finished = True  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(info)) == info


# The Job's workflow fields


def test_job_workflow_fields_default_to_none() -> None:
    """workflow_id, progress and progress_message are None for a plain job,
    read-only, and read the one _flow slot."""
    plain = job()
    assert (plain.workflow_id, plain.progress, plain.progress_message) == (None, None, None)
    assert plain._flow is None
    with pytest.raises(AttributeError):
        plain.workflow_id = "wf-1"  # type: ignore[misc]
    from jobsched._jobs._flow import flow_of

    flow = flow_of(plain)
    flow.workflow, flow.progress, flow.message = 4, 0.5, "half"
    assert (plain.workflow_id, plain.progress, plain.progress_message) == ("wf-4", 0.5, "half")


def test_stored_form_leaves_the_flow_out() -> None:
    """A job's stored payload does not carry _flow (nor change size): a job
    loaded from a row starts without one."""
    plain = js.FunctionJob(add, args=(1,))
    before = pickle.dumps(StoredForm(plain))
    from jobsched._jobs._flow import flow_of

    flow_of(plain).progress = 0.5
    assert pickle.dumps(StoredForm(plain)) == before
    assert pickle.loads(before)._flow is None


def test_a_pickled_flow_leaves_inputs_and_an_unenqueued_workflow_behind() -> None:
    """A job shipped whole (a process worker) carries its bound values and
    its failure, not its arguments as submitted nor the Workflow holding it."""
    wf = js.Workflow("w")
    upstream = wf.add(job())
    dependent = wf.add(Report(js.result_of(upstream)))
    inputs = find_inputs(dependent)
    assert inputs is not None
    from jobsched._jobs._flow import flow_of

    flow = flow_of(dependent)
    flow.inputs = inputs
    bind(
        dependent,
        inputs,
        ends_for(**{upstream.job_id.replace("-", "_"): ended(js.JobStatus.FAILED)}),
    )
    shipped = cloudpickle.loads(cloudpickle.dumps(dependent))
    assert shipped._flow.inputs is None and shipped._flow.workflow is None
    assert isinstance(shipped._flow.failed, js.UpstreamFailedError)
    with pytest.raises(js.UpstreamFailedError):
        shipped.run_sync()
    flow.workflow = 12
    assert pickle.loads(pickle.dumps(flow)).workflow == 12


def test_a_job_without_the_slot_reads_as_none() -> None:
    """A job unpickled from a whole pickle made before the slot existed has
    it unset: the properties read None rather than fail."""
    plain = job()
    del plain._flow
    assert (plain.workflow_id, plain.progress, plain.progress_message) == (None, None, None)


# JSON tags


def test_markers_round_trip_as_json_tags() -> None:
    """Markers encode as one-key tags SQL can read and decode to markers; a
    caller's dict that looks like a tag stays a dict."""
    upstream = job()
    value = {
        "one": js.result_of(upstream),
        "many": js.results_of(["job-1", "own-id"]),
        "mine": {"$result_of": "job-1"},
    }
    text = _json.dumps(value, "v")
    assert json.loads(text) == {
        "one": {"$result_of": upstream.job_id},
        "many": {"$results_of": ["job-1", "own-id"]},
        "mine": {"$obj": {"$result_of": "job-1"}},
    }
    back = _json.loads(text)
    assert back == {
        "one": js.result_of(upstream.job_id),
        "many": js.results_of(["job-1", "own-id"]),
        "mine": {"$result_of": "job-1"},
    }
    assert type(back["one"]) is ResultOf and type(back["many"]) is ResultsOf
    assert type(back["mine"]) is dict
