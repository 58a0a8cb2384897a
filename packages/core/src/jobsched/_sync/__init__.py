"""The synchronous facade: :class:`~jobsched.BackgroundScheduler`.

A :class:`~jobsched.JobScheduler` on an event-loop thread of its own
(``_loopthread``), its blocking methods (``_background``), what it says
when called where it cannot work (``_misuse``) and the interpreter-exit hook
that stops the ones still running (``_exithook``).

May import the engine and everything below it; nothing imports this package
but :mod:`jobsched` itself, on first use of ``BackgroundScheduler``.
"""
