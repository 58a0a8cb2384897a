"""The demo: every kind of job, a dependency, retries, a timeout, a cascade, a schedule.

Run it with ``jobsched-demo`` (or ``python -m jobsched_examples.demo``);
``jobsched-demo --store sqlite:///demo.db`` runs it on a SQLite file.
"""

from __future__ import annotations

import argparse
import functools
import logging
import random
from dataclasses import dataclass

import anyio

import jobsched as js

from ._jobs import CsvExportJob, EmailJob, FlakyUploadJob, PrimeCountJob, SleepJob

NUM_WORKERS = 3
HEARTBEATS = 3


@dataclass
class DemoOutcome:
    """What the demo ran and how it ended, for printing and for tests."""

    shown: list[js.Job]
    heartbeats: int
    schedule_cancelled: bool
    peak_running: int
    num_workers: int


async def run_demo(store: str = "memory") -> DemoOutcome:
    """Run the demo scenario and return its outcome.

    :param store: where the jobs live: ``"memory"`` or a store URL.
    """
    fast_retry = js.RetryPolicy(max_retries=3, base_delay=0.02, jitter=False)

    export = CsvExportJob("orders", rows=4_200)
    primes = PrimeCountJob(200_000, timeout=30)
    report = EmailJob("finance@corp", "daily report")
    alert = EmailJob("oncall@corp", "disk 91%", priority=js.JobPriority.CRITICAL)
    flaky = FlakyUploadJob("s3://bucket/report.csv", failures=2, retry=fast_retry)
    broken = FlakyUploadJob("s3://bucket/broken.csv", failures=99, retry=fast_retry)
    slow = SleepJob("slow-endpoint", 5.0, timeout=0.1, retry=js.RetryPolicy(max_retries=0))
    notify = EmailJob("team@corp", "upload done")
    reminder = EmailJob("me@corp", "reminder")

    beats_done = anyio.Event()
    beats: list[js.Job] = []

    def count_heartbeats(job: js.Job, old: js.JobStatus, new: js.JobStatus) -> None:
        if job.name == "email ops@corp: heartbeat" and new is js.JobStatus.COMPLETED:
            beats.append(job)
            if len(beats) == HEARTBEATS:
                beats_done.set()

    scheduler = js.JobScheduler(
        js.PriorityStrategy(), num_workers=NUM_WORKERS, rng=random.Random(7), store=store
    )
    for job in (export, primes, alert, flaky, broken, slow, reminder):
        scheduler.submit(job)
    scheduler.submit(report, depends_on=[export.job_id, primes.job_id])
    scheduler.submit(notify, depends_on=[broken.job_id])  # upstream fails -> cancelled
    scheduler.cancel(reminder.job_id)
    scheduler.add_listener(count_heartbeats)

    async with scheduler:
        # Fires at about 0, 0.1 and 0.2 s; cancelled after the third completes.
        # A partial of a class, not a lambda: a durable store keeps the
        # schedule, so its factory must be importable.
        heartbeat = scheduler.schedule_recurring(
            functools.partial(EmailJob, "ops@corp", "heartbeat"), interval=0.1, id="heartbeat"
        )
        await beats_done.wait()
        cancelled = scheduler.cancel_recurring(heartbeat)
        await scheduler.join()

    return DemoOutcome(
        shown=[export, primes, report, alert, flaky, broken, slow, notify, reminder],
        heartbeats=len(beats),
        schedule_cancelled=cancelled,
        peak_running=scheduler.peak_running,
        num_workers=NUM_WORKERS,
    )


def format_outcome(outcome: DemoOutcome) -> str:
    """The demo's table."""
    lines = ["=" * 78, " JOBSCHED DEMO", "=" * 78]
    for job in outcome.shown:
        detail = job.result if job.status is js.JobStatus.COMPLETED else job.last_error
        lines.append(f" {job.name:<34} {job.status.value:<10} attempts={job.attempts}  {detail}")
    ended = "then was cancelled" if outcome.schedule_cancelled else "and is still active"
    lines.append(f" recurring heartbeat completed {outcome.heartbeats} runs, {ended}")
    lines.append(f" peak concurrent jobs: {outcome.peak_running} (workers: {outcome.num_workers})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Console entry point: run the demo and print its table."""
    parser = argparse.ArgumentParser(prog="jobsched-demo", description=__doc__)
    parser.add_argument(
        "--store", default="memory", help="where jobs live: memory (default) or a store URL"
    )
    args = parser.parse_args(argv)
    handler = logging.StreamHandler()
    handler.setFormatter(_NoTraceback("%(levelname)s:%(name)s:%(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    print(format_outcome(anyio.run(run_demo, args.store)))


class _NoTraceback(logging.Formatter):
    """One line per record: the demo's failures are deliberate, and the
    table after them shows each error, so a traceback would only bury it."""

    def formatException(self, ei: object) -> str:
        return ""


if __name__ == "__main__":
    main()
