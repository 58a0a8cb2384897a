"""The ``jobsched`` console script: run a worker on a store, look at its jobs, act on them.

Built on click; ``import jobsched`` never imports this package (nor click).
"""

from ._main import main as main

__all__ = ["main"]
