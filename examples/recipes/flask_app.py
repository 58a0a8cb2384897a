"""Flask: a producer per process, a view that submits, one that reports.

Needs ``pip install flask "jobsched-core[sqlite,thread]"``: the web process
only submits, and ``jobsched worker --import shopjobs --store
sqlite:///jobs.db`` (from the same install) runs ``send_welcome``, a plain
function, on the thread executor. Run the app with ``flask --app flask_app
run`` (the store from ``JOBSCHED_STORE``, ``sqlite:///jobs.db`` by default).
"""

from __future__ import annotations

import os
from typing import Any

from flask import Flask, abort, request
from shopjobs import send_welcome

import jobsched as js


def create_app(store: str | None = None) -> Flask:
    """The app, its jobs in ``store`` (a store URL; "memory" in tests)."""
    app = Flask(__name__)
    store = store or os.environ.get("JOBSCHED_STORE", "sqlite:///jobs.db")
    # On a durable store a producer (num_workers=0): `jobsched worker` runs
    # the jobs, so a deploy of the web servers never cuts one short. The
    # memory store (the app's tests) has no other process, so there the app
    # runs its jobs itself.
    scheduler = js.BackgroundScheduler(store=store, num_workers=4 if store == "memory" else 0)
    # Started here, in the process that serves requests: a scheduler started
    # before a fork (gunicorn --preload) has no thread in the children.
    scheduler.start()
    app.extensions["jobsched"] = scheduler

    @app.post("/signup/<email>")
    def signup(email: str) -> tuple[dict[str, str], int]:
        job_id = scheduler.submit(js.FunctionJob(send_welcome, (email,)))  # committed on return
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
