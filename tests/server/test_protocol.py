"""The protocol endpoint through real clients: pymysql, mysql-connector-python, the mysql CLI."""

from __future__ import annotations

import concurrent.futures
import datetime as dt
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from decimal import Decimal

import mysql.connector
import pymysql
import pytest
import sqlglot
from sqlglot import exp
from test_protocol_harness import INSERT_INFO, TYPED_ROWS, FakeHandler, ServerThread, serve

from server.auth import UserStore

PASSWORDS = {"alice": "s3cret'\\pw"}


@pytest.fixture
def srv() -> Iterator[ServerThread]:
    with serve(UserStore(initial_passwords=PASSWORDS)) as s:
        yield s


def pconnect(srv: ServerThread, **kw: object) -> pymysql.connections.Connection:
    kw.setdefault("user", "root")
    kw.setdefault("password", "")
    return pymysql.connect(host="127.0.0.1", port=srv.port, connect_timeout=5, read_timeout=10, **kw)


CONNECTOR_MODES = [pytest.param(True, id="pure")]
if mysql.connector.HAVE_CEXT:
    CONNECTOR_MODES.append(pytest.param(False, id="cext"))


def cconnect(srv: ServerThread, use_pure: bool = True, **kw: object):
    kw.setdefault("user", "root")
    kw.setdefault("password", "")
    return mysql.connector.connect(host="127.0.0.1", port=srv.port, use_pure=use_pure, connection_timeout=5, **kw)


# -- pymysql --------------------------------------------------------------------------------------------

def test_pymysql_select_and_typed_columns(srv: ServerThread) -> None:
    with pconnect(srv) as c, c.cursor() as cur:
        cur.execute("SELECT 1")
        assert cur.fetchall() == ((1,),)
        cur.execute("SELECT typed")
        rows = cur.fetchall()
        assert rows == tuple(TYPED_ROWS)
        assert isinstance(rows[0][4], Decimal) and type(rows[0][5]) is dt.date
        assert isinstance(rows[0][6], dt.datetime)
        # wire types: TINY LONG LONGLONG DOUBLE NEWDECIMAL DATE DATETIME DATETIME VAR_STRING TINY
        assert [d[1] for d in cur.description] == [1, 3, 8, 5, 246, 10, 12, 12, 253, 1]
        cur.execute("SELECT empty")
        assert cur.fetchall() == () and len(cur.description) == 10


def test_pymysql_ok_packet_affected_rows_and_info(srv: ServerThread) -> None:
    with pconnect(srv) as c, c.cursor() as cur:
        assert cur.execute("INSERT INTO t VALUES (1), (2), (3)") == 3
        assert INSERT_INFO.encode() in cur._result.message


def test_errors_keep_connection_and_have_no_traceback(srv: ServerThread) -> None:
    with pconnect(srv) as c, c.cursor() as cur:
        with pytest.raises(pymysql.err.ProgrammingError) as e:
            cur.execute("BAD")
        assert e.value.args == (1064, "bad statement")
        with pytest.raises(pymysql.err.OperationalError) as e:
            cur.execute("CRASH")
        assert e.value.args[0] == 1105
        # internals stay in the server log: the client gets an incident number, not "RuntimeError: boom"
        assert e.value.args[1].startswith("errCode = 2, detailMessage = Internal error; the server log has it")
        cur.execute("SELECT 1")
        assert cur.fetchone() == (1,)


def test_init_db_in_handshake_and_com_init_db(srv: ServerThread) -> None:
    with pconnect(srv, database="db1") as c, c.cursor() as cur:
        cur.execute("SELECT DATABASE()")
        assert cur.fetchone() == ("db1",)
        with pytest.raises(pymysql.err.OperationalError) as e:
            c.select_db("nope")
        assert e.value.args[0] == 1049
        c.select_db("information_schema")
        cur.execute("SELECT DATABASE()")
        assert cur.fetchone() == ("information_schema",)
    with pytest.raises(pymysql.err.OperationalError) as e:
        pconnect(srv, database="nope")
    assert e.value.args[0] == 1049


def test_passwords(srv: ServerThread) -> None:
    with pconnect(srv, user="alice", password=PASSWORDS["alice"]) as c, c.cursor() as cur:
        cur.execute("SELECT USER()")
        assert cur.fetchone() == ("alice@127.0.0.1",)
    for user, password, using in (("alice", "wrong", "YES"), ("alice", "", "NO"), ("nobody", "x", "YES"),
                                  ("nobody", "", "NO"), ("root", "x", "YES")):
        with pytest.raises(pymysql.err.OperationalError) as e:
            pconnect(srv, user=user, password=password)
        assert e.value.args == (1045, f"Access denied for user '{user}'@'127.0.0.1' (using password: {using})")
    srv.server.users.set_password("root", "newpw")
    with pconnect(srv, password="newpw") as c:
        c.ping()


def test_multi_statements_need_the_client_flag(srv: ServerThread) -> None:
    with pconnect(srv) as c, c.cursor() as cur:
        with pytest.raises(pymysql.err.ProgrammingError) as e:
            cur.execute("SELECT 1; INSERT x")
        assert e.value.args[0] == 1064
        cur.execute("SELECT 1")
        assert cur.fetchone() == (1,)
    flag = pymysql.constants.CLIENT.MULTI_STATEMENTS
    with pconnect(srv, client_flag=flag) as c, c.cursor() as cur:
        cur.execute("SELECT 1; INSERT x; SELECT typed")
        assert cur.fetchall() == ((1,),)
        assert cur.nextset()
        assert cur.rowcount == 3
        assert cur.nextset()
        assert cur.fetchall() == tuple(TYPED_ROWS)
        assert not cur.nextset()
        # a failure in the middle: earlier results arrive, then the error
        cur.execute("SELECT 1; BAD; SELECT 1")
        assert cur.fetchall() == ((1,),)
        with pytest.raises(pymysql.err.ProgrammingError):
            cur.nextset()
        cur.execute("SELECT 1")
        assert cur.fetchone() == (1,)


def test_slow_query_does_not_block_others(srv: ServerThread) -> None:
    slow = pconnect(srv)
    started = threading.Event()

    def run_slow() -> None:
        with slow.cursor() as cur:
            started.set()
            cur.execute("SELECT SLEEP(2)")

    t = threading.Thread(target=run_slow)
    t.start()
    started.wait()
    time.sleep(0.2)
    with pconnect(srv) as c, c.cursor() as cur:
        t0 = time.monotonic()
        cur.execute("SELECT 1")
        assert cur.fetchone() == (1,)
        assert time.monotonic() - t0 < 0.5
    assert t.is_alive()
    t.join()
    slow.close()


def test_kill_and_processlist(srv: ServerThread) -> None:
    victim, killer = pconnect(srv), pconnect(srv)
    with victim.cursor() as cur:
        cur.execute("SELECT CONNECTION_ID()")
        (vid,) = cur.fetchone()
    assert vid == victim.thread_id()
    with killer.cursor() as cur:
        cur.execute("SHOW PROCESSLIST")
        rows = cur.fetchall()
        assert {r[0] for r in rows} >= {vid, killer.thread_id()}
        assert any(r[0] == killer.thread_id() and r[2] == "Query" and r[3] == "SHOW PROCESSLIST" for r in rows)
        info = {p.id: p for p in srv.server.processlist()}[vid]
        assert (info.user, info.command, info.info) == ("root", "Sleep", None)
        assert info.host.startswith("127.0.0.1:") and info.db is None and len(info.login_time) == 19
        cur.execute(f"KILL {vid}")
        with pytest.raises(pymysql.err.OperationalError) as e:
            cur.execute("KILL 999999")
        assert e.value.args[0] == 1094
    with pytest.raises(pymysql.err.OperationalError), victim.cursor() as cur:
        cur.execute("SELECT 1")
    # COM_PROCESS_KILL
    other = pconnect(srv)
    killer.kill(other.thread_id())
    with pytest.raises(pymysql.err.OperationalError), other.cursor() as cur:
        cur.execute("SELECT 1")
    deadline = time.monotonic() + 3
    while srv.server.connection_count > 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert srv.server.connection_count == 1
    killer.close()


def test_handlers_are_closed(srv: ServerThread) -> None:
    c = pconnect(srv)
    cid = c.thread_id()
    c.close()
    deadline = time.monotonic() + 3
    while cid not in FakeHandler.closed and time.monotonic() < deadline:
        time.sleep(0.05)
    assert cid in FakeHandler.closed


def test_large_query_and_large_row_use_multi_packet_framing() -> None:
    with serve(max_allowed_packet=64 * 1024 * 1024) as srv, pconnect(srv, max_allowed_packet=64 * 1024 * 1024) as c:
        with c.cursor() as cur:
            n = 17 * 1024 * 1024
            cur.execute("SELECT LEN " + "x" * n)
            assert cur.fetchone() == (n,)
            cur.execute(f"SELECT REPEAT {n}")
            assert len(cur.fetchone()[0]) == n
            cur.execute("SELECT 1")
            assert cur.fetchone() == (1,)


def test_packet_bigger_than_max_allowed_packet() -> None:
    with serve(max_allowed_packet=1024 * 1024) as srv:
        c = pconnect(srv)
        with pytest.raises(pymysql.err.OperationalError) as e, c.cursor() as cur:
            cur.execute("SELECT LEN " + "x" * (2 * 1024 * 1024))
        assert e.value.args == (1153, "Got a packet bigger than 'max_allowed_packet' bytes")
        with pytest.raises(pymysql.err.OperationalError), c.cursor() as cur:
            cur.execute("SELECT 1")  # that connection is gone ...
        with pconnect(srv) as c2, c2.cursor() as cur:
            cur.execute("SELECT 1")  # ... the server is not
            assert cur.fetchone() == (1,)


def test_connection_cap() -> None:
    with serve(max_connections=2) as srv:
        a, b = pconnect(srv), pconnect(srv)
        with pytest.raises(pymysql.err.OperationalError) as e:
            pconnect(srv)
        assert e.value.args[0] == 1040 and "Too many connections" in e.value.args[1]
        a.close()
        deadline = time.monotonic() + 3
        while srv.server.connection_count > 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        with pconnect(srv) as c, c.cursor() as cur:
            cur.execute("SELECT 1")
        b.close()


def test_stop_closes_listener_and_connections() -> None:
    srv = ServerThread().start()
    c = pconnect(srv)
    port = srv.port
    srv.stop()
    with pytest.raises(pymysql.err.OperationalError), c.cursor() as cur:
        cur.execute("SELECT 1")
    with pytest.raises(pymysql.err.OperationalError):
        pymysql.connect(host="127.0.0.1", port=port, user="root", connect_timeout=2)


def test_stop_with_a_statement_running() -> None:
    srv = ServerThread().start()
    c = pconnect(srv)
    errors: list[Exception] = []

    def run_slow() -> None:
        try:
            with c.cursor() as cur:
                cur.execute("SELECT SLEEP(2)")
        except pymysql.err.OperationalError as e:
            errors.append(e)

    t = threading.Thread(target=run_slow)
    t.start()
    time.sleep(0.3)
    t0 = time.monotonic()
    srv.stop()  # drops the client at once, waits for the statement's thread to finish
    t.join(5)
    assert errors and time.monotonic() - t0 < 5


# -- mysql-connector-python -----------------------------------------------------------------------------

@pytest.mark.parametrize("use_pure", CONNECTOR_MODES)
def test_connector_text_protocol(srv: ServerThread, use_pure: bool) -> None:
    cnx = cconnect(srv, use_pure)
    try:
        cur = cnx.cursor()
        cur.execute("SELECT typed")
        assert [tuple(r) for r in cur.fetchall()] == TYPED_ROWS
        cur.execute("INSERT x")
        assert cur.rowcount == 3
        cnx.cmd_init_db("db1")
        cnx.cmd_reset_connection()  # a fresh handler, same database
        cur.execute("SELECT DATABASE()")
        assert cur.fetchall() == [("db1",)]
        stats = cnx.cmd_statistics()
        assert stats["Uptime"] >= 1 and "Questions" in stats and "Queries per second avg" in stats
        cnx.ping()
    finally:
        cnx.close()


@pytest.mark.parametrize("use_pure", CONNECTOR_MODES)
def test_connector_prepared_binary_results(srv: ServerThread, use_pure: bool) -> None:
    cnx = cconnect(srv, use_pure)
    try:
        cur = cnx.cursor(prepared=True)
        cur.execute("SELECT typed")
        assert [tuple(r) for r in cur.fetchall()] == TYPED_ROWS
        cur.execute("SELECT empty")
        assert cur.fetchall() == []
        cur.execute("INSERT x")
        assert cur.rowcount == 3
        with pytest.raises(mysql.connector.Error) as e:
            cur.execute("BAD")
        assert e.value.errno == 1064
    finally:
        cnx.close()


HOSTILE_PARAMS = [
    "it's", "back\\slash", "'; DROP TABLE x; --", "\\'; DROP TABLE x; -- ", 'dq"x', "nl\nz\x00\x1a",
    None, 42, -(2**63), 1.25, Decimal("-12345678901234567890.123456789"), dt.date(2024, 2, 29),
    dt.datetime(2024, 1, 2, 3, 4, 5, 6), "ünïcødé ?", "",
]


@pytest.mark.parametrize("use_pure", CONNECTOR_MODES)
def test_prepared_parameters_are_bound_as_data(srv: ServerThread, use_pure: bool) -> None:
    cnx = cconnect(srv, use_pure)
    try:
        cur = cnx.cursor(prepared=True)
        placeholders = ", ".join("?" for _ in HOSTILE_PARAMS)
        cur.execute(f"ECHO SELECT {placeholders}, '?', `?` -- ?", HOSTILE_PARAMS)
        (bound,) = cur.fetchone()
    finally:
        cnx.close()
    # the bound text is exactly one statement whose literals read back as the parameters
    statements = sqlglot.parse(bound, read="mysql")
    assert len(statements) == 1
    select = statements[0]
    assert isinstance(select, exp.Select)
    values = [_literal_value(e) for e in select.expressions[:len(HOSTILE_PARAMS)]]
    expected = [str(p) if isinstance(p, int | float | Decimal) else p for p in HOSTILE_PARAMS]
    expected = [str(p) if isinstance(p, dt.date) else p for p in expected]
    assert values == expected
    assert bound.endswith(", '?', `?` -- ?")


def _literal_value(e: exp.Expression) -> object:
    if isinstance(e, exp.Null):
        return None
    if isinstance(e, exp.Neg):
        return "-" + str(_literal_value(e.this))
    assert isinstance(e, exp.Literal), e
    return e.this if e.is_string else e.this


@pytest.mark.parametrize("use_pure", CONNECTOR_MODES)
def test_connector_change_user(srv: ServerThread, use_pure: bool) -> None:
    cnx = cconnect(srv, use_pure)
    try:
        cnx.cmd_change_user(username="alice", password=PASSWORDS["alice"], database="db1")
        cur = cnx.cursor()
        cur.execute("SELECT USER()")
        assert cur.fetchall() == [("alice@127.0.0.1",)]
        cur.execute("SELECT DATABASE()")
        assert cur.fetchall() == [("db1",)]
    finally:
        cnx.close()
    cnx = cconnect(srv, use_pure)
    with pytest.raises(mysql.connector.Error) as e:
        cnx.cmd_change_user(username="alice", password="wrong")
    assert e.value.errno == 1045


def test_connector_wrong_password(srv: ServerThread) -> None:
    with pytest.raises(mysql.connector.Error) as e:
        cconnect(srv, user="alice", password="nope")
    assert e.value.errno == 1045
    cnx = cconnect(srv, user="alice", password=PASSWORDS["alice"])
    cnx.close()


# -- the mysql CLI --------------------------------------------------------------------------------------

MYSQL = shutil.which("mysql")


def mysql_cli(srv: ServerThread, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([MYSQL or "mysql", "-h127.0.0.1", f"-P{srv.port}", *args], input=stdin,
                          capture_output=True, text=True, timeout=20)


@pytest.mark.skipif(MYSQL is None, reason="mysql CLI not installed (apt-get install mariadb-client)")
def test_mysql_cli(srv: ServerThread) -> None:
    r = mysql_cli(srv, "-uroot", "-e", "SELECT typed")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split("\t")[:5] == ["i8", "i32", "i64", "f64", "dec"]
    assert lines[1].split("\t") == ["1", "-7", "1099511627776", "1.5", "12.30", "2024-02-29",
                                    "2024-01-02 03:04:05", "2024-01-02 03:04:05.123456", "héllo", "1"]
    assert lines[2].split("\t")[0] == "NULL"
    r = mysql_cli(srv, "-uroot", "-vvv", "-e", "INSERT x")
    assert r.returncode == 0, r.stderr
    assert "3 rows affected" in r.stdout and INSERT_INFO in r.stdout
    r = mysql_cli(srv, "-uroot", "db1", stdin="SELECT DATABASE();\nSELECT 1;\n")
    assert r.returncode == 0 and r.stdout.split() == ["database", "db1", "1", "1"]
    r = mysql_cli(srv, "-uroot", "-e", "BAD")
    assert r.returncode == 1 and "ERROR 1064 (42000) at line 1: bad statement" in r.stderr
    r = mysql_cli(srv, "-ualice", f"-p{PASSWORDS['alice']}", "-e", "SELECT USER()")
    assert r.returncode == 0 and "alice@127.0.0.1" in r.stdout
    r = mysql_cli(srv, "-ualice", "-pwrong", "-e", "SELECT 1")
    assert r.returncode == 1
    assert "ERROR 1045 (28000): Access denied for user 'alice'@'127.0.0.1' (using password: YES)" in r.stderr
    r = mysql_cli(srv, "-uroot", "nodb", "-e", "SELECT 1")
    assert r.returncode == 1 and "ERROR 1049 (42000): Unknown database 'nodb'" in r.stderr
    admin = shutil.which("mysqladmin")
    if admin:
        r = subprocess.run([admin, "-h127.0.0.1", f"-P{srv.port}", "-uroot", "status"], capture_output=True,
                           text=True, timeout=20)
        assert r.returncode == 0 and r.stdout.startswith("Uptime: ")
        assert "Slow queries: 0  Opens: 0  Open tables: 0  Queries per second avg: " in r.stdout


def test_hundreds_of_idle_connections_hold_no_thread_each(server) -> None:
    """An idle connection is a socket the event loop watches: 200 of them add no threads, and each still
    answers at once."""
    from pathlib import Path

    def threads() -> int:
        return len(list(Path(f"/proc/{server.proc.pid}/task").iterdir()))

    users = ("idle1", "idle2")  # max_user_connections is 100 per user, as in Doris
    with server.connect() as admin, admin.cursor() as cur:
        for user in users:
            cur.execute(f"CREATE USER IF NOT EXISTS '{user}' IDENTIFIED BY 'pw'")
    before = threads()
    conns = []
    try:
        with concurrent.futures.ThreadPoolExecutor(16) as pool:  # pymysql spends ~60 ms of its own per login
            conns += pool.map(lambda user: server.connect(user=user, password="pw"), [u for u in users
                                                                                     for _ in range(100)])
        assert threads() <= before + 40  # the worker pool may grow a little, never by a thread per connection
        for conn in conns[::10]:
            with conn.cursor() as cur:
                cur.execute("SELECT CONNECTION_ID()")
                assert cur.fetchone()[0] > 0
    finally:
        for conn in conns:
            conn.close()
        with server.connect() as admin, admin.cursor() as cur:
            for user in users:
                cur.execute(f"DROP USER IF EXISTS '{user}'")


def test_quick_statements_run_on_the_event_loop(srv: ServerThread) -> None:
    """What the handler says takes about a millisecond is not handed to a worker thread."""
    with pconnect(srv) as c, c.cursor() as cur:
        cur.execute("SELECT THREAD")
        worker = cur.fetchone()[0]
        cur.execute("SELECT QUICK THREAD")
        loop = cur.fetchone()[0]
        with pytest.raises(pymysql.err.OperationalError) as e:
            cur.execute("SELECT QUICK AND UNKNOWN")  # an error on the event loop is an ERR packet as any other
        assert e.value.args[0] == 1105
        cur.execute("SELECT 1")
        assert cur.fetchall() == ((1,),)
    assert worker.startswith("mysql-worker") and loop == srv.thread.name
