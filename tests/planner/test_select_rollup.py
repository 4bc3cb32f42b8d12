"""Rollup selection, PREAGGREGATION and pruning through EXPLAIN (fixtures/select_rollup.sql), plus the
answers: with and without rollup selection, and with merge-on-read forced, they must agree."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlglot
from rollup_harness import Harness

from planner.query import plan_query
from sql.errors import SqlError

FIXTURES = Path(__file__).parent / "fixtures"
D = dt.date
T = dt.datetime

AGG_DDL = """CREATE TABLE agg (
    user_id LARGEINT NOT NULL, `date` DATE NOT NULL, `timestamp` DATETIME NOT NULL, city VARCHAR(20),
    age SMALLINT, sex TINYINT, last_visit_date DATETIME REPLACE DEFAULT "1970-01-01 00:00:00",
    cost BIGINT SUM DEFAULT "0", max_dwell_time INT MAX DEFAULT "0", min_dwell_time INT MIN DEFAULT "99999")
AGGREGATE KEY(user_id, `date`, `timestamp`, city, age, sex) DISTRIBUTED BY HASH(user_id) BUCKETS 3"""
AGG_ROWS = [
    (10000, D(2017, 10, 1), T(2017, 10, 1, 8, 0, 5), "北京", 20, 0, T(2017, 10, 1, 6, 0), 20, 10, 10),
    (10000, D(2017, 10, 1), T(2017, 10, 1, 9, 0, 5), "北京", 20, 0, T(2017, 10, 1, 7, 0), 15, 2, 2),
    (10001, D(2017, 10, 1), T(2017, 10, 1, 18, 12, 10), "北京", 30, 1, T(2017, 10, 1, 17, 5, 45), 2, 22, 22),
    (10002, D(2017, 10, 2), T(2017, 10, 2, 13, 10), "上海", 20, 1, T(2017, 10, 2, 12, 59, 12), 200, 5, 5),
    (10003, D(2017, 10, 2), T(2017, 10, 2, 13, 15), "广州", 32, 0, T(2017, 10, 2, 11, 20), 30, 11, 11),
    (10004, D(2017, 10, 1), T(2017, 10, 1, 12, 12, 48), "深圳", 35, 0, T(2017, 10, 1, 10, 0, 15), 100, 3, 3),
    (10004, D(2017, 10, 3), T(2017, 10, 3, 12, 38, 20), "深圳", 35, 0, T(2017, 10, 3, 10, 20, 22), 11, 6, 6),
]
DUP_DDL = """CREATE TABLE dup (k1 INT, k2 INT, k3 INT, k4 INT, k5 INT, k6 INT, k7 INT)
DUPLICATE KEY(k1, k2, k3) DISTRIBUTED BY HASH(k1) BUCKETS 2"""
DUP_COLS = ["k1", "k2", "k3", "k4", "k5", "k6", "k7"]
SALES_DDL = """CREATE TABLE sales (k1 INT NOT NULL, k2 INT NOT NULL, rev BIGINT SUM NOT NULL,
    cost BIGINT SUM NOT NULL, qty BIGINT SUM NULL)
AGGREGATE KEY(k1, k2) DISTRIBUTED BY HASH(k1) BUCKETS 2"""
PART_R_DDL = """CREATE TABLE part_r (dt DATE NOT NULL, k INT NOT NULL, v INT)
DUPLICATE KEY(dt, k) PARTITION BY RANGE(dt) (
    PARTITION p202001 VALUES [('2020-01-01'), ('2020-02-01')),
    PARTITION p202002 VALUES [('2020-02-01'), ('2020-03-01')),
    PARTITION p202003 VALUES [('2020-03-01'), ('2020-04-01')))
DISTRIBUTED BY HASH(k) BUCKETS 4"""
PART_L_DDL = """CREATE TABLE part_l (city VARCHAR(10) NOT NULL, k INT NOT NULL, v INT)
DUPLICATE KEY(city, k) PARTITION BY LIST(city) (
    PARTITION p_north VALUES IN ('bj', 'tj'), PARTITION p_south VALUES IN ('sh', 'gz'))
DISTRIBUTED BY HASH(k) BUCKETS 4"""
UNIQ_DDL = """CREATE TABLE uniq (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2
PROPERTIES ("enable_unique_key_merge_on_write" = "false")"""


@pytest.fixture(scope="module")
def h(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Harness]:
    h = Harness(tmp_path_factory.mktemp("rollup"))
    h.create(AGG_DDL, [("r_user_cost", ["user_id", "cost"]),
                       ("r_city_age", ["city", "age", "cost", "max_dwell_time", "min_dwell_time"])])
    h.load("agg", AGG_ROWS[:4])
    h.load("agg", AGG_ROWS[4:] + AGG_ROWS[:2])  # a second load: unmerged duplicates across rowsets
    h.create(DUP_DDL, [("rollup_index2", ["k2", "k1", "k3", "k4", "k5", "k6", "k7"]),
                       ("rollup_index3", ["k4", "k5", "k6", "k1", "k2", "k3", "k7"]),
                       ("rollup_index4", ["k4", "k6", "k5", "k1", "k2", "k3", "k7"]),
                       ("rollup_small", ["k3"])])
    h.load("dup", [tuple((i * (j + 3)) % 7 for j in range(7)) for i in range(60)])
    h.create(SALES_DDL, [("r_k1", ["k1", "rev", "cost", "qty"])])
    for batch in range(3):
        h.load("sales", [(i % 4, i % 5, i * 10 + batch, i + batch, None if i % 3 == 0 else i) for i in range(40)])
    h.create(PART_R_DDL)
    h.load("part_r", [(D(2020, 1 + i % 3, 1 + i % 28), i % 10, i) for i in range(90)])
    h.create(PART_L_DDL)
    h.load("part_l", [(["bj", "tj", "sh", "gz"][i % 4], i % 9, i) for i in range(40)])
    h.create(UNIQ_DDL)
    h.load("uniq", [(i % 6, i) for i in range(12)])
    h.load("uniq", [(i % 6, 100 + i) for i in range(3)])
    yield h
    h.close()


def fixture_pairs(name: str) -> list[tuple[str, list[str]]]:
    lines = [ln.rstrip() for ln in (FIXTURES / name).read_text().splitlines()]
    lines = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    assert len(lines) % 2 == 0, f"{name}: odd number of lines"
    return [(lines[i], lines[i + 1].split(" && ")) for i in range(0, len(lines), 2)]


def _sorted_rows(table) -> list[tuple]:  # noqa: ANN001
    return sorted((tuple(r.values()) for r in table.to_pylist()), key=repr)


def test_select_rollup_fixture(h: Harness) -> None:
    """Every query of the fixture: its EXPLAIN shows the fragment, and its answer equals the base
    index's answer with merge-on-read forced (rollup selection and preaggregation both off)."""
    failures = []
    for query, fragments in fixture_pairs("select_rollup.sql"):
        text = "\n".join(h.explain(query))
        missing = [f for f in fragments if f not in text]
        if missing:
            failures.append(f"{query}\n  missing {missing}\n{text}")
            continue
        got = _sorted_rows(h.query(query))
        want = _sorted_rows(h.query(query, enable_rollup_selection="false", disable_nereids_rules="preaggregation"))
        if got != want:
            failures.append(f"{query}\n  answer {got} != base {want}")
    assert not failures, "\n\n".join(failures)


def test_seed_rollup_answers(h: Harness) -> None:
    """The seed's stored rollup contents, read through the query that hits each rollup."""
    got = h.query("SELECT user_id, sum(cost) FROM agg GROUP BY user_id ORDER BY user_id")
    assert [tuple(r.values()) for r in got.to_pylist()] == [(10000, 70), (10001, 2), (10002, 200),
                                                            (10003, 30), (10004, 111)]
    got = h.query("SELECT city, age, sum(cost), max(max_dwell_time), min(min_dwell_time) FROM agg "
                  "GROUP BY city, age ORDER BY sum(cost)")
    assert [tuple(r.values()) for r in got.to_pylist()] == [
        ("北京", 30, 2, 22, 22), ("广州", 32, 30, 11, 11), ("北京", 20, 70, 10, 2), ("深圳", 35, 111, 6, 3),
        ("上海", 20, 200, 5, 5)]


def test_preaggregation_on_skips_the_merge(h: Harness) -> None:
    """ON reads unmerged rowsets (the query's own aggregation merges); OFF / count(*) merges first."""
    on = h.ctx()
    plan = plan_query(sqlglot.parse_one("SELECT user_id, sum(cost) FROM agg GROUP BY user_id", read="doris"), on).plan
    scan = next(n for n in plan.walk() if type(n).__name__ == "LogicalScan")
    assert scan.source.preaggregation is True and scan.source.merge is False
    assert scan.source.index.name == "r_user_cost"
    plan = plan_query(sqlglot.parse_one("SELECT count(*) FROM agg", read="doris"), on).plan
    scan = next(n for n in plan.walk() if type(n).__name__ == "LogicalScan")
    assert scan.source.merge is True and scan.source.index.name == "agg"
    # count(*) over the merged base: 7 distinct key rows even though 9 rows were loaded
    assert h.query("SELECT count(*) FROM agg").column(0).to_pylist() == [7]


def test_disable_rollup_selection_variable(h: Harness) -> None:
    text = "\n".join(h.explain("SELECT user_id, sum(cost) FROM agg GROUP BY user_id",
                               enable_rollup_selection="false"))
    assert "TABLE: db.agg(agg), PREAGGREGATION: ON" in text
    text = "\n".join(h.explain("SELECT user_id, sum(cost) FROM agg GROUP BY user_id",
                               disable_nereids_rules="select_rollup"))
    assert "TABLE: db.agg(agg)" in text


def test_pruned_scans_read_only_their_tablets(h: Harness) -> None:
    q = "SELECT dt, k, v FROM part_r WHERE k = 7 AND dt >= '2020-02-01'"
    got = _sorted_rows(h.query(q))
    want = _sorted_rows(h.query(q, disable_nereids_rules="prune_partitions,prune_buckets"))
    assert got == want and len(got) == 6
    plan = plan_query(sqlglot.parse_one(q, read="doris"), h.ctx()).plan
    source = next(n for n in plan.walk() if type(n).__name__ == "LogicalScan").source
    assert len(source.partition_ids) == 2 and len(source.tablet_ids) == 2
    source.scan(["k"], [])
    pruned_read = source.stats.raw_rows_read
    unpruned = dataclasses.replace(source, tablet_ids=None)
    unpruned.scan(["k"], [])
    # the two partitions hold 60 rows; the two buckets only part of them, and only those are decoded
    assert unpruned.stats.raw_rows_read == 60 and 6 <= pruned_read < 60


def test_explain_layout_and_levels(h: Harness) -> None:
    lines = h.explain("SELECT city, sum(cost) FROM agg WHERE city = 'x' GROUP BY city")
    assert lines[:3] == ["PLAN FRAGMENT 0", "  OUTPUT EXPRS:", lines[2]] and lines[2].startswith("    city[#")
    agg = next(i for i, ln in enumerate(lines) if ":VAGGREGATE (update finalize)" in ln)
    assert lines[agg + 1].startswith("  |  output: sum(cost[#")
    scan = next(i for i, ln in enumerate(lines) if ":VOlapScanNode(" in ln)
    assert lines[scan - 1] == "  |  " and lines[scan + 1] == "     TABLE: db.agg(r_city_age), PREAGGREGATION: ON"
    assert lines[scan + 2].startswith("     PREDICATES: (city[#")
    assert lines[scan + 3:scan + 4] == ["     partitions=1/1 (agg)"]
    assert lines[-1] == "     pushAggOp=NONE"
    verbose = h.explain("SELECT city, sum(cost) FROM agg GROUP BY city", "VERBOSE")
    assert "Tuples:" in verbose and any(ln.startswith("TupleDescriptor{id=0, tbl=agg}") for ln in verbose)
    assert any("SlotDescriptor{" in ln and "col=city" in ln for ln in verbose)
    assert any("tuple ids:" in ln for ln in verbose)
    plan = h.explain("SELECT 1 FROM agg", "REWRITTEN PLAN")
    assert plan[0] == "========== REWRITTEN PLAN ==========" and any("LogicalScan" in ln for ln in plan)
    with pytest.raises(SqlError, match="EXPLAIN GRAPH is not supported"):
        h.explain("SELECT 1 FROM agg", "GRAPH")
