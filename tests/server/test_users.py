"""Users: root with an empty password by default; SET PASSWORD is enforced and survives a restart."""

from __future__ import annotations

import signal

import pymysql
import pytest


def test_set_password_is_enforced_and_durable(fresh_server) -> None:
    with fresh_server.connect() as conn, conn.cursor() as cur:
        cur.execute("SET PASSWORD FOR 'root'@'%' = PASSWORD('s3cret')")
    with pytest.raises(pymysql.err.OperationalError) as e:
        fresh_server.connect()
    assert e.value.args[0] == 1045
    with pytest.raises(pymysql.err.OperationalError) as e:
        fresh_server.connect(user="nobody", password="s3cret")
    assert e.value.args[0] == 1045
    fresh_server.stop(signal.SIGTERM)
    fresh_server.start()
    with fresh_server.connect(password="s3cret") as conn, conn.cursor() as cur:
        cur.execute("SELECT CURRENT_USER()")
        assert cur.fetchone()[0].startswith("'root'")
        cur.execute("SET PASSWORD = PASSWORD('')")
    with fresh_server.connect() as conn, conn.cursor() as cur:
        cur.execute("SELECT 1")
        assert cur.fetchone() == (1,)


def test_admin_user_exists_with_empty_password(server) -> None:
    with server.connect(user="admin") as conn, conn.cursor() as cur:
        cur.execute("SELECT USER()")
        assert cur.fetchone()[0].startswith("admin@")
