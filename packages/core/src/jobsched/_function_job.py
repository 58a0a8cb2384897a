"""A stored-format name: a durable store's rows name ``jobsched._function_job.FunctionJob``.

Rows pickle a function job's class by reference, so this module name is part of the
stored format. It stays for the rows already written, and so that members
of an older version sharing a store can load what this one writes. The code
lives in :mod:`jobsched._jobs._function`, which sets ``FunctionJob.__module__`` to here.
"""

from ._jobs._function import FunctionJob as FunctionJob
