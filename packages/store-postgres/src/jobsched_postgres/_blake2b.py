"""An id of your own's number (``jobsched._jobs._ids.own_number``), in PL/pgSQL.

A job with an id of its own is keyed by a 64-bit BLAKE2b of the id, which
every member computes alike; an enqueue made in SQL (``jobsched_enqueue``)
must compute the same number, and PostgreSQL has no BLAKE2b built in
(pgcrypto's ``digest()`` has neither, nor a digest size of 8). So
:func:`own_number_sql` writes the function out: the compression function of
RFC 7693, its 12 rounds unrolled into straight-line assignments (the 64-bit
additions done on 32-bit halves, as ``bigint + bigint`` refuses to wrap).
About a millisecond per call; ``tests/test_store_postgres_sql.py`` checks it
against ``hashlib`` across block boundaries and scripts.
"""

from __future__ import annotations

_IV = (
    0x6A09E667F3BCC908, 0xBB67AE8584CAA73B, 0x3C6EF372FE94F82B, 0xA54FF53A5F1D36F1,
    0x510E527FADE682D1, 0x9B05688C2B3E6C1F, 0x1F83D9ABFB41BD6B, 0x5BE0CD19137E2179,
)  # fmt: skip
_SIGMA = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
    (14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3),
    (11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4),
    (7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8),
    (9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13),
    (2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9),
    (12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11),
    (13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10),
    (6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5),
    (10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0),
)
_LOW = "4294967295"


def _signed(value: int) -> str:
    """A 64-bit word as a bigint literal (two's complement)."""
    return str(value - (1 << 64) if value >= 1 << 63 else value)


def _add(a: str, b: str) -> str:
    """``a + b`` mod 2**64, on 32-bit halves (PostgreSQL's bitwise operators
    share one precedence and bind looser than ``+``: every term is bracketed)."""
    low = f"(({a} & {_LOW}) + ({b} & {_LOW}))"
    high = f"((({a} >> 32) & {_LOW}) + (({b} >> 32) & {_LOW}) + ({low} >> 32))"
    return f"((({high} & {_LOW}) << 32) | ({low} & {_LOW}))"


def _rotr(x: str, n: int) -> str:
    """``x`` rotated right by ``n`` bits (``>>`` keeps the sign: masked)."""
    mask = (1 << (64 - n)) - 1
    return f"((({x} >> {n}) & {mask}) | ({x} << {64 - n}))"


def _g(a: int, b: int, c: int, d: int, x: int, y: int) -> list[str]:
    va, vb, vc, vd, mx, my = f"v{a}", f"v{b}", f"v{c}", f"v{d}", f"m{x}", f"m{y}"
    return [
        f"{va} := {_add(va, vb)};",
        f"{va} := {_add(va, mx)};",
        f"{vd} := {_rotr(f'({vd} # {va})', 32)};",
        f"{vc} := {_add(vc, vd)};",
        f"{vb} := {_rotr(f'({vb} # {vc})', 24)};",
        f"{va} := {_add(va, vb)};",
        f"{va} := {_add(va, my)};",
        f"{vd} := {_rotr(f'({vd} # {va})', 16)};",
        f"{vc} := {_add(vc, vd)};",
        f"{vb} := {_rotr(f'({vb} # {vc})', 63)};",
    ]


def _compress() -> list[str]:
    lines = [f"v{i} := h{i};" for i in range(8)]
    lines += [f"v{i + 8} := {_signed(_IV[i])};" for i in range(8)]
    lines += ["v12 := v12 # t;", "IF last THEN v14 := ~v14; END IF;"]
    for word in range(16):
        parts = [f"(get_byte(block, {word * 8 + k})::bigint << {8 * k})" for k in range(8)]
        lines.append(f"m{word} := {' | '.join(parts)};")
    for round_ in range(12):
        s = _SIGMA[round_ % 10]
        for i, (a, b, c, d) in enumerate(
            [(0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15),
             (0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14)]
        ):  # fmt: skip
            lines += _g(a, b, c, d, s[2 * i], s[2 * i + 1])
    lines += [f"h{i} := h{i} # v{i} # v{i + 8};" for i in range(8)]
    return lines


def own_number_sql() -> str:
    """``CREATE OR REPLACE FUNCTION jobsched_own_number(job_id text) RETURNS
    bigint``: ``own_number(job_id)`` (BLAKE2b with an 8-byte digest of the
    id's UTF-8, read big-endian, halved and negated)."""
    words = " ".join(f"v{i} bigint; m{i} bigint;" for i in range(16))
    state = " ".join(
        f"h{i} bigint := {_signed(_IV[i] ^ (0x01010008 if i == 0 else 0))};" for i in range(8)
    )
    body = "\n            ".join(_compress())
    swapped = " | ".join(f"(((h0 >> {8 * k}) & 255) << {8 * (7 - k)})" for k in range(8))
    return f"""CREATE OR REPLACE FUNCTION jobsched_own_number(job_id text) RETURNS bigint
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
    DECLARE
        data bytea := convert_to(job_id, 'UTF8');
        size integer := length(data);
        padded bytea;
        block bytea;
        blocks integer;
        last boolean;
        t bigint;
        digest bigint;
        {state}
        {words}
    BEGIN
        blocks := greatest(1, (size + 127) / 128);
        padded := data || decode(repeat('00', blocks * 128 - size), 'hex');
        FOR i IN 0 .. blocks - 1 LOOP
            block := substring(padded FROM i * 128 + 1 FOR 128);
            last := i = blocks - 1;
            t := CASE WHEN last THEN size ELSE (i + 1) * 128 END;
            {body}
        END LOOP;
        digest := {swapped};
        RETURN -((digest >> 1) & 9223372036854775807) - 1;
    END $$"""
