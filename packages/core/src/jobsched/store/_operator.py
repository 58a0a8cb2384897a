"""The operator's side of a store: reads, the members list, schedule management and retry.

What the CLI and the dashboard call, and what a worker reports for the
members page. Every method is optional: a store that keeps no such data
inherits these defaults (``NotImplementedError``, or nothing kept), and
:class:`~jobsched.store.JobStore` takes them from here.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from .._enums import JobStatus
from ._rows import Attempt, JobPage, Member, NewJob, StoredJob, StoredSchedule


class OperatorSide:
    """The optional methods of :class:`~jobsched.store.JobStore`, with their defaults."""

    async def jobs(
        self,
        *,
        statuses: Collection[JobStatus] = (),
        limit: int = 50,
        before: int | None = None,
    ) -> list[StoredJob]:
        """Jobs newest first (by id), paged: at most ``limit``, with an id
        below ``before`` when given, with one of ``statuses`` when given.

        A store checks its arguments first with
        :func:`~jobsched.store.check_jobs_args`, so every store
        refuses the same ones with the same messages.

        :raises TypeError: ``statuses`` is a single status, is not a
            collection or holds anything but :class:`JobStatus` members; ``limit`` is not an int;
            ``before`` is neither a job id nor None.
        :raises ValueError: ``limit`` is below 1.
        """
        raise NotImplementedError(f"{type(self).__name__} cannot list jobs")

    async def job_page(
        self,
        *,
        statuses: Collection[JobStatus] = (),
        name: str | None = None,
        executor: str | None = None,
        tenant: str | None = None,
        limit: int = 50,
        before: int | None = None,
        scan: int = 1000,
        queue: str | None = None,
        args: Mapping[str, str] | None = None,
    ) -> JobPage:
        """One page of the jobs that match every filter given, newest first
        (keyset pagination on the id: pass ``next_before`` back as ``before``).

        A page looks at no more than ``scan`` jobs of ``statuses`` (newest
        first, ids below ``before``), so it costs the same on any history:
        a rare name may give a short or empty page whose ``next_before``
        says where to look on. ``name``, ``executor``, ``tenant`` and
        ``queue`` match exactly. ``args`` (parameter name -> text) keeps
        registered jobs whose every named argument has that text (a string
        as it is, a number or boolean as its JSON: ``5``, ``true``; see
        :func:`~jobsched.store.args_match`). The default reads :meth:`jobs`
        and filters the rest; a store may do it in one query.

        :raises TypeError: a filter is neither a str nor None, ``args`` not
            a mapping of str to str, or as :meth:`jobs`.
        :raises ValueError: ``limit`` or ``scan`` is below 1, an ``args``
            key is not a parameter name, or as :meth:`jobs`.
        """
        from ._args import LARGEST, args_match, check_arg_filters, check_page_args

        statuses, limit, before = check_page_args(
            statuses=statuses,
            name=name,
            executor=executor,
            tenant=tenant,
            limit=limit,
            before=before,
            scan=scan,
            queue=queue,
        )
        wanted = check_arg_filters(args)
        if name is None and executor is None and tenant is None and queue is None and not wanted:
            # Nothing left to filter: one page and one row to tell if more exist.
            rows = await self.jobs(statuses=statuses, limit=limit + 1, before=before)
            more = len(rows) > limit
            rows = rows[:limit]
            return JobPage(rows, rows[-1].id if more else None, len(rows))
        # One row past the window tells whether anything older is left.
        window = await self.jobs(statuses=statuses, limit=min(scan + 1, LARGEST), before=before)
        more = len(window) > scan
        window = window[:scan]
        matches = [
            job
            for job in window
            if (name is None or job.name == name)
            and (executor is None or job.executor == executor)
            and (tenant is None or job.tenant == tenant)
            and (queue is None or job.queue == queue)
            and args_match(job.args, wanted)
        ]
        if len(matches) > limit:
            return JobPage(matches[:limit], matches[limit - 1].id, len(window))
        return JobPage(matches, window[-1].id if more else None, len(window))

    async def report_member(self, member: Member) -> None:
        """Record a member's report (its heartbeat for the members list), and
        forget members silent for longer than ``MEMBERS_KEEP`` seconds, so
        the list stays as small as the fleet.

        The default keeps nothing: a store without a members list.
        """
        del member

    async def forget_member(self, owner: str) -> None:
        """Drop a member that stopped cleanly from the members list."""
        del owner

    async def members(self, *, limit: int = 200) -> list[Member]:
        """The members that reported in the last ``MEMBERS_KEEP`` seconds, the
        most recently seen first; at most ``limit``.

        :raises TypeError: ``limit`` is not an int.
        :raises ValueError: ``limit`` is below 1.
        """
        raise NotImplementedError(f"{type(self).__name__} keeps no members list")

    async def counts(self) -> dict[tuple[JobStatus, str], int]:
        """How many jobs the store holds, by (status, executor)."""
        raise NotImplementedError(f"{type(self).__name__} cannot count jobs")

    async def queue_counts(self) -> dict[tuple[str, JobStatus], int]:
        """How many unfinished jobs (pending, retry-waiting, running)
        each queue holds, by (queue, status): what ``jobsched stats`` and the
        dashboard show per queue. Finished jobs are left out, so the cost
        follows the live jobs, not the history."""
        raise NotImplementedError(f"{type(self).__name__} cannot count jobs per queue")

    async def attempts(
        self, *, since: float | None = None, job_id: int | None = None, limit: int = 1000
    ) -> list[Attempt]:
        """Attempts oldest first: the running ones and those that finished at
        or after ``since``, or every attempt of ``job_id``; at most ``limit``
        (the newest, when more match).

        A store checks its arguments first with
        :func:`~jobsched.store.check_attempts_args`.

        :raises TypeError: ``limit`` is not an int; ``since`` is neither a
            number nor None; ``job_id`` is neither a job id nor None.
        :raises ValueError: ``limit`` is below 1.
        """
        raise NotImplementedError(f"{type(self).__name__} cannot list attempts")

    async def schedule_jobs(self, schedule_id: str, *, limit: int = 20) -> list[StoredJob]:
        """A stored schedule's fire history: the jobs its fires made that the
        store still holds (``StoredJob.schedule``), the latest fire first; at
        most ``limit``. A job made by ``trigger_schedule`` is the schedule's
        last job but not a fire, so it is not here.

        :raises TypeError: ``limit`` is not an int.
        :raises ValueError: ``limit`` is below 1.
        """
        raise NotImplementedError(f"{type(self).__name__} keeps no fire history")

    async def schedules(self) -> list[StoredSchedule]:
        """Every stored schedule, soonest fire first."""
        raise NotImplementedError(f"{type(self).__name__} cannot list schedules")

    async def pause_schedule(self, schedule_id: str) -> bool:
        """Stop firing a stored schedule: its next fire becomes ``inf`` and
        any member's lease on it ends, so a fire under way is refused by
        :meth:`fire`'s fence. False if no schedule has that id.

        A paused schedule stays paused when :meth:`put_schedules` registers
        its id again (a worker's setup does at every start)."""
        raise NotImplementedError(f"{type(self).__name__} cannot pause schedules")

    async def resume_schedule(self, schedule_id: str, next_fire: float) -> bool:
        """Fire a paused schedule again from ``next_fire`` on (the scheduler
        computes it from now: fires missed while paused are skipped). A
        schedule that is not paused is left alone. False if no schedule has
        that id."""
        raise NotImplementedError(f"{type(self).__name__} cannot resume schedules")

    async def trigger_schedule(self, schedule_id: str, job: NewJob) -> bool:
        """Add ``job``, made by the schedule's factory now, as its last job,
        in one transaction; its regular fires are unchanged. False (nothing
        added) if no schedule has that id."""
        raise NotImplementedError(f"{type(self).__name__} cannot trigger schedules")

    async def retry(self, ids: Collection[int], now: float) -> list[int]:
        """Run FAILED, TIMED_OUT or CANCELLED jobs again: PENDING from ``now``,
        their attempts still counted (one more attempt each, the fence stays
        monotonic). The ids that were requeued, in the caller's order, each
        once; others are left alone.

        A store checks ``ids`` first with
        :func:`~jobsched.store.check_retry_ids`.

        :raises TypeError: ``ids`` is one id or not a collection; an id is not an int.
        """
        raise NotImplementedError(f"{type(self).__name__} cannot retry jobs")

    async def paused_queues(self) -> set[str]:
        """The queues paused (:meth:`pause_queue`): no member claims their jobs.

        The default: none (a store without pauses)."""
        return set()

    async def pause_queue(self, queue: str) -> bool:
        """Pause ``queue`` for every member: from this call's commit on, no
        claim takes its jobs (a running attempt runs on; a lost one's
        takeover still records its loss). The jobs stay where they are,
        never claimed and released.
        False if it was paused already (nothing changed).

        The caller checks the name (``check_queue``); a queue no job used
        yet may be paused, ahead of its jobs.
        """
        raise NotImplementedError(f"{type(self).__name__} cannot pause queues")

    async def resume_queue(self, queue: str) -> bool:
        """Let members claim ``queue``'s jobs again; False if it was not paused."""
        raise NotImplementedError(f"{type(self).__name__} cannot resume queues")
