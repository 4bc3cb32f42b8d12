"""EXPLAIN through the MySQL protocol: Doris's column name and layout, rollup hits and PREAGGREGATION
reasons on tables created with `CREATE TABLE ... ROLLUP`, pruning, the session switches, and the
answers of rollup reads against base reads."""

from __future__ import annotations

import pymysql
import pytest

COLUMN = "Explain String(Nereids Planner)"
AGG_DDL = """CREATE TABLE sales (k1 INT NOT NULL, k2 INT NOT NULL, dt DATE NOT NULL,
    rev BIGINT SUM NOT NULL DEFAULT "0", cost BIGINT SUM NOT NULL DEFAULT "0", top INT MAX NULL)
AGGREGATE KEY(k1, k2, dt)
PARTITION BY RANGE(dt) (PARTITION p1 VALUES LESS THAN ('2024-02-01'), PARTITION p2 VALUES LESS THAN ('2024-03-01'))
DISTRIBUTED BY HASH(k1) BUCKETS 4
ROLLUP (r_k1 (k1, rev, cost), r_k2 (k2, k1, rev, top))
PROPERTIES ("replication_num" = "1")"""
ROWS = ", ".join(f"({i % 5}, {i % 3}, '2024-0{1 + i % 2}-{10 + i % 9}', {i * 7}, {i}, {i % 11})" for i in range(40))


def explain(cur, sql: str) -> str:  # noqa: ANN001
    cur.execute(sql)
    assert [d[0] for d in cur.description] == [COLUMN]
    return "\n".join(r[0] for r in cur.fetchall())


def rows(cur, sql: str) -> list[tuple]:  # noqa: ANN001
    cur.execute(sql)
    return sorted(cur.fetchall(), key=repr)


@pytest.fixture
def sales(cur):  # noqa: ANN001, ANN201
    cur.execute(AGG_DDL)
    cur.execute(f"INSERT INTO sales VALUES {ROWS}")
    cur.execute(f"INSERT INTO sales VALUES {ROWS}")  # a second rowset: skipping the merge must still be exact
    return cur


def test_explain_shows_rollup_hits_and_reasons(sales) -> None:  # noqa: ANN001
    cur = sales
    text = explain(cur, "EXPLAIN SELECT k1, sum(rev) FROM sales GROUP BY k1")
    assert text.startswith("PLAN FRAGMENT 0\n  OUTPUT EXPRS:\n    k1[#")
    assert "TABLE: " in text and ".sales(r_k1), PREAGGREGATION: ON" in text
    assert "partitions=2/2 (p1,p2)" in text and "tablets=8/8" in text
    text = explain(cur, "EXPLAIN SELECT count(*) FROM sales")
    assert ".sales(sales), PREAGGREGATION: OFF. Reason: Count distinct is only valid for key columns, " \
           "but meet count(*)." in text
    text = explain(cur, "DESC SELECT k2, max(top) FROM sales WHERE k2 = 1 GROUP BY k2")
    assert ".sales(r_k2), PREAGGREGATION: ON" in text and "PREDICATES: (k2[#" in text
    text = explain(cur, "EXPLAIN SELECT k1, min(rev) FROM sales GROUP BY k1")
    assert "PREAGGREGATION: OFF. Reason: Aggregate operator don't match, aggregate function: min(rev), " \
           "column aggregate type: SUM" in text
    text = explain(cur, "EXPLAIN SELECT * FROM sales WHERE k1 = 3 AND dt >= '2024-02-01'")
    assert "PREAGGREGATION: OFF. Reason: No aggregate on scan." in text
    assert "partitions=1/2 (p2)" in text and "tablets=1/4, tabletList=" in text
    text = explain(cur, "EXPLAIN SELECT k1, sum(rev - cost) FROM sales GROUP BY k1")
    assert ".sales(r_k1), PREAGGREGATION: ON" in text
    assert "PREAGGREGATION REWRITE: sum((rev - cost)) -> sum(rev) - sum(cost)" in text
    verbose = explain(cur, "EXPLAIN VERBOSE SELECT k1, sum(rev) FROM sales GROUP BY k1")
    assert "Tuples:" in verbose and "SlotDescriptor{" in verbose


def test_rollup_answers_match_base_answers(sales) -> None:  # noqa: ANN001
    cur = sales
    queries = ["SELECT k1, sum(rev) FROM sales GROUP BY k1", "SELECT k2, max(top), sum(rev) FROM sales GROUP BY k2",
               "SELECT k1, sum(rev - cost) FROM sales WHERE k1 IN (1, 2) GROUP BY k1",
               "SELECT sum(rev * k1), count(DISTINCT k1) FROM sales", "SELECT count(*) FROM sales WHERE dt < '2024-02-01'",
               "SELECT k1, k2, dt, rev FROM sales WHERE k1 = 3 AND dt >= '2024-02-01'"]
    with_rollups = [rows(cur, q) for q in queries]
    cur.execute("SET enable_rollup_selection = false")
    assert ".sales(sales), PREAGGREGATION: ON" in explain(cur, "EXPLAIN " + queries[0])
    cur.execute("SET disable_nereids_rules = 'preaggregation,prune_partitions,prune_buckets'")
    assert "PREAGGREGATION: OFF" in explain(cur, "EXPLAIN " + queries[0])
    merged_base = [rows(cur, q) for q in queries]
    assert with_rollups == merged_base
    assert with_rollups[0] == [(k, 2 * sum(i * 7 for i in range(40) if i % 5 == k)) for k in range(5)]
    cur.execute("SET enable_rollup_selection = DEFAULT")
    cur.execute("SELECT @@enable_rollup_selection")
    assert cur.fetchone()[0] in ("true", 1, "1")


def test_explain_levels(cur) -> None:  # noqa: ANN001
    cur.execute("CREATE TABLE t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 "
                "PROPERTIES ('replication_num' = '1')")
    text = explain(cur, "EXPLAIN SELECT k FROM t")
    assert ".t(t), PREAGGREGATION: ON" in text  # an empty table still names the base index
    assert "partitions=1/1 (t)" in text and "cardinality=0" in text
    assert explain(cur, "EXPLAIN REWRITTEN PLAN SELECT k FROM t").startswith("========== REWRITTEN PLAN ==========")
    with pytest.raises(pymysql.err.MySQLError) as info:
        cur.execute("EXPLAIN GRAPH SELECT k FROM t")
    assert "EXPLAIN GRAPH is not supported" in str(info.value)


def test_explain_prints_correlated_subqueries_apart(sales) -> None:  # noqa: ANN001
    text = explain(sales, "EXPLAIN SELECT k1, (SELECT max(top) FROM sales s2 WHERE s2.k2 = s.k2) FROM sales s "
                          "WHERE EXISTS (SELECT 1 FROM sales s3 WHERE s3.k1 = s.k1 AND s3.rev > s.cost) "
                          "AND k2 IN (SELECT k2 FROM sales s4 WHERE s4.k1 = s.k1 + 1)")
    assert "EXISTS (correlated subquery 1)" in text and " IN (correlated subquery 2)" in text
    assert "(correlated subquery 3)" in text
    for n, kind in ((1, "EXISTS"), (2, "IN"), (3, "SCALAR")):
        assert f"CORRELATED SUBQUERY {n} ({kind}, evaluated per row of its enclosing operator):" in text
    assert text.count("VOlapScanNode") == 4 and "output: max(top" in text
    verbose = explain(sales, "EXPLAIN VERBOSE SELECT k1 FROM sales s WHERE EXISTS "
                             "(SELECT 1 FROM sales s3 WHERE s3.k1 = s.k1 AND s3.rev > s.cost)")
    assert verbose.count("TupleDescriptor{") == 2
