"""Raw-socket clients that break the protocol: the server answers or closes fast and keeps serving others."""

from __future__ import annotations

import os
import socket
import struct
import time
from collections.abc import Iterator

import pymysql
import pytest
from test_protocol_harness import (
    ServerThread,
    closed_within,
    login_payload,
    raw_connect,
    raw_login,
    read_packet,
    send_packet,
    serve,
)

from server.auth import UserStore, scramble_native_password


@pytest.fixture
def srv() -> Iterator[ServerThread]:
    users = UserStore(initial_passwords={"alice": "pw"})
    with serve(users, max_allowed_packet=1024 * 1024, handshake_timeout=1.0, net_read_timeout=1.0) as s:
        yield s


def assert_serving(srv: ServerThread) -> None:
    with pymysql.connect(host="127.0.0.1", port=srv.port, user="root", connect_timeout=2, read_timeout=2) as c:
        with c.cursor() as cur:
            cur.execute("SELECT 1")
            assert cur.fetchone() == (1,)


def error_of(payload: bytes) -> tuple[int, str, str]:
    assert payload[0] == 0xFF, payload
    return struct.unpack("<H", payload[1:3])[0], payload[4:9].decode(), payload[9:].decode()


def query(s: socket.socket, sql: str) -> list[bytes]:
    """Send COM_QUERY; return the packets of one complete answer (OK, ERR, or a whole result set)."""
    send_packet(s, b"\x03" + sql.encode(), 0)
    return read_answer(s)


def read_answer(s: socket.socket) -> list[bytes]:
    first = read_packet(s)[1]
    if first[0] in (0x00, 0xFF):
        return [first]
    packets, eofs = [first], 0
    while eofs < 2:
        p = read_packet(s)[1]
        packets.append(p)
        if p[0] == 0xFE and len(p) < 9:
            eofs += 1
    return packets


# -- connection phase -----------------------------------------------------------------------------------

def test_login_user_without_nul(srv: ServerThread) -> None:
    s, _ = raw_connect(srv.port)
    t0 = time.monotonic()
    send_packet(s, login_payload(b"root" * 10, nul=False), 1)
    assert error_of(read_packet(s)[1])[:2] == (1043, "08S01")
    assert closed_within(s, 1.0)
    assert time.monotonic() - t0 < 1.0
    assert_serving(srv)


@pytest.mark.parametrize("payload", [b"", b"\x8d\xa6", login_payload(b"root")[:20], b"\x00" * 32],
                         ids=["empty", "two-bytes", "no-user", "no-protocol41"])
def test_truncated_login(srv: ServerThread, payload: bytes) -> None:
    s, _ = raw_connect(srv.port)
    send_packet(s, payload, 1)
    assert error_of(read_packet(s)[1])[0] == 1043
    assert closed_within(s, 1.0)
    assert_serving(srv)


def test_garbage_bytes(srv: ServerThread) -> None:
    for garbage in (os.urandom(200), b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", b"\xff" * 64):
        s, _ = raw_connect(srv.port)
        s.sendall(garbage)
        assert closed_within(s, 1.5)
    assert_serving(srv)


def test_oversized_length_header_at_login(srv: ServerThread) -> None:
    s, _ = raw_connect(srv.port)
    s.sendall(b"\xff\xff\xff\x01" + b"x" * 100)
    assert error_of(read_packet(s)[1])[0] == 1153
    assert closed_within(s, 1.5)
    assert_serving(srv)


def test_oversized_length_header_after_login(srv: ServerThread) -> None:
    s = raw_login(srv.port)
    t0 = time.monotonic()
    s.sendall(b"\xff\xff\xff\x00\x03SELECT")
    code, state, message = error_of(read_packet(s)[1])
    assert (code, state, message) == (1153, "08S01", "Got a packet bigger than 'max_allowed_packet' bytes")
    assert closed_within(s, 1.5)
    assert time.monotonic() - t0 < 1.5
    assert_serving(srv)


def test_multi_packet_over_the_limit() -> None:
    # a full 16 MiB - 1 frame, then a continuation header that takes the total past 20 MiB
    with serve(max_allowed_packet=20 * 1024 * 1024) as srv:
        s = raw_login(srv.port)
        s.sendall(b"\xff\xff\xff\x00" + b"\x03" + b"x" * (0xFFFFFF - 1))
        s.sendall(b"\x00\x00\x80\x01")  # 8 MiB more, sequence 1
        assert error_of(read_packet(s)[1])[0] == 1153
        assert closed_within(s, 1.5)
        assert_serving(srv)


def test_bad_sequence_id(srv: ServerThread) -> None:
    s, _ = raw_connect(srv.port)
    send_packet(s, login_payload(b"root"), 7)  # must be 1
    assert error_of(read_packet(s)[1])[0] == 1156
    assert closed_within(s, 1.5)
    s = raw_login(srv.port)
    send_packet(s, b"\x03SELECT 1", 3)  # a command starts at 0
    assert error_of(read_packet(s)[1])[:2] == (1156, "08S01")
    assert closed_within(s, 1.5)
    assert_serving(srv)


def test_handshake_timeout(srv: ServerThread) -> None:
    idle, _ = raw_connect(srv.port)
    half, _ = raw_connect(srv.port)
    half.sendall(b"\x50\x00\x00\x01\x8d\xa6")  # a header promising 80 bytes, then silence
    t0 = time.monotonic()
    assert closed_within(idle, 3.0)
    assert closed_within(half, 3.0)
    assert time.monotonic() - t0 < 2.5
    assert_serving(srv)


def test_stalled_packet_body_is_dropped(srv: ServerThread) -> None:
    s = raw_login(srv.port)
    s.sendall(b"\x20\x00\x00\x00\x03SEL")  # 32 bytes promised, 4 sent
    assert closed_within(s, 3.0)
    assert_serving(srv)


def test_refused_login_closes_the_connection(srv: ServerThread) -> None:
    for user, password in ((b"alice", "wrong"), (b"ghost", "wrong"), (b"alice", "")):
        s, salt = raw_connect(srv.port)
        send_packet(s, login_payload(user, scramble_native_password(password, salt)), 1)
        code, state, message = error_of(read_packet(s)[1])
        using = "YES" if password else "NO"
        assert (code, state) == (1045, "28000")
        assert message == f"Access denied for user '{user.decode()}'@'127.0.0.1' (using password: {using})"
        # nothing sent afterwards is executed: the server has closed the socket
        try:
            send_packet(s, b"\x03SELECT 1", 0)
        except OSError:
            pass
        assert closed_within(s, 1.0)


def test_native_password_and_auth_switch(srv: ServerThread) -> None:
    s, salt = raw_connect(srv.port)
    send_packet(s, login_payload(b"alice", scramble_native_password("pw", salt)), 1)
    assert read_packet(s)[1][0] == 0
    s.close()
    # a MySQL 8 client starting with caching_sha2_password is switched to mysql_native_password
    s, salt = raw_connect(srv.port)
    body = login_payload(b"alice", os.urandom(32)).replace(b"mysql_native_password", b"caching_sha2_password")
    send_packet(s, body, 1)
    seq, switch = read_packet(s)
    assert seq == 2 and switch[0] == 0xFE and switch[1:23] == b"mysql_native_password\x00"
    new_salt = switch[23:43]
    send_packet(s, scramble_native_password("pw", new_salt), 3)
    seq, ok = read_packet(s)
    assert (seq, ok[0]) == (4, 0)
    assert query(s, "SELECT 1")[-2][1:] == b"1"


# -- command phase --------------------------------------------------------------------------------------

def test_field_list(srv: ServerThread) -> None:
    s = raw_login(srv.port)
    for payload in (b"\x04t\x00", b"\x04t"):  # the second lacks its NUL: taken whole, no loop
        send_packet(s, payload, 0)
        packets = []
        while True:
            p = read_packet(s)[1]
            packets.append(p)
            if p[0] == 0xFE:
                break
        assert len(packets) == 3
        assert b"\x01t\x01t\x01k\x01k" in packets[0]
    send_packet(s, b"\x04nope\x00", 0)
    assert error_of(read_packet(s)[1])[0] == 1146
    assert query(s, "SELECT 1")[-2][1:] == b"1"


def test_unknown_and_empty_commands(srv: ServerThread) -> None:
    s = raw_login(srv.port)
    send_packet(s, b"\x63whatever", 0)
    assert error_of(read_packet(s)[1])[:2] == (1047, "08S01")
    send_packet(s, b"", 0)
    assert error_of(read_packet(s)[1])[0] == 1835
    send_packet(s, b"\x0c\x01", 0)  # COM_PROCESS_KILL without its 4-byte id
    assert error_of(read_packet(s)[1])[0] == 1835
    send_packet(s, b"\x0e", 0)  # COM_PING
    assert read_packet(s)[1][0] == 0
    send_packet(s, b"\x09", 0)  # COM_STATISTICS
    assert read_packet(s)[1].startswith(b"Uptime: ")
    send_packet(s, b"\x01", 0)  # COM_QUIT
    assert closed_within(s, 1.0)


def test_set_option_toggles_multi_statements(srv: ServerThread) -> None:
    s = raw_login(srv.port)
    assert error_of(query(s, "SELECT 1; SELECT 1")[0])[0] == 1064
    send_packet(s, b"\x1b\x00\x00", 0)  # MYSQL_OPTION_MULTI_STATEMENTS_ON
    assert read_packet(s)[1][0] == 0xFE
    first = query(s, "SELECT 1; SELECT 1")
    status = struct.unpack("<H", first[-1][3:5])[0]
    assert status & 0x0008  # SERVER_MORE_RESULTS_EXISTS
    second = read_answer(s)
    assert not struct.unpack("<H", second[-1][3:5])[0] & 0x0008
    send_packet(s, b"\x1b\x01\x00", 0)  # OFF again
    assert read_packet(s)[1][0] == 0xFE
    assert error_of(query(s, "SELECT 1; SELECT 1")[0])[0] == 1064


def test_malformed_prepared_statement_packets(srv: ServerThread) -> None:
    s = raw_login(srv.port)
    send_packet(s, b"\x16ECHO ?, '?', ?", 0)
    ok = read_packet(s)[1]
    stmt_id, columns, params = struct.unpack("<IHH", ok[1:9])
    assert (columns, params) == (0, 2)
    for _ in range(3):  # two parameter definitions and an EOF
        read_packet(s)
    stmt = struct.pack("<I", stmt_id)
    send_packet(s, b"\x17" + stmt + b"\x00\x01\x00\x00\x00", 0)  # parameters missing
    assert error_of(read_packet(s)[1])[0] == 1835
    send_packet(s, b"\x17" + stmt + b"\x00\x01\x00\x00\x00" + b"\x00\x01" + b"\xfe\x00\xfe\x00" + b"\x05ab", 0)
    assert error_of(read_packet(s)[1])[0] == 1835  # lenenc string longer than the packet
    send_packet(s, b"\x17\x99\x00\x00\x00\x00\x01\x00\x00\x00", 0)
    assert error_of(read_packet(s)[1])[0] == 1243
    # long data for the first parameter, then a proper execute
    send_packet(s, b"\x18" + stmt + b"\x00\x00" + b"it's", 0)
    send_packet(s, b"\x17" + stmt + b"\x00\x01\x00\x00\x00" + b"\x00\x01" + b"\xfe\x00\x08\x00"
                + struct.pack("<q", -5), 0)
    answer = read_answer(s)
    assert answer[-2][3:] == b"'it\\'s', '?', -5"  # binary row: 0x00, null bitmap, lenenc text
    send_packet(s, b"\x19" + stmt, 0)  # COM_STMT_CLOSE has no answer
    send_packet(s, b"\x1a" + stmt, 0)
    assert error_of(read_packet(s)[1])[0] == 1243
    assert query(s, "SELECT 1")[-2][1:] == b"1"


def test_change_user_with_wrong_password_closes(srv: ServerThread) -> None:
    s = raw_login(srv.port)
    send_packet(s, b"\x11alice\x00" + bytes((20,)) + b"x" * 20 + b"\x00" + b"\x21\x00"
                + b"mysql_native_password\x00", 0)
    assert error_of(read_packet(s)[1])[0] == 1045
    assert closed_within(s, 1.0)
    assert_serving(srv)


def test_many_hostile_clients_then_normal_service(srv: ServerThread) -> None:
    socks = []
    for i in range(30):
        s, _ = raw_connect(srv.port)
        if i % 3 == 0:
            s.sendall(os.urandom(50))
        elif i % 3 == 1:
            send_packet(s, login_payload(b"x" * 100, nul=False), 1)
        socks.append(s)
    t0 = time.monotonic()
    assert_serving(srv)
    assert time.monotonic() - t0 < 1.0
    for s in socks:
        s.close()


def test_client_that_stops_reading_is_dropped() -> None:
    with serve(net_write_timeout=0.5) as srv:
        s = raw_login(srv.port)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        send_packet(s, b"\x03SELECT REPEAT 30000000", 0)  # 30 MB answer that is never read
        deadline = time.monotonic() + 5
        while srv.server.connection_count and time.monotonic() < deadline:
            time.sleep(0.05)
        assert srv.server.connection_count == 0
        assert_serving(srv)
        s.close()
