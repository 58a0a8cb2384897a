"""The engine: :class:`~jobsched.JobScheduler`, composed of parts.

``_scheduler`` is the public face; ``_compose`` checks its arguments, chooses
the backing (the one place that asks which) and builds each part once,
handing it what it needs. Shared records (``_state``): ``Settings`` (fixed),
``RunState`` (the lifecycle writes it) and ``JobTable`` (this process's jobs,
waiters, listeners, the checked transition). The parts, one module each:

- ``Dispatcher`` (``_dispatch``, ``_attempts``, ``_resume``): the workers.
- ``Ticker`` (``_timers``): the deadlines and the due sources the memory
  backing hands it (its ``DelayedJobs``, its schedules).
- ``Lifecycle`` (``_lifecycle``): start, stop, ``async with``; the live tasks.
- ``Canceller`` (``_cancel``), ``ExecutorSet`` (``_executors``).
- ``wait``/``result`` (``_results``) and ``flush``/``enqueue``/``fetch``:
  JobScheduler's calls over the backing; ``ScheduleCalls`` (``_schedules``),
  a stateless base, the schedule methods' checks over the backing's book.

Still layers on the scheduler's one ``self`` (``_state`` draws the stack):
``_submission`` (every check before any change; submit hooks) and
``_outcomes`` (how an attempt ended, retry or finish; the dependency cascade).

The *backing* (``_backing``: its roles) is where jobs are kept, claimed,
finished and fired: ``MemoryBacking`` (``_memory``, ``_memschedules``) on
heaps here; ``DurableBacking`` (``_durable``, ``_held``, ``_storedreads``,
``_storedschedules``, ``_linkhost``, ``_loadgrace``, ``_joined``,
``_completion``, ``_functions``) through the store link (``_link/``); those
load with the first durable store, never at ``import jobsched``.

A submitted job's walk: ``JobScheduler.submit`` checks it, then
``backing.add``. In memory: into the ``JobTable``, then blocked on unmet
upstreams or into the ready or delayed queue, waking an idle worker; the
Ticker promotes delayed ones. Durable: a row in the next group commit; the
claimer claims it and ``LinkHost.claimed`` queues it. A Dispatcher worker
takes it (``backing.take_next``), marks it RUNNING, steps the attempt (a
suspended one is watched by the Ticker's deadlines), and the outcome is
recorded (durable: the backing's fenced write first), waiters woken, history
trimmed, dependents released or cancelled (durable: the store cascades, the
link reports).

May import every package below it (``_jobs``, ``_ordering``, ``_time``,
``store``) and the top-level leaf modules; never ``_sync`` or ``_cli``.
"""
