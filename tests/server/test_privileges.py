"""Users, roles and privileges (issue 14): an analyst, a loader and an admin walked through every door (MySQL,
information_schema, HTTP, Spark loads), each refusal with Doris's message and code; accounts in the catalog;
lockout; the audit log with passwords masked; a fresh server's root password and closed admin account."""

from __future__ import annotations

import base64
import json
import re
import time
import urllib.error
import urllib.request
import uuid

import pymysql
import pytest

from tests.conftest import ServerProcess, free_port

PROPS = "PROPERTIES ('replication_num' = '1')"


def err(conn_or_cur, sql: str) -> tuple[int, str]:
    cur = conn_or_cur.cursor() if hasattr(conn_or_cur, "cursor") else conn_or_cur
    with pytest.raises(pymysql.err.MySQLError) as info:
        cur.execute(sql)
    return info.value.args[0], info.value.args[1]


def rows(cur, sql: str) -> list[tuple]:
    cur.execute(sql)
    return [tuple(r) for r in cur.fetchall()]


@pytest.fixture
def world(server: ServerProcess, db: str):
    """d.t and d.t2 (rows), a view over t2, users analyst / loader / boss / pat, a role."""
    suffix = uuid.uuid4().hex[:6]
    names = {k: f"{k}_{suffix}" for k in ("analyst", "loader", "boss", "pat", "role")}
    with server.connect(db) as conn, conn.cursor() as cur:
        cur.execute(f"CREATE TABLE t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 {PROPS}")
        cur.execute(f"CREATE TABLE t2 (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 {PROPS}")
        cur.execute("INSERT INTO t VALUES (1, 10), (2, 20)")
        cur.execute("INSERT INTO t2 VALUES (7)")
        cur.execute("CREATE VIEW vw AS SELECT k FROM t2")
        cur.execute(f"CREATE USER '{names['analyst']}' IDENTIFIED BY 'a-pw'")
        cur.execute(f"CREATE USER '{names['loader']}'@'127.0.0.%' IDENTIFIED BY 'l-pw'")
        cur.execute(f"CREATE USER '{names['boss']}' IDENTIFIED BY 'b-pw' DEFAULT ROLE 'admin'")
        cur.execute(f"CREATE USER '{names['pat']}' IDENTIFIED BY 'p-pw' FAILED_LOGIN_ATTEMPTS 2 "
                    "PASSWORD_LOCK_TIME 1 DAY")
        cur.execute(f"CREATE ROLE {names['role']}")
        cur.execute(f"GRANT SELECT_PRIV ON {db}.* TO ROLE '{names['role']}'")
        cur.execute(f"GRANT SELECT_PRIV ON {db}.t TO '{names['analyst']}'")
        cur.execute(f"GRANT SELECT_PRIV ON {db}.vw TO '{names['analyst']}'")
        cur.execute(f"GRANT LOAD_PRIV ON {db}.t TO '{names['loader']}'@'127.0.0.%'")
    yield names
    with server.connect() as conn, conn.cursor() as cur:
        for key in ("analyst", "boss", "pat"):
            cur.execute(f"DROP USER IF EXISTS '{names[key]}'")
        cur.execute(f"DROP USER IF EXISTS '{names['loader']}'@'127.0.0.%'")
        cur.execute(f"DROP ROLE IF EXISTS {names['role']}")


def test_analyst_reads_what_was_granted(server, db, world) -> None:
    a = world["analyst"]
    with server.connect(db, user=a, password="a-pw") as conn, conn.cursor() as cur:
        assert rows(cur, "SELECT k FROM t ORDER BY k") == [(1,), (2,)]
        assert rows(cur, "SELECT k FROM vw") == [(7,)]  # the view's privilege, not its tables'
        assert rows(cur, "SELECT k FROM t ORDER BY k") == [(1,), (2,)]  # the cached plan, checked again
        assert err(cur, "SELECT * FROM t2") == (
            1142, f"errCode = 2, detailMessage = SELECT command denied to user '{a}'@'127.0.0.1' for table "
                  f"'internal: {db}: t2'")
        assert err(cur, "SELECT * FROM t WHERE k IN (SELECT k FROM t2)")[0] == 1142
        assert err(cur, "INSERT INTO t VALUES (3, 3)")[1].endswith(
            f"LOAD command denied to user '{a}'@'127.0.0.1' for table 'internal: {db}: t'")
        assert err(cur, "DROP TABLE t")[0] == 1142
        assert err(cur, "ALTER TABLE t ADD COLUMN x INT")[1].startswith("errCode = 2, detailMessage = ALTER command")
        assert err(cur, "CREATE TABLE n (k INT) DISTRIBUTED BY HASH(k) BUCKETS 1")[0] == 1142
        assert err(cur, "ADMIN SET FRONTEND CONFIG ('expr_depth_limit' = '5')") == (
            1227, "errCode = 2, detailMessage = Access denied; you need (at least one of) the ADMIN privilege(s) "
                  "for this operation")
        assert err(cur, "CREATE USER x")[0] == 1227
        assert err(cur, "SET GLOBAL query_timeout = 5")[0] == 1227
        assert db in [r[0] for r in rows(cur, "SHOW DATABASES")]
        assert sorted(r[0] for r in rows(cur, "SHOW TABLES")) == ["t", "vw"]
        assert sorted(r[0] for r in rows(cur, f"SELECT TABLE_NAME FROM information_schema.tables "
                                               f"WHERE TABLE_SCHEMA = '{db}'")) == ["t", "vw"]
        assert rows(cur, "SELECT current_user()") == [(f"'{a}'@'%'",)]
        cur.execute("SHOW GRANTS")
        [grant] = cur.fetchall()
        assert grant[0] == f"'{a}'@'%'" and "internal." + db + ".t: Select_priv" in grant[7]
    with pytest.raises(pymysql.err.OperationalError) as info:
        server.connect("information_schema", user=a, password="a-pw").cursor().execute("USE mysql_nope")
    assert info.value.args[0] in (1049, 1044)


def test_roles_and_revoke(server, db, world) -> None:
    a, role = world["analyst"], world["role"]
    with server.connect() as conn, conn.cursor() as cur:
        cur.execute(f"GRANT '{role}' TO '{a}'")
    with server.connect(db, user=a, password="a-pw") as conn, conn.cursor() as cur:
        assert rows(cur, "SELECT k FROM t2") == [(7,)]
    with server.connect() as conn, conn.cursor() as cur:
        cur.execute(f"REVOKE '{role}' FROM '{a}'")
        cur.execute(f"REVOKE SELECT_PRIV ON {db}.t FROM '{a}'")
        roles = {r[0]: r for r in rows(cur, "SHOW ROLES")}
        assert {"admin", "operator", role} <= set(roles)
    with server.connect(db, user=a, password="a-pw") as conn, conn.cursor() as cur:
        assert err(cur, "SELECT * FROM t2")[0] == 1142
        assert err(cur, "SELECT * FROM t")[0] == 1142


def test_loader_host_pattern_and_loads(server, db, world) -> None:
    lo = world["loader"]
    with server.connect(db, user=lo, password="l-pw") as conn, conn.cursor() as cur:
        cur.execute("INSERT INTO t VALUES (3, 30)")
        assert err(cur, "SELECT * FROM t")[0] == 1142
        assert err(cur, "INSERT INTO t SELECT k, k FROM t2")[0] == 1142  # the query's tables need SELECT
        assert err(cur, "DELETE FROM t2 WHERE k = 7")[0] == 1142
        assert rows(cur, "SHOW GRANTS")[0][0] == f"'{lo}'@'127.0.0.%'"
    with server.connect(db) as conn, conn.cursor() as cur:
        cur.execute(f"GRANT SELECT_PRIV ON {db}.t2 TO '{lo}'@'127.0.0.%'")
    with server.connect(db, user=lo, password="l-pw") as conn, conn.cursor() as cur:
        cur.execute("INSERT INTO t SELECT k, k FROM t2")  # a load that reads a table: on Spark
        assert sorted(r[0] for r in rows(cur, "SHOW TABLE STATUS")) == ["t", "t2"]
    with server.connect(db) as conn, conn.cursor() as cur:
        assert rows(cur, "SELECT count(*) FROM t") == [(4,)]


def test_admin_role_and_kill(server, db, world) -> None:
    boss, a = world["boss"], world["analyst"]
    with server.connect(db, user=boss, password="b-pw") as conn, conn.cursor() as cur:
        assert rows(cur, "SELECT count(*) FROM t2") == [(1,)]
        cur.execute("SHOW FRONTEND CONFIG LIKE 'expr_depth_limit'")
        cur.execute("SHOW ALL GRANTS")
        assert any(r[0] == f"'{a}'@'%'" for r in cur.fetchall())
        with server.connect(db, user=a, password="a-pw") as other:
            other_id = other.thread_id()
            with other.cursor() as ocur:
                assert err(ocur, f"KILL {conn.thread_id()}")[0] == 1095  # not its own
                assert all(r[2] == a for r in rows(ocur, "SHOW PROCESSLIST"))
            cur.execute(f"KILL {other_id}")


def test_lockout_after_failed_logins(server, db, world) -> None:
    pat = world["pat"]
    for _ in range(2):
        with pytest.raises(pymysql.err.OperationalError):
            server.connect(user=pat, password="wrong")
    with pytest.raises(pymysql.err.OperationalError) as info:
        server.connect(user=pat, password="p-pw")  # locked now, even with the right password
    assert info.value.args[0] == 1045
    with server.connect() as conn, conn.cursor() as cur:
        cur.execute(f"ALTER USER '{pat}' ACCOUNT_UNLOCK")
    server.connect(user=pat, password="p-pw").close()


def test_account_statement_errors(server, world) -> None:
    a = world["analyst"]
    with server.connect() as conn, conn.cursor() as cur:
        assert err(cur, f"CREATE USER '{a}'")[1].endswith(f"Operation CREATE USER failed for '{a}'@'%' : user already "
                                                           "exists")
        cur.execute(f"CREATE USER IF NOT EXISTS '{a}'")
        assert "does not exist" in err(cur, "DROP USER 'nobody_here'")[1]
        assert "can only be granted on *.*.*" in err(cur, f"GRANT ADMIN_PRIV ON d.* TO '{a}'")[1]
        assert "Unknown privilege type" in err(cur, f"GRANT FLY_PRIV ON *.* TO '{a}'")[1]
        assert "Role: nope does not exist" in err(cur, f"GRANT 'nope' TO '{a}'")[1]
        assert "Can not drop system user" in err(cur, "DROP USER root")[1]
        assert "built-in role" in err(cur, "DROP ROLE admin")[1]


def _http(port: int, path: str, auth: str | None) -> int:
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}")
    if auth is not None:
        req.add_header("Authorization", "Basic " + base64.b64encode(auth.encode()).decode())
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            json.loads(r.read())
            return r.status
    except urllib.error.HTTPError as e:
        json.loads(e.read())
        return e.code


def test_http_doors(server, world) -> None:
    a, boss = world["analyst"], world["boss"]
    for port, path in ((server.http_port, "/api/compaction/run_status"),
                       (server.fe_http_port, "/api/_set_config?expr_depth_limit=3000")):
        assert _http(port, path, None) == 401
        assert _http(port, path, f"{a}:wrong") == 401
        assert _http(port, path, f"{a}:a-pw") == 403
        assert _http(port, path, f"{boss}:b-pw") == 200
    assert _http(server.fe_http_port, "/api/health", None) == 200  # what Doris leaves open


def test_first_start_root_password_and_closed_admin(tmp_path) -> None:
    srv = ServerProcess(free_port(), tmp_path / "data", root_password=None).start()
    try:
        printed = re.search(r"the password of 'root' is (\S+)", srv.log.read_text())
        assert printed is not None
        with pytest.raises(pymysql.err.OperationalError):
            srv.connect()  # no empty password
        with pytest.raises(pymysql.err.OperationalError):
            srv.connect(user="admin", password="")
        with srv.connect(password=printed.group(1)) as conn, conn.cursor() as cur:
            cur.execute("CREATE USER 'sec' IDENTIFIED BY 'hush-hush'")
            cur.execute("SET PASSWORD FOR 'sec' = PASSWORD('hush2')")
        deadline = time.monotonic() + 10
        while "SET PASSWORD" not in (audit := (tmp_path / "log" / "fe.audit.log").read_text()):
            assert time.monotonic() < deadline, audit  # a queued line is written a moment later
            time.sleep(0.05)
        assert "hush" not in audit and "IDENTIFIED BY '*XXX'" in audit and "|User=root|" in audit
    finally:
        srv.stop()
    # restarted: the accounts are in the catalog, no new password is printed
    srv = ServerProcess(free_port(), tmp_path / "data", root_password=None).start()
    try:
        assert "the password of 'root' is" not in srv.log.read_text()
        srv.connect(user="sec", password="hush2").close()
    finally:
        srv.stop()


def test_users_json_of_an_older_storage_folder_is_migrated(tmp_path) -> None:
    storage = tmp_path / "data"
    storage.mkdir()
    from server.auth import native_password_hash

    (storage / "users.json").write_text(json.dumps({"users": {"root": native_password_hash("r00t"),
                                                              "carol": native_password_hash("c")}}))
    srv = ServerProcess(free_port(), storage, root_password=None).start()
    try:
        assert "the password of 'root' is" not in srv.log.read_text()  # the old accounts, no new root password
        with srv.connect(password="r00t") as conn, conn.cursor() as cur:
            cur.execute("SHOW ALL GRANTS")
            assert {r[0] for r in cur.fetchall()} >= {"'root'@'%'", "'carol'@'%'"}
        srv.connect(user="carol", password="c").close()
        assert not (storage / "users.json").exists() and (storage / "users.json.migrated").exists()
    finally:
        srv.stop()


def test_a_shared_point_lookup_plan_is_checked_for_each_user(server: ServerProcess, db: str, world) -> None:
    """A lookup template made by one user serves another's lookups of other keys only after his own check,
    even once it runs on the event loop."""
    with server.connect(db) as conn, conn.cursor() as cur:
        for k in (1, 2, 1, 2, 1):
            assert rows(cur, f"SELECT k, v FROM t WHERE k = {k}") == [(k, k * 10)]
    with server.connect(db, user=world["loader"], password="l-pw") as conn:
        assert err(conn, "SELECT k, v FROM t WHERE k = 2")[1].endswith(
            f"SELECT command denied to user '{world['loader']}'@'127.0.0.1' for table 'internal: {db}: t'")
        assert rows(conn.cursor(), "SELECT 1") == [(1,)]
    with server.connect(db, user=world["analyst"], password="a-pw") as conn, conn.cursor() as cur:
        assert rows(cur, "SELECT k, v FROM t WHERE k = 2") == [(2, 20)]
