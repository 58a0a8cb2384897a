"""A job's stored form: what defines it goes into the payload, its run state does not."""

from __future__ import annotations

import pickle
from typing import Any

from sample_jobs import Ok

import jobsched as js
from jobsched._jobs._form import stored_form
from jobsched.store._codec import Codec

FAST = js.RetryPolicy(max_retries=7, base_delay=0.5)


def add(a: int, b: int = 0) -> int:
    return a + b


class Slotted(js.AsyncJob):
    """A job whose subclass keeps its own fields in slots, one of them left unset."""

    __slots__ = ("__hidden", "set_later", "size")

    def __init__(self, size: int) -> None:
        super().__init__("slotted")
        self.size = size
        self.__hidden = size * 2

    def hidden(self) -> int:
        return self.__hidden

    async def run(self) -> int:
        return self.size


class Custom(js.AsyncJob):
    """A job that pickles itself its own way: stored whole, as it pickles."""

    def __init__(self, value: int) -> None:
        super().__init__("custom")
        self.value = value

    def __getstate__(self) -> Any:
        return (None, {"name": self.name, "value": self.value * 10})

    async def run(self) -> int:
        return self.value


def round_trip(job: js.Job) -> Any:
    codec = Codec(None)
    return codec.loads(codec.dumps(stored_form(job), "job"))


def test_a_plain_job_is_stored_in_a_third_of_its_whole_pickle() -> None:
    job = Ok(None, name="noop")
    job.job_id  # numbered, as at submit  # noqa: B018
    slim = Codec(None).dumps(stored_form(job), "job")
    whole = Codec(None).dumps(job, "job")  # every run-state slot, and its name
    assert len(slim) < 130 and len(slim) * 3 < len(whole)


def test_options_and_fields_come_back_and_run_state_starts_fresh() -> None:
    job = Ok(
        41,
        name="answer",
        priority=7,
        timeout=None,
        retry=FAST,
        deadline=12.5,
        tenant="acme",
        rate_key="api",
    )
    job.status = js.JobStatus.FAILED  # as if it had run: none of it is stored
    job.attempts, job.last_error, job.result = 3, "E: boom", "stale"
    back = round_trip(job)
    assert type(back) is Ok and (back.value, back.seconds) == (41, 0.0)
    assert (back.name, back.priority, back.timeout, back.retry) == ("answer", 7, None, FAST)
    assert (back.deadline, back.tenant, back.rate_key) == (12.5, "acme", "api")
    assert (back.status, back.attempts, back.last_error, back.result) == (
        js.JobStatus.PENDING,
        0,
        None,
        None,
    )
    assert (back.started_at, back.finished_at, back.seq) == (None, None, 0)


def test_defaults_come_back_as_the_same_objects() -> None:
    back = round_trip(Ok())
    assert back.priority is js.JobPriority.MEDIUM
    assert back.retry == js.RetryPolicy() and back.timeout == 30.0
    high = round_trip(Ok(priority=js.JobPriority.HIGH))
    assert high.priority is js.JobPriority.HIGH


def test_the_loader_sets_the_id_from_the_row() -> None:
    job = Ok()
    job.job_id  # noqa: B018
    assert round_trip(job)._jobsched_id == 0  # the store's row carries it, not the payload


def test_a_function_job_keeps_its_function_and_arguments() -> None:
    back = round_trip(js.FunctionJob(add, (1,), {"b": 2}, name="adder"))
    assert back.run_sync() == 3 and back.name == "adder" and back.executor == "thread"


def test_subclass_slots_come_back_mangled_names_too_and_unset_ones_stay_unset() -> None:
    back = round_trip(Slotted(4))
    assert back.size == 4 and back.hidden() == 8
    assert not hasattr(back, "set_later")


def test_a_class_that_pickles_its_own_way_is_stored_as_it_pickles() -> None:
    job = Custom(3)
    assert stored_form(job) is job
    back = round_trip(job)
    assert type(back) is Custom and back.value == 30  # its __getstate__ was used
    assert pickle.loads(pickle.dumps(job)).value == 30
