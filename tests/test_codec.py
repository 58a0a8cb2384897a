"""Stored payloads: pickled by reference, signed, never unpickled unverified."""

from __future__ import annotations

import pickle

import pytest
from sample_jobs import Ok

import jobsched as js
from jobsched._codec import BadSignature, Codec, secret_from


def add(a: int, b: int) -> int:
    return a + b


def test_a_signed_job_round_trips() -> None:
    codec = Codec(b"k" * 32)
    job = js.FunctionJob(add, (1, 2), name="adder")
    back = codec.loads(codec.dumps(job, "job"))
    assert isinstance(back, js.FunctionJob) and back.name == "adder"
    assert back.run_sync() == 3 and back.job_id == job.job_id


def test_another_secret_is_refused_without_unpickling(monkeypatch: pytest.MonkeyPatch) -> None:
    blob = Codec(b"right").dumps(Ok(1), "job")
    loaded: list[bytes] = []
    monkeypatch.setattr(pickle, "loads", lambda data: loaded.append(data))
    with pytest.raises(BadSignature, match="another secret"):
        Codec(b"wrong").loads(blob)
    tampered = blob[:-1] + bytes([blob[-1] ^ 1])
    with pytest.raises(BadSignature, match="altered"):
        Codec(b"right").loads(tampered)
    assert loaded == []  # nothing reached the unpickler


def test_signed_and_unsigned_do_not_mix() -> None:
    signed, plain = Codec(b"s"), Codec(None)
    with pytest.raises(BadSignature, match="without a secret"):
        plain.loads(signed.dumps(1, "result"))
    with pytest.raises(BadSignature, match="unsigned"):
        signed.loads(plain.dumps(1, "result"))
    with pytest.raises(BadSignature, match="not a jobsched payload"):
        signed.loads(b"garbage")
    assert plain.loads(plain.dumps({"a": 1}, "result")) == {"a": 1}


def test_what_does_not_pickle_by_reference_is_named() -> None:
    def local(x: int) -> int:
        return x

    codec = Codec(None)
    for func in [local, lambda x: x]:
        with pytest.raises(TypeError, match="'job-.*' cannot be stored.*module level"):
            codec.dumps(js.FunctionJob(func, (1,)), repr(js.FunctionJob(add, (1, 2)).job_id))


def test_the_secret_comes_from_the_argument_or_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("JOBSCHED_SECRET", raising=False)
    assert secret_from(None) is None
    assert secret_from("abc") == b"abc"
    monkeypatch.setenv("JOBSCHED_SECRET", "from-env")
    assert secret_from(None) == b"from-env"
    assert secret_from(b"arg") == b"arg"
    with pytest.raises(ValueError, match="empty"):
        secret_from("")
    with pytest.raises(TypeError, match="str or bytes"):
        secret_from(42)  # type: ignore[arg-type]


def test_the_name_in_the_error_is_made_only_on_an_error() -> None:
    """A job's description costs more than its pickle: dumps takes a maker for it."""
    made: list[str] = []

    def what() -> str:
        made.append("made")
        return "the job 'x'"

    codec = Codec(None)
    codec.dumps(js.FunctionJob(add, (1, 2)), what)
    assert made == []
    with pytest.raises(TypeError, match="the job 'x' cannot be stored"):
        codec.dumps(lambda: 1, what)
    assert made == ["made"]
