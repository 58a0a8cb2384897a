"""A stored value shown without unpickling it stays cheap, whatever the payload.

``jobsched show`` and the dashboard's job page render a payload read with
stand-ins (jobsched.store._peek). The text was cut to MAX_TEXT only at the
end, so a payload of a few hundred bytes that nests shared references (20
lists of the same 20 lists, six deep) took minutes to render, on the
dashboard's event loop; and an int past 4,300 digits made ``repr`` raise.
"""

from __future__ import annotations

import pickle
from typing import Any

import pytest

import jobsched as js
from jobsched.store import _peek


def _fan(leaf: Any, width: int = 20, depth: int = 6) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value] * width  # one list, referenced width times: the pickle stays small
    return value


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    value = _peek._Render.value

    def counting(self: _peek._Render, v: Any, depth: int) -> str:
        calls[0] += 1
        return value(self, v, depth)

    monkeypatch.setattr(_peek._Render, "value", counting)
    return calls


@pytest.mark.parametrize("leaf", [[], {}, (), 1, "s", js.FunctionJob(print, (1,))])
def test_shared_references_fanning_out_cost_a_bounded_rendering(
    leaf: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """20**6 leaves behind a few hundred bytes: the rendering visits a few
    thousand values (the text's budget), not 64 million."""
    blob = b"P" + pickle.dumps(_fan(leaf))
    assert len(blob) < 2_000
    value, problem = _peek.read(blob)
    assert problem is None
    calls = _counted(monkeypatch)
    shown = _peek.text(value)
    assert len(shown) <= _peek.MAX_TEXT and shown.startswith("[[")
    assert calls[0] <= 4 * _peek.MAX_TEXT


def test_a_huge_int_is_shown_by_its_size() -> None:
    """repr() of an int past 4,300 digits raises ValueError: its size is shown instead."""
    value, problem = _peek.read(b"P" + pickle.dumps({"n": 10**100_000, "m": 12}))
    assert problem is None
    assert _peek.text(value) == "{'n': <int of 332193 bits>, 'm': 12}"


def test_a_value_the_rendering_cannot_show_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever goes wrong inside the rendering, the page gets a line, not a 500."""

    def broken(self: _peek._Render, value: Any, depth: int) -> str:
        raise RecursionError("deep")

    monkeypatch.setattr(_peek._Render, "value", broken)
    assert _peek.text([1]) == "(can't be shown: RecursionError)"


def test_plain_values_render_as_repr_does() -> None:
    value = [1, "a", (2,), {3: 4}, {5}, frozenset(), set(), b"x", None, 1.5, True]
    assert _peek.text(value) == repr(value)
    assert _peek.text(list(range(25))).endswith("19, … 5 more]")
