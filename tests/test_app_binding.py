"""Registered calls bind and run without inspect's binding when every
parameter is positional-or-keyword (a few µs a job each way, see W21 in
docs/performance.md): the same arguments, text and errors as bind()."""

from __future__ import annotations

import datetime as dt
import inspect
from typing import Any

import pytest
from app_jobs import add, record, send_email

from jobsched._jobs._registered import RegisteredJob


def test_keywords_in_any_order_store_the_signatures_order() -> None:
    """Positional, keyword or mixed: one text, in the signature's order, as bind() gives."""
    texts = {
        add.job(1, 5).args_json,  # type: ignore[attr-defined]
        add.job(b=5, a=1).args_json,  # type: ignore[attr-defined]
        add.job(1, b=5).args_json,  # type: ignore[attr-defined]
    }
    assert texts == {'{"a":1,"b":5}'}
    assert add._bind((1,), {"b": 5}) == inspect.signature(add.fn).bind(1, b=5).arguments


@pytest.mark.parametrize(
    ("args", "kwargs", "error"),
    [
        ((1,), {"a": 2}, "multiple values for argument 'a'"),
        ((1,), {"c": 2}, "unexpected keyword argument 'c'"),
        ((), {"a": 1, "c": 2}, "unexpected keyword argument 'c'"),
        ((1, 2, 3), {}, "too many positional arguments"),
        ((), {}, "missing a required argument: 'a'"),
    ],
)
def test_arguments_that_do_not_bind_keep_binds_errors(
    args: tuple[Any, ...], kwargs: dict[str, Any], error: str
) -> None:
    """As many arguments as parameters but a name twice or unknown: bind()'s error, named."""
    with pytest.raises(TypeError, match=rf"app_jobs.add: the arguments don't match .*{error}"):
        add.job(*args, **kwargs)


def test_only_plain_signatures_take_the_short_way() -> None:
    """*args and **kw (or keyword-only, positional-only) bind through inspect."""
    assert add._names == ("a", "b")
    assert record._names is None
    job = record.job(1, key=2)
    assert isinstance(job, RegisteredJob)
    assert job.run_sync() == [(1,), {"key": 2}]  # the tuple of *items, kept by its tag


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a":1}', 3),  # a default left out of the row
        ('{"b":4,"a":1}', 5),  # keys in any order
        ('{"a":1,"b":4,"gone":9}', 5),  # a parameter since removed: dropped, as bind() did
    ],
)
async def test_a_row_runs_with_its_arguments_by_name(text: str, expected: int) -> None:
    """A claimed row's arguments reach the function by name, whichever way they bind."""
    assert await RegisteredJob(add, text).run() == expected


@pytest.mark.anyio
async def test_tagged_arguments_come_back_as_their_types() -> None:
    """The datetime (and tuple) of a call reach the function as such after the JSON."""
    at = dt.datetime(2026, 1, 2, 9, 30, tzinfo=dt.timezone.utc)
    job = send_email.job(to="ann@example.com", when=at, tags=("a", "b"))
    assert job.args_json == (  # type: ignore[attr-defined]
        '{"to":"ann@example.com","when":{"$dt":"2026-01-02T09:30:00+00:00"},'
        '"tags":{"$tuple":["a","b"]}}'
    )
    assert await RegisteredJob(send_email, job.args_json).run() == {  # type: ignore[attr-defined]
        "to": "ann@example.com",
        "when": at,
        "tags": ("a", "b"),
    }
