"""Ordering: which runnable job goes next, and whether it may start now.

The ready queue and the strategies that key it (``_queue``, ``_strategies``),
fair share across tenants (``_fairshare``) and its durable rotation
(``_rotation``), token-bucket rate limits (``_ratelimit``) and the take-next
step that applies executor and rate limits (``_admission``).

May import :mod:`jobsched._jobs` and the top-level leaf modules. The
durable stores use ``_ratelimit`` and ``_rotation`` through
:mod:`jobsched.store`.
"""
