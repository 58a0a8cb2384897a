"""The engine: :class:`~jobsched.JobScheduler` and the layers it stacks.

Each layer is a class that adds one concern to the one below it, from the
shared state up to the public scheduler (``_state`` says how they stack):
``_state``, ``_outcomes``, ``_submission``, ``_schedules``, ``_timers``,
``_stored`` (a durable store's claimed jobs and reads), ``_results``,
``_lifecycle`` and ``_scheduler``. Parts beside the layers, which the
scheduler builds: the workers, ``_dispatch`` (with ``_attempts`` and
``_resume``), and cancelling, ``_cancel``. ``_link/`` is the link between a scheduler
and a durable store (group commit, claims, leases and riding out outages),
and ``_linkhost`` what the link calls back on the scheduler; both load with
the first durable store, never at ``import jobsched``.

May import every package below it (``_jobs``, ``_ordering``, ``_time``,
``store``) and the top-level leaf modules; never ``_sync`` or ``_cli``.
"""
