"""A group commit's batch: the writes taken for one commit, and how far they got."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ...store._errors import JobDataError
from ...store._rows import Change, NewJob, Outcome
from ._flows import FlowWrite


@dataclass
class Batch:
    """Writes taken off the lists for one group commit, and how far they got.

    A batch that a transient failure interrupted stays with the committer (in
    order, before anything appended since) until every step is written.
    """

    adds: list[NewJob]
    outcomes: list[Outcome]
    cancels: list[int]
    schedules: list[tuple[str, bytes, float]]
    unscheduled: list[str]
    #: The writes appended when it was taken: committed once it is written.
    done: int
    now: float
    #: Steps written so far (add, start, record, cancel, put, remove: the
    #: non-empty ones).
    step: int = 0
    changes: list[Change] = field(default_factory=list)
    #: The current step's items still to write, in parts, once the store
    #: refused the step whole for one job's data (None: not split).
    parts: list[list[Any]] | None = None
    #: New jobs the store refused, each said in a line (for flush()).
    refused: list[str] = field(default_factory=list)
    #: Starts of jobs claimed ahead: written before the outcomes.
    starts: list[tuple[int, int, float]] = field(default_factory=list)
    #: Workflows, each after the first ``n`` of ``adds`` (``(n, write)``).
    flows: list[tuple[int, FlowWrite]] = field(default_factory=list)

    def add_steps(self) -> list[list[NewJob] | FlowWrite]:
        """The adds in order: runs of jobs, each workflow in its place between them."""
        if not self.flows:
            return [self.adds] if self.adds else []
        steps: list[list[NewJob] | FlowWrite] = []
        done = 0
        for at, write in self.flows:
            if at > done:
                steps.append(self.adds[done:at])
            steps.append(write)
            done = at
        if done < len(self.adds):
            steps.append(self.adds[done:])
        return steps


@dataclass
class Split:
    """How a step is written in parts: its items, a write of some of them,
    and what one item the store refuses alone becomes (the changes it makes)."""

    items: list[Any]
    write: Callable[[list[Any]], Awaitable[list[Change]]]
    refuse: Callable[[Any, JobDataError], Awaitable[list[Change]]]
