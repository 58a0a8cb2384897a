"""Stored payloads: pickled by reference, signed, never unpickled unverified."""

from __future__ import annotations

import hashlib
import hmac
import pickle
import sys
import threading
from pathlib import Path

import pytest
from sample_jobs import Ok

import jobsched as js
from jobsched._jobs._form import stored_form
from jobsched.store._codec import (
    KEY_ID_SIZE,
    BadSignature,
    Codec,
    UnknownKey,
    Unloadable,
    key_id,
    secret_from,
    secrets_from,
)


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
    with pytest.raises(UnknownKey, match="key id .* which this member does not hold"):
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


class HoldsLock(js.AsyncJob):
    """A job class whose own field does not pickle."""

    def __init__(self) -> None:
        super().__init__("holds-lock")
        self.lock = threading.Lock()

    async def run(self) -> None:
        pass


def test_an_argument_that_does_not_pickle_is_named_not_the_function() -> None:
    """Issue 38: a lock passed as an argument got "define the job class at
    module level"; the error names the argument (however deep) and its type."""
    codec = Codec(None)
    with pytest.raises(TypeError) as info:
        codec.dumps(js.FunctionJob(add, (threading.Lock(), 2)), "job 'add'")
    said = str(info.value)
    assert said.startswith("job 'add' cannot be stored: its argument args[0] (_thread.lock)")
    assert "module level" not in said
    job = js.FunctionJob(add, (1,), kwargs={"b": {"opts": [3, threading.Lock()]}})
    with pytest.raises(TypeError, match=r"its argument kwargs\['b'\]\['opts'\]\[1\] \(_thread"):
        codec.dumps(job, "job 'add'")
    with pytest.raises(TypeError, match=r"its field lock \(_thread.lock\)"):
        codec.dumps(stored_form(HoldsLock()), "job 'holds-lock'")


def test_a_local_function_among_the_arguments_keeps_the_module_level_advice() -> None:
    """A function that is an argument fails by reference: moving it is the fix."""

    def local() -> None:
        pass

    with pytest.raises(TypeError, match="it does not pickle by reference.*module level"):
        Codec(None).dumps(js.FunctionJob(add, (local, 1)), "job 'add'")


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


def legacy_dumps(obj: object, secret: bytes) -> bytes:
    """A payload as jobsched wrote it before key ids: b"S" + MAC + pickle."""
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return b"S" + hmac.new(secret, data, hashlib.sha256).digest() + data


def test_a_payload_names_the_key_that_signed_it_never_the_key() -> None:
    """The header is b"K" + the signing key's 8-byte id; the id is a one-way hash."""
    blob = Codec([b"new", b"old"]).dumps(1, "result")
    assert blob[:1] == b"K" and blob[1 : 1 + KEY_ID_SIZE] == key_id(b"new")
    assert len(key_id(b"new")) == 8 and key_id(b"new") != key_id(b"old")
    assert b"new" not in key_id(b"new") and key_id(b"new") != hashlib.sha256(b"new").digest()[:8]
    assert key_id(b"new") == key_id(b"new")  # stable: every member derives the same id


def test_with_a_list_the_first_key_signs_and_every_one_verifies() -> None:
    old, rotating, new = Codec(b"A"), Codec([b"B", b"A"]), Codec(b"B")
    from_old = old.dumps("a", "result")
    from_rotating = rotating.dumps("b", "result")
    assert rotating.loads(from_old) == "a"  # the fallback verifies
    assert new.loads(from_rotating) == "b"  # signed with B, the first
    with pytest.raises(UnknownKey) as caught:
        old.loads(from_rotating)
    assert caught.value.key_id == key_id(b"B")
    assert rotating.key_ids == (key_id(b"B"), key_id(b"A"))


def test_a_payload_altered_under_a_key_held_is_tampering() -> None:
    codec = Codec([b"B", b"A"])
    blob = codec.dumps({"x": 1}, "result")
    tampered = blob[:-1] + bytes([blob[-1] ^ 1])
    with pytest.raises(BadSignature, match="does not verify under key id .*altered") as caught:
        codec.loads(tampered)
    assert not isinstance(caught.value, UnknownKey)


def test_the_legacy_format_is_verified_against_every_key_held() -> None:
    """Rows written before key ids (b"S" + MAC) still load, under any key held."""
    blob = legacy_dumps({"old": True}, b"A")
    assert Codec(b"A").loads(blob) == {"old": True}
    assert Codec([b"B", b"A"]).loads(blob) == {"old": True}
    with pytest.raises(BadSignature, match="another secret, or altered"):
        Codec(b"B").loads(blob)
    with pytest.raises(BadSignature, match="without a secret"):
        Codec(None).loads(blob)


def test_a_verified_payload_that_does_not_load_names_what_is_missing(tmp_path: Path) -> None:
    """A module gone or a class renamed: Unloadable, naming the module and attribute."""
    (tmp_path / "codec_gone_mod.py").write_text("class Report:\n    pass\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import codec_gone_mod  # type: ignore[import-not-found]

        codec = Codec(b"k")
        blob = codec.dumps(codec_gone_mod.Report(), "job")
        del codec_gone_mod.Report
        with pytest.raises(Unloadable, match="module 'codec_gone_mod' has no attribute 'Report'"):
            codec.loads(blob)
        del sys.modules["codec_gone_mod"]
        (tmp_path / "codec_gone_mod.py").unlink()
        # The attribute too, which the first load could not even ask for.
        with pytest.raises(
            Unloadable,
            match=r"module 'codec_gone_mod' cannot be imported here \(ModuleNotFoundError: .*\), "
            "so its attribute 'Report' cannot be loaded",
        ):
            codec.loads(blob)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("codec_gone_mod", None)


def test_several_keys_come_from_a_list_or_commas_in_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("JOBSCHED_SECRET", "new,old")
    assert secrets_from(None) == (b"new", b"old")
    assert secret_from(None) == b"new"
    assert secrets_from(["a", b"b", "a"]) == (b"a", b"b")  # a repeat is held once
    assert secrets_from("one,two") == (b"one,two",)  # an argument is one key: commas are its own
    monkeypatch.setenv("JOBSCHED_SECRET", "new, old")
    with pytest.raises(ValueError, match="spaces around it.*commas alone"):
        secrets_from(None)
    monkeypatch.setenv("JOBSCHED_SECRET", "new,,old")
    with pytest.raises(ValueError, match="JOBSCHED_SECRET holds an empty key"):
        secrets_from(None)
    monkeypatch.delenv("JOBSCHED_SECRET")
    assert secrets_from(None) == ()
    with pytest.raises(ValueError, match="at least one key"):
        secrets_from([])
    with pytest.raises(ValueError, match="empty"):
        secrets_from(["a", ""])
    with pytest.raises(TypeError, match="str or bytes"):
        secrets_from(["a", 3])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="or a list of them"):
        secrets_from({"a"})  # type: ignore[arg-type]


def test_own_id_is_read_from_a_payload_without_unpickling_it() -> None:
    """own_id_in finds the id given at submit in a signed, a legacy or an
    unsigned payload, without the key and without loading anything; it says
    None for a numbered job, a text that is not the row's, or no pickle."""
    from jobsched._jobs._ids import own_number
    from jobsched.store._codec import OWN_ID_SCAN, own_id_in

    job = js.FunctionJob(print, ("receipt-43",), name="receipt")
    job._set_own_id("receipt-42")
    number = own_number("receipt-42")
    data = pickle.dumps(job, protocol=pickle.HIGHEST_PROTOCOL)
    keyed = Codec(b"k" * 32).dumps(job, "job")
    for blob in (keyed, b"S" + b"m" * 32 + data, b"P" + data):
        assert own_id_in(blob, number) == "receipt-42"
    assert own_id_in(keyed, own_number("receipt-44")) is None  # not this row's text
    # An argument that hashes to the row is that id (a 63-bit hash collision aside).
    assert own_id_in(keyed, own_number("receipt-43")) == "receipt-43"
    assert own_id_in(keyed, 7) is None  # a numbered job has none
    assert own_id_in(b"X" + data, number) is None  # not a jobsched payload
    assert own_id_in(b"P" + b"\xff" * 64, number) is None  # not a pickle
    # Past the scan's bound: not found, not slow.
    late = b"P" + pickle.dumps(("x" * OWN_ID_SCAN, "receipt-42"))
    assert own_id_in(late, number) is None


@pytest.mark.parametrize("secret", [b"k" * 32, None], ids=["signed", "unsigned"])
@pytest.mark.parametrize(
    "big",
    [b"x" * (3 << 20), "y" * (3 << 20), list(range(1 << 16))],
    ids=["bytes", "str", "list"],
)
def test_a_big_result_is_pickled_in_place_in_the_same_format(
    secret: bytes | None, big: object
) -> None:
    """A big object is pickled straight into the payload and signed where it
    lies: the same bytes as the small path makes, and they load back."""
    codec = Codec(secret)
    blob = codec.dumps(big, "result")
    data = pickle.dumps(big, protocol=pickle.HIGHEST_PROTOCOL)
    if secret is None:
        assert blob == b"P" + data
    else:
        mac = hmac.new(secret, data, hashlib.sha256).digest()
        assert blob == b"K" + key_id(secret) + mac + data
    assert codec.loads(blob) == big
    assert codec.verify(blob) == data


def test_a_big_result_costs_one_copy_to_dump_and_none_to_verify() -> None:
    """Dumping a 20 MB result allocates about one copy of it (the payload),
    not three (pickle, then header + MAC + pickle); loading allocates the
    result alone, not a slice of the payload first."""
    import tracemalloc

    size = 20 << 20
    codec = Codec(b"k" * 32)
    big = b"x" * size
    tracemalloc.start()
    try:
        blob = codec.dumps(big, "result")
        _, dumped = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        back = codec.loads(blob)
        _, loaded = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert back == big
    assert dumped < 1.5 * size, dumped / size  # was 2x: the pickle and the payload
    assert loaded - base < 1.5 * size, (loaded - base) / size  # was 2x: a slice, the result


def test_a_tampered_big_payload_is_refused() -> None:
    """The in-place signature covers every byte of a big payload."""
    codec = Codec(b"k" * 32)
    blob = bytearray(codec.dumps(b"x" * (2 << 20), "result"))
    blob[-10] ^= 1
    with pytest.raises(BadSignature, match="altered"):
        codec.loads(bytes(blob))


class PicklesWhole(js.AsyncJob):
    """A job class that pickles itself its own way: stored whole, not as its form."""

    def __reduce_ex__(self, protocol: object) -> object:
        return object.__reduce_ex__(self, 2)  # type: ignore[arg-type]

    async def run(self) -> None:
        pass


def test_a_jobs_options_are_read_without_unpickling_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Priority, timeout and retry come out of the pickle as text, nothing
    imported or run: the stored form's defaults, set values, a job pickled
    whole; none for a registered job's JSON or an unreadable payload."""
    from jobsched.store._peek import options

    codec = Codec(b"k")
    loaded: list[bytes] = []
    monkeypatch.setattr(pickle, "loads", lambda data: loaded.append(data))
    plain = codec.dumps(stored_form(js.FunctionJob(add, (1, 2))), "job")
    assert dict(options(plain) or {}) == {
        "priority": "MEDIUM (1)",
        "timeout": "30 s",
        "retry": "RetryPolicy(max_retries=3, base_delay=1.0, max_delay=60.0, jitter=True) "
        "(the default)",
    }
    custom = js.FunctionJob(
        add, (1, 2), priority=js.JobPriority.CRITICAL, timeout=None,
        retry=js.RetryPolicy(max_retries=0, jitter=False),
    )  # fmt: skip
    assert dict(options(codec.dumps(stored_form(custom), "job")) or {}) == {
        "priority": "CRITICAL (3)",
        "timeout": "none",
        "retry": "RetryPolicy(max_retries=0, base_delay=1.0, max_delay=60.0, jitter=False)",
    }
    whole = PicklesWhole("whole", priority=7, timeout=1.5)
    assert dict(options(codec.dumps(stored_form(whole), "job")) or {})["timeout"] == "1.5 s"
    assert dict(options(codec.dumps(stored_form(whole), "job")) or {})["priority"] == "7"
    assert options(b"J") is None and options(b"garbage") is None and options(None) is None
    assert loaded == []
