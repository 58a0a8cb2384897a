"""A workflow's graph laid out for its page: pure geometry from the store's rows.

Layers by longest path: a job sits one layer right of its deepest upstream,
found in one Kahn pass over the edges (job numbers are no topological order
once jobs carry ids of their own). Within a layer, jobs follow the mean row
of their upstreams (one barycentre pass), which untangles fan-outs and
fan-ins without an optimiser. Past ``FOLD_PAST`` jobs, the jobs of one
layer and name fold into one node with their statuses counted, so a
10,000-job fan-out is a handful of nodes, not a page nobody can read.

Nothing here renders: :mod:`._graphsvg` turns a :class:`Layout` into SVG.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from jobsched import JobStatus
from jobsched.store import ON_FAILURE_RUN, GraphJob

from ._views import STATUS_ORDER

#: Past this many jobs, jobs of one layer and one name fold into one node.
FOLD_PAST = 300
#: Past ``FOLD_PAST`` nodes even so, a layer of more nodes than this folds whole.
WIDE = 20
#: The names of a folded node of several names, and of upstreams outside the jobs read.
MIXED = "jobs of several names"
OUTSIDE = "outside the jobs shown"
#: A node's size and the gaps between them, in user units (pixels at 1:1).
NODE_W, NODE_H = 176, 38
GAP_X, GAP_Y = 64, 10
PAD = 8


@dataclass(slots=True)
class Node:
    """One job, an upstream outside the drawn jobs, or (folded) several jobs."""

    layer: int
    name: str
    #: The job numbers it stands for, ascending: one unless folded.
    jobs: list[int]
    #: Its jobs by status, in the page's order (one entry for one job).
    counts: list[tuple[JobStatus, int]]
    progress: float | None = None
    progress_message: str | None = None
    attempts: int = 0
    #: An upstream the graph names but does not hold: of another workflow,
    #: pruned, or past the read's limit. Its status is not known here.
    outside: bool = False
    row: int = 0
    x: float = 0.0
    y: float = 0.0

    @property
    def folded(self) -> bool:
        return len(self.jobs) > 1

    @property
    def status(self) -> JobStatus | None:
        """The status of a single held job; None for a folded or outside node."""
        return self.counts[0][0] if len(self.counts) == 1 and not self.folded else None


@dataclass(slots=True)
class Edge:
    """An edge between two nodes (several, between folded nodes)."""

    up: int
    down: int
    #: Every edge it stands for is "run" (its dependent runs however the upstream ends).
    run: bool
    count: int = 1
    path: str = ""


@dataclass(slots=True)
class Layout:
    nodes: list[Node]
    edges: list[Edge]
    width: int
    height: int
    #: How many jobs were folded into nodes of several (0: none).
    folded: int = 0
    layers: int = 0
    #: Jobs the graph holds (outside upstreams not counted).
    jobs: int = 0
    by_job: dict[int, int] = field(default_factory=dict)
    #: The ids given at submit of the jobs that have one (``GraphJob.own_id``).
    own_ids: dict[int, str] = field(default_factory=dict)


def layers(ids: Sequence[int], edges: Sequence[tuple[int, int]]) -> dict[int, int]:
    """Each id's layer: 0 for a job with no upstream among ``ids``, else one
    past its deepest upstream's. One Kahn pass; ids left on a cycle (which
    the store cannot hold: a job's upstreams exist before it) go one layer
    past the deepest, so a corrupt graph still draws."""
    downs: dict[int, list[int]] = {i: [] for i in ids}
    waiting = dict.fromkeys(ids, 0)
    for up, down in edges:
        if up in downs and down in downs:
            downs[up].append(down)
            waiting[down] += 1
    layer = dict.fromkeys(ids, 0)
    ready = deque(i for i in ids if waiting[i] == 0)
    seen = 0
    while ready:
        up = ready.popleft()
        seen += 1
        for down in downs[up]:
            layer[down] = max(layer[down], layer[up] + 1)
            waiting[down] -= 1
            if waiting[down] == 0:
                ready.append(down)
    if seen < len(layer):
        past = max(layer.values(), default=0) + 1
        for i, n in waiting.items():
            if n:
                layer[i] = past
    return layer


def layout(jobs: Sequence[GraphJob], edges: Sequence[tuple[int, int, int]]) -> Layout:
    """The graph of ``jobs`` and ``edges`` (``(upstream, downstream,
    on_failure)``, as :class:`~jobsched.store.WorkflowGraph` has them) laid
    out left to right; folded past ``FOLD_PAST`` jobs."""
    held = {job.id: job for job in jobs}
    pairs = list(dict.fromkeys((u, d) for u, d, _ in edges if d in held))
    run = {(u, d) for u, d, policy in edges if policy == ON_FAILURE_RUN}
    outside = sorted({u for u, _ in pairs if u not in held})
    ids = [*held, *outside]
    layer = layers(ids, pairs)
    names = {i: held[i].name if i in held else OUTSIDE for i in ids}
    keys = _fold_keys(ids, layer, names, held) if len(held) > FOLD_PAST else {}
    nodes: list[Node] = []
    node_of: dict[int, int] = {}
    groups: dict[tuple[int, str, bool], int] = {}
    for i in ids:
        job = held.get(i)
        key = keys.get(i)
        if key is not None and key in groups:
            node_of[i] = groups[key]
            nodes[groups[key]].jobs.append(i)
            continue
        if key is not None:
            groups[key] = len(nodes)
        node_of[i] = len(nodes)
        nodes.append(
            Node(
                layer[i],
                names[i] if key is None else key[1],
                [i],
                [] if job is None else [(job.status, 1)],
                None if job is None else job.progress,
                None if job is None else job.progress_message,
                0 if job is None else job.attempts,
                outside=job is None,
            )
        )
    folded = 0
    for node in nodes:
        if node.folded:
            folded += len(node.jobs)
            node.jobs.sort()
            node.counts = _counts(held[i].status for i in node.jobs if i in held)
            node.progress = node.progress_message = None
    merged: dict[tuple[int, int], Edge] = {}
    for u, d in pairs:
        ends = (node_of[u], node_of[d])
        edge = merged.get(ends)
        if edge is None:
            merged[ends] = Edge(ends[0], ends[1], run=(u, d) in run)
        else:
            edge.count += 1
            edge.run = edge.run and (u, d) in run
    result = Layout(nodes, list(merged.values()), 0, 0, folded, jobs=len(held))
    _place(result)
    result.by_job = node_of
    result.own_ids = {job.id: job.own_id for job in jobs if job.own_id is not None}
    return result


def _fold_keys(
    ids: Sequence[int], layer: dict[int, int], names: dict[int, str], held: dict[int, GraphJob]
) -> dict[int, tuple[int, str, bool]]:
    """The node each job folds into: one per layer and name; where that
    leaves more than ``FOLD_PAST`` nodes (names made per job, "file 1.csv"),
    a layer still wider than ``WIDE`` nodes folds whole, its names ``MIXED``."""
    keys = {i: (layer[i], names[i], i not in held) for i in ids}
    distinct = set(keys.values())
    if len(distinct) <= FOLD_PAST:
        return keys
    width: dict[int, int] = {}
    for key in distinct:
        width[key[0]] = width.get(key[0], 0) + 1
    return {
        i: (key[0], OUTSIDE if key[2] else MIXED, key[2]) if width[key[0]] > WIDE else key
        for i, key in keys.items()
    }


def _counts(statuses: Iterable[JobStatus]) -> list[tuple[JobStatus, int]]:
    tally: dict[JobStatus, int] = {}
    for status in statuses:
        tally[status] = tally.get(status, 0) + 1
    return [(s, tally[s]) for s in STATUS_ORDER if s in tally]


def _place(result: Layout) -> None:
    """Rows within layers (by the mean row of the upstreams), then x, y and the edges' paths."""
    nodes = result.nodes
    ups: dict[int, list[int]] = {}
    for edge in result.edges:
        ups.setdefault(edge.down, []).append(edge.up)
    by_layer: dict[int, list[int]] = {}
    for n, node in enumerate(nodes):
        by_layer.setdefault(node.layer, []).append(n)
    depth = max(by_layer, default=-1) + 1
    for layer in range(depth):
        members = by_layer.get(layer, [])
        if layer:
            # Upstreams are all in earlier layers: their rows are settled.
            members.sort(key=lambda n: (_mean_row(nodes, ups.get(n, ())), nodes[n].jobs[0]))
        for row, n in enumerate(members):
            nodes[n].row = row
    tallest = max((len(m) for m in by_layer.values()), default=0)
    step_y = NODE_H + GAP_Y
    for layer, members in by_layer.items():
        # A short layer is centred against the tallest: a fan-in sits level with its fan-out.
        top = PAD + (tallest - len(members)) * step_y / 2
        for n in members:
            nodes[n].x = float(PAD + layer * (NODE_W + GAP_X))
            nodes[n].y = round(top + nodes[n].row * step_y, 1)
    for edge in result.edges:
        up, down = nodes[edge.up], nodes[edge.down]
        x1, y1 = up.x + NODE_W, up.y + NODE_H / 2
        x2, y2 = down.x, down.y + NODE_H / 2
        bend = (x2 - x1) / 2
        start, end = f"{x1:.1f},{y1:.1f}", f"{x2:.1f},{y2:.1f}"
        edge.path = f"M{start} C{x1 + bend:.1f},{y1:.1f} {x2 - bend:.1f},{y2:.1f} {end}"
    result.layers = depth
    result.width = int(2 * PAD + depth * NODE_W + max(0, depth - 1) * GAP_X)
    result.height = int(2 * PAD + tallest * NODE_H + max(0, tallest - 1) * GAP_Y)


def _mean_row(nodes: list[Node], ups: Sequence[int]) -> float:
    return sum(nodes[u].row for u in ups) / len(ups) if ups else -1.0
