"""The actions (POST): cancel and retry a job, retry or cancel the jobs a
filter selects, cancel a workflow, pause, resume or run a schedule now.
Each needs the token."""

from __future__ import annotations

import hmac
import time
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from jobsched import JobStatus
from jobsched._time._scheduleinfo import PAUSED
from jobsched._time._scheduleinfo import read as read_schedule
from jobsched.store import JobPage
from jobsched.store._codec import Codec

from . import _limits, _params, _queues, _views
from ._render import Handlers


class Actions(Handlers):
    """The actions' route handlers; each answers with a redirect or an error page."""

    async def cancel(self, request: Request) -> Response:
        job_id = request.path_params["job_id"]
        refused = await self.refuse(request, "cancel")
        if refused is not None:
            return refused
        job = await self.store.fetch(job_id)
        if job is None:
            return self.error(404, "No such job", f"no job-{job_id} in the store {self.store.url}")
        if job.status.is_terminal:
            return self.error(
                409,
                "Not cancelled",
                f"job-{job_id} already ended {job.status.value}; only a job that has not "
                "ended can be cancelled",
            )
        await self.store.cancel([job_id], time.time())
        return RedirectResponse(f"/jobs/{job_id}?done=cancel", status_code=303)

    async def retry(self, request: Request) -> Response:
        job_id = request.path_params["job_id"]
        refused = await self.refuse(request, "retry")
        if refused is not None:
            return refused
        job = await self.store.fetch(job_id)
        if job is None:
            return self.error(404, "No such job", f"no job-{job_id} in the store {self.store.url}")
        if job_id not in await self.store.retry([job_id], time.time()):
            return self.error(
                409,
                "Not retried",
                f"job-{job_id} is {job.status.value}; only a failed, timed-out or "
                "cancelled job can be retried",
            )
        return RedirectResponse(f"/jobs/{job_id}?done=retry", status_code=303)

    async def cancel_workflow(self, request: Request) -> Response:
        """Every unfinished job of the workflow, as ``jobsched workflow cancel`` does."""
        number = request.path_params["workflow_id"]
        refused = await self.refuse(request, "cancel", "workflow")
        if refused is not None:
            return refused
        row = await self.store.workflow(number)
        if row is None:
            return self.error(
                404, "No such workflow", f"no workflow wf-{number} in the store {self.store.url}"
            )
        if row.finished:
            return self.error(
                409,
                "Not cancelled",
                f"wf-{number} has finished; only a workflow with a job not yet finished "
                "can be cancelled",
            )
        count, _ = await self.store.cancel_workflow(number, time.time())
        query = urlencode({"done": "cancel", "n": count})
        return RedirectResponse(f"/workflows/{number}?{query}", status_code=303)

    async def bulk_retry(self, request: Request) -> Response:
        return await self.bulk(request, "retry")

    async def bulk_cancel(self, request: Request) -> Response:
        return await self.bulk(request, "cancel")

    async def bulk(self, request: Request, action: str) -> Response:
        """Retry or cancel the jobs the list's filters (in the query string) select."""
        refused = await self.refuse(request, action)
        if refused is not None:
            return refused
        filters = _params.filters(request)
        applies = _views.RETRYABLE if action == "retry" else _limits.UNFINISHED
        statuses = filters.narrowed(applies)
        if not statuses:
            wanted = ", ".join(s.value for s in filters.statuses)
            able = ", ".join(s.value for s in _params.STATUS_NAMES if s in applies)
            return self.error(
                409,
                f"Nothing to {action}",
                f"the filter selects only {wanted} jobs; {action} applies to {able} jobs",
            )
        if action == "cancel" and _selects_everything(filters, statuses):
            body = getattr(request.state, "form", None)
            if body is None:
                body = await _params.form_body(request) or b""
            if _params.form_field(body, "confirm") != "all":
                # No filter: every unfinished job, up to BULK_LIMIT a press.
                # One more press, on a page that says so, before that.
                return self.render(
                    "confirm.html",
                    remembered=self.remembered(request),
                    action_url=f"/jobs/cancel?{filters.query()}",
                    bulk_limit=_limits.BULK_LIMIT,
                    back_url=f"/jobs?{filters.query()}",
                )
        args = {**filters.store_args(), "statuses": statuses}
        done = 0
        before: int | None = None
        more = False
        now = time.time()
        for _ in range(_limits.BULK_PAGES):
            page: JobPage = await _queues.job_page(
                self.store,
                args,
                limit=_limits.BULK_LIMIT - done,
                before=before,
                scan=_limits.PAGE_SCAN,
            )
            ids = [job.id for job in page.jobs]
            if ids and action == "retry":
                done += len(await self.store.retry(ids, now))
            elif ids:
                await self.store.cancel(ids, now)
                done += len(ids)
            before = page.next_before
            if before is None:
                break
            if done >= _limits.BULK_LIMIT:
                more = True
                break
        else:
            more = before is not None
        done_query = urlencode({"done": action, "n": done, "more": int(more)})
        return RedirectResponse(f"/jobs?{_and(filters.query(), done_query)}", status_code=303)

    async def pause_schedule(self, request: Request) -> Response:
        schedule_id = request.path_params["schedule_id"]
        refused = await self.refuse(request, "pause", "schedule")
        if refused is not None:
            return refused
        row = await self.stored_schedule(schedule_id)
        if isinstance(row, Response):
            return row
        if row.next_fire == PAUSED:
            return self.error(409, "Not paused", f"the schedule {schedule_id!r} is paused already")
        if not await self.store.pause_schedule(schedule_id):
            return self.no_schedule(schedule_id)
        return self.schedule_done("pause", schedule_id)

    async def resume_schedule(self, request: Request) -> Response:
        schedule_id = request.path_params["schedule_id"]
        refused = await self.refuse(request, "resume", "schedule")
        if refused is not None:
            return refused
        row = await self.stored_schedule(schedule_id)
        if isinstance(row, Response):
            return row
        if row.next_fire != PAUSED:
            return self.error(409, "Not resumed", f"the schedule {schedule_id!r} is not paused")
        try:
            # From now, from the trigger in the signed payload: fires missed
            # while paused are skipped.
            first = read_schedule(Codec(self.store.secrets), row.payload).resumed_fire(time.time())
        except Exception as exc:
            return self.error(
                409,
                "Not resumed",
                f"the schedule {schedule_id!r} cannot be read here ({exc}); start the "
                "dashboard with the store's key (JOBSCHED_SECRET) to resume it",
            )
        if not await self.store.resume_schedule(schedule_id, first):
            return self.no_schedule(schedule_id)
        return self.schedule_done("resume", schedule_id)

    async def trigger_schedule(self, request: Request) -> Response:
        """Run now: one job from the schedule's factory, its regular fires unchanged."""
        schedule_id = request.path_params["schedule_id"]
        refused = await self.refuse(request, "run", "schedule")
        if refused is not None:
            return refused
        row = await self.stored_schedule(schedule_id)
        if isinstance(row, Response):
            return row
        try:
            job_id = await _trigger(self.store, schedule_id)
        except Exception as exc:
            return self.error(
                409,
                "Not run",
                f"the schedule {schedule_id!r} cannot be run from here ({exc}); its factory "
                "makes the job in the dashboard's process, so start the dashboard where the "
                "app's modules import (PYTHONPATH) and with the store's key (JOBSCHED_SECRET)",
            )
        if job_id is None:
            return self.no_schedule(schedule_id)
        query = urlencode({"done": "trigger", "schedule": schedule_id, "job": job_id})
        return RedirectResponse(f"/schedules?{query}", status_code=303)

    async def stored_schedule(self, schedule_id: str) -> Any:
        for row in await self.store.schedules():
            if row.id == schedule_id:
                return row
        return self.no_schedule(schedule_id)

    def no_schedule(self, schedule_id: str) -> Response:
        return self.error(
            404, "No such schedule", f"no schedule {schedule_id!r} in the store {self.store.url}"
        )

    def schedule_done(self, action: str, schedule_id: str) -> Response:
        query = urlencode({"done": action, "schedule": schedule_id})
        return RedirectResponse(f"/schedules?{query}", status_code=303)

    async def refuse(self, request: Request, action: str, thing: str = "job") -> Response | None:
        """A 403 page unless the request carries the configured token."""
        if self.token is None:
            return self.error(
                403,
                "Actions are disabled",
                f"this dashboard was started without a token, so it cannot {action} {thing}s; "
                "restart it with --token or JOBSCHED_DASHBOARD_TOKEN set",
            )
        # The header first: a request that carries it is answered without
        # reading its body, and a form's body is read only up to MAX_BODY.
        given = _params.bearer(request.headers)
        if given is None:
            body = await _params.form_body(request)
            if body is None:
                return self.error(
                    413,
                    "Request too large",
                    f"an action's form is at most {_limits.MAX_BODY} bytes; not {action}",
                )
            request.state.form = body  # read once: the action reads its fields too
            given = _params.form_field(body, "token")
            if given is None and self.remembered(request):
                if self.session is not None and self.session.vouches_for(request):
                    return None
                return self.error(
                    403,
                    "Token required",
                    f"this request to {action} a {thing} did not come from the dashboard's "
                    "own pages (no same-origin Sec-Fetch-Site or Origin header), so the "
                    "remembered token does not count: send the token in the form or as an "
                    "'Authorization: Bearer' header",
                )
            # Remembered for the session once it proves right (see _session).
            request.state.remember = given is not None
        if given is None:
            return self.error(
                403,
                "Token required",
                f"to {action} a {thing}, enter the dashboard's token (or send it as an "
                "'Authorization: Bearer' header)",
            )
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            return self.error(
                403, "Wrong token", f"the token is not this dashboard's; not {action}"
            )
        return None


async def _trigger(store: Any, schedule_id: str) -> str | None:
    """The job id a producer on the dashboard's store submits from the
    schedule (None: the schedule is gone), as ``jobsched schedule trigger``
    does: the row takes an id from a member's block, which the dashboard's
    own store (no member) has none of."""
    from jobsched import JobScheduler, UnknownScheduleError, open_store

    producer = JobScheduler(
        num_workers=0, store=open_store(store.url, secret=list(store.secrets) or None)
    )
    async with producer:
        try:
            return await producer.trigger_schedule(schedule_id)
        except UnknownScheduleError:
            return None


def _selects_everything(filters: _params.Filters, statuses: tuple[JobStatus, ...]) -> bool:
    """The filter narrows nothing: no name, executor, tenant, queue or
    argument, and every unfinished status."""
    return (
        filters.name is None
        and filters.executor is None
        and filters.tenant is None
        and filters.queue is None
        and not filters.args
        and set(statuses) >= set(_limits.UNFINISHED)
    )


def _and(*queries: str) -> str:
    """Query strings joined, the empty ones left out (no stray ``&``)."""
    return "&".join(q for q in queries if q)
