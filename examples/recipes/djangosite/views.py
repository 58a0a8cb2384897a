"""Views that submit jobs for `jobsched worker` to run, and report on them."""

from __future__ import annotations

import threading

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST
from shopjobs import send_welcome

import jobsched as js

_lock = threading.Lock()
_scheduler: js.BackgroundScheduler | None = None


def scheduler() -> js.BackgroundScheduler:
    """This process's scheduler, started on first use.

    Lazily, so it starts in the process that serves requests: not in
    runserver's reloader parent, nor before a gunicorn ``--preload`` fork.
    """
    global _scheduler
    with _lock:  # two first requests at once must not start two
        if _scheduler is None:
            # A producer on a durable store: `jobsched worker` runs the
            # jobs. The memory store (tests) has no worker but this process.
            store = settings.JOBSCHED_STORE
            workers = 4 if store == "memory" else 0
            _scheduler = js.BackgroundScheduler(store=store, num_workers=workers)
            _scheduler.start()
        return _scheduler


@csrf_exempt  # an API endpoint for the recipe; keep CSRF on for browser forms
@require_POST
def signup(request: HttpRequest, email: str) -> JsonResponse:
    job_id = scheduler().submit(js.FunctionJob(send_welcome, (email,)))  # committed on return
    return JsonResponse({"job_id": job_id}, status=202)


@require_GET
def job_status(request: HttpRequest, job_id: str) -> JsonResponse:
    try:
        job = scheduler().fetch(job_id)  # as the store has it, whichever process ran it
    except js.UnknownJobError:
        return JsonResponse({"error": f"no job {job_id}"}, status=404)
    return JsonResponse({"status": job.status.value, "result": job.result, "error": job.last_error})
