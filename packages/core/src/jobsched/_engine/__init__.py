"""The engine: :class:`~jobsched.JobScheduler`, composed of parts.

``_scheduler`` is the public face; ``_compose`` checks its arguments, chooses
the backing (the one place that asks which) and builds each part once,
handing it what it needs. Shared records (``_state``): ``Settings`` (fixed),
``RunState`` (the lifecycle writes it) and ``JobTable`` (this process's jobs,
waiters, listeners, the checked transition). The parts, one module each:

- ``Submission`` (``_submission``): every check before any change; the
  submit hooks; ``submit_threadsafe``'s hop to the loop.
- ``Outcomes`` (``_outcomes``): how an attempt ended, retry or finish; the
  dependency graph it owns and its cascade.
- ``Dispatcher`` (``_dispatch``, ``_attempts``, ``_resume``): the workers.
- ``Ticker`` (``_timers``): the deadlines and the due sources the memory
  backing hands it (its ``DelayedJobs``, its schedules).
- ``Lifecycle`` (``_lifecycle``): start, stop, ``async with``; the live tasks.
- ``Canceller`` (``_cancel``), ``ExecutorSet`` (``_executors``).

``JobScheduler`` inherits no part: only stateless bases holding public
methods over the parts (``ScheduleCalls`` in ``_schedules``, ``ResultCalls``
in ``_results``) and the tests' ``Seams``. Its ``submit`` stays a few lines
of its own that call ``Submission.check`` and ``backing.add``, bound once:
a delegate would cost the hot path a frame.

The *backing* (``_backing``: its roles) is where jobs are kept, claimed,
finished and fired: ``MemoryBacking`` (``_memory``, ``_memschedules``) on
heaps here; ``DurableBacking`` (``_durable``, ``_held``, ``_storedreads``,
``_storedschedules``, ``_linkhost``, ``_loadgrace``, ``_joined``,
``_completion``, ``_functions``) through the store link (``_link/``); those
load with the first durable store, never at ``import jobsched``.

A submitted job's walk: ``JobScheduler.submit`` has ``Submission`` check it,
then ``backing.add``. In memory: into the ``JobTable``, then blocked on
unmet upstreams (``Outcomes.block``) or into the ready or delayed queue,
waking an idle worker; the Ticker promotes delayed ones. Durable: a row in
the next group commit; the claimer claims it and ``LinkHost.claimed``
queues it. A Dispatcher worker takes it (``backing.take_next``), marks it
RUNNING, steps the attempt (a suspended one is watched by the Ticker's
deadlines), and ``Outcomes`` records the end (durable: the backing's fenced
write first), waiters woken, history trimmed, dependents released or
cancelled (durable: the store cascades, the link reports).

May import every package below it (``_jobs``, ``_ordering``, ``_time``,
``store``) and the top-level leaf modules; never ``_sync`` or ``_cli``.
"""
