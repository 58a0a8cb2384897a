"""The PostgreSQL store's queue pauses (``JobStore.pause_queue`` and its
kin): what they write and how claims read them is in ``_pauses``."""

from __future__ import annotations

from . import _pauses, _queues, _sql
from ._schedulereads import ScheduleReads


class QueuePauses(ScheduleReads):
    """The store's pauses (``JobStore.pause_queue`` and its kin)."""

    _queue_column: bool

    async def paused_queues(self) -> set[str]:
        return await self._run(_pauses.paused, transaction=False, again=True)

    async def pause_queue(self, queue: str) -> bool:
        def column(conn: _sql.Conn) -> None:
            _queues.add_column(conn)
            self._queue_column = True
            _queues.build_indexes(conn)  # a claim that leaves queues out reads them

        await self._run(column, transaction=False)
        return await self._run(lambda conn: _pauses.pause(conn, queue))

    async def resume_queue(self, queue: str) -> bool:
        def resume(conn: _sql.Conn) -> bool:
            resumed = _pauses.resume(conn, queue)
            if resumed:
                _sql.notify(conn)  # its jobs are claimable: the members claim at once
            return resumed

        return await self._run(resume)
