"""TLS on the MySQL port (issue 14): enable_ssl with a self-signed certificate made on the first start, pymysql's
`ssl=` verifying it, and require_secure_transport refusing plain logins."""

from __future__ import annotations

import shutil
from pathlib import Path

import pymysql
import pytest

from tests.conftest import ROOT, ServerProcess, free_port


def _conf(tmp_path: Path, **values: str) -> Path:
    conf = tmp_path / "conf"
    shutil.copytree(ROOT / "conf", conf)
    text = (conf / "fe.conf").read_text()
    for key, value in values.items():
        lines = [f"{key} = {value}" if line.split("=")[0].strip() == key else line for line in text.splitlines()]
        text = "\n".join(lines) + "\n"
    (conf / "fe.conf").write_text(text)
    return conf


def test_tls_with_a_self_signed_certificate(tmp_path: Path) -> None:
    srv = ServerProcess(free_port(), tmp_path / "data", conf=_conf(tmp_path, enable_ssl="true",
                                                                   require_secure_transport="true")).start()
    try:
        ca = tmp_path / "data" / "tls" / "server-cert.pem"
        assert ca.exists()
        with srv.connect(ssl={"ca": str(ca)}) as conn, conn.cursor() as cur:
            cur.execute("SELECT repeat('x', 200000)")
            assert len(cur.fetchone()[0]) == 200000
        with srv.connect() as conn:  # pymysql prefers TLS when the server offers it, as MySQL clients do
            assert conn.cursor().execute("SELECT 1") == 1
        with pytest.raises(pymysql.err.OperationalError) as info:
            srv.connect(ssl_disabled=True)  # no TLS: refused
        assert info.value.args[0] == 3159
    finally:
        srv.stop()


def test_tls_is_optional(tmp_path: Path) -> None:
    srv = ServerProcess(free_port(), tmp_path / "data", conf=_conf(tmp_path, enable_ssl="true")).start()
    try:
        with srv.connect(ssl_disabled=True) as conn, conn.cursor() as cur:
            cur.execute("SELECT 1")
            assert cur.fetchone() == (1,)
    finally:
        srv.stop()
