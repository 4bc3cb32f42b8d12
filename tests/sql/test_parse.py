"""sql.parse: every supported statement form becomes a typed statement; nothing reaches the caller as a
raw sqlglot Command; errors are 1064 (syntax, no ANSI codes) or 1105 (unsupported statement)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlglot import exp

from sql import statements as st
from sql.errors import SqlError
from sql.parse import expand_executable_comments, parse

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "doris_ddl.sql"


def one(text: str) -> st.Statement:
    (stmt,) = parse(text)
    return stmt


def fixture_statements() -> list[str]:
    out, current = [], []
    for line in FIXTURE.read_text().splitlines():
        if line.startswith("--") or (not line.strip() and not current):
            continue
        current.append(line)
        if line.rstrip().endswith(";"):
            out.append("\n".join(current))
            current = []
    return out


@pytest.mark.parametrize("text", fixture_statements())
def test_fixture_ddl_parses_structured(text: str) -> None:
    stmt = one(text)
    assert isinstance(stmt, st.CreateTable)
    assert stmt.columns and stmt.distribution is not None


def test_create_table_structure() -> None:
    stmt = one(
        "CREATE TABLE IF NOT EXISTS db.t (k1 DATEV2 NOT NULL COMMENT 'c', k2 LARGEINT KEY,"
        " cost BIGINT SUM DEFAULT \"0\" COMMENT 'total', d DECIMALV3(10,2) NULL DEFAULT NULL,"
        " ts DATETIMEV2(3) REPLACE DEFAULT CURRENT_TIMESTAMP,"
        " INDEX idx (k1) USING INVERTED PROPERTIES(\"parser\" = \"english\") COMMENT 'i')"
        " ENGINE=OLAP AGGREGATE KEY(k1, k2) COMMENT 'tbl'"
        " PARTITION BY RANGE(k1) (PARTITION p1 VALUES LESS THAN (\"2020-01-01\") (\"replication_num\"=\"1\"),"
        " PARTITION p2 VALUES [(\"2020-01-01\"), (\"2020-02-01\")), PARTITION p3 VALUES LESS THAN MAXVALUE)"
        " DISTRIBUTED BY HASH(k2) BUCKETS AUTO"
        " ROLLUP (r1 (k2, cost), r2 (k1, cost) DUPLICATE KEY (k1) PROPERTIES ('timeout' = '10'))"
        " PROPERTIES (\"replication_num\" = \"1\")"
    )
    assert isinstance(stmt, st.CreateTable)
    assert (stmt.db, stmt.name, stmt.if_not_exists, stmt.engine, stmt.comment) == ("db", "t", True, "OLAP", "tbl")
    k1, k2, cost, d, ts = stmt.columns
    assert k1.type.this == exp.DataType.Type.DATE and k1.nullable is False and k1.comment == "c"
    assert k2.type.this == exp.DataType.Type.INT128 and k2.is_key
    assert (cost.agg_type, cost.default, cost.comment) == ("SUM", st.DefaultValue("0"), "total")
    assert d.nullable is True and d.default == st.DefaultValue(None)
    assert ts.agg_type == "REPLACE" and ts.default == st.DefaultValue("CURRENT_TIMESTAMP", True)
    assert stmt.keys == st.KeysDesc("AGGREGATE", ("k1", "k2"))
    assert stmt.partition == st.PartitionDesc("RANGE", ("k1",), (
        st.RangeLessThan("p1", ("2020-01-01",), (("replication_num", "1"),)),
        st.RangeFixed("p2", ("2020-01-01",), ("2020-02-01",)),
        st.RangeLessThan("p3", None),
    ))
    assert stmt.distribution == st.DistributionDesc("HASH", ("k2",), None, auto=True)
    assert stmt.rollups == (
        st.RollupDesc("r1", ("k2", "cost")),
        st.RollupDesc("r2", ("k1", "cost"), ("k1",), (("timeout", "10"),)),
    )
    assert stmt.indexes == (st.IndexDesc("idx", ("k1",), "INVERTED", "i", (("parser", "english"),)),)
    assert stmt.properties == (("replication_num", "1"),)


def test_partition_forms() -> None:
    stmt = one(
        "CREATE TABLE t (k INT) PARTITION BY RANGE(k) (FROM (1) TO (100) INTERVAL 10,"
        " FROM (\"2020-01-01\") TO (\"2020-02-01\") INTERVAL 1 WEEK) DISTRIBUTED BY RANDOM"
    )
    assert stmt.partition.items == (  # type: ignore[union-attr]
        st.RangeBatch(("1",), ("100",), 10, None),
        st.RangeBatch(("2020-01-01",), ("2020-02-01",), 1, "WEEK"),
    )
    assert stmt.distribution == st.DistributionDesc("RANDOM", (), None)  # type: ignore[union-attr]
    empty = one("CREATE TABLE t (k DATE) PARTITION BY RANGE(k) () DISTRIBUTED BY HASH(k) BUCKETS 3")
    assert empty.partition == st.PartitionDesc("RANGE", ("k",), ())  # type: ignore[union-attr]
    listed = one(
        "CREATE TABLE t (a INT, b VARCHAR(5)) PARTITION BY LIST(a, b)"
        " (PARTITION p1 VALUES IN ((1, 'x'), ('2', \"y\")), PARTITION p2 VALUES IN ((-3, 'z')))"
        " DISTRIBUTED BY HASH(a)"
    )
    assert listed.partition.items == (  # type: ignore[union-attr]
        st.ListValues("p1", (("1", "x"), ("2", "y"))),
        st.ListValues("p2", (("-3", "z"),)),
    )
    multi = one(
        "CREATE TABLE t (a DATE, b INT) PARTITION BY RANGE(a, b)"
        " (PARTITION p VALUES LESS THAN ('2020-01-01', MAXVALUE)) DISTRIBUTED BY HASH(a)"
    )
    assert multi.partition.items == (st.RangeLessThan("p", ("2020-01-01", None)),)  # type: ignore[union-attr]


CASES: list[tuple[str, st.Statement]] = [
    ("CREATE DATABASE d", st.CreateDatabase("d")),
    ("CREATE DATABASE IF NOT EXISTS d", st.CreateDatabase("d", True)),
    ("CREATE SCHEMA d /*!40100 DEFAULT CHARACTER SET utf8mb4 */", st.CreateDatabase("d")),
    ("DROP DATABASE IF EXISTS d", st.DropDatabase("d", True)),
    ("DROP SCHEMA d FORCE", st.DropDatabase("d", False, True)),
    ("USE db1", st.Use("db1")),
    ("DROP TABLE t", st.DropTable(None, "t")),
    ("DROP TABLE IF EXISTS db.t FORCE", st.DropTable("db", "t", True, True)),
    ("TRUNCATE TABLE db.t", st.TruncateTable("db", "t")),
    ("TRUNCATE TABLE t PARTITION (p1, p2)", st.TruncateTable(None, "t", ("p1", "p2"))),
    ('ALTER TABLE t ADD PARTITION p VALUES LESS THAN ("2020-01-01")',
     st.AddPartition(None, "t", st.RangeLessThan("p", ("2020-01-01",)))),
    ("ALTER TABLE db.t ADD PARTITION IF NOT EXISTS p VALUES LESS THAN MAXVALUE",
     st.AddPartition("db", "t", st.RangeLessThan("p", None), if_not_exists=True)),
    ('ALTER TABLE t ADD PARTITION p VALUES [("1"), ("5")) ("replication_num" = "1") '
     'DISTRIBUTED BY HASH(k) BUCKETS 4 PROPERTIES ("storage_medium" = "SSD")',
     st.AddPartition(None, "t", st.RangeFixed("p", ("1",), ("5",), (("replication_num", "1"),
                                                                   ("storage_medium", "SSD"))),
                     st.DistributionDesc("HASH", ("k",), 4))),
    ("ALTER TABLE t ADD TEMPORARY PARTITION p VALUES IN ((1, 'a'), (2, 'b')) DISTRIBUTED BY HASH(k) BUCKETS AUTO",
     st.AddPartition(None, "t", st.ListValues("p", (("1", "a"), ("2", "b"))),
                     st.DistributionDesc("HASH", ("k",), None, auto=True), temporary=True)),
    ("ALTER TABLE t DROP PARTITION p", st.DropPartition(None, "t", "p")),
    ("ALTER TABLE db.t DROP PARTITION IF EXISTS p FORCE", st.DropPartition("db", "t", "p", True, True)),
    ("ALTER TABLE t DROP TEMPORARY PARTITION p", st.DropPartition(None, "t", "p", temporary=True)),
    ("ALTER TABLE t MODIFY PARTITION p SET ('replication_num' = '1')",
     st.ModifyPartition(None, "t", ("p",), (("replication_num", "1"),))),
    ("ALTER TABLE t MODIFY PARTITION (p1, p2) SET ('storage_medium' = 'SSD')",
     st.ModifyPartition(None, "t", ("p1", "p2"), (("storage_medium", "SSD"),))),
    ("ALTER TABLE t MODIFY PARTITION (*) SET ('in_memory' = 'false')",
     st.ModifyPartition(None, "t", None, (("in_memory", "false"),))),
    ("DESC t", st.Describe(None, "t")),
    ("DESCRIBE db.t ALL", st.Describe("db", "t", True)),
    ("SHOW DATABASES", st.ShowDatabases()),
    ("SHOW DATABASES LIKE 'd%'", st.ShowDatabases("d%")),
    ("SHOW TABLES", st.ShowTables()),
    ("SHOW FULL TABLES FROM db LIKE 't%'", st.ShowTables("db", True, "t%")),
    ("SHOW CREATE TABLE db.t", st.ShowCreateTable("db", "t")),
    ("SHOW CREATE TABLE t", st.ShowCreateTable(None, "t")),
    ("SHOW CREATE DATABASE d", st.ShowCreateDatabase("d")),
    ("SHOW COLUMNS FROM t", st.ShowColumns(None, "t")),
    ("SHOW FULL COLUMNS FROM t FROM db LIKE 'a%'", st.ShowColumns("db", "t", True, "a%")),
    ("SHOW INDEX FROM t", st.ShowIndex(None, "t")),
    ("SHOW INDEXES FROM t FROM db", st.ShowIndex("db", "t")),
    ("SHOW KEYS FROM db.t", st.ShowIndex("db", "t")),
    ("SHOW TABLE STATUS", st.ShowTableStatus()),
    ("SHOW TABLE STATUS FROM db LIKE 'x'", st.ShowTableStatus("db", "x")),
    ("SHOW VARIABLES LIKE 'a%'", st.ShowVariables("SESSION", "a%")),
    ("SHOW GLOBAL VARIABLES", st.ShowVariables("GLOBAL")),
    ("SHOW SESSION VARIABLES", st.ShowVariables("SESSION")),
    ("SHOW ENGINES", st.ShowSimple("ENGINES")),
    ("SHOW CHARSET", st.ShowSimple("CHARSET")),
    ("SHOW CHARACTER SET", st.ShowSimple("CHARSET")),
    ("SHOW COLLATION", st.ShowSimple("COLLATION")),
    ("SHOW PLUGINS", st.ShowSimple("PLUGINS")),
    ("SHOW PROCESSLIST", st.ShowSimple("PROCESSLIST")),
    ("SHOW FULL PROCESSLIST", st.ShowSimple("PROCESSLIST", full=True)),
    ("SHOW WARNINGS", st.ShowSimple("WARNINGS")),
    ("SHOW ERRORS LIMIT 5", st.ShowSimple("ERRORS", limit=5)),
    ("SHOW STATUS", st.ShowSimple("STATUS")),
    ("SHOW GLOBAL STATUS", st.ShowSimple("STATUS", scope="GLOBAL")),
    ("SHOW PARTITIONS FROM db.t", st.ShowPartitions("db", "t")),
    ("SHOW TEMPORARY PARTITIONS FROM t LIMIT 2, 3", st.ShowPartitions(None, "t", True, limit=3, offset=2)),
    ("SHOW FRONTEND CONFIG", st.ShowConfig()),
    ("ADMIN SHOW FRONTEND CONFIG LIKE '%dynamic%'", st.ShowConfig("%dynamic%")),
    ('ADMIN SET FRONTEND CONFIG ("dynamic_partition_enable" = "true")',
     st.AdminSetConfig((("dynamic_partition_enable", "true"),))),
    ("SET PASSWORD = PASSWORD('x')", st.SetPassword(None, None, "x")),
    ("SET PASSWORD FOR 'u'@'%' = PASSWORD('x')", st.SetPassword("u", "%", "x")),
    ("SET PASSWORD FOR 'u'@'h' = '*ABCD'", st.SetPassword("u", "h", "*ABCD", hashed=True)),
    ("KILL 7", st.Kill(7)),
    ("KILL CONNECTION 7", st.Kill(7)),
    ("KILL QUERY 7", st.Kill(7, query_only=True)),
    ("BEGIN", st.Transaction("BEGIN")),
    ("START TRANSACTION", st.Transaction("BEGIN")),
    ("COMMIT", st.Transaction("COMMIT")),
    ("ROLLBACK", st.Transaction("ROLLBACK")),
    ("SHOW DELETE", st.ShowDelete()),
    ("SHOW DELETE FROM db", st.ShowDelete("db")),
]


@pytest.mark.parametrize("text,expected", CASES, ids=[c[0] for c in CASES])
def test_statement_forms(text: str, expected: st.Statement) -> None:
    assert one(text) == expected


def test_show_partitions_where_order() -> None:
    stmt = one("SHOW PARTITIONS FROM t WHERE PartitionName = 'p1' ORDER BY PartitionId DESC LIMIT 1")
    assert isinstance(stmt, st.ShowPartitions)
    assert stmt.where is not None and stmt.where.sql() == "PartitionName = 'p1'"
    assert [o.sql() for o in stmt.order_by] == ["PartitionId DESC"] and stmt.limit == 1


def test_show_where_filters_are_expressions() -> None:
    stmt = one("SHOW TABLES FROM db WHERE Tables_in_db = 'x'")
    assert isinstance(stmt, st.ShowTables) and isinstance(stmt.where, exp.EQ)
    stmt = one("SHOW VARIABLES WHERE Variable_name = 'a'")
    assert isinstance(stmt, st.ShowVariables) and isinstance(stmt.where, exp.EQ)


def _assignments(text: str) -> list[tuple[str, str, str]]:
    stmt = one(text)
    assert isinstance(stmt, st.SetVariables)
    return [(scope, name, value.sql(dialect="doris")) for scope, name, value in stmt.assignments]


def test_set_variables() -> None:
    assert _assignments("SET exec_mem_limit = 100") == [("SESSION", "exec_mem_limit", "100")]
    assert _assignments("SET GLOBAL Query_Timeout = 10, SESSION x = 'a', LOCAL y = 1") == [
        ("GLOBAL", "query_timeout", "10"), ("SESSION", "x", "'a'"), ("SESSION", "y", "1"),
    ]
    assert _assignments("set autocommit=1, sql_mode = concat(@@sql_mode,',STRICT_TRANS_TABLES')") == [
        ("SESSION", "autocommit", "1"),
        ("SESSION", "sql_mode", "CONCAT(@@sql_mode, ',STRICT_TRANS_TABLES')"),
    ]
    assert _assignments("SET @@global.x = 1, @@session.y = 2, @@z = 3") == [
        ("GLOBAL", "x", "1"), ("SESSION", "y", "2"), ("SESSION", "z", "3"),
    ]
    assert _assignments("SET @my_var = 5") == [("USER", "my_var", "5")]
    assert _assignments("SET x = DEFAULT") == [("SESSION", "x", "DEFAULT")]


def test_set_names_and_charset() -> None:
    assert _assignments("SET NAMES utf8mb4") == [
        ("SESSION", "character_set_client", "'utf8mb4'"),
        ("SESSION", "character_set_connection", "'utf8mb4'"),
        ("SESSION", "character_set_results", "'utf8mb4'"),
    ]
    assert _assignments("SET NAMES utf8mb4 COLLATE utf8mb4_bin")[-1] == (
        "SESSION", "collation_connection", "'utf8mb4_bin'"
    )
    assert _assignments("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED") == [
        ("SESSION", "transaction_isolation", "'READ-COMMITTED'")
    ]


def test_insert_values_and_select() -> None:
    stmt = one("INSERT INTO db.t PARTITION (p1, p2) WITH LABEL lbl_1 (a, b) VALUES (1, 'x'), (2, NULL)")
    assert isinstance(stmt, st.Insert)
    assert (stmt.db, stmt.table, stmt.columns, stmt.partitions, stmt.label) == (
        "db", "t", ("a", "b"), ("p1", "p2"), "lbl_1"
    )
    assert stmt.values is not None and [[v.sql() for v in row] for row in stmt.values] == [
        ["1", "'x'"], ["2", "NULL"]
    ]
    stmt = one("INSERT INTO t WITH LABEL l2 SELECT * FROM s WHERE a > 1")
    assert isinstance(stmt, st.Insert) and stmt.label == "l2" and stmt.columns is None
    assert isinstance(stmt.query, exp.Select) and stmt.values is None
    stmt = one("INSERT INTO t VALUES (1)")
    assert isinstance(stmt, st.Insert) and stmt.label is None and stmt.partitions == ()


def test_delete_forms() -> None:
    stmt = one("DELETE FROM db.t a PARTITION p1 WHERE k = 1 AND v IN (1, 2)")
    assert isinstance(stmt, st.Delete)
    assert (stmt.db, stmt.table, stmt.alias, stmt.partitions, stmt.temporary, stmt.using) == (
        "db", "t", "a", ("p1",), False, ())
    assert stmt.where is not None and stmt.where.sql() == "k = 1 AND v IN (1, 2)"
    for text, partitions, alias in (
        ("DELETE FROM t PARTITIONS (p1, p2) WHERE k IS NOT NULL", ("p1", "p2"), None),
        ("DELETE FROM t PARTITION (p1, p2) x WHERE k <> 1", ("p1", "p2"), "x"),
        ("DELETE FROM t AS x WHERE k != 1", (), "x"),
    ):
        stmt = one(text)
        assert isinstance(stmt, st.Delete) and (stmt.partitions, stmt.alias) == (partitions, alias), text
    stmt = one("DELETE FROM t TEMPORARY PARTITION p WHERE k = 1")
    assert isinstance(stmt, st.Delete) and stmt.temporary and stmt.partitions == ("p",)
    stmt = one("DELETE FROM t USING t2 JOIN t3 ON t2.a = t3.a WHERE t.k = t2.k")
    assert isinstance(stmt, st.Delete) and [u.sql() for u in stmt.using] == ["t2 JOIN t3 ON t2.a = t3.a"]
    stmt = one("DELETE FROM t")
    assert isinstance(stmt, st.Delete) and stmt.where is None  # refused by the binder with Doris's message


def test_queries_and_explain() -> None:
    for text in ("SELECT 1", "SELECT a FROM t UNION ALL SELECT b FROM u", "WITH c AS (SELECT 1) SELECT * FROM c",
                 "(SELECT 1)"):
        assert isinstance(one(text), st.Query)
    stmt = one("EXPLAIN SELECT * FROM t")
    assert isinstance(stmt, st.Explain) and stmt.level is None and isinstance(stmt.query, exp.Select)
    assert one("EXPLAIN VERBOSE SELECT 1").level == "VERBOSE"  # type: ignore[attr-defined]
    assert one("EXPLAIN SHAPE PLAN SELECT 1").level == "SHAPE PLAN"  # type: ignore[attr-defined]
    assert isinstance(one("DESC SELECT 1"), st.Explain)


def test_multiple_statements_and_comments() -> None:
    stmts = parse("USE d; -- go\nSELECT 1 /* c */;\n\n;  # trailing\n")
    assert [type(s) for s in stmts] == [st.Use, st.Query]
    assert parse("/*!40101 SET NAMES utf8 */;")[0] == parse("SET NAMES utf8")[0]
    assert parse("") == []


def test_expand_executable_comments() -> None:
    assert expand_executable_comments("a /*!40100 b */ c").split() == ["a", "b", "c"]
    assert expand_executable_comments("a /*! b */").split() == ["a", "b"]
    # left alone inside strings and ordinary comments
    assert expand_executable_comments("'/*!x*/' /* /*!y */") == "'/*!x*/' /* /*!y */"


@pytest.mark.parametrize("text", ["SELEC 1", "SELECT FROM WHERE", "CREATE TABLE t (a INT,", "SELECT 'abc",
                                  "1 + 1", "SET foo bar baz", "CREATE TABLE t (a INT) DISTRIBUTED BY FOO"])
def test_syntax_errors_are_1064_without_ansi(text: str) -> None:
    with pytest.raises(SqlError) as info:
        parse(text)
    err = info.value
    assert (err.code, err.sqlstate) == (1064, "42000")
    assert err.message.startswith("errCode = 2, detailMessage = Syntax error")
    assert "\x1b" not in err.message


def test_syntax_error_points_at_the_line() -> None:
    with pytest.raises(SqlError) as info:
        parse("SELECT 1;\nSELECT a b c FROM")
    assert "Syntax error in line 2:\nSELECT a b c FROM" in info.value.message


@pytest.mark.parametrize("text,kind", [
    ("CREATE MATERIALIZED VIEW v AS SELECT 1", "CREATE MATERIALIZED VIEW"),
    ('ALTER TABLE t ENABLE FEATURE "BATCH_DELETE"', "ALTER TABLE"),
    ("SHOW BROKER", "SHOW BROKER"),
    ("INSERT IGNORE INTO t VALUES (1)", "INSERT IGNORE"),
    ("CREATE OR REPLACE TABLE t2 AS SELECT 1", "CREATE OR REPLACE TABLE"),
])
def test_unsupported_statements_are_rejected(text: str, kind: str) -> None:
    with pytest.raises(SqlError) as info:
        parse(text)
    assert (info.value.code, info.value.message) == (
        1105, f"errCode = 2, detailMessage = Unsupported statement: {kind}"
    )


def test_table_writes_parse() -> None:
    (ctas,) = parse("CREATE TABLE IF NOT EXISTS d.t2 (x, y) DUPLICATE KEY(x) DISTRIBUTED BY HASH(x) BUCKETS 3 "
                    "AS SELECT 1 a, 2 b")
    assert (ctas.db, ctas.name, ctas.column_names, ctas.if_not_exists, ctas.columns) == ("d", "t2", ("x", "y"),
                                                                                        True, ())
    assert ctas.keys == st.KeysDesc("DUPLICATE", ("x",)) and ctas.query is not None
    assert parse("CREATE TABLE t2 LIKE d.t1") == [st.CreateTableLike(None, "t2", "d", "t1", None)]
    assert parse("CREATE TABLE t2 LIKE t1 WITH ROLLUP") == [st.CreateTableLike(None, "t2", None, "t1", ())]
    assert parse("CREATE TABLE t2 LIKE t1 WITH ROLLUP (r1, r2)") == [
        st.CreateTableLike(None, "t2", None, "t1", ("r1", "r2"))]
    (ow,) = parse("INSERT OVERWRITE TABLE t PARTITION (p1, p2) WITH LABEL l SELECT 1")
    assert (ow.overwrite, ow.partitions, ow.label) == (True, ("p1", "p2"), "l")
    (ow,) = parse("INSERT OVERWRITE TABLE t PARTITION (*) VALUES (1)")
    assert (ow.overwrite, ow.partitions) == (True, ("*",))
    with pytest.raises(SqlError):
        parse("INSERT INTO t PARTITION (*) VALUES (1)")
    (up,) = parse("UPDATE t a SET a.v = v + 1, w = 'x' FROM t2 WHERE a.k = t2.k")
    assert (up.table, up.alias, [c for c, _ in up.assignments], len(up.sources)) == ("t", "a", ["v", "w"], 1)
    with pytest.raises(SqlError, match="not a column of the updated table"):
        parse("UPDATE t SET t2.v = 1")
    with pytest.raises(SqlError):
        parse("CREATE TABLE t2 (a INT) AS SELECT 1")
