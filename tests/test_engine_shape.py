"""The engine's shape only improves: ratchets on figures measured from its source.

Issue 36 restructures the engine (a tower of eleven classes sharing one
``self``, with the memory and durable engines woven together by tests of the
store link) into parts. Each figure below is pinned at its value today and
must move only down; a step that lowers one lowers its pin in the same commit
(the failure says to what), so the gain cannot be lost by a later step.
``python tests/engine_shape.py`` prints every figure with what lies behind it
(each link decision by file and line, the deepest chain, the names per
module). The measures are defined in tests/engine_shape.py.

The issue's targets, for the engine once restructured, are noted beside the
pins; they are where the ratchets should end, not what this test demands.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import engine_shape
import pytest

SHAPE = engine_shape.measure()

#: figure -> (how to read it, pinned today at 647fa2c, the issue's target or None)
RATCHETS: dict[str, tuple[Callable[[engine_shape.Shape], int], int, int | None]] = {
    # Places that ask whether there is a store link (asserts left out). Target:
    # at most 3, all decided once (plan, section 2.5).
    "link decisions": (lambda s: len(s.decisions), 3, 3),
    # The same, as the issue counted it: `self._link is (not) None` spelled out.
    "the issue's grep": (lambda s: s.grep, 0, None),
    # Was JobScheduler -> Lifecycle -> ... -> SchedulerState (10). Target met: no
    # engine class inherits another beyond one level (JobScheduler's bases are
    # stateless: ScheduleCalls, ResultCalls, Seams).
    "engine inheritance depth": (lambda s: s.depth, 1, 1),
    # StoreLink -> Leasing -> Committing -> Refusals -> Retrying -> LinkBase.
    "link inheritance depth": (lambda s: s.link_depth, 0, 1),
    # _compose.py and _dispatch.py (_scheduler.py had 60). Target (plan, section
    # 2.2): at most 25.
    "most private names in an engine module": (lambda s: s.most_names()[0], 19, 25),
    # _link/_commit.py (25 once its prune moved to _pruning, issue 38).
    "most private names in a link module": (lambda s: s.most_names(link=True)[0], 25, None),
    # Private names touched in two or more engine modules (a part's own
    # reference to a record it is passed, `self._table`, counts once per name).
    "private names shared by engine modules": (lambda s: len(s.shared()), 23, None),
    "private names shared by link modules": (lambda s: len(s.shared(link=True)), 15, None),
    # None left in the engine (_linkhost was, until step 6); the link's
    # apart, so the engine and link streams each lower their own pins.
    "engine modules over 400 lines": (
        lambda s: sum(not m.startswith("_link/") for m in s.long_modules),
        0,
        0,
    ),
    "link modules over 400 lines": (
        lambda s: sum(m.startswith("_link/") for m in s.long_modules),
        0,
        0,
    ),
}


@pytest.mark.parametrize("figure", list(RATCHETS))
def test_ratchet(figure: str) -> None:
    """The figure has not risen; if it fell, the pin follows it down."""
    read, pinned, target = RATCHETS[figure]
    value = read(SHAPE)
    assert value <= pinned, (
        f"{figure} rose to {value} (pinned {pinned}): `python tests/engine_shape.py` shows where"
    )
    assert value >= pinned, (
        f"{figure} fell to {value}: lower its pin in tests/test_engine_shape.py "
        f"from {pinned} to {value}"
        + (f" (the issue's target: {target})" if target is not None else "")
    )


def test_the_engine_is_where_the_measures_look() -> None:
    """The measures see the engine (a moved package would make every figure 0)."""
    assert (engine_shape.ENGINE / "_scheduler.py").is_file()
    assert "_scheduler.py" in SHAPE.names
    assert any(name.startswith("_link/") for name in SHAPE.names)


def _engine(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, source in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source))
    return tmp_path


def test_link_decisions_seen_in_every_spelling(tmp_path: Path) -> None:
    """`is None`, `is not None`, truthiness, `not`, a local alias and an
    isinstance on a backing count; an assert and other attributes do not."""
    root = _engine(
        tmp_path,
        {
            "_a.py": """
            class A:
                def f(self):
                    if self._link is None:
                        pass
                    x = 1 if self._link is not None else 2
                    link = self._link
                    if link:
                        pass
                    while not link:
                        break
                    assert self._link is not None
                    if self._other is None:
                        pass
                    if isinstance(self._backing, DurableBacking):
                        pass
                    return x and s._link
            """,
        },
    )
    found = engine_shape.measure(root).decisions
    assert [(d.line, d.function) for d in sorted(found, key=lambda d: d.line)] == [
        (4, "f"),
        (6, "f"),
        (8, "f"),
        (10, "f"),
        (15, "f"),
        (17, "f"),
    ]
    # The grep is literal, as the was: it counts the assert too.
    assert engine_shape.measure(root).grep == 3


def test_depth_follows_engine_classes_only(tmp_path: Path) -> None:
    """The deepest chain counts engine classes, not Protocol or other outside
    bases, and the link's classes apart from the engine's."""
    root = _engine(
        tmp_path,
        {
            "_low.py": "class Low(Protocol): pass\nclass Mid(Low): pass\n",
            "_top.py": "class Top(mod.Mid, Generic[T]): pass\nclass Alone: pass\n",
            "_link/_x.py": "class L1: pass\nclass L2(L1): pass\n",
        },
    )
    shape = engine_shape.measure(root)
    assert (shape.depth, shape.chain) == (2, ["Top", "Mid", "Low"])
    assert (shape.link_depth, shape.link_chain) == (1, ["L2", "L1"])


def test_private_names_lines_and_sharing(tmp_path: Path) -> None:
    """Private names through self or s count once per module (dunders and
    other objects' attributes do not); shared means in two modules; a module
    past 400 lines is listed."""
    root = _engine(
        tmp_path,
        {
            "_a.py": "def f(self, s, o):\n    self._x = s._y + o._z + self.__dict__ + self._x\n",
            "_b.py": "def g(self):\n    return self._x\n" + "\n" * 400,
        },
    )
    shape = engine_shape.measure(root)
    assert shape.names == {"_a.py": {"_x", "_y"}, "_b.py": {"_x"}}
    assert shape.most_names() == (2, "_a.py")
    assert shape.shared() == ["_x"]
    assert list(shape.long_modules) == ["_b.py"]
