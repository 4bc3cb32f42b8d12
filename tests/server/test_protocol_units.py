"""Protocol pieces without a socket: the user store, placeholders and literals, result-set encoding."""

from __future__ import annotations

import datetime as dt
import struct
from decimal import Decimal

import pyarrow as pa
import pytest

from server.auth import UserStore, native_password_hash, scramble_native_password
from server.protocol.packets import PayloadReader, lenenc_int
from server.protocol.prepared import PreparedStatement, placeholder_positions, quote_string, render_literal
from server.protocol.resultset import (
    binary_rows,
    column_definition,
    frame_rows,
    result_columns,
    small_text_rows,
    text_rows,
    wire_columns,
)
from server.results import ResultSet

SALT = b"abcdefghij0123456789"


# -- users ----------------------------------------------------------------------------------------------

def test_passwords_are_checked_by_scramble() -> None:
    users = UserStore(initial_passwords={"root": "pw", "bob": "b"})
    assert users.login_native("root", "h", SALT, scramble_native_password("pw", SALT)) == "root"
    assert users.login_native("root", "h", SALT, scramble_native_password("pw", b"another salt 1234567")) is None
    assert users.login_native("root", "h", SALT, b"") is None
    assert users.login_native("root", "h", SALT, b"short") is None
    assert users.login_native("bob", "h", SALT, scramble_native_password("b", SALT)) == "bob"
    assert users.login_native("nobody", "h", SALT, b"") is None
    users.set_password("root", "")
    assert users.login_native("root", "h", SALT, b"") == "root"


def test_native_password_hash_matches_mysql() -> None:
    # SELECT PASSWORD('password') on MySQL 5.7
    assert native_password_hash("password") == "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19"
    assert native_password_hash("") == ""


# -- placeholders and literals --------------------------------------------------------------------------

@pytest.mark.parametrize("sql, count", [
    ("SELECT ?", 1),
    ("SELECT '?', \"?\", `?`, ?", 1),
    ("SELECT 'it''s ?', 'a\\'?', ?", 1),
    ("SELECT ? -- ?\n, ? # ?\n, /* ? */ ?", 3),
    ("SELECT 1--?", 1),  # '--' without a following space is not a comment in MySQL
    ("SELECT 'unterminated ?", 0),
    ("SELECT /* unterminated ?", 0),
])
def test_placeholder_positions(sql: str, count: int) -> None:
    assert len(placeholder_positions(sql)) == count


def test_bind_replaces_only_placeholders() -> None:
    sql = "SELECT ?, '?', ? FROM t WHERE s = ?"
    stmt = PreparedStatement(1, sql, placeholder_positions(sql))
    assert stmt.bind(["1", "NULL", quote_string("x'y")]) == "SELECT 1, '?', NULL FROM t WHERE s = 'x\\'y'"


@pytest.mark.parametrize("value, literal", [
    (None, "NULL"), (True, "1"), (-3, "-3"), (1.5, "1.5"), (float("nan"), "'nan'"),
    (Decimal("1.230"), "1.230"), (b"\x00\xff", "X'00ff'"),
    ("a'b\\c\n\x00\x1a\"", "'a\\'b\\\\c\\n\\0\\Z\\\"'"),
    (dt.date(2024, 1, 2), "'2024-01-02'"), (dt.datetime(2024, 1, 2, 3, 4, 5), "'2024-01-02 03:04:05'"),
    (dt.datetime(2024, 1, 2, 3, 4, 5, 120), "'2024-01-02 03:04:05.000120'"),
    (dt.timedelta(hours=-26, seconds=1), "'-25:59:59'"),
])
def test_render_literal(value: object, literal: str) -> None:
    assert render_literal(value) == literal


# -- result-set encoding --------------------------------------------------------------------------------

def _lenenc_cells(payload: bytes) -> list[bytes | None]:
    r, out = PayloadReader(payload), []
    while r.remaining:
        if r.data[r.pos] == 0xFB:
            r.pos += 1
            out.append(None)
        else:
            out.append(r.lenenc_bytes())
    return out


def test_text_rows_formats_by_type() -> None:
    table = pa.table({
        "dec": pa.array([Decimal("1.5"), Decimal("-0.01"), None], pa.decimal128(9, 3)),
        "ts0": pa.array([dt.datetime(2024, 1, 2, 3, 4, 5, 999999)] * 3, pa.timestamp("s")),
        "ts3": pa.array([dt.datetime(2024, 1, 2, 3, 4, 5, 123456)] * 3, pa.timestamp("ms")),
        "b": pa.array([True, False, None]),
        "f": pa.array([0.1, 1e20, -2.5], pa.float64()),
        "dict": pa.array(["a", "b", "a"]).dictionary_encode(),
        "lst": pa.array([[1, 2], [], None], pa.list_(pa.int32())),
    })
    cols = wire_columns(table.schema)
    rows = text_rows(table.to_batches()[0], cols).to_pylist()
    assert _lenenc_cells(rows[0]) == [b"1.500", b"2024-01-02 03:04:05", b"2024-01-02 03:04:05.123", b"1", b"0.1",
                                      b"a", b"[1, 2]"]
    assert _lenenc_cells(rows[1]) == [b"-0.010", b"2024-01-02 03:04:05", b"2024-01-02 03:04:05.123", b"0", b"1e+20",
                                      b"b", b"[]"]
    assert _lenenc_cells(rows[2])[0] is None and _lenenc_cells(rows[2])[3] is None


def test_small_batches_encode_as_the_vectorized_path() -> None:
    table = pa.table({
        "i8": pa.array([-128, None, 127], pa.int8()), "u64": pa.array([2**64 - 1, 0, None], pa.uint64()),
        "big": pa.array([-(2**63), 2**63 - 1, None], pa.int64()),
        "s": pa.array(["", "caf\u00e9", None]), "ls": pa.array(["x" * 300, "y", None], pa.large_string()),
        "dec": pa.array([Decimal("1.5"), Decimal("0"), None], pa.decimal128(9, 3)),
        "ts": pa.array([dt.datetime(2024, 1, 2, 3, 4, 5, 123456), None, dt.datetime(1, 1, 1)], pa.timestamp("us")),
        "d": pa.array([dt.date(2024, 2, 29), None, dt.date(9999, 12, 31)], pa.date32()),
        "b": pa.array([True, False, None]), "f": pa.array([0.1, 1e20, float("nan")], pa.float64()),
        "bin": pa.array([b"\x00\xff", b"", None], pa.binary()),
        "lst": pa.array([[1, 2], [], None], pa.list_(pa.int32())),
        "dict": pa.array(["a", None, "a"]).dictionary_encode(), "null": pa.nulls(3),
    })
    cols = wire_columns(table.schema)
    batch = table.to_batches()[0]
    assert small_text_rows(batch, cols) == text_rows(batch, cols).to_pylist()


@pytest.mark.parametrize("size", [0, 250, 251, 65535, 65536, 70000])
def test_length_encoded_cells(size: int) -> None:
    table = pa.table({"s": ["x" * size, "y"]})
    rows = text_rows(table.to_batches()[0], wire_columns(table.schema)).to_pylist()
    assert rows[0] == lenenc_int(size) + b"x" * size
    assert rows[1] == b"\x01y"


def test_frame_rows_numbers_packets() -> None:
    rows = pa.array([b"ab", b"", b"c"] * 100, pa.binary())
    framed = bytes(frame_rows(rows, 250))
    assert framed[:6] == b"\x02\x00\x00\xfaab"
    assert framed[6:10] == b"\x00\x00\x00\xfb"
    assert framed[10:15] == b"\x01\x00\x00\xfcc"
    assert framed[15:19] == b"\x02\x00\x00\xfd"  # and wrapping past 255
    assert frame_rows(pa.array([b"x" * 0xFFFFFF], pa.binary()), 0) is None


def test_binary_rows_layout() -> None:
    table = pa.table({
        "i": pa.array([7, None], pa.int32()),
        "u": pa.array([200, 3], pa.uint8()),
        "d": pa.array([dt.date(2024, 2, 29), dt.date(1970, 1, 1)]),
        "t": pa.array([dt.datetime(2024, 1, 2, 3, 4, 5, 6), None], pa.timestamp("us")),
        "s": pa.array([None, "z"]),
    })
    rows = binary_rows(table.to_batches()[0], wire_columns(table.schema)).to_pylist()
    # header, null bitmap (offset 2: bit 2 = first column), then values of non-null columns
    assert rows[0] == (b"\x00" + bytes((1 << 6,)) + struct.pack("<i", 7) + struct.pack("<I", 200)
                       + b"\x04" + struct.pack("<HBB", 2024, 2, 29)
                       + b"\x0b" + struct.pack("<HBBBBBI", 2024, 1, 2, 3, 4, 5, 6))
    assert rows[1] == (b"\x00" + bytes((1 << 2 | 1 << 5,)) + struct.pack("<I", 3)
                       + b"\x04" + struct.pack("<HBB", 1970, 1, 1) + b"\x01z")


# -- admission ------------------------------------------------------------------------------------------

def test_admission_runs_slots_at_once_and_a_long_statement_gives_its_slot_up() -> None:
    import threading
    import time

    from server.protocol.admission import Admission

    gate = Admission(slots=2, grace=0.2)
    most, lock, running = [0], threading.Lock(), [0]

    def short() -> None:
        with gate.admit():
            with lock:
                running[0] += 1
                most[0] = max(most[0], running[0])
            time.sleep(0.01)
            with lock:
                running[0] -= 1

    threads = [threading.Thread(target=short) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] == 2
    release = threading.Event()

    def long() -> None:
        with gate.admit():
            release.wait(10)

    blockers = [threading.Thread(target=long) for _ in range(2)]
    for t in blockers:
        t.start()
    time.sleep(0.05)
    started = time.monotonic()
    short()  # both slots held by statements still running: it waits out their grace, not their end
    waited = time.monotonic() - started
    release.set()
    for t in blockers:
        t.join()
    assert 0.1 <= waited < 2
    assert gate.running == 0


def test_a_statement_that_gives_way_frees_its_slot_at_once() -> None:
    import threading
    import time

    from server.protocol.admission import Admission, give_way

    gate = Admission(slots=1, grace=30)
    waiting, done = threading.Event(), threading.Event()

    def waits_for_a_disk() -> None:
        with gate.admit():
            give_way()
            waiting.set()
            done.wait(10)

    t = threading.Thread(target=waits_for_a_disk)
    t.start()
    assert waiting.wait(5)
    started = time.monotonic()
    with gate.admit():  # the one slot is free although its holder still runs
        assert time.monotonic() - started < 1
    done.set()
    t.join()
    give_way()  # outside any statement: nothing to give
    with gate.admit():
        assert gate.running == 1


def test_short_statements_go_before_waiting_ones_unless_those_waited_their_grace() -> None:
    import threading
    import time

    from server.protocol.admission import Admission

    def order_of_turns(grace: float, arrivals: list[tuple[float, str, bool]]) -> list[str]:
        """One slot; a holder, then each statement at its time (s): they note their turn and run until released
        (with a long grace they are released at once, so each turn is a slot its holder freed)."""
        gate = Admission(slots=1, grace=grace)
        release, order = threading.Event(), []

        def statement(name: str, short: bool) -> None:
            with gate.admit(short):
                order.append(name)
                release.wait(10)

        started = time.monotonic()
        threads = []
        for at, name, short in [(0.0, "holder", False), *arrivals]:
            time.sleep(max(0.0, started + at - time.monotonic()))
            threads.append(threading.Thread(target=statement, args=(name, short)))
            threads[-1].start()
        time.sleep(0.05)
        if grace > 5:
            release.set()
        deadline = time.monotonic() + 5
        while len(order) < len(threads) and time.monotonic() < deadline:
            time.sleep(0.01)
        release.set()
        for t in threads:
            t.join()
        return order[1:]

    # came later, served first
    assert order_of_turns(30, [(0.05, "insert", False), (0.1, "read", True)]) == ["read", "insert"]
    # turns freed by grace (0.1 s): the first insert's comes at 0.1, before the read; at 0.2 the second insert
    # has waited 0.16 s, past its grace, and goes before the read that came after it
    assert order_of_turns(0.1, [(0.02, "insert 1", False), (0.04, "insert 2", False), (0.15, "read", True)]) \
        == ["insert 1", "insert 2", "read"]


def test_result_header_is_the_columns_definitions_and_follows_the_values() -> None:
    """The memoised header of a result is what the columns make; a microsecond DATETIME column's follows its
    values (whole seconds print without a fraction), so the same schema can give two headers."""
    table = pa.table({"k": pa.array([1], pa.int64()), "s": pa.array(["x"], pa.string())})
    flags = {"k": 2}
    columns, definitions = result_columns(ResultSet(table, flags))
    assert columns == wire_columns(table.schema, flags)
    assert definitions == tuple(column_definition(c) for c in wire_columns(table.schema, flags))
    assert result_columns(ResultSet(table, flags))[1] == definitions
    assert result_columns(ResultSet(table))[1] != definitions  # other flags, another header
    ts = pa.timestamp("us")
    whole = pa.table({"t": pa.array([dt.datetime(2024, 1, 1, 10)], ts)})
    fraction = pa.table({"t": pa.array([dt.datetime(2024, 1, 1, 10, 0, 0, 500)], ts)})
    assert result_columns(ResultSet(whole))[0][0].decimals == 0
    assert result_columns(ResultSet(fraction))[0][0].decimals == 6


def test_framed_header_is_the_packets_written_one_by_one() -> None:
    """The pre-framed opening of a result set equals the packets the stream frames one at a time; a
    definition of 16 MiB or more is left to the stream, which splits it."""
    from server.protocol.constants import MAX_PAYLOAD
    from server.protocol.packets import eof_packet
    from server.protocol.resultset import framed_header

    definitions = (b"def-a", b"def-b" * 300)
    for first in (1, 254):  # sequence ids wrap at 256
        expected = b""
        for i, p in enumerate((lenenc_int(2), *definitions, eof_packet(2))):
            expected += len(p).to_bytes(3, "little") + bytes(((first + i) & 0xFF,)) + p
        assert framed_header(definitions, 2, first) == expected
    assert framed_header((b"x" * MAX_PAYLOAD,), 2, 1) is None
