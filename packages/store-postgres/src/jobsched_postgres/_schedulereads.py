"""What operators read of stored schedules: the schedules themselves
(``jobsched schedules``, the dashboard) and the jobs a schedule's fires made
(its fire history)."""

from __future__ import annotations

from jobsched.store import StoredJob, StoredSchedule, check_limit

from ._reads import Reads


class ScheduleReads(Reads):
    """The operator's reads of stored schedules, each one statement."""

    async def schedules(self) -> list[StoredSchedule]:
        rows = await self._run(
            lambda conn: conn.execute(
                "SELECT id, next_fire, owner, payload, last_job FROM jobsched_schedules "
                "ORDER BY next_fire, id"
            ).fetchall(),
            transaction=False,
        )
        return [StoredSchedule(i, f, owner, bytes(p), last) for i, f, owner, p, last in rows]

    async def schedule_jobs(self, schedule_id: str, *, limit: int = 20) -> list[StoredJob]:
        limit = check_limit(limit)
        # Through jobsched_jobs_fires, the unique (schedule, fire_time) index.
        where = "WHERE schedule = %s ORDER BY fire_time DESC LIMIT %s"
        return await self._run(
            lambda conn: self._jobs(conn, where, (schedule_id, limit)), transaction=False
        )
