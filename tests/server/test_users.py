"""Users: root's password (empty here: the tests' servers set it so on first start); SET PASSWORD is enforced
and survives a restart; the built-in admin account is closed until root gives it a password."""

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


def test_admin_is_closed_until_given_a_password(fresh_server) -> None:
    with pytest.raises(pymysql.err.OperationalError):
        fresh_server.connect(user="admin")
    with fresh_server.connect() as conn, conn.cursor() as cur:
        cur.execute("SET PASSWORD FOR 'admin' = PASSWORD('adm')")
    with fresh_server.connect(user="admin", password="adm") as conn, conn.cursor() as cur:
        cur.execute("SELECT USER()")
        assert cur.fetchone()[0].startswith("admin@")
