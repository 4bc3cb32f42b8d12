"""fe.audit.log: Doris's line per statement, in order, passwords masked, rotated at audit_log_roll_size_mb."""

from __future__ import annotations

import re
from pathlib import Path

from server.audit import AuditLog, mask_passwords

LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} \[query\] \|Client=127\.0\.0\.1:5\|User=u\|Ctl=internal\|"
                  r"Db=d\|State=EOF\|ErrorCode=0\|ErrorMessage=\|Time\(ms\)=3\|ScanBytes=0\|ScanRows=0\|ReturnRows=1\|"
                  r"StmtId=(\d+)\|QueryId=q\|IsQuery=true\|Stmt=(.*)$")


def record(audit: AuditLog, stmt: str) -> None:
    audit.record(client="127.0.0.1:5", user="u", db="d", state="EOF", error_code=0, error="", millis=3.7,
                 return_rows=1, query_id="q", is_query=True, masked_stmt=mask_passwords(stmt))


def test_lines_in_order_masked_and_rotated(tmp_path: Path) -> None:
    audit = AuditLog(tmp_path, roll_size_mb=1, roll_num=3)
    record(audit, "SET PASSWORD FOR u = PASSWORD('hush')\nSELECT 1")
    for i in range(8_000):  # ~2.1 MB: two rotations
        record(audit, f"SELECT {i}, '{'x' * 150}'")
    audit.close()
    files = sorted(tmp_path.glob("fe.audit.log*"), key=lambda p: -int(p.suffix[1:]) if p.suffix[1:].isdigit() else 0)
    assert [p.name for p in files] == ["fe.audit.log.2", "fe.audit.log.1", "fe.audit.log"]
    assert all(p.stat().st_size <= 1024 * 1024 for p in files)
    lines = [line for p in files for line in p.read_text().splitlines()]
    assert len(lines) == 8_001
    fields = [parse(line) for line in lines]
    assert [stmt_id for stmt_id, _ in fields] == list(range(1, 8_002))
    assert fields[0][1] == "SET PASSWORD FOR u = PASSWORD('*XXX') SELECT 1"
    assert fields[-1][1].startswith("SELECT 7999, 'xxx")


def parse(line: str) -> tuple[int, str]:
    """(StmtId, Stmt) of an audit line, which must have Doris's shape."""
    m = LINE.match(line)
    assert m is not None, line
    return int(m.group(1)), m.group(2)
