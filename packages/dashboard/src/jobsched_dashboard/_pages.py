"""The pages: the overview and its live part, a job's page and its live part,
the job list, the members and the schedules.

A page's reads do not depend on each other (but the upstream jobs, found
from the queue), so they run concurrently: the page waits for the slowest
read, not for the sum of them (the store bounds how many run at once).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable
from functools import partial
from typing import Any

import anyio
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from jobsched import JobStatus
from jobsched._time._scheduleinfo import from_store
from jobsched.store import ON_FAILURE_RUN, StoredJob
from jobsched.store._codec import Codec
from jobsched.store._waiting import waiting

from . import _limits, _params, _payload, _queues, _registered, _timeline, _views
from ._render import Handlers


async def concurrently(*calls: Callable[[], Awaitable[Any]]) -> list[Any]:
    """The results of ``calls``, run at once, in their order.

    The first error of one is raised as itself, not in an exception group,
    so the app's handlers still turn it into its page (503, 501, 404).
    """
    results: list[Any] = [None] * len(calls)

    async def one(i: int, call: Callable[[], Awaitable[Any]]) -> None:
        results[i] = await call()

    try:
        async with anyio.create_task_group() as group:
            for i, call in enumerate(calls):
                group.start_soon(one, i, call)
    except Exception as exc:
        inner: Any = exc
        while getattr(inner, "exceptions", None):  # ExceptionGroup, also the 3.10 backport
            inner = inner.exceptions[0]
        if inner is exc:
            raise
        raise inner from None
    return results


class Pages(Handlers):
    """The pages' route handlers (GET)."""

    async def index(self, request: Request) -> Response:
        return self.render("index.html", **await self.overview(_params.window(request)))

    async def live(self, request: Request) -> Response:
        return self.render("live.html", **await self.overview(_params.window(request)))

    async def job(self, request: Request) -> Response:
        context = await self.job_context(request.path_params["job_id"])
        return self.render(
            "job.html",
            done=request.query_params.get("done"),
            remembered=self.remembered(request),
            **context,
        )

    async def job_live(self, request: Request) -> Response:
        return self.render("job_live.html", **await self.job_context(request.path_params["job_id"]))

    async def job_list(self, request: Request) -> Response:
        """The job list: filtered, paged by id, and a lookup by id (``?id=job-12``)."""
        query = request.query_params
        lookup = query.get("id", "").strip()
        if lookup:
            job_id = _params.job_id(lookup)
            if await self.store.fetch(job_id) is None:
                raise HTTPException(404, f"no job-{job_id} in the store {self.store.url}")
            return RedirectResponse(f"/jobs/{job_id}", status_code=303)
        filters = _params.filters(request)
        before = _params.before(query.get("before"))
        page = await _queues.job_page(
            self.store,
            filters.store_args(),
            limit=_limits.PAGE_LIMIT,
            before=before,
            scan=_limits.PAGE_SCAN,
        )
        return self.render(
            "jobs.html",
            remembered=self.remembered(request),
            now=time.time(),
            page=page,
            filters=filters,
            before=before,
            all_statuses=_views.STATUS_ORDER,
            next_url=None
            if page.next_before is None
            else f"/jobs?{filters.query(before=page.next_before)}",
            first_url=f"/jobs?{filters.query()}",
            retry_url=f"/jobs/retry?{filters.query()}",
            cancel_url=f"/jobs/cancel?{filters.query()}",
            can_bulk_retry=bool(filters.narrowed(_views.RETRYABLE)),
            can_bulk_cancel=bool(filters.narrowed(_limits.UNFINISHED)),
            done=_params.done(request),
            page_scan=_limits.PAGE_SCAN,
            bulk_limit=_limits.BULK_LIMIT,
        )

    async def members(self, request: Request) -> Response:
        """Every member that reported: owner, host, pid, workers, busy, last heartbeat."""
        now = time.time()
        try:
            found = await self.store.members(limit=_limits.MEMBERS_LIMIT)
        except NotImplementedError:
            found, supported = [], False
        else:
            supported = True
        return self.render(
            "members.html",
            now=now,
            members=found,
            names=_views.member_names(m.owner for m in found),
            supported=supported,
            stale_after=_limits.STALE_AFTER,
            capped=len(found) >= _limits.MEMBERS_LIMIT,
            members_limit=_limits.MEMBERS_LIMIT,
        )

    async def schedules(self, request: Request) -> Response:
        codec = Codec(self.store.secrets)
        rows = await self.store.schedules()
        found = [
            (from_store(codec, r.id, r.payload, r.next_fire, r.last_job), r.owner) for r in rows
        ]
        found.sort(key=lambda pair: (pair[0].next_fire is None, pair[0].id))
        done = request.query_params.get("done")
        return self.render(
            "schedules.html",
            remembered=self.remembered(request),
            now=time.time(),
            schedules=found,
            done=done if done in ("pause", "resume", "trigger") else None,
            done_id=request.query_params.get("schedule", ""),
            done_job=request.query_params.get("job", ""),
        )

    async def schedule(self, request: Request) -> Response:
        """One schedule's fire history: the jobs its fires made, latest first."""
        schedule_id = request.path_params["schedule_id"]
        jobs, rows = await concurrently(
            partial(self.store.schedule_jobs, schedule_id, limit=_limits.FIRES_LIMIT),
            self.store.schedules,
        )
        return self.render(
            "schedule.html",
            now=time.time(),
            schedule_id=schedule_id,
            jobs=jobs,
            limit=_limits.FIRES_LIMIT,
            known=any(r.id == schedule_id for r in rows),
        )

    # ── what they show ────────────────────────────────────────────────────

    async def overview(self, window: float) -> dict[str, Any]:
        """Everything the main page shows: six paged reads and a few fetches, at once."""
        store = self.store
        now = time.time()
        (
            counts,
            queues,
            attempts,
            (waiting, upstreams),
            failures,
            schedules,
            nameless,
        ) = await concurrently(
            store.counts,
            partial(_queues.read_table, store),
            partial(store.attempts, since=now - window, limit=_limits.ATTEMPTS_LIMIT),
            self.waiting,
            partial(store.jobs, statuses=_views.FAILURES, limit=_limits.FAILURES_LIMIT),
            store.schedules,
            store.waiting_for_unknown_names,
        )
        return {
            "now": now,
            "counts": _views.counts_table(counts),
            "queues": queues,
            "minutes": round(window / 60),
            "chart": _views.throughput(attempts, now, window, bucket=window / 30),
            "timeline": _timeline.timeline(attempts, now, window),
            "attempts_capped": len(attempts) >= _limits.ATTEMPTS_LIMIT,
            "attempts_limit": _limits.ATTEMPTS_LIMIT,
            "queue": _views.queue(waiting, upstreams, now),
            "waiting_capped": len(waiting) >= _limits.WAITING_LIMIT,
            "waiting_limit": _limits.WAITING_LIMIT,
            "failures": failures,
            "failures_limit": _limits.FAILURES_LIMIT,
            "schedules": schedules,
            # Registered jobs no live member knows (a deploy's new job).
            "unknown_names": _registered.describe(nameless),
        }

    async def waiting(self) -> tuple[list[StoredJob], dict[int, StoredJob]]:
        """The newest waiting jobs, and the upstream jobs they name."""
        waiting = await self.store.jobs(
            statuses=(JobStatus.PENDING, JobStatus.RETRY_WAIT), limit=_limits.WAITING_LIMIT
        )
        upstreams = await self.fetch_all(
            sorted({u for job in waiting for u in job.depends_on})[: _limits.UPSTREAMS_LIMIT]
        )
        return waiting, upstreams

    async def job_context(self, job_id: int) -> dict[str, Any]:
        job = await self.store.fetch(job_id)
        if job is None:
            raise HTTPException(404, f"no job-{job_id} in the store {self.store.url}")
        now = time.time()
        # Every upstream with its policy where the store keeps settled edges
        # (workflows), else the ones still waited for.
        edges = [(u, p == ON_FAILURE_RUN) for u, p, _ in job.deps] or [
            (u, False) for u in job.depends_on
        ]
        named = [u for u, _ in edges[: _limits.UPSTREAMS_LIMIT]]
        attempts, upstreams = await concurrently(
            partial(self.store.attempts, job_id=job_id), partial(self.fetch_all, named)
        )
        # The member that ran it: the job row names only a live owner, and an
        # attempt row (or the job's last one) keeps who ran each.
        ran_by = job.owner or next((a.owner for a in reversed(attempts) if a.owner), None)
        return {
            "now": now,
            "job": job,
            "attempts": attempts,
            "ran_by": ran_by,
            # A registered job's call is its name and JSON arguments.
            "call": None if job.args is not None else _payload.job(job.payload),
            "result": None if job.args is not None else _payload.result(job.result),
            # Priority, timeout, retry: read from the pickle; a registered
            # job's are its app's registration's, where it runs.
            "options": None if job.args is not None else _payload.options(job.payload),
            "waiting": waiting(job, now),
            **_registered.context(job),
            # (id, job or None when pruned, a "run" edge) in the job's order.
            "upstreams": [(u, upstreams.get(u), run) for u, run in edges[: len(named)]],
            "more_upstreams": max(0, len(edges) - _limits.UPSTREAMS_LIMIT),
            "can_cancel": not job.status.is_terminal,
            "can_retry": job.status in _views.RETRYABLE,
        }

    async def fetch_all(self, ids: Iterable[int]) -> dict[int, StoredJob]:
        """The jobs of ``ids`` still in the store, fetched at once."""
        wanted = list(ids)
        found = await concurrently(*(partial(self.store.fetch, i) for i in wanted))
        return {i: job for i, job in zip(wanted, found, strict=True) if job is not None}
