"""The store seam: what a durable store implements, and what it may use.

Public for store authors (docs/stores.md, "Writing a store"): :class:`JobStore`
and every type its methods take or return, the checks the operator reads share
(``check_*``), the member helpers (owner ids, which local owners died), the
token-bucket and fair-share rotation functions the claim applies, and the
payload header constants. A store package imports nothing else from jobsched.
``jobsched.store.testing`` is the conformance suite as a pytest plugin.

The codec (hashlib, hmac) and member (socket) helpers load on first use, so
that ``import jobsched`` does not pay for them.
"""

from typing import TYPE_CHECKING

from .._jobs._options import DEFAULT_QUEUE as DEFAULT_QUEUE
from .._jobs._options import check_queue as check_queue
from ._args import LARGEST as LARGEST
from ._args import args_match as args_match
from ._args import check_arg_filters as check_arg_filters
from ._args import check_attempts_args as check_attempts_args
from ._args import check_jobs_args as check_jobs_args
from ._args import check_limit as check_limit
from ._args import check_page_args as check_page_args
from ._args import check_prune_args as check_prune_args
from ._args import check_retry_ids as check_retry_ids
from ._args import check_workflows_args as check_workflows_args
from ._base import Completer as Completer
from ._base import JobStore as JobStore
from ._errors import REPORT_BUGS as REPORT_BUGS
from ._errors import JobDataError as JobDataError
from ._flowrows import GraphJob as GraphJob
from ._flowrows import Input as Input
from ._flowrows import NewWorkflow as NewWorkflow
from ._flowrows import ProgressRow as ProgressRow
from ._flowrows import WorkflowGraph as WorkflowGraph
from ._flowrows import WorkflowRow as WorkflowRow
from ._handback import HANDED_BACK_AT_STOP as HANDED_BACK_AT_STOP
from ._handback import attempt_of_key as attempt_of_key
from ._handback import hand_back_key as hand_back_key
from ._joined import Joined as Joined
from ._joined import Registered as Registered
from ._rows import EDGE_FAILED as EDGE_FAILED
from ._rows import EDGE_MET as EDGE_MET
from ._rows import EDGE_WAITING as EDGE_WAITING
from ._rows import KEY_WIDTH as KEY_WIDTH
from ._rows import MEMBER_EVERY as MEMBER_EVERY
from ._rows import MEMBERS_KEEP as MEMBERS_KEEP
from ._rows import ON_FAILURE_CANCEL as ON_FAILURE_CANCEL
from ._rows import ON_FAILURE_RUN as ON_FAILURE_RUN
from ._rows import Attempt as Attempt
from ._rows import Change as Change
from ._rows import Claimed as Claimed
from ._rows import Completion as Completion
from ._rows import DueSchedule as DueSchedule
from ._rows import JobPage as JobPage
from ._rows import Member as Member
from ._rows import NewJob as NewJob
from ._rows import Outcome as Outcome
from ._rows import Recorded as Recorded
from ._rows import StoredJob as StoredJob
from ._rows import StoredSchedule as StoredSchedule
from ._urls import mask_password as mask_password
from ._urls import passwords_in as passwords_in

if TYPE_CHECKING:
    from .._jobs._ids import own_number as own_number
    from .._ordering._ratelimit import RateLimit as RateLimit
    from .._ordering._ratelimit import has_token as has_token
    from .._ordering._ratelimit import refill as refill
    from .._ordering._ratelimit import token_due as token_due
    from .._ordering._ratelimit import whole_tokens as whole_tokens
    from .._ordering._rotation import take_turns as take_turns
    from ._codec import KEY_ID_SIZE as KEY_ID_SIZE
    from ._codec import KEY_ID_START as KEY_ID_START
    from ._codec import KEYED as KEYED
    from ._codec import OWN_ID_HEAD as OWN_ID_HEAD
    from ._codec import own_id_in as own_id_in
    from ._members import TAKEOVER_EVERY as TAKEOVER_EVERY
    from ._members import TakeoverLooks as TakeoverLooks
    from ._members import dead_local as dead_local
    from ._members import local_prefix as local_prefix
    from ._members import new_owner as new_owner

__all__ = [
    "DEFAULT_QUEUE",
    "EDGE_FAILED",
    "EDGE_MET",
    "EDGE_WAITING",
    "HANDED_BACK_AT_STOP",
    "KEYED",
    "KEY_ID_SIZE",
    "KEY_ID_START",
    "KEY_WIDTH",
    "LARGEST",
    "MEMBERS_KEEP",
    "MEMBER_EVERY",
    "ON_FAILURE_CANCEL",
    "ON_FAILURE_RUN",
    "OWN_ID_HEAD",
    "REPORT_BUGS",
    "TAKEOVER_EVERY",
    "Attempt",
    "Change",
    "Claimed",
    "Completer",
    "Completion",
    "DueSchedule",
    "GraphJob",
    "Input",
    "JobDataError",
    "JobPage",
    "JobStore",
    "Joined",
    "Member",
    "NewJob",
    "NewWorkflow",
    "Outcome",
    "ProgressRow",
    "RateLimit",
    "Recorded",
    "Registered",
    "StoredJob",
    "StoredSchedule",
    "TakeoverLooks",
    "WorkflowGraph",
    "WorkflowRow",
    "args_match",
    "attempt_of_key",
    "check_arg_filters",
    "check_attempts_args",
    "check_jobs_args",
    "check_limit",
    "check_page_args",
    "check_prune_args",
    "check_queue",
    "check_retry_ids",
    "check_workflows_args",
    "dead_local",
    "hand_back_key",
    "has_token",
    "local_prefix",
    "mask_password",
    "new_owner",
    "own_id_in",
    "own_number",
    "passwords_in",
    "refill",
    "take_turns",
    "token_due",
    "whole_tokens",
]

_LAZY = {
    "KEYED": "._codec",
    "KEY_ID_SIZE": "._codec",
    "KEY_ID_START": "._codec",
    "OWN_ID_HEAD": "._codec",
    "own_id_in": "._codec",
    "own_number": ".._jobs._ids",
    "TAKEOVER_EVERY": "._members",
    "TakeoverLooks": "._members",
    "dead_local": "._members",
    "local_prefix": "._members",
    "new_owner": "._members",
    "RateLimit": ".._ordering._ratelimit",
    "has_token": ".._ordering._ratelimit",
    "refill": ".._ordering._ratelimit",
    "token_due": ".._ordering._ratelimit",
    "whole_tokens": ".._ordering._ratelimit",
    "take_turns": ".._ordering._rotation",
}


def __getattr__(name: str) -> object:
    try:
        module = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    from importlib import import_module

    value = getattr(import_module(module, __name__), name)
    globals()[name] = value  # later lookups skip this hook
    return value
