"""The ``jobsched`` logger, created on first use.

``import logging`` (with the traceback, string and threading modules it pulls
in) is a fifth of what ``import jobsched`` would cost; it is paid when the
first record is logged, which on asyncio is already done by the event loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import logging

NAME = "jobsched"
#: ``logging.INFO``, for level checks that should not import logging.
INFO = 20


class _Logger:
    """Stands for ``logging.getLogger("jobsched")``: every attribute is the real logger's."""

    __slots__ = ()

    def __getattr__(self, attr: str) -> Any:
        import logging

        return getattr(logging.getLogger(NAME), attr)


#: The logger the core logs to (a ``logging.Logger`` in every respect it uses).
logger: logging.Logger = _Logger()  # type: ignore[assignment]
