"""The SQLite store's fair share: weighted round-robin across tenants, their
turns kept in ``fair_turns`` so every member of the file shares them (a
part of the claim's transaction, see _claim)."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import TYPE_CHECKING

from jobsched.store import take_turns

from ._schema import TENANT_INDEX

if TYPE_CHECKING:
    from ._picker import Picker

#: ``fair_turns``' name for the None tenant: a job's tenant is never "".
NO_TENANT = ""

_ORDER = "ORDER BY k0, k1, k2"


def round_robin(
    conn: sqlite3.Connection, picker: Picker, weights: Mapping[str | None, int], want: int
) -> list[int]:
    """Fair share: tenants take turns of up to their weight of jobs (see
    :func:`jobsched._ordering._rotation.take_turns`); ``fair_turns`` keeps each tenant's
    last turn and credit across claims and members."""
    conn.execute(TENANT_INDEX)
    state = {
        (None if name == NO_TENANT else name): (served, credit)
        for name, served, credit in conn.execute("SELECT tenant, served, credit FROM fair_turns")
    }
    got, changed = take_turns(
        state,
        _ready_tenants(conn),
        weights,
        want,
        lambda tenant, n: picker.take("AND tenant IS ?", (tenant,), n),
    )
    conn.executemany(
        "INSERT INTO fair_turns (tenant, served, credit) VALUES (?, ?, ?) "
        "ON CONFLICT (tenant) DO UPDATE SET served = excluded.served, credit = excluded.credit",
        [(NO_TENANT if t is None else t, *state[t]) for t in changed],
    )
    return got


def _ready_tenants(conn: sqlite3.Connection) -> dict[str | None, tuple[float, float, float]]:
    """Each tenant with ready jobs -> its best key: one index seek per tenant."""
    ready: dict[str | None, tuple[float, float, float]] = {}
    row = conn.execute(
        f"SELECT k0, k1, k2 FROM jobs WHERE queue = 0 AND tenant IS NULL {_ORDER} LIMIT 1"
    ).fetchone()
    if row is not None:
        ready[None] = (row[0], row[1], row[2])
    after = ""
    while True:
        row = conn.execute(
            "SELECT tenant, k0, k1, k2 FROM jobs WHERE queue = 0 AND tenant > ? "
            "ORDER BY tenant, k0, k1, k2 LIMIT 1",
            (after,),
        ).fetchone()
        if row is None:
            return ready
        after = row[0]
        ready[after] = (row[1], row[2], row[3])
