"""Reading claimed dependents' inputs: their upstreams' results, decoded here.

One store call (``JobStore.inputs``) for every dependent of a claim batch,
through the link's outage handling: while the store is away the call is
retried and the dependents wait, held (their leases renewed by the
heartbeat). Each dependent then gets its upstreams' ends, or why it cannot
receive them (an upstream not in the store, a result that does not verify
or decode, more than ``max_bytes`` of results), which fails that dependent
alone (plan sections 5.3 and 7.3).

Loaded with the first claimed job that holds result markers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..._enums import JobStatus
from ..._jobs._ids import id_number
from ..._workflows._bind import Upstream

if TYPE_CHECKING:
    from ...store._base import JobStore
    from ...store._codec import Codec
    from ...store._flowrows import Input
    from ._retry import StoreCalls

_COMPLETED = JobStatus.COMPLETED

#: What each dependent receives: its upstreams' ends by number, or why not.
Received = dict[int, Upstream] | str


async def read_inputs(
    store: JobStore,
    codec: Codec,
    calls: StoreCalls,
    wanted: Mapping[int, Sequence[str]],
    max_bytes: int,
) -> dict[int, Received]:
    """The inputs of each dependent in ``wanted`` (its number -> its upstreams' ids).

    :raises LinkClosed: the link closed while the store was away.
    """
    # Each upstream's number once (a fan-in's 10,000 ids, asked and then received).
    numbers = {dependent: list(map(id_number, ups)) for dependent, ups in wanted.items()}
    ids = {n for each in numbers.values() for n in each}
    got = await calls.call("reading jobs' inputs", lambda: store.inputs(ids, max_bytes))
    if isinstance(got, int) and len(wanted) > 1:
        # Together over the bound: which dependent is over it alone is
        # asked of each (rare: a member claims a few fan-ins at once).
        out: dict[int, Received] = {}
        for dependent, upstreams in wanted.items():
            one = await read_inputs(store, codec, calls, {dependent: upstreams}, max_bytes)
            out[dependent] = one[dependent]
        return out
    return {
        dependent: _receive(got, upstreams, numbers[dependent], codec, max_bytes)
        for dependent, upstreams in wanted.items()
    }


def _receive(
    got: dict[int, Input] | int,
    upstreams: Sequence[str],
    numbers: Sequence[int],
    codec: Codec,
    max_bytes: int,
) -> Received:
    if isinstance(got, int):
        many = (
            f"its {len(upstreams):,} upstreams' results are"
            if len(upstreams) > 1
            else (f"the result of {upstreams[0]} is")
        )
        return (
            f"{many} {_size(got)}, more than the {_size(max_bytes)} a job may receive: "
            "return smaller results, or pass ids and fetch"
        )
    ends: dict[int, Upstream] = {}
    loads = codec.loads
    decode_json: Callable[[bytes], Any] | None = None
    for upstream, number in zip(upstreams, numbers, strict=True):
        row = got.get(number)
        if row is None:
            return (
                f"cannot receive the result of {upstream}: the store does not hold it "
                "(pruned, or it never existed)"
            )
        if row.status is not _COMPLETED:
            if not row.status.is_terminal:
                return (
                    f"cannot receive the result of {upstream}: it has not finished "
                    f"({row.status.name})"
                )
            ends[number] = Upstream(row.status, None, row.error)
            continue
        result = row.result
        try:
            if result is None:
                value = None
            elif result[:1] == b"J":
                if decode_json is None:  # imported once, not per result
                    decode_json = _json_decoder()
                value = decode_json(result)
            else:
                value = loads(result)  # verifies the signature before it unpickles
        except Exception as exc:  # one upstream's bytes must cost one job only
            return f"cannot receive the result of {upstream}: {_why(exc)}"
        ends[number] = Upstream(row.status, value, row.error)
    return ends


def _json_decoder() -> Callable[[bytes], Any]:
    from ..._jobs._registered import decode_result

    return decode_result


def _why(exc: Exception) -> str:
    from ...store._codec import BadSignature, Unloadable

    if isinstance(exc, (BadSignature, Unloadable)):
        return f"its stored result cannot be loaded: {exc}"
    return f"its stored result cannot be decoded ({type(exc).__name__}: {exc})"


def _size(n: int) -> str:
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}".replace(".0 ", " ")
    return f"{n} bytes"
