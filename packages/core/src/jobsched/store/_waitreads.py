"""The reads of waiting jobs that no member claims: why a job waits.

A member logs them (jobs signed by a key it lacks, on an executor it has
not installed, of a name it does not know), and ``jobsched stats`` and the
dashboard show them. Each reads only the waiting rows, never the finished
history. Every method is optional, with a default that counts none, and
:class:`~jobsched.store.JobStore` takes them from here.
"""

from __future__ import annotations

from collections.abc import Collection

from ._operator import OperatorSide
from ._rows import MEMBER_EVERY


class WaitingReads(OperatorSide):
    """The optional reads of :class:`~jobsched.store.JobStore` about waiting
    jobs no member claims, with their defaults."""

    async def waiting_for_keys(self) -> dict[bytes, int]:
        """Jobs waiting (pending or retry-waiting) that no claim of this store
        object hands out, because a key it does not hold signed them: that
        key's id -> how many.

        The default has none: a store that does not filter its claims by
        :attr:`JobStore.key_ids` hands such rows out, and the scheduler fails them.
        """
        return {}

    async def waiting_for_executors(self, installed: Collection[str]) -> dict[str, int]:
        """Jobs waiting (pending or retry-waiting) on an executor that is not
        in ``installed``, which no claim of a member with just those
        executors hands out: executor name -> how many.

        A worker member calls it now and then to tell its operator about
        jobs it never claims. It reads only the waiting rows, never the
        finished history. The default has none, so a store without it
        stays quiet.
        """
        del installed  # nothing counted: the default has no such jobs
        return {}

    async def waiting_for_names(self, names: Collection[str]) -> dict[str, int]:
        """Registered jobs (rows with ``args``) waiting (pending or
        retry-waiting) whose name is not in ``names``, which no claim of a
        member with just those names hands out: name -> how many.

        What a member logs about and ``jobsched stats`` and the dashboard
        show ("waiting for a member that knows NAME"); ``names=()`` counts
        every waiting registered job. It reads only the waiting rows. The
        default has none, so a store without it stays quiet.
        """
        del names  # nothing counted: the default has no such jobs
        return {}

    async def waiting_for_unknown_names(self) -> dict[str, int]:
        """Registered jobs no live member can run: name -> how many, by name.

        Known are the names the working members reported within three
        report intervals (``Member.names``); a store without a members list
        knows none, so every waiting registered job counts. What ``jobsched
        stats`` and the dashboard show.
        """
        import time

        try:
            members = await self.members()
        except NotImplementedError:
            members = []
        now = time.time()
        known = {
            name
            for member in members
            if member.workers > 0 and now - member.seen_at <= 3 * MEMBER_EVERY
            for name in member.names
        }
        return dict(sorted((await self.waiting_for_names(known)).items()))
