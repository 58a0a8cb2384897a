"""A stored-format name: a durable store's rows name ``jobsched._jobform.restore``.

Rows pickle every job's stored form by reference, so this module name is part of the
stored format. It stays for the rows already written, and so that members
of an older version sharing a store can load what this one writes. The code
lives in :mod:`jobsched._jobs._form`, which sets ``restore.__module__`` to here.
"""

from ._jobs._form import restore as restore
