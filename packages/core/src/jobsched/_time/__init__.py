"""Time: cron triggers, recurring schedules and what an operator sees of one.

``_cron`` computes a cron expression's next fire time in a time zone,
``_recurring`` keeps the schedules a ticker fires (in memory or as the
stored form a durable store keeps), ``_misfire`` decides what becomes of
fires missed while no scheduler ran (for both), and ``_scheduleinfo`` builds
:class:`~jobsched.ScheduleInfo` from either.

May import :mod:`jobsched._jobs`, :mod:`jobsched.store` (the codec that reads
a stored schedule, lazily) and the top-level leaf modules; never the engine.
"""
