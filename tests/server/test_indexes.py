"""Bloom filter (`bloom_filter_columns`) and BITMAP indexes through the real server: the segments a load
writes carry them (base index and a rollup holding the column), selective queries answer exactly, and
DESC / SHOW INDEX show them."""

from __future__ import annotations

import random

from storage.segment.reader import SegmentReader
from storage.spark.tables import read_only_engine


def test_bloom_and_bitmap_indexes(server, db, cur):
    cur.execute("""
        CREATE TABLE t (k INT NOT NULL, c VARCHAR(20), d INT, v BIGINT, INDEX idx (d) USING BITMAP COMMENT 'bm')
        DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2
        ROLLUP (r_dc (d, c, v))
        PROPERTIES ("replication_num" = "1", "bloom_filter_columns" = "c", "bloom_filter_fpp" = "0.01")
    """)
    rng = random.Random(5)
    rows = [(i, f"c{rng.randrange(500)}" if i % 17 else None, rng.randrange(30) if i % 23 else None, i * 3)
            for i in range(3000)]
    values = ",".join("({}, {}, {}, {})".format(k, "NULL" if c is None else f"'{c}'", "NULL" if d is None else d, v)
                      for k, c, d, v in rows)
    cur.execute(f"INSERT INTO t VALUES {values}")

    def check(where: str, pred) -> None:
        cur.execute(f"SELECT k, c, d, v FROM t WHERE {where} ORDER BY k")
        assert [tuple(r) for r in cur.fetchall()] == [r for r in rows if pred(r)], where

    check("c = 'c7'", lambda r: r[1] == "c7")
    check("c IN ('c1', 'c499', 'nope')", lambda r: r[1] in ("c1", "c499"))
    check("c IS NULL", lambda r: r[1] is None)
    check("d = 4", lambda r: r[2] == 4)
    check("d != 4", lambda r: r[2] is not None and r[2] != 4)
    check("d >= 27", lambda r: r[2] is not None and r[2] >= 27)
    check("d < 2", lambda r: r[2] is not None and r[2] < 2)
    check("d IN (1, 29)", lambda r: r[2] in (1, 29))
    check("d NOT IN (1, 29)", lambda r: r[2] is not None and r[2] not in (1, 29))
    check("d IS NULL", lambda r: r[2] is None)
    check("d IS NOT NULL AND c = 'c3'", lambda r: r[2] is not None and r[1] == "c3")
    cur.execute("SELECT d, count(*) FROM t WHERE d = 5 GROUP BY d")
    assert [tuple(r) for r in cur.fetchall()] == [(5, sum(1 for r in rows if r[2] == 5))]

    cur.execute("DESC t")
    extra = {r[0]: r[5] for r in cur.fetchall()}
    assert extra["c"] == "NONE,BLOOM_FILTER" and extra["d"] == "NONE" and extra["k"] == ""
    cur.execute("SHOW INDEX FROM t")
    (idx,) = cur.fetchall()
    assert (idx[2], idx[4], idx[10], idx[11]) == ("idx", "d", "BITMAP", "bm")

    engine = read_only_engine(server.storage)
    try:
        table = engine.catalog.get_table(db, "t")
        assert len(table.indexes) == 2  # the base index and the rollup both hold c and d
        for index in table.indexes:
            paths = [p for tablet in engine.catalog.tablets(table.table_id, index_id=index.index_id)
                     for p in engine.tablet_dir(tablet.tablet_id).glob("*.dat")]
            assert paths
            for path in paths:
                metas = {m.name: m for m in SegmentReader(path).footer.columns}
                assert metas["c"].bloom_filter is not None and metas["c"].bitmap_index is None
                assert metas["d"].bitmap_index is not None and metas["d"].bloom_filter is None
                assert metas["v"].bloom_filter is None and metas["v"].bitmap_index is None
    finally:
        engine.close()
