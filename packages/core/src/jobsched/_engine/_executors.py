"""ExecutorSet: the executors a scheduler runs jobs on, by name."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from .._jobs import _plugins
from .._jobs._executor import Executor
from .._log import logger
from .._ordering._admission import with_capacities

#: Told of an executor loaded on first use (name, executor): submit holds
#: jobs to its capacity from then on (see MemoryBacking.executor_loaded).
OnLoaded = Callable[[str, Executor], None]


class ExecutorSet(dict[str, Executor]):
    """name -> :class:`Executor`: the ones given to the scheduler, and the
    installed plugins it loaded on first use.

    A dict, so that the workers' ``executors[job.executor]`` and submit's
    ``name in executors`` stay single C-level operations per job.
    """

    __slots__ = ()

    def ensure(self, name: str, on_loaded: OnLoaded | None = None) -> Executor:
        """The executor named ``name``, its plugin loaded now if it is not yet
        (and then ``on_loaded`` told, before it is kept: if that raises, it is not).

        :raises ExecutorNotFoundError: no such plugin is installed.
        """
        executor = self.get(name)
        if executor is None:
            executor = _plugins.create(name)
            if on_loaded is not None:
                on_loaded(name, executor)
            self[name] = executor
        return executor

    def bounds(self, limits: Mapping[str, int]) -> dict[str, int]:
        """``limits`` (executor -> the most attempts at once), lowered to the
        capacity of each executor here that has one."""
        return with_capacities(dict(limits), self)

    async def shutdown(self, cancel_running: bool) -> None:
        """Shut every executor down; one that fails is logged, the others go on."""
        for name, executor in list(self.items()):
            try:
                await executor.shutdown(cancel_running=cancel_running)
            except Exception:
                logger.exception("executor %r failed to shut down", name)
