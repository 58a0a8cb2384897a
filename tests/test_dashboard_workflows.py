"""The dashboard's workflow pages: the graph's layout and SVG on hand-made
rows (layers by longest path, folding past 300 jobs, escaping), then the
list, the workflow page, its live part, its cancel button and the job page's
workflow fields on real SQLite and PostgreSQL stores filled through ``add_workflow``."""

from __future__ import annotations

import random
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from starlette.testclient import TestClient
from workflow_rows import EVIL, Filled, empty, fill, graph_job

import jobsched as js
from jobsched import JobStatus
from jobsched.store import ON_FAILURE_CANCEL, ON_FAILURE_RUN
from jobsched_dashboard import _graph, _graphsvg, create_app

SVG = "{http://www.w3.org/2000/svg}"


def _parsed(markup: str) -> ET.Element:
    """The SVG as XML: a name that broke out of its text would not parse."""
    return ET.fromstring(str(markup))


def _nodes(root: ET.Element) -> dict[int, ET.Element]:
    return {int(a.get("data-job", "")): a for a in root.iter(f"{SVG}a")}


def _edges(root: ET.Element) -> dict[str, ET.Element]:
    return {p.get("data-edge", ""): p for p in root.iter(f"{SVG}path") if p.get("data-edge")}


# ── layout ──────────────────────────────────────────────────────────────────


def test_layers_follow_the_longest_path_not_the_numbers() -> None:
    """A skip edge does not pull a job left of its deepest upstream, and an
    upstream numbered above its dependent (an id of one's own) still goes left."""
    edges = [(1, 2), (2, 3), (3, 4), (1, 4), (9, 1), (-5, 2)]
    layer = _graph.layers([1, 2, 3, 4, 9, -5], edges)
    assert layer == {9: 0, -5: 0, 1: 1, 2: 2, 3: 3, 4: 4}


def test_a_cycle_the_store_cannot_hold_still_draws() -> None:
    layer = _graph.layers([1, 2, 3], [(1, 2), (2, 3), (3, 2)])
    assert layer[1] == 0 and layer[2] == layer[3] == 2


def test_a_fan_out_and_in_sits_in_three_layers_with_the_ends_centred() -> None:
    jobs = [
        graph_job(1, "start"),
        *(graph_job(i, "fetch") for i in range(2, 7)),
        graph_job(7, "sum"),
    ]
    edges = [(1, i, ON_FAILURE_CANCEL) for i in range(2, 7)]
    edges += [(i, 7, ON_FAILURE_RUN) for i in range(2, 7)]
    drawn = _graph.layout(jobs, edges)
    by_job = {node.jobs[0]: node for node in drawn.nodes}
    assert drawn.layers == 3 and drawn.folded == 0
    assert [by_job[i].layer for i in (1, 2, 7)] == [0, 1, 2]
    assert [by_job[i].row for i in range(2, 7)] == [0, 1, 2, 3, 4]
    middle = by_job[4].y
    assert by_job[1].y == by_job[7].y == middle  # the ends sit level with the middle fetch
    assert drawn.height == 2 * _graph.PAD + 5 * _graph.NODE_H + 4 * _graph.GAP_Y


def test_the_svg_holds_every_job_and_edge_with_its_policy() -> None:
    """A random DAG of 120 jobs (upstreams always of lower index, numbered
    out of order): one linked node per job, one path per edge, dashed
    exactly for the "run" ones, and every edge points right."""
    rng = random.Random(37)
    ids = rng.sample(range(1, 10_000), 120)
    jobs = [graph_job(i, f"j{i}", rng.choice(list(JobStatus))) for i in ids]
    edges = []
    for k in range(1, len(ids)):
        for up in rng.sample(ids[:k], min(k, rng.randint(0, 3))):
            edges.append((up, ids[k], rng.choice((ON_FAILURE_CANCEL, ON_FAILURE_RUN))))
    drawn = _graph.layout(jobs, edges)
    root = _parsed(_graphsvg.svg(drawn))
    nodes, paths = _nodes(root), _edges(root)
    assert set(nodes) == set(ids)
    for job in jobs:
        assert nodes[job.id].get("href") == f"/jobs/{job.id}"
        assert nodes[job.id].get("data-status") == job.status.value
    assert set(paths) == {f"{u}-{d}" for u, d, _ in edges}
    for u, d, policy in edges:
        assert paths[f"{u}-{d}"].get("class") == ("edge run" if policy else "edge")
    place = {node.jobs[0]: node for node in drawn.nodes}
    assert all(place[u].layer < place[d].layer for u, d, _ in edges)


def test_an_upstream_outside_the_jobs_read_is_drawn_as_such() -> None:
    drawn = _graph.layout([graph_job(5, "after")], [(3, 5, ON_FAILURE_RUN)])
    root = _parsed(_graphsvg.svg(drawn))
    outside = _nodes(root)[3]
    assert outside.get("class") == "node outside"
    assert "outside" in "".join(outside.itertext())
    assert _edges(root)["3-5"].get("class") == "edge run"


def _fan(n: int) -> tuple[list, list]:
    """start -> n-2 fetches -> sum: n jobs; every third fetch failed."""
    fetches = range(2, n)
    jobs = [graph_job(1, "start", JobStatus.COMPLETED)]
    jobs += [graph_job(i, "fetch", JobStatus.FAILED if i % 3 == 0 else JobStatus.COMPLETED)
             for i in fetches]  # fmt: skip
    jobs.append(graph_job(n, "sum", JobStatus.PENDING))
    edges = [(1, i, ON_FAILURE_CANCEL) for i in fetches] + [(i, n, ON_FAILURE_RUN) for i in fetches]
    return jobs, edges


def test_up_to_300_jobs_nothing_folds() -> None:
    jobs, edges = _fan(_graph.FOLD_PAST)
    drawn = _graph.layout(jobs, edges)
    assert drawn.folded == 0 and len(drawn.nodes) == _graph.FOLD_PAST
    assert len(_edges(_parsed(_graphsvg.svg(drawn)))) == len(edges)


def test_past_300_jobs_one_layer_and_name_fold_into_one_node() -> None:
    jobs, edges = _fan(1_000)
    drawn = _graph.layout(jobs, edges)
    assert drawn.folded == 998 and len(drawn.nodes) == 3
    fetch = next(node for node in drawn.nodes if node.folded)
    failed = sum(1 for i in range(2, 1_000) if i % 3 == 0)
    assert fetch.counts == [(JobStatus.COMPLETED, 998 - failed), (JobStatus.FAILED, failed)]
    assert [(e.count, e.run) for e in drawn.edges] == [(998, False), (998, True)]
    root = _parsed(_graphsvg.svg(drawn))
    (group,) = [g for g in root.iter(f"{SVG}g") if g.get("data-fold")]
    assert group.get("data-fold") == "998"
    text = "".join(group.itertext())
    assert "fetch x998" in text and "job-2..job-999" in text
    parts = [r for r in group.iter(f"{SVG}rect") if "part" in (r.get("class") or "")]
    assert [p.get("class") for p in parts] == ["part s-completed", "part s-failed"]
    widths = [float(p.get("width", "")) for p in parts]
    assert sum(widths) == pytest.approx(_graph.NODE_W - 2, abs=0.2)
    assert widths[1] / sum(widths) == pytest.approx(failed / 998, abs=0.01)
    # The fan-in and the start stay single jobs, linked.
    assert set(_nodes(root)) == {1, 1_000}


def test_a_wide_layer_of_names_made_per_job_folds_whole() -> None:
    """Folding by name leaves 1,000 nodes when each job has a name of its
    own ("file 17.csv"); the layers still wider than WIDE then fold whole,
    and a narrow one keeps its jobs."""
    jobs, edges = _fan(1_000)
    jobs = [graph_job(j.id, f"file {j.id}.csv", j.status) if j.name == "fetch" else j for j in jobs]
    jobs.append(graph_job(5_000, "report"))
    edges.append((1, 5_000, ON_FAILURE_CANCEL))
    drawn = _graph.layout(jobs, edges)
    assert drawn.folded == 999  # the 998 files and the report, one layer
    (wide,) = [node for node in drawn.nodes if node.folded]
    assert wide.name == _graph.MIXED and wide.jobs[-1] == 5_000
    root = _parsed(_graphsvg.svg(drawn))
    (group,) = [g for g in root.iter(f"{SVG}g") if g.get("data-fold")]
    assert "999 jobs" in "".join(group.itertext())
    # Under 300 nodes once folded by name: the names stay.
    jobs, edges = _fan(1_000)
    jobs += [graph_job(6_000 + i, f"tail {i}") for i in range(_graph.FOLD_PAST - 3)]
    names = {node.name for node in _graph.layout(jobs, edges).nodes}
    assert "fetch" in names and _graph.MIXED not in names


def test_jobs_with_ids_of_their_own_show_by_them_in_the_svg() -> None:
    jobs = [graph_job(-11, "extract", own_id="receipt-42"), graph_job(-12, "load")]
    edges = [(-11, -12, ON_FAILURE_CANCEL), (-99, -12, ON_FAILURE_CANCEL)]
    root = _parsed(_graphsvg.svg(_graph.layout(jobs, edges)))
    nodes = _nodes(root)
    assert "receipt-42 · pending" in "".join(nodes[-11].itertext())
    # No own id read (past the payload's head), or outside: by number.
    assert "job--12 · pending" in "".join(nodes[-12].itertext())
    assert nodes[-99].findtext(f"{SVG}title", "").startswith("job--99:")
    assert "receipt-42 → job--12" in _edges(root)["-11--12"].findtext(f"{SVG}title", "")


def test_names_and_messages_are_escaped_in_the_svg() -> None:
    job = graph_job(1, EVIL + ' & "q"', JobStatus.RUNNING, progress=0.25, message=EVIL)
    markup = str(_graphsvg.svg(_graph.layout([job], [])))
    assert "<script" not in markup
    node = _nodes(_parsed(markup))[1]
    assert (EVIL + ' & "q"') in "".join(node.itertext())  # the title holds the whole name
    assert EVIL in node.findtext(f"{SVG}title", "")
    bar = [r for r in node.iter(f"{SVG}rect") if r.get("class") == "progress"]
    assert float(bar[0].get("width", "")) == pytest.approx(0.25 * (_graph.NODE_W - 2), abs=0.1)
    assert "25%" in "".join(node.itertext())


# ── pages, on real stores ───────────────────────────────────────────────────


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def filled(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Filled:
    if request.param == "sqlite":
        return fill(f"sqlite:///{tmp_path / 'jobs.db'}")
    from pg import SECRET, schema_url

    monkeypatch.setenv("JOBSCHED_SECRET", SECRET)
    return fill(schema_url(request.getfixturevalue("pg_session_database")))


@pytest.fixture
def client(filled: Filled) -> Iterator[TestClient]:
    with TestClient(create_app(filled.url)) as c:
        yield c


def test_the_list_shows_each_workflow_with_its_counts(client: TestClient, filled: Filled) -> None:
    html = client.get("/workflows").text
    rows = re.findall(r'<tr data-workflow="(\d+)">', html)
    assert rows == [str(filled.big), str(filled.evil), str(filled.etl)]  # newest first
    assert f'<a href="/workflows/{filled.etl}">wf-{filled.etl}</a>' in html
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    unfinished = client.get("/workflows?unfinished=1").text
    assert re.findall(r'<tr data-workflow="(\d+)">', unfinished) == [
        str(filled.big), str(filled.etl)
    ]  # fmt: skip
    assert client.get("/workflows?before=x").status_code == 400


def test_the_list_pages_by_id(
    client: TestClient, filled: Filled, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jobsched_dashboard import _limits

    monkeypatch.setattr(_limits, "WORKFLOWS_LIMIT", 2)
    html = client.get("/workflows").text
    assert re.findall(r'<tr data-workflow="(\d+)">', html) == [str(filled.big), str(filled.evil)]
    older = re.search(r'href="([^"]+)" id="older"', html)
    assert older is not None
    html = client.get(older.group(1).replace("&amp;", "&")).text
    assert re.findall(r'<tr data-workflow="(\d+)">', html) == [str(filled.etl)]


def test_a_workflows_page_draws_every_job_and_edge(client: TestClient, filled: Filled) -> None:
    for path in (f"/workflows/{filled.etl}", f"/workflows/wf-{filled.etl}"):
        response = client.get(path)
        assert response.status_code == 200
        assert "Content-Security-Policy" in response.headers
    html = response.text
    assert 'data-refresh-ms="2000"' in html
    svg = re.search(r"<svg class=\"graph\".*?</svg>", html, re.S)
    assert svg is not None
    root = _parsed(svg.group())
    assert set(_nodes(root)) == set(filled.etl_jobs.values())
    paths = _edges(root)
    n = filled.etl_jobs
    pairs = [("extract", "transform"), ("extract", "cleanup"), ("transform", "load"),
             ("cleanup", "load")]  # fmt: skip
    assert set(paths) == {f"{n[u]}-{n[d]}" for u, d in pairs}
    assert paths[f"{n['extract']}-{n['cleanup']}"].get("class") == "edge run"
    assert paths[f"{n['extract']}-{n['transform']}"].get("class") == "edge"
    transform = _nodes(root)[n["transform"]]
    assert transform.get("data-status") == "running" and "40%" in "".join(transform.itertext())
    live = client.get(f"/workflows/{filled.etl}/live").text
    assert '<svg class="graph"' in live and "<header>" not in live


def test_a_workflow_past_300_jobs_folds_and_one_past_the_limit_says_so(
    client: TestClient, filled: Filled, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jobsched_dashboard import _limits

    html = client.get(f"/workflows/{filled.big}").text
    assert 'id="folded"' in html and 'data-fold="400"' in html
    assert f'data-refresh-ms="{_limits.REFRESH_MS * _limits.BIG_GRAPH_SLOWER}"' in html

    monkeypatch.setattr(_limits, "GRAPH_LIMIT", 10)
    html = client.get(f"/workflows/{filled.big}").text
    assert 'id="truncated"' in html and "first 10 of 402 jobs" in html
    assert 'id="folded"' not in html


def test_names_are_escaped_on_the_workflow_page(client: TestClient, filled: Filled) -> None:
    html = client.get(f"/workflows/{filled.evil}").text
    assert "<script>alert" not in html
    assert html.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 3  # title, heading, node


def test_an_unknown_workflow_is_a_404(client: TestClient) -> None:
    for path in ("/workflows/999999", "/workflows/999999/live"):
        response = client.get(path)
        assert response.status_code == 404 and "no workflow wf-999999" in response.text
    assert client.get("/workflows/wf-x").status_code == 404


def test_the_job_page_shows_its_workflow_progress_and_run_edges(
    client: TestClient, filled: Filled
) -> None:
    n = filled.etl_jobs
    html = client.get(f"/jobs/{n['transform']}").text
    assert f'<a href="/workflows/{filled.etl}">wf-{filled.etl}</a>' in html
    assert '<progress max="1" value="0.4">' in html and "40%" in html and "page 4 of 10" in html
    load = client.get(f"/jobs/{n['load']}").text
    ups = dict(re.findall(r'<li data-upstream="(-?\d+)">(.*?)</li>', load))
    assert set(ups) == {str(n["transform"]), str(n["cleanup"])}
    assert "runs however it ends" in ups[str(n["cleanup"])]
    assert "runs however it ends" not in ups[str(n["transform"])]
    # A job of no workflow shows neither row.
    plain = client.get(f"/jobs/{filled.plain}").text
    assert 'id="workflow"' not in plain and 'id="progress"' not in plain


TOKEN = "wf-token"


def test_the_cancel_button_cancels_a_workflows_unfinished_jobs(filled: Filled) -> None:
    """A form POST with the token (no script): the queued jobs end cancelled,
    the running one is flagged, the page says how many; a finished workflow
    has no button and a POST to it is a 409, an unknown one a 404."""
    with TestClient(create_app(filled.url, token=TOKEN)) as client:
        page = client.get(f"/workflows/{filled.etl}").text
        assert f'formaction="/workflows/{filled.etl}/cancel" id="cancel-workflow"' in page
        finished = client.get(f"/workflows/{filled.evil}").text
        assert 'id="cancel-workflow"' not in finished and "nothing to cancel" in finished
        r = client.post(
            f"/workflows/wf-{filled.etl}/cancel", data={"token": TOKEN}, follow_redirects=False
        )
        assert r.status_code == 303
        assert r.headers["location"] == f"/workflows/{filled.etl}?done=cancel&n=3"
        page = client.get(r.headers["location"]).text
        assert "Cancel requested: 3 unfinished jobs cancelled" in page
        assert "Cancel requested" not in client.get(f"/workflows/{filled.etl}?done=cancel&n=x").text
        r = client.post(f"/workflows/{filled.evil}/cancel", data={"token": TOKEN})
        assert r.status_code == 409 and "has finished" in r.text
        r = client.post("/workflows/999999/cancel", data={"token": TOKEN})
        assert r.status_code == 404 and "no workflow wf-999999" in r.text
        assert client.get(f"/workflows/{filled.etl}/cancel").status_code == 405
    store = js.open_store(filled.url)

    async def statuses() -> dict[str, JobStatus]:
        await store.open()
        try:
            graph = await store.workflow_graph(filled.etl)
        finally:
            await store.close()
        assert graph is not None
        return {j.name: j.status for j in graph.jobs}

    assert anyio.run(statuses) == {
        "extract": JobStatus.COMPLETED, "transform": JobStatus.RUNNING,
        "cleanup": JobStatus.CANCELLED, "load": JobStatus.CANCELLED,
    }  # fmt: skip


def test_cancelling_a_workflow_needs_the_token(filled: Filled) -> None:
    """Without a token configured there is no button and the POST is refused;
    with one, a POST without it or with a wrong one is refused: nothing cancelled."""
    with TestClient(create_app(filled.url)) as client:
        page = client.get(f"/workflows/{filled.etl}").text
        assert 'id="cancel-workflow"' not in page and "to cancel workflows here" in page
        r = client.post(f"/workflows/{filled.etl}/cancel", data={"token": "anything"})
        assert r.status_code == 403 and "cannot cancel workflows" in r.text
    with TestClient(create_app(filled.url, token=TOKEN)) as client:
        r = client.post(f"/workflows/{filled.etl}/cancel")
        assert r.status_code == 403 and "to cancel a workflow" in r.text
        r = client.post(f"/workflows/{filled.etl}/cancel", data={"token": "wrong"})
        assert r.status_code == 403 and "Wrong token" in r.text
        page = client.get(f"/workflows/{filled.etl}").text
    assert "2 pending" in page  # nothing was cancelled


def test_a_store_that_keeps_no_workflows_is_a_501(
    filled: Filled, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jobsched.store._workflowside import WorkflowSide

    store = js.open_store(filled.url)
    monkeypatch.setattr(type(store), "workflows", WorkflowSide.workflows)
    monkeypatch.setattr(type(store), "workflow_graph", WorkflowSide.workflow_graph)
    with TestClient(create_app(store)) as client:
        for path in ("/workflows", f"/workflows/{filled.etl}", f"/workflows/{filled.etl}/live"):
            response = client.get(path)
            assert response.status_code == 501
            assert "cannot keep workflows" in response.text
        # The job pages do not need them.
        assert client.get(f"/jobs/{filled.etl_jobs['load']}").status_code == 200


def test_a_store_without_workflows_lists_none(tmp_path: Path) -> None:
    with TestClient(create_app(empty(f"sqlite:///{tmp_path / 'jobs.db'}"))) as client:
        assert "No workflows." in client.get("/workflows").text
        assert "No unfinished workflows." in client.get("/workflows?unfinished=1").text
