"""Views that enqueue jobs for `jobsched worker --app shopjobs:jobs` to run, and report on them."""

from __future__ import annotations

import re
import threading

from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST
from shopjobs import jobs, send_welcome

import jobsched as js

#: An Idempotency-Key (a UUID, say): a few URL-safe characters, as the id goes in URLs.
KEY = re.compile(r"[\w.-]{1,100}")

_lock = threading.Lock()
_scheduler: js.BackgroundScheduler | None = None


def scheduler() -> js.BackgroundScheduler:
    """This process's scheduler, started on first use; while it runs, the
    views' ``f.enqueue_sync(...)`` goes to it.

    Lazily, so it starts in the process that serves requests: not in
    runserver's reloader parent, nor before a gunicorn ``--preload`` fork.
    """
    global _scheduler
    with _lock:  # two first requests at once must not start two
        if _scheduler is None:
            # A producer on a durable store: `jobsched worker` runs the jobs.
            # The memory store (tests) has no worker but this process.
            _scheduler = jobs.background(num_workers=0 if jobs.durable else 4)
            _scheduler.start()
        return _scheduler


@csrf_exempt  # an API endpoint for the recipe; keep CSRF on for browser forms
@require_POST
def signup(request: HttpRequest, email: str) -> JsonResponse:
    scheduler()  # started, so the enqueue goes to it
    key = request.headers.get("Idempotency-Key")
    if key is None:
        return JsonResponse({"job_id": send_welcome.enqueue_sync(email)}, status=202)
    if not KEY.fullmatch(key):
        error = "Idempotency-Key must be 1 to 100 letters, digits, '_', '.' or '-'"
        return JsonResponse({"error": error}, status=400)
    # The same key again (a client's retry) makes no second job: the store
    # keeps the first, and its id is the answer.
    job_id = send_welcome.options(job_id=f"welcome-{key}").enqueue_sync(email)
    return JsonResponse({"job_id": job_id}, status=202)


@require_GET
def job_status(request: HttpRequest, job_id: str) -> JsonResponse:
    try:
        job = scheduler().fetch(job_id)  # as the store has it, whichever process ran it
    except js.UnknownJobError:
        return JsonResponse({"error": f"no job {job_id}"}, status=404)
    return JsonResponse({"status": job.status.value, "result": job.result, "error": job.last_error})
