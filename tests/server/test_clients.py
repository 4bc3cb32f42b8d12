"""Every statement the recorded clients (mysql CLI, pymysql, connector, SQLAlchemy, both JDBC drivers,
DBeaver) send when they connect and introspect is answered, not rejected (../shared/clients/)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pymysql
import pytest

CLIENTS = Path(__file__).resolve().parents[2].parent / "shared" / "clients"
TABLE = "harness_jdbc_mysql"


def _recorded_statements() -> list[str]:
    out: list[str] = []
    for name in ("connect-and-introspection-statements.txt", "jdbc-metadata-queries.txt"):
        path = CLIENTS / name
        if not path.exists():
            continue
        for line in path.read_text().splitlines():
            m = re.match(r"^\s*Query: (.*)$", line)
            if m:
                out.append(m.group(1))
    return list(dict.fromkeys(out))  # recorded order: the harness creates its tables before using them


STATEMENTS = _recorded_statements()


def _substitute(sql: str, db: str) -> str:
    sql = sql.replace("<db>", db).replace("harness_db", db)
    sql = re.sub(r"harness_sqlalchemy_\w+|<table>", TABLE, sql)
    return sql.replace("<version>", "8.0.33")


def _expected_error(sql: str) -> bool:
    # the recordings' own probes of a missing table, and their own test-table DDL/DML
    return "no_such_table" in sql or "<missing_table>" in sql


@pytest.mark.skipif(not STATEMENTS, reason="../shared/clients recordings not present")
def test_recorded_client_statements_are_answered(server, db) -> None:
    conn = server.connect(db)
    with conn.cursor() as cur:
        for raw in STATEMENTS:  # the harness's own tables first: the other statements introspect them
            if re.search(r"^\s*(/\*.*?\*/)?\s*CREATE TABLE", raw, re.I):
                cur.execute(_substitute(raw, db))
        failures = []
        for raw in STATEMENTS:
            # the harness's own teardown would drop the tables the later statements introspect
            if _expected_error(raw) or re.search(r"^\s*(/\*.*?\*/)?\s*(DROP|CREATE TABLE)\b", raw, re.I):
                continue
            sql = _substitute(raw, db)
            try:
                cur.execute(sql)
                cur.fetchall()
            except pymysql.err.MySQLError as e:
                failures.append(f"{sql[:160]} -> {e.args}")
            if not conn.open:
                conn = server.connect(db)
                cur = conn.cursor()
        assert not failures, f"{len(failures)} of {len(STATEMENTS)} failed:\n" + "\n".join(failures)
    conn.close()


def test_missing_table_is_1146(cur) -> None:
    with pytest.raises(pymysql.err.ProgrammingError) as e:
        cur.execute("SELECT * FROM harness_no_such_table_xyz")
    assert e.value.args[0] == 1146


def test_mysql_connector_python(server, db) -> None:
    mysql_connector = pytest.importorskip("mysql.connector")
    modes = (True, False) if getattr(mysql_connector, "HAVE_CEXT", False) else (True,)
    for pure in modes:
        conn = mysql_connector.connect(host="127.0.0.1", port=server.port, user="root", password="",
                                       database=db, use_pure=pure)
        cur = conn.cursor()
        cur.execute("SELECT DATABASE(), VERSION(), @@version_comment")
        assert cur.fetchall()[0][:2] == (db, "5.7.99")
        conn.close()


@pytest.mark.skipif(shutil.which("mysql") is None, reason="mysql CLI not installed")
def test_mysql_cli_batch(server, db) -> None:
    out = subprocess.run(
        ["mysql", "-h127.0.0.1", f"-P{server.port}", "-uroot", db, "-e",
         "CREATE TABLE cli_t (k INT) DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES('replication_num'='1');"
         "INSERT INTO cli_t VALUES (1),(2); SELECT sum(k) FROM cli_t; SHOW TABLES;"],
        capture_output=True, text=True, timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert "3" in out.stdout and "cli_t" in out.stdout
