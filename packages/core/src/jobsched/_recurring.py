"""A stored-format name: a durable store's rows name ``jobsched._recurring.StoredSchedule``.

Rows pickle a stored schedule by reference, so this module name is part of the
stored format. It stays for the rows already written, and so that members
of an older version sharing a store can load what this one writes. The code
lives in :mod:`jobsched._time._recurring`, which sets ``StoredSchedule.__module__`` to here.
"""

from ._time._recurring import StoredSchedule as StoredSchedule
