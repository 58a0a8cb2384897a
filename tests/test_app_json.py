"""Tagged JSON (jobsched._jobs._json): what registered jobs' arguments and
results are stored as: plain JSON as is, the common Python types tagged so
they come back as such, and a clear TypeError for anything else."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from decimal import Decimal

import pytest

from jobsched._jobs._json import dumps, dumps_arguments, loads

VALUES = [
    None,
    True,
    0,
    -(2**70),
    1.5,
    "text ünïcode \x00 ok",
    [1, "a", None],
    {"a": 1, "b": [2, 3]},
    dt.datetime(2026, 1, 2, 3, 4, 5, 678, tzinfo=dt.timezone.utc),
    dt.datetime(2026, 1, 2, 3, 4, 5),
    dt.date(2026, 1, 2),
    dt.time(3, 4, 5, 6),
    dt.timedelta(days=2, seconds=3, microseconds=500),
    uuid.UUID("12345678-1234-5678-1234-567812345678"),
    Decimal("1.10"),
    b"\x00\xffbytes",
    (1, (2, "x")),
    {1, 2, 3},
    {"$dt": "not a date"},
    {"$obj": {"x": 1}},
    {"$": 1},
    {"$a": 1, "$b": 2},
    {"nested": [{"when": dt.date(2026, 5, 1)}, ({"$set": []},)]},
]


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_round_trip(value: object) -> None:
    """Each value comes back equal and of the same type (tags, escapes and all)."""
    back = loads(dumps(value, "v"))
    assert back == value
    assert type(back) is type(value)


def test_text_is_readable_json() -> None:
    """The stored text is plain JSON: tags are one-key objects SQL can read."""
    text = dumps({"to": "a@b.c", "at": dt.date(2026, 1, 2), "ids": (1, 2)}, "v")
    assert json.loads(text) == {
        "to": "a@b.c",
        "at": {"$date": "2026-01-02"},
        "ids": {"$tuple": [1, 2]},
    }


def test_a_dict_that_looks_like_a_tag_is_escaped() -> None:
    """A caller's one-key dict whose key starts with $ is kept as $obj, never read as a tag."""
    assert json.loads(dumps({"$dt": "x"}, "v")) == {"$obj": {"$dt": "x"}}
    assert loads(dumps({"$dt": "x"}, "v")) == {"$dt": "x"}


def test_frozenset_comes_back_a_set() -> None:
    """A frozenset is stored as a set (JSON keeps no difference)."""
    assert loads(dumps(frozenset({1}), "v")) == {1}


def test_unknown_type_names_what_and_where() -> None:
    """An object JSON cannot keep: TypeError naming the value's owner, path and type."""
    with pytest.raises(
        TypeError,
        match=r"the argument 'x' cannot be stored as JSON: at \['a'\]\[1\] is a builtins.object",
    ) as info:
        dumps({"a": [1, object()]}, "the argument 'x'")
    assert 'serializer="pickle"' in str(info.value)


def test_top_level_unknown_type() -> None:
    """At the top level the message says "it is a ..."."""
    with pytest.raises(
        TypeError, match=r"the result of f cannot be stored as JSON: it is a builtins.complex"
    ):
        dumps(1j, "the result of f")


def test_non_str_keys_refused() -> None:
    """Dict keys must be strings (JSON would turn 1 into "1" silently)."""
    with pytest.raises(TypeError, match=r"has a key 1 of type int; JSON keys are strings only"):
        dumps({1: "a"}, "v")


def test_nan_refused() -> None:
    """NaN and infinity have no JSON spelling (and PostgreSQL's jsonb refuses them)."""
    with pytest.raises(TypeError, match="NaN or infinity"):
        dumps([float("nan")], "v")


def test_subclasses_are_not_their_base() -> None:
    """An int or str subclass (an enum) is refused rather than silently coming back plain."""
    import enum

    class Color(enum.IntEnum):
        RED = 1

    with pytest.raises(TypeError, match="Color"):
        dumps(Color.RED, "v")


@pytest.mark.parametrize(
    ("value", "where"),
    [
        ("a\x00b", "the string holds NUL"),
        ({"a": [1, "x\x00"]}, "the string at ['a'][1] holds NUL"),
        ({"k\x00": 1}, "the string at ['k\\x00'] (the key) holds NUL"),
        (("t", {"s\x00"}), "the string at [1][0] holds NUL"),
    ],
)
def test_nul_in_arguments_is_refused_naming_where(value: object, where: str) -> None:
    """Arguments go to PostgreSQL's jsonb, which has no NUL: a ValueError on
    every store alike, naming the owner and the path."""
    with pytest.raises(ValueError, match="the argument 'x' cannot be stored") as info:
        dumps_arguments(value, "the argument 'x'")
    assert where in str(info.value)
    assert "as bytes" in str(info.value)  # the way out
    assert loads(dumps(value, "v")) == value  # a result may hold it: kept as bytes


@pytest.mark.parametrize("value", ["a\ud800", ["ok", {"k": "\udcff"}], {"\udc80": 1}])
def test_a_lone_surrogate_is_refused_in_arguments_and_results(value: object) -> None:
    """A lone surrogate has no UTF-8 encoding, so no store keeps it, as an
    argument or in a result."""
    for encode in (dumps, dumps_arguments):
        with pytest.raises(ValueError, match="lone surrogate.*errors='replace'"):
            encode(value, "v")


@pytest.mark.parametrize("value", ["a\\u0000b", "\\\\\\u0000", {"\\u0000": "\\x00"}])
def test_backslashes_that_spell_an_escape_are_kept(value: object) -> None:
    """A literal backslash followed by u0000 is text, not a NUL: kept."""
    assert loads(dumps_arguments(value, "v")) == value
