"""Flask: a producer per process, a view that enqueues, one that reports.

Needs ``pip install flask "jobsched-core[sqlite,thread]"``: the web process
only enqueues, and ``jobsched worker --app shopjobs:jobs`` (from the same
install) runs ``send_welcome``, a plain function, on the thread executor.
Run the app with ``flask --app flask_app run``; both take the store from
``shopjobs.jobs`` (``JOBSCHED_STORE``, ``sqlite:///jobs.db`` by default).
"""

from __future__ import annotations

import re
from typing import Any

from flask import Flask, abort, request
from shopjobs import jobs, send_welcome

import jobsched as js

#: An Idempotency-Key (a UUID, say): a few URL-safe characters, as the id goes in URLs.
KEY = re.compile(r"[\w.-]{1,100}")


def create_app(store: str | None = None) -> Flask:
    """The web app; ``store`` replaces the jobs' store ("memory" in tests)."""
    app = Flask(__name__)
    store = store or jobs.settings().get("store", "memory")
    # On a durable store a producer (num_workers=0): `jobsched worker` runs
    # the jobs, so a deploy of the web servers never cuts one short. The
    # memory store (the app's tests) has no other process, so there the app
    # runs its jobs itself. While it runs, `f.enqueue_sync(...)` goes to it.
    scheduler = jobs.background(store=store, num_workers=4 if store == "memory" else 0)
    # Started here, in the process that serves requests: a scheduler started
    # before a fork (gunicorn --preload) has no thread in the children.
    scheduler.start()
    app.extensions["jobsched"] = scheduler

    @app.post("/signup/<email>")
    def signup(email: str) -> tuple[dict[str, str], int]:
        key = request.headers.get("Idempotency-Key")
        if key is None:
            return {"job_id": send_welcome.enqueue_sync(email)}, 202  # committed on return
        if not KEY.fullmatch(key):
            abort(400, "Idempotency-Key must be 1 to 100 letters, digits, '_', '.' or '-'")
        # The same key again (a client's retry) makes no second job: the
        # store keeps the first, and its id is the answer.
        job_id = send_welcome.options(job_id=f"welcome-{key}").enqueue_sync(email)
        return {"job_id": job_id}, 202

    @app.get("/jobs/<job_id>")
    def job_status(job_id: str) -> dict[str, Any]:
        try:
            job = scheduler.fetch(job_id)  # as the store has it, whichever process ran it
        except js.UnknownJobError:
            abort(404, f"no job {job_id}")
        return {"status": job.status.value, "result": job.result, "error": job.last_error}

    @app.get("/jobs/<job_id>/result")
    def job_result(job_id: str) -> dict[str, Any]:
        given = request.args.get("wait", "10")
        try:
            wait = float(given)
        except ValueError:
            wait = float("nan")
        if not 0 <= wait <= 60:  # NaN too
            abort(400, f"wait must be a number of seconds from 0 to 60, got {given!r}")
        try:
            # Blocks this request's thread until the job has finished, wherever it ran.
            return {"result": scheduler.result(job_id, timeout=wait)}
        except js.JobFailedError as exc:
            abort(409, f"job {job_id} {exc.job.status.value}: {exc.job.last_error}")
        except js.UnknownJobError:
            abort(404, f"no job {job_id}")
        except TimeoutError:
            abort(504, f"job {job_id} has not finished after {wait} s")

    return app
