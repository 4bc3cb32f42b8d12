"""`SET enable_profile = true` + `SHOW QUERY PROFILE "/"` / `"/<query id>"` through the server: the list's
columns, the per-scan counters Doris names (and that they add up), and the errors."""

from __future__ import annotations

import re

import pymysql
import pytest


def _counters(lines: list[str]) -> dict[str, int]:
    out = {}
    for line in lines:
        m = re.match(r"\s*- (\w+): (\d+)$", line)
        if m:
            out[m.group(1)] = int(m.group(2))
    return out


def _profile_of(cur, sql: str) -> tuple[str, list[str]]:
    cur.execute(sql)
    cur.fetchall()
    cur.execute('SHOW QUERY PROFILE "/"')
    names = [d[0] for d in cur.description]
    rows = cur.fetchall()
    newest = dict(zip(names, rows[0], strict=True))
    assert newest["SQL"] == sql
    cur.execute(f'SHOW QUERY PROFILE "/{newest["QueryId"]}"')
    assert [d[0] for d in cur.description] == ["Profile"]
    return newest["QueryId"], [r[0] for r in cur.fetchall()]


def test_query_profile(server, db, cur):
    cur.execute("""
        CREATE TABLE t (k INT NOT NULL, c VARCHAR(20), d INT, INDEX idx_d (d) USING BITMAP)
        DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1
        PROPERTIES ("replication_num" = "1", "bloom_filter_columns" = "c")
    """)
    # c: each value in one run of rows, but every page spans '0..'-'9..' so only the bloom filter prunes it
    values = ",".join(f"({i}, '{i % 10}c{i // 1000}', {i % 7})" for i in range(20000))
    cur.execute(f"INSERT INTO t VALUES {values}")

    cur.execute("SELECT count(*) FROM t")  # profiling is off by default: nothing recorded for it
    cur.fetchall()
    cur.execute('SHOW QUERY PROFILE "/"')
    assert all(r[3] != "SELECT count(*) FROM t" for r in cur.fetchall())

    cur.execute("SET enable_profile = true")
    qid, lines = _profile_of(cur, "SELECT k FROM t WHERE k >= 100 AND k < 200")
    assert re.fullmatch(r"[0-9a-f]{16}-[0-9a-f]{16}", qid)
    cur.execute('SHOW QUERY PROFILE "/"')
    assert [d[0] for d in cur.description] == ["QueryId", "User", "DefaultDb", "SQL", "QueryType", "StartTime",
                                               "EndTime", "TotalTime", "QueryState"]
    row = cur.fetchall()[0]
    assert (row[1], row[2], row[4], row[8]) == ("root", db, "Query", "EOF")
    assert any(line.strip().startswith("OlapScanNode") for line in lines)
    assert any(line.strip() == "SegmentIterator:" for line in lines)
    c = _counters(lines)
    assert c["RowsReturned"] == 100
    assert c["RowsKeyRangeFiltered"] > 0
    total = (c["RowsKeyRangeFiltered"] + c["RowsStatsFiltered"] + c["RowsBloomFilterFiltered"]
             + c["RowsBitmapIndexFiltered"] + c["RawRowsRead"])
    assert total == 20000
    assert c["RawRowsRead"] == c["RowsVectorPredFiltered"] + c["RowsReturned"]
    assert any("ScanTime:" in line for line in lines)

    _, lines = _profile_of(cur, "SELECT k FROM t WHERE d = 3")
    c = _counters(lines)
    assert c["RowsReturned"] == sum(1 for i in range(20000) if i % 7 == 3)
    assert c["RowsBitmapIndexFiltered"] > 0 and c["RowsVectorPredFiltered"] == 0

    _, lines = _profile_of(cur, "SELECT k FROM t WHERE c = '3c5'")
    c = _counters(lines)
    assert c["RowsReturned"] == 100
    assert c["RowsBloomFilterFiltered"] > 0 and c["PagesSkipped"] > 0

    cur.execute("SET enable_profile = false")
    cur.execute("SELECT 1")
    cur.execute('SHOW QUERY PROFILE "/"')
    assert cur.fetchall()[0][3] == "SELECT k FROM t WHERE c = '3c5'"


def test_query_profile_errors(server, db, cur):
    with pytest.raises(pymysql.err.OperationalError, match="query id 0123456789abcdef-0123456789abcdef does not exist"):
        cur.execute('SHOW QUERY PROFILE "/0123456789abcdef-0123456789abcdef"')
    with pytest.raises(pymysql.err.ProgrammingError):
        cur.execute("SHOW QUERY PROFILE")
