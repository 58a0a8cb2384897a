"""Cron triggers: the next fire time of a cron expression in a time zone.

Parsing and field matching are croniter's, and croniter only ever sees naive
wall-clock times, where no daylight-saving change exists. Mapping a wall time
onto a real instant is done here, the way Vixie cron does it:

* a *fixed-time* job (neither the minute nor the hour field starts with
  ``*``) whose wall time a forward jump skips fires right after the jump, and
  one whose wall time a backward jump repeats fires once, on the first pass;
* a *wildcard* job (``*`` leads the minute or hour field, as in ``@hourly``)
  runs on the new wall clock: skipped wall times don't fire, and repeated ones
  fire on both passes, so it keeps firing every real hour.

So a daily job fires exactly once on every calendar day. croniter's own time
zone handling fires a fixed-time job twice in a repeated hour, which is why it
is not used.
"""

from __future__ import annotations

import os
import re
from datetime import datetime, timedelta, tzinfo
from datetime import timezone as _timezone
from typing import Any

# croniter and zoneinfo are imported where a trigger is built or stepped,
# never at module level: croniter costs ~80 ms and runs a subprocess (its
# dateutil import calls platform.architecture(), which runs `file`), and
# `import jobsched` must stay cheap for apps that never use cron.

_UTC = _timezone.utc
_SECOND = timedelta(seconds=1)

_ALIASES = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_FIELDS = (
    ("minute", "0-59"),
    ("hour", "0-23"),
    ("day-of-month", "1-31"),
    ("month", "1-12 or JAN-DEC"),
    ("day-of-week", "0-7 or SUN-SAT"),
)
# croniter extensions whose fire times are random or hashed per job: a
# schedule should mean the same thing every time it is built.
_RANDOM_OR_HASHED = re.compile(r"[HR](\(.*\))?(/\d+)?", re.IGNORECASE)


class CronTrigger:
    """When a five-field cron expression fires, in an IANA time zone.

    :param expression: ``"minute hour day-of-month month day-of-week"`` or
        one of ``@hourly @daily @midnight @weekly @monthly @yearly @annually``.
    :param timezone: an IANA name (``"Europe/Berlin"``) or a ``tzinfo``;
        the system's local zone by default.
    :raises ValueError: the expression or the zone is not valid; the message
        quotes it and says what is wrong.

    Daylight saving follows Vixie cron (see the module docs): a fire time a
    forward jump skips fires right after the jump, one a backward jump
    repeats fires once.
    """

    __slots__ = ("_fixed_time", "_wall_expression", "expression", "timezone")

    def __init__(self, expression: str, timezone: str | tzinfo | None = None) -> None:
        if not isinstance(expression, str):
            raise TypeError(f"a cron expression must be a string, got {expression!r}")
        self.expression: str = expression
        self._wall_expression = _parse(expression)
        minute, hour = self._wall_expression.split()[:2]
        self._fixed_time = not (minute.startswith("*") or hour.startswith("*"))
        #: The zone the expression's wall-clock times are read in.
        self.timezone: tzinfo = _zone(timezone)

    def __repr__(self) -> str:
        return f"CronTrigger({self.expression!r}, timezone={_zone_name(self.timezone)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt from what it was made of (a durable store keeps triggers): a
        # zone by its IANA key, the machine's local zone as None (local where
        # it is loaded), any other tzinfo as itself.
        zone = self.timezone
        key = getattr(zone, "key", None)
        if key is None and zone is _local_zone():
            return (CronTrigger, (self.expression, None))
        return (CronTrigger, (self.expression, key if key is not None else zone))

    def next_after(self, dt: datetime) -> datetime:
        """The first fire time strictly after the aware datetime ``dt``, in :attr:`timezone`.

        :raises ValueError: ``dt`` is naive.
        """
        if not isinstance(dt, datetime):
            raise TypeError(f"next_after() takes a datetime, got {dt!r}")
        if dt.tzinfo is None or dt.utcoffset() is None:
            raise ValueError(
                f"next_after() needs an aware datetime, got the naive {dt!r}: "
                "attach a zone, e.g. dt.replace(tzinfo=ZoneInfo('UTC'))"
            )
        # Instants are compared in UTC: two datetimes in one zone compare by
        # wall time and ignore `fold`, which is wrong inside a repeated hour.
        after = dt.astimezone(_UTC)
        tz = self.timezone
        wall = after.astimezone(tz).replace(tzinfo=None)
        off0, off1 = _offsets(wall, tz)
        if off0 > off1:
            # `dt` is inside a repeated hour: wall times a little before it
            # recur after it, on the second pass.
            wall -= off0 - off1
        from croniter import croniter

        best: datetime | None = None
        candidates = croniter(self._wall_expression, wall)
        while True:
            candidate: datetime = candidates.get_next(datetime)
            off0, off1 = _offsets(candidate, tz)
            if off0 == off1:  # an ordinary wall time: one instant
                instant = (candidate - off0).replace(tzinfo=_UTC)
            elif off0 > off1:  # repeated by a backward jump
                instants = [candidate - off0]
                if not self._fixed_time:
                    instants.append(candidate - off1)
                for naive in instants:
                    first = naive.replace(tzinfo=_UTC)
                    if first > after and (best is None or first < best):
                        best = first
                continue
            elif self._fixed_time:  # skipped by a forward jump: fire right after it
                instant = _jump_instant(candidate, off0, off1, tz)
            else:
                continue
            if instant > after:
                # Ordinary and skipped wall times map to instants in order, and
                # every later wall time maps to a later instant than this one.
                if best is None or instant < best:
                    best = instant
                return best.astimezone(tz)


def _parse(expression: str) -> str:
    """The five-field form of ``expression``, validated field by field."""
    from croniter import CroniterBadDateError, CroniterError, croniter

    text = expression.strip()
    if not text:
        raise ValueError(
            f"invalid cron expression {expression!r}: it is empty; expected five fields "
            "'minute hour day-of-month month day-of-week' or an alias such as '@daily'"
        )
    if text.startswith("@"):
        alias = _ALIASES.get(text.lower())
        if alias is None:
            raise ValueError(
                f"invalid cron expression {expression!r}: unknown alias {text!r}; "
                f"the aliases are {', '.join(_ALIASES)}"
            )
        return alias
    fields = text.split()
    if len(fields) != 5:
        raise ValueError(
            f"invalid cron expression {expression!r}: it has {len(fields)} field(s), "
            "expected exactly five: 'minute hour day-of-month month day-of-week' "
            "(seconds and years are not supported)"
        )
    for i, field in enumerate(fields):
        name, allowed = _FIELDS[i]
        if _RANDOM_OR_HASHED.fullmatch(field):
            raise ValueError(
                f"invalid cron expression {expression!r}: the {name} field {field!r} is "
                "random or hashed, which jobsched does not support; give the values"
            )
        probe = ["*"] * 5
        probe[i] = field
        try:
            croniter.expand(" ".join(probe))
        except (CroniterError, ValueError) as exc:
            # croniter quotes the probe expression; only its verdict is useful here.
            detail = re.sub(r"^\[.*?\]\s*(is )?", "", str(exc)) or "not acceptable"
            raise ValueError(
                f"invalid cron expression {expression!r}: the {name} field {field!r} is "
                f"not valid ({detail}); allowed: {allowed}, with lists ',', ranges '-' "
                "and steps '/'"
            ) from None
    wall = " ".join(fields)
    try:
        croniter(wall, datetime(2000, 1, 1)).get_next(datetime)
    except CroniterBadDateError:
        raise ValueError(
            f"invalid cron expression {expression!r}: it never fires (no month has that day)"
        ) from None
    except (CroniterError, ValueError) as exc:
        raise ValueError(f"invalid cron expression {expression!r}: {exc}") from None
    return wall


def _offsets(wall: datetime, tz: tzinfo) -> tuple[timedelta, timedelta]:
    """UTC offsets of a naive wall time read on the first and on the second pass.

    Equal for an ordinary time; first > second inside a repeated hour;
    first < second inside a skipped one (PEP 495).
    """
    off0 = wall.replace(tzinfo=tz, fold=0).utcoffset()
    off1 = wall.replace(tzinfo=tz, fold=1).utcoffset()
    assert off0 is not None and off1 is not None
    return off0, off1


def _jump_instant(wall: datetime, before: timedelta, after: timedelta, tz: tzinfo) -> datetime:
    """The instant of the forward jump that skips ``wall``, to the second.

    The jump happens at some UTC instant T with ``T + before <= wall <
    T + after``; bisect that interval for the first instant on the new offset.
    """
    lo = wall - after  # still on the old offset
    hi = wall - before  # already on the new offset
    while hi - lo > _SECOND:
        mid = lo + (hi - lo) / 2
        mid = mid.replace(microsecond=0)
        if mid <= lo:
            mid = lo + _SECOND
        if mid.replace(tzinfo=_UTC).astimezone(tz).utcoffset() == after:
            hi = mid
        else:
            lo = mid
    return hi.replace(tzinfo=_UTC)


def _zone(timezone: str | tzinfo | None) -> tzinfo:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if timezone is None:
        return _local_zone()
    if isinstance(timezone, tzinfo):
        return timezone
    if isinstance(timezone, str):
        try:
            return ZoneInfo(timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(
                f"unknown time zone {timezone!r}: give an IANA name such as "
                "'Europe/Berlin' or 'America/New_York' (where the system has no zone "
                "database, install the tzdata package)"
            ) from None
    raise TypeError(f"timezone must be an IANA name, a tzinfo or None, got {timezone!r}")


def _local_zone() -> tzinfo:
    """The system's zone as a zoneinfo zone, which knows its DST rules.

    ``datetime.now().astimezone().tzinfo`` would be a fixed offset, wrong for
    half of the year.
    """
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    name = os.environ.get("TZ", "").lstrip(":")
    if name:
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            pass
    try:
        with open("/etc/localtime", "rb") as file:
            return ZoneInfo.from_file(file, key=_localtime_key())
    except OSError:
        raise ValueError(
            "cannot tell the local time zone (no TZ variable naming an IANA zone and no "
            "/etc/localtime): pass timezone='Area/City' explicitly"
        ) from None


def _localtime_key() -> str:
    try:
        target = os.path.realpath("/etc/localtime")
    except OSError:
        return "localtime"
    marker = "zoneinfo/"
    return target.split(marker, 1)[1] if marker in target else "localtime"


def _zone_name(tz: tzinfo) -> str:
    return getattr(tz, "key", None) or str(tz)


# Rows pickle it by this name (the stored format; see that module).
CronTrigger.__module__ = "jobsched._cron"
