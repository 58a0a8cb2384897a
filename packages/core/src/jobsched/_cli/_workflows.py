"""The workflow commands: ``workflows``, ``workflow show ID`` and
``workflow cancel ID``.

They read the store's workflow rows and graph (``JobStore.workflows``,
``workflow_graph``) and cancel through it (``cancel_workflow``, as
``jobsched cancel`` cancels a job through ``cancel``): no job is unpickled,
so they need neither the jobs' code nor the store's key. How a graph is
drawn is :mod:`._wftree`'s.
"""

from __future__ import annotations

import time
from typing import Any

import click

from ..store._args import LARGEST
from ..store._base import JobStore
from . import _format as fmt
from . import _wftree as tree
from ._jobargs import json_option, print_json, run
from ._main import Count, IntParam, UserError, store_option

#: The most jobs ``workflow show`` reads by default.
SHOW_LIMIT = 2_000


class WorkflowIdType(IntParam):
    """``wf-12`` (as ``jobsched workflows`` prints ids) or ``12``: the workflow's number."""

    name = "WORKFLOW_ID"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        text = str(value).strip()
        digits = text[3:] if text.lower().startswith("wf-") else text
        if digits.isascii() and digits.isdigit() and len(digits) < 20 and int(digits) <= LARGEST:
            return int(digits)
        self.fail(
            f"{text!r} is not a workflow id: expected wf-<n>, as 'jobsched workflows' shows",
            param,
            ctx,
        )


@click.command()
@store_option
@click.option(
    "--limit",
    type=Count(max=LARGEST),
    default=50,
    show_default=True,
    metavar="N",
    help="At most N workflows, the newest.",
)
@click.option("--unfinished", is_flag=True, help="Only workflows with a job not yet finished.")
@json_option
def workflows(store_url: str | None, limit: int, unfinished: bool, as_json: bool) -> None:
    """List workflows, newest first, with their jobs' counts by status."""

    async def action(store: JobStore) -> None:
        found = await store.workflows(limit=limit, unfinished=unfinished)
        if as_json:
            print_json([tree.row_json(row) for row in found])
            return
        if not found:
            click.echo("no unfinished workflows" if unfinished else "no workflows")
            return
        rows = [
            [
                tree.workflow_id(row.id),
                fmt.one_line(row.name, 30),
                fmt.utc_time(row.created_at),
                str(row.size),
                *(str(row.counts.get(s, 0)) for s in tree.ORDER),
                "yes" if row.finished else "no",
            ]
            for row in found
        ]
        headers = ["ID", "NAME", "CREATED", "JOBS", *(s.value.upper() for s in tree.ORDER)]
        right = range(3, 4 + len(tree.ORDER))
        click.echo(fmt.table([*headers, "FINISHED"], rows, right=right))

    run(store_url, action)


@click.group()
def workflow() -> None:
    """Look at one workflow (its jobs and the edges between them), or cancel it."""


@workflow.command()
@click.argument("workflow_id", type=WorkflowIdType(), metavar="WORKFLOW_ID")
@store_option
@click.option("--table", "as_table", is_flag=True, help="One row per job, with its upstreams.")
@click.option(
    "--limit",
    type=Count(max=LARGEST),
    default=SHOW_LIMIT,
    show_default=True,
    metavar="N",
    help="At most N jobs, the first by id.",
)
@json_option
def show(
    workflow_id: int, store_url: str | None, as_table: bool, limit: int, as_json: bool
) -> None:
    """Show a workflow: a tree of its jobs (each under its lowest-numbered
    upstream, [run] on edges that run however the upstream ends), or a table."""

    async def action(store: JobStore) -> None:
        graph = await store.workflow_graph(workflow_id, limit=limit)
        if graph is None:
            raise UserError(_unknown(workflow_id, store))
        if as_json:
            print_json(tree.graph_json(graph))
            return
        row = graph.workflow
        held = sum(row.counts.values())
        lines = [
            f"{tree.workflow_id(row.id)}  {fmt.printable(row.name)}",
            f"  {'created':<9} {fmt.utc_time(row.created_at)}",
            f"  {'jobs':<9} {row.size} added, {held} held: {tree.counts_text(row.counts)}",
            f"  {'finished':<9} {'yes' if row.finished else 'no'}",
            "",
        ]
        lines += [tree.table(graph)] if as_table else tree.tree(graph)
        if graph.truncated:
            lines += [
                "",
                f"showing the first {len(graph.jobs)} of {held} jobs by id: pass --limit to "
                "see more",
            ]
        click.echo("\n".join(lines))

    run(store_url, action)


@workflow.command()
@click.argument("workflow_id", type=WorkflowIdType(), metavar="WORKFLOW_ID")
@store_option
def cancel(workflow_id: int, store_url: str | None) -> None:
    """Cancel every unfinished job of a workflow ("run"-edge ones too): at
    once if it waits, within a second if it runs."""

    async def action(store: JobStore) -> None:
        row = await store.workflow(workflow_id)
        name = tree.workflow_id(workflow_id)
        if row is None:
            raise UserError(_unknown(workflow_id, store))
        if row.finished:
            raise UserError(f"{name} already finished: nothing to cancel")
        count, _ = await store.cancel_workflow(workflow_id, time.time())
        jobs = "job" if count == 1 else "jobs"
        click.echo(
            f"{name}: {count} unfinished {jobs} cancelled (a running one stops within a second)"
        )

    run(store_url, action)


def _unknown(workflow_id: int, store: JobStore) -> str:
    return (
        f"no workflow {tree.workflow_id(workflow_id)} in {store.url}: never enqueued "
        "there, or pruned with its last job ('jobsched workflows' lists them)"
    )
