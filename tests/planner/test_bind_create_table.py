"""planner.bind.create_table: Doris's CREATE TABLE analysis rules and messages (doris-reference §1)."""

from __future__ import annotations

import pytest

from planner.bind.create_table import bind_create_table
from sql.errors import SqlError
from sql.parse import parse
from storage.catalog.model import TableSpec


def bind(text: str) -> TableSpec:
    (stmt,) = parse(text)
    return bind_create_table(stmt)  # type: ignore[arg-type]


def error(text: str) -> SqlError:
    with pytest.raises(SqlError) as info:
        bind(text)
    return info.value


DIST = " DISTRIBUTED BY HASH(k1)"

ERRORS = [
    # keys: ordered prefix, existence, counts, aggregation rules
    ("CREATE TABLE t (k1 INT, province VARCHAR(20), rank_no INT, v INT SUM) AGGREGATE KEY(k1, rank_no)" + DIST,
     "Key columns should be a ordered prefix of the schema. KeyColumns[1] (starts from zero) is rank_no, "
     "but corresponding column is province in the previous columns declaration."),
    ("CREATE TABLE t (k1 INT, v INT) DUPLICATE KEY(k1, nope)" + DIST, "Key column[nope] doesn't exist."),
    ("CREATE TABLE t (k1 INT) DUPLICATE KEY(k1, k2, k3)" + DIST,
     "The number of key columns should be less than the number of columns."),
    ("CREATE TABLE t (k1 INT SUM, v INT SUM) AGGREGATE KEY(k1)" + DIST,
     "Key column[k1] should not specify aggregate type."),
    ("CREATE TABLE t (k1 INT, v1 INT) AGGREGATE KEY(k1)" + DIST,
     "AGG_KEYS table should specify aggregate type for non-key column[v1]"),
    ("CREATE TABLE t (k1 INT, v1 INT MAX) DUPLICATE KEY(k1)" + DIST,
     "DUP_KEYS table should not specify aggregate type for non-key column[v1]"),
    ("CREATE TABLE t (k1 INT, v1 INT REPLACE) UNIQUE KEY(k1)" + DIST,
     "UNIQUE_KEYS table should not specify aggregate type for non-key column[v1]"),
    ("CREATE TABLE t (k1 INT, v1 INT SUM, v2 INT)" + DIST,
     "AGG_KEYS table should specify aggregate type for non-key column[v2]"),
    # default keys
    ("CREATE TABLE t (k1 DOUBLE, v INT)" + DIST,
     "The olap table first column could not be float, double, string or array, struct, map, "
     "please use decimal or varchar instead."),
    ("CREATE TABLE t (k1 STRING, v INT)" + DIST,
     "The olap table first column could not be float, double, string or array, struct, map, "
     "please use decimal or varchar instead."),
    # key column types
    ("CREATE TABLE t (k1 INT, f FLOAT, v INT) DUPLICATE KEY(k1, f)" + DIST,
     "Float or double can not used as a key, use decimal instead."),
    ("CREATE TABLE t (k1 INT, s STRING, v INT) DUPLICATE KEY(k1, s)" + DIST,
     "String Type should not be used in key column[s]"),
    # columns
    ("CREATE TABLE t (k1 INT, K1 INT)" + DIST, "Duplicate column name 'K1'"),
    ("CREATE TABLE t (k1 INT NOT NULL DEFAULT NULL, v INT)" + DIST,
     "Can not set null default value to non nullable column: k1"),
    ("CREATE TABLE t (k1 INT DEFAULT 'abc', v INT)" + DIST, "Invalid default value for 'k1': Invalid number format: abc"),
    ("CREATE TABLE t (k1 TINYINT DEFAULT '300', v INT)" + DIST,
     "Invalid default value for 'k1': Number out of range[300]. type: TINYINT"),
    ("CREATE TABLE t (k1 DATE DEFAULT '2020-13-01', v INT)" + DIST,
     "Invalid default value for 'k1': date literal [2020-13-01] is invalid"),
    ("CREATE TABLE t (k1 INT DEFAULT CURRENT_TIMESTAMP, v INT)" + DIST,
     "Invalid default value for 'k1': CURRENT_TIMESTAMP is not supported for INT"),
    ("CREATE TABLE t (k1 INT, v VARCHAR(10) SUM) AGGREGATE KEY(k1)" + DIST,
     "Invalid aggregate function 'SUM' for 'v'"),
    ("CREATE TABLE t (k1 INT, v INT) ENGINE=mysql" + DIST, "currently Nereids support olap engine only"),
    # distribution
    ("CREATE TABLE t (k1 INT, v INT SUM) AGGREGATE KEY(k1) DISTRIBUTED BY HASH(v)",
     "Distribution column[v] is not key column"),
    ("CREATE TABLE t (k1 INT, v INT REPLACE) UNIQUE KEY(k1) DISTRIBUTED BY HASH(v)",
     "UNIQUE_KEYS table should not specify aggregate type for non-key column[v]"),
    ("CREATE TABLE t (k1 INT, v INT) UNIQUE KEY(k1) DISTRIBUTED BY HASH(v)",
     "Distribution column[v] is not key column"),
    ("CREATE TABLE t (k1 INT, v INT) DISTRIBUTED BY HASH(nope)", "Distribution column(nope) doesn't exist"),
    ("CREATE TABLE t (k1 INT, v INT) DISTRIBUTED BY HASH(k1, k1)", "Duplicate key in distribution desc is not allowed"),
    ("CREATE TABLE t (k1 INT, v INT) DISTRIBUTED BY HASH(k1) BUCKETS 0",
     "Number of hash distribution should be greater than zero."),
    ("CREATE TABLE t (k1 INT, v INT) UNIQUE KEY(k1) DISTRIBUTED BY RANDOM",
     "Should not be distributed by random when keys type is unique"),
    ("CREATE TABLE t (k1 INT, v INT REPLACE) AGGREGATE KEY(k1) DISTRIBUTED BY RANDOM",
     "Should not be distributed by random when keys type is aggand column is in replace, [v] is invalid"),
    # indexes
    ("CREATE TABLE t (k1 INT, v INT, INDEX i (v) USING BITMAP, INDEX i (k1) USING BITMAP)" + DIST,
     "index name must be unique."),
    ("CREATE TABLE t (k1 INT, v INT, INDEX i (nope) USING BITMAP)" + DIST,
     "Column does not exist in table. invalid column: nope"),
    ("CREATE TABLE t (k1 INT, v INT, INDEX i (v) USING BITMAP, INDEX j (v) USING BITMAP)" + DIST,
     "same index columns have multiple same type index is not allowed."),
    # partitions
    ("CREATE TABLE t (k1 INT, v INT) PARTITION BY RANGE(nope) ()" + DIST, "partition key nope is not exists"),
    ("CREATE TABLE t (k1 INT, d DOUBLE) DUPLICATE KEY(k1) PARTITION BY RANGE(d) ()" + DIST,
     "Floating point type column can not be partition column"),
    ("CREATE TABLE t (k1 INT, s STRING) DUPLICATE KEY(k1) PARTITION BY LIST(s) ()" + DIST,
     "String Type should not be used in partition column[s]."),
    ("CREATE TABLE t (k1 INT, v INT SUM) PARTITION BY RANGE(v) ()" + DIST,
     "The partition column could not be aggregated column"),
    ("CREATE TABLE t (k1 INT, v INT) PARTITION BY RANGE(k1, k1) ()" + DIST, "Duplicated partition column k1"),
    ("CREATE TABLE t (k1 INT, v INT) PARTITION BY RANGE(k1) (PARTITION p1 VALUES LESS THAN ('1'),"
     " PARTITION p1 VALUES LESS THAN ('2'))" + DIST, "Duplicated named partition: p1"),
    ("CREATE TABLE t (k1 INT, v INT) PARTITION BY RANGE(k1) (PARTITION p1 VALUES IN ('1'))" + DIST,
     "partitions types is invalid, expected FIXED or LESS in range partitions and IN in list partitions"),
    ("CREATE TABLE t (k1 INT, v INT) PARTITION BY LIST(k1) (PARTITION p1 VALUES LESS THAN ('1'))" + DIST,
     "partitions types is invalid, expected FIXED or LESS in range partitions and IN in list partitions"),
    ("CREATE TABLE t (k1 INT, v INT) PARTITION BY RANGE(k1) (PARTITION p1 VALUES LESS THAN ('10'),"
     " PARTITION p2 VALUES [('5'), ('20')))" + DIST,
     "Range [types: [INT]; keys: [5]; ..types: [INT]; keys: [20]; ) is intersected with range: "
     "[types: [INT]; keys: [-2147483648]; ..types: [INT]; keys: [10]; )"),
    ("CREATE TABLE t (k1 INT, v INT) PARTITION BY RANGE(k1) (PARTITION p1 VALUES LESS THAN ('10'),"
     " PARTITION p2 VALUES LESS THAN ('10'))" + DIST,
     "Range [types: [INT]; keys: [-2147483648]; ..types: [INT]; keys: [10]; ) is intersected with range: "
     "[types: [INT]; keys: [-2147483648]; ..types: [INT]; keys: [10]; )"),
    ("CREATE TABLE t (k1 INT, v INT) PARTITION BY RANGE(k1) (PARTITION p1 VALUES [('10'), ('5')))" + DIST,
     "The lower values must smaller than upper values"),
    ("CREATE TABLE t (k1 DATE, v INT) PARTITION BY RANGE(k1) (PARTITION p1 VALUES LESS THAN ('2020-02-30'))" + DIST,
     "date literal [2020-02-30] is invalid"),
    ("CREATE TABLE t (k1 DATE, v INT) PARTITION BY RANGE(k1) (FROM ('2020-01-10') TO ('2020-01-01') INTERVAL 1 DAY)"
     + DIST, "Multi build partition start time should less than end time."),
    ("CREATE TABLE t (k1 DATE, v INT) PARTITION BY RANGE(k1) (FROM ('2020-01-01') TO ('2020-01-10') INTERVAL 0 DAY)"
     + DIST, "Multi partition time interval must be larger than zero."),
    ("CREATE TABLE t (k1 INT, v INT) PARTITION BY RANGE(k1) (FROM (0) TO (10000) INTERVAL 1)" + DIST,
     "The number of Multi partitions too much, should not exceed:4096"),
    ("CREATE TABLE t (k1 INT, v INT) PARTITION BY LIST(k1) (PARTITION p1 VALUES IN ('1'),"
     " PARTITION p2 VALUES IN ('1'))" + DIST,
     "Invalid list value format: errCode = 2, detailMessage = The partition key[(\"1\")] in partition "
     "item[('1')] is conflict with current partitionKeys[(\"1\")]"),
    ("CREATE TABLE t (k1 INT, v INT) PARTITION BY LIST(k1) (PARTITION p1 VALUES IN ('1', '2', '1'))" + DIST,
     "Invalid list value format: errCode = 2, detailMessage = The partition key[('1','2','1')] has duplicate "
     "item [(\"1\")]."),
    ("CREATE TABLE t (k1 INT, v INT) PARTITION BY RANGE(k1) (PARTITION 1p VALUES LESS THAN ('1'))" + DIST,
     "Incorrect partition name '1p'"),
    ("CREATE TABLE t (k1 INT, v INT) PARTITION BY RANGE(k1) (PARTITION p1 VALUES LESS THAN ('-2147483648'))"
     + DIST, "Partition's upper value should not be MIN VALUE: ('-2147483648')"),
    ("CREATE TABLE t (k1 INT, v INT) PARTITION BY RANGE(k1) (PARTITION p1 VALUES LESS THAN ('1')"
     " ('in_memory' = 'true'))" + DIST, "Not support set 'in_memory'='true' now!"),
    # properties
    ("CREATE TABLE t (k1 INT, v INT)" + DIST + " PROPERTIES ('foo' = 'bar', 'replication_num' = '1')",
     "Unknown properties: {foo=bar}"),
    ("CREATE TABLE t (k1 INT, v INT)" + DIST + " PROPERTIES ('enable_unique_key_merge_on_write' = 'true')",
     "enable_unique_key_merge_on_write property only support unique key table"),
    ("CREATE TABLE t (k1 INT, v INT)" + DIST + " PROPERTIES ('light_schema_change' = 'maybe')",
     "light_schema_change must be `true` or `false`"),
    ("CREATE TABLE t (k1 INT, v INT)" + DIST + " PROPERTIES ('compaction_policy' = 'leveled')",
     "compaction_policy must be time_series or size_based"),
    ("CREATE TABLE t (k1 INT, v INT)" + DIST + " PROPERTIES ('bloom_filter_columns' = 'v', 'bloom_filter_fpp' = 'x')",
     "Bloom filter fpp is not Double"),
    ("CREATE TABLE t (k1 INT, v INT)" + DIST + " PROPERTIES ('bloom_filter_columns' = 'v', 'bloom_filter_fpp' = '0.1')",
     "Bloom filter fpp should in [1.0E-4, 0.05]"),
    ("CREATE TABLE t (k1 INT, v INT)" + DIST + " PROPERTIES ('bloom_filter_columns' = 'nope')",
     "Bloom filter column does not exist in table. invalid column: nope"),
    ("CREATE TABLE t (k1 INT, v TINYINT)" + DIST + " PROPERTIES ('bloom_filter_columns' = 'v')",
     "TINYINT is not supported in bloom filter index. invalid column: v"),
    ("CREATE TABLE t (k1 INT, v INT SUM)" + DIST + " PROPERTIES ('bloom_filter_columns' = 'v')",
     "Bloom filter index should only be used in columns of UNIQUE_KEYS/DUP_KEYS table or key columns of "
     "AGG_KEYS table. invalid column: v"),
    ("CREATE TABLE t (k1 INT, v INT)" + DIST + " PROPERTIES ('bloom_filter_columns' = 'v, V')",
     "Reduplicated bloom filter column: V"),
    ("CREATE TABLE t (k1 INT, v INT SUM)" + DIST + " PROPERTIES ('store_row_column' = 'true')",
     "Aggregate table can't support row column now"),
]


@pytest.mark.parametrize("text,message", ERRORS, ids=[m[:60] for _, m in ERRORS])
def test_rule_messages(text: str, message: str) -> None:
    err = error(text)
    assert err.message == f"errCode = 2, detailMessage = {message}"


def test_duplicate_column_is_mysql_1060() -> None:
    assert error("CREATE TABLE t (a INT, a INT)" + " DISTRIBUTED BY HASH(a)").code == 1060


def test_empty_table() -> None:
    with pytest.raises(SqlError, match="table should contain at least one column"):
        from sql.statements import CreateTable, DistributionDesc
        bind_create_table(CreateTable(None, "t", (), distribution=DistributionDesc("RANDOM", (), None)))


# -- default keys and short keys --------------------------------------------------------------------------


@pytest.mark.parametrize("columns,keys", [
    ("a INT, b BIGINT, c INT, d INT", ["a", "b", "c"]),  # 3-column cap
    ("a BIGINT, b BIGINT, c BIGINT, d BIGINT, e INT", ["a", "b", "c"]),
    ("a LARGEINT, b LARGEINT, c INT, d INT", ["a", "b", "c"]),  # 16 + 16 + 4 = 36 still fits
    ("a LARGEINT, b LARGEINT, c BIGINT", ["a", "b"]),  # 40 bytes > 36
    ("a INT, b VARCHAR(100), c INT", ["a", "b"]),  # VARCHAR ends the keys
    ("a VARCHAR(5), b INT", ["a"]),  # first column VARCHAR is the only key
    ("a CHAR(50), b INT", ["a"]),  # a CHAR over 36 bytes is still the single key
    ("a INT, b CHAR(40), c INT", ["a"]),
    ("a INT, b DOUBLE, c INT", ["a"]),  # stops before float
    ("a DATE, b STRING", ["a"]),
    ("a DATETIME, b DECIMAL(27, 9), c INT", ["a", "b", "c"]),
])
def test_default_duplicate_keys(columns: str, keys: list[str]) -> None:
    spec = bind(f"CREATE TABLE t ({columns}) DISTRIBUTED BY RANDOM")
    assert spec.keys_type == "DUP_KEYS"
    assert [c.name for c in spec.columns if c.is_key] == keys
    assert all(c.aggregation == "NONE" for c in spec.columns if not c.is_key)


def test_default_aggregate_keys() -> None:
    spec = bind("CREATE TABLE t (a INT, b VARCHAR(10), c INT SUM, d INT MAX) DISTRIBUTED BY HASH(a)")
    assert spec.keys_type == "AGG_KEYS"
    assert [(c.name, c.is_key, c.aggregation) for c in spec.columns] == [
        ("a", True, None), ("b", True, None), ("c", False, "SUM"), ("d", False, "MAX"),
    ]


@pytest.mark.parametrize("ddl,count", [
    ("user_id BIGINT, age INT, message VARCHAR(100), t DATETIME) DUPLICATE KEY(user_id, age, message)", 3),
    ("user_name VARCHAR(20), age INT, message VARCHAR(100)) DUPLICATE KEY(user_name, age)", 1),
    ("a BIGINT, b BIGINT, c BIGINT, d BIGINT, e INT) DUPLICATE KEY(a, b, c, d)", 3),  # 3-column cap
    ("a LARGEINT, b LARGEINT, c INT, v INT) DUPLICATE KEY(a, b, c)", 3),  # exactly 36 bytes
    ("a LARGEINT, b LARGEINT, c BIGINT, v INT) DUPLICATE KEY(a, b, c)", 2),  # 40 > 36
    ("a LARGEINT, b LARGEINT, c CHAR(10), v INT) DUPLICATE KEY(a, b, c)", 3),  # CHAR crossing 36 still counts
    ("a INT, b DATE, c DECIMAL(10, 2), v INT) DUPLICATE KEY(a, b, c)", 3),
    ("a DECIMAL(38, 2), b DECIMAL(38, 2), c INT, v INT) DUPLICATE KEY(a, b, c)", 3),
])
def test_short_key_column_count(ddl: str, count: int) -> None:
    assert bind(f"CREATE TABLE t ({ddl} DISTRIBUTED BY RANDOM").short_key_column_count == count


def test_column_model() -> None:
    spec = bind(
        "CREATE TABLE t (k1 DATEV2 NOT NULL, k2 LARGEINT, v1 DECIMALV3(10,2) DEFAULT '1.5' COMMENT 'c',"
        " v2 VARCHAR, v3 DATETIME(3) DEFAULT CURRENT_TIMESTAMP, v4 STRING NULL, v5 CHAR)"
        " UNIQUE KEY(k1, k2) DISTRIBUTED BY HASH(k1)"
    )
    assert [(c.name, c.type, c.nullable, c.aggregation, c.default, c.comment) for c in spec.columns] == [
        ("k1", "DATE", False, None, None, ""),
        ("k2", "LARGEINT", True, None, None, ""),
        ("v1", "DECIMAL(10, 2)", True, "REPLACE", "1.5", "c"),
        ("v2", "VARCHAR(65533)", True, "REPLACE", None, ""),
        ("v3", "DATETIME(3)", True, "REPLACE", "CURRENT_TIMESTAMP", ""),
        ("v4", "STRING", True, "REPLACE", None, ""),
        ("v5", "CHAR(1)", True, "REPLACE", None, ""),
    ]
    assert spec.distribution.buckets == 10 and not spec.distribution.auto


# -- partitions ---------------------------------------------------------------------------------------------


def items(text: str) -> list[tuple]:
    spec = bind(text)
    return [(p.name, p.lower, p.upper) for p in spec.partition_items]


def test_less_than_out_of_order_overlaps_like_doris() -> None:
    # the lower bound is computed when the partition is added: p3 already covers [min, 2020-03-01)
    err = error(
        "CREATE TABLE t (k1 DATE, v INT) PARTITION BY RANGE(k1) ("
        " PARTITION p3 VALUES LESS THAN ('2020-3-1'), PARTITION p1 VALUES LESS THAN ('2020-01-01'))" + DIST
    )
    assert err.message.endswith(
        "Range [types: [DATEV2]; keys: [0000-01-01]; ..types: [DATEV2]; keys: [2020-01-01]; ) is intersected "
        "with range: [types: [DATEV2]; keys: [0000-01-01]; ..types: [DATEV2]; keys: [2020-03-01]; )"
    )


def test_less_than_lower_bound_values() -> None:
    assert items(
        "CREATE TABLE t (k1 DATE, v INT) PARTITION BY RANGE(k1) ("
        " PARTITION p1 VALUES LESS THAN ('2020-01-01'), PARTITION p2 VALUES LESS THAN ('2020-2-1'),"
        " PARTITION p9 VALUES LESS THAN MAXVALUE)" + DIST
    ) == [
        ("p1", ("0000-01-01",), ("2020-01-01",)),
        ("p2", ("2020-01-01",), ("2020-02-01",)),
        ("p9", ("2020-02-01",), (None,)),
    ]


@pytest.mark.parametrize("type_,minimum", [
    ("TINYINT", "-128"), ("SMALLINT", "-32768"), ("INT", "-2147483648"), ("BIGINT", "-9223372036854775808"),
    ("LARGEINT", "-170141183460469231731687303715884105728"), ("DATE", "0000-01-01"),
    ("DATETIME", "0000-01-01 00:00:00"),
])
def test_first_less_than_starts_at_type_minimum(type_: str, minimum: str) -> None:
    upper = "2020-01-01" if "DATE" in type_ else "10"
    ((_, lower, _),) = items(
        f"CREATE TABLE t (k1 {type_}, v INT) PARTITION BY RANGE(k1) (PARTITION p VALUES LESS THAN ('{upper}'))"
        + DIST
    )
    assert lower == (minimum,)


def test_less_than_fills_gap_after_fixed_range() -> None:
    assert items(
        "CREATE TABLE t (k1 INT, v INT) PARTITION BY RANGE(k1) ("
        " PARTITION a VALUES [('10'), ('20')), PARTITION b VALUES LESS THAN ('30'),"
        " PARTITION c VALUES LESS THAN ('5'))" + DIST
    ) == [("c", ("-2147483648",), ("5",)), ("a", ("10",), ("20",)), ("b", ("20",), ("30",))]


def test_datetime_bounds_are_canonical() -> None:
    assert items(
        "CREATE TABLE t (k1 DATETIME, v INT) PARTITION BY RANGE(k1) (PARTITION p VALUES [('2020-1-2'), ('2020-01-03 1:2:3')))"
        + DIST
    ) == [("p", ("2020-01-02 00:00:00",), ("2020-01-03 01:02:03",))]


def test_batch_partitions() -> None:
    assert items(
        "CREATE TABLE t (k1 DATE, v INT) PARTITION BY RANGE(k1) (FROM ('2020-01-30') TO ('2020-02-02') INTERVAL 1 DAY)"
        + DIST
    ) == [
        ("p_20200130", ("2020-01-30",), ("2020-01-31",)),
        ("p_20200131", ("2020-01-31",), ("2020-02-01",)),
        ("p_20200201", ("2020-02-01",), ("2020-02-02",)),
    ]
    assert [n for n, _, _ in items(
        "CREATE TABLE t (k1 DATE, v INT) PARTITION BY RANGE(k1) (FROM ('2020-01-01') TO ('2020-03-15') INTERVAL 1 MONTH)"
        + DIST
    )] == ["p_202001", "p_202002", "p_202003"]
    assert [n for n, _, _ in items(
        "CREATE TABLE t (k1 DATE, v INT) PARTITION BY RANGE(k1) (FROM ('2020-01-01') TO ('2022-01-01') INTERVAL 1 YEAR)"
        + DIST
    )] == ["p_2020", "p_2021"]
    assert [n for n, _, _ in items(
        "CREATE TABLE t (k1 DATETIME, v INT) PARTITION BY RANGE(k1) (FROM ('2020-01-01 00:00:00')"
        " TO ('2020-01-01 03:00:00') INTERVAL 1 HOUR)" + DIST
    )] == ["p_2020010100", "p_2020010101", "p_2020010102"]
    assert [n for n, _, _ in items(
        "CREATE TABLE t (k1 DATE, v INT) PARTITION BY RANGE(k1) (FROM ('2020-05-25') TO ('2020-06-08') INTERVAL 1 WEEK)"
        + DIST
    )] == ["p_2020_22", "p_2020_23"]
    assert items(
        "CREATE TABLE t (k1 INT, v INT) PARTITION BY RANGE(k1) (FROM (-5) TO (10) INTERVAL 7)" + DIST
    ) == [("p_-5_2", ("-5",), ("2",)), ("p_2_9", ("2",), ("9",)), ("p_9_10", ("9",), ("10",))]


def test_list_partitions() -> None:
    spec = bind(
        "CREATE TABLE t (k1 INT NOT NULL, c VARCHAR(10) NOT NULL, v INT) PARTITION BY LIST(k1, c) ("
        " PARTITION p1 VALUES IN (('01', 'a'), ('2', 'b')), PARTITION p2 VALUES IN (('3', 'c')))" + DIST
    )
    assert spec.partition_info.type == "LIST" and spec.partition_info.columns == ("k1", "c")
    assert [(p.name, p.values) for p in spec.partition_items] == [
        ("p1", (("1", "a"), ("2", "b"))), ("p2", (("3", "c"),)),
    ]


def test_unpartitioned_gets_one_partition_named_like_the_table() -> None:
    spec = bind("CREATE TABLE my_tbl (k1 INT, v INT)" + DIST)
    assert spec.partition_info.type == "UNPARTITIONED"
    assert [p.name for p in spec.partition_items] == ["my_tbl"]


def test_empty_range_partition_list_for_dynamic_partitions() -> None:
    spec = bind("CREATE TABLE t (k1 DATE, v INT) PARTITION BY RANGE(k1) ()" + DIST)
    assert spec.partition_info.type == "RANGE" and spec.partition_items == ()


# -- properties ---------------------------------------------------------------------------------------------


DEFAULT_TAIL = [
    ("storage_medium", "hdd"), ("storage_format", "V2"), ("inverted_index_storage_format", "V1"),
    ("light_schema_change", "true"), ("disable_auto_compaction", "false"),
    ("enable_single_replica_compaction", "false"), ("group_commit_interval_ms", "10000"),
    ("group_commit_data_bytes", "134217728"),
]


def test_default_properties() -> None:
    assert list(bind("CREATE TABLE t (k1 INT, v INT)" + DIST).properties) == [
        ("replication_allocation", "tag.location.default: 3"), ("min_load_replica_num", "-1"),
        ("is_being_synced", "false"), *DEFAULT_TAIL,
    ]


def test_properties_normalised_in_show_create_order() -> None:
    spec = bind(
        "CREATE TABLE t (k1 DATE, k2 INT, v INT) UNIQUE KEY(k1, k2) PARTITION BY RANGE(k1) ()"
        " DISTRIBUTED BY HASH(k1) BUCKETS AUTO PROPERTIES ("
        " 'storage_medium' = 'SSD', 'dynamic_partition.time_unit' = 'DAY', 'replication_num' = '1',"
        " 'bloom_filter_columns' = 'K2,v', 'estimate_partition_size' = '100G', 'dynamic_partition.enable' = 'true',"
        " 'dynamic_partition.end' = '3', 'dynamic_partition.prefix' = 'p', 'dynamic_partition.time_zone' = 'Asia/Tokyo')"
    )
    # dynamic_partition.* checked and stored with their defaults, where the first of them was given
    assert list(spec.properties) == [
        ("replication_allocation", "tag.location.default: 1"), ("min_load_replica_num", "-1"),
        ("bloom_filter_columns", "k2, v"), ("is_being_synced", "false"),
        ("dynamic_partition.enable", "true"), ("dynamic_partition.time_unit", "DAY"),
        ("dynamic_partition.time_zone", "Asia/Tokyo"), ("dynamic_partition.start", "-2147483648"),
        ("dynamic_partition.end", "3"), ("dynamic_partition.prefix", "p"),
        ("dynamic_partition.replication_allocation", "tag.location.default: 1"),
        ("dynamic_partition.create_history_partition", "false"), ("dynamic_partition.history_partition_num", "-1"),
        ("dynamic_partition.hot_partition_num", "0"), ("dynamic_partition.reserved_history_periods", "NULL"),
        ("dynamic_partition.storage_policy", ""),
        ("storage_medium", "ssd"), ("storage_format", "V2"), ("inverted_index_storage_format", "V1"),
        ("estimate_partition_size", "100G"), ("enable_unique_key_merge_on_write", "true"),
        *DEFAULT_TAIL[3:],
    ]
    assert spec.distribution.auto and spec.distribution.buckets == 10  # no bucket policy given: Doris's 10


def test_buckets_auto_uses_the_estimate_and_the_disks() -> None:
    from planner.bind.create_table import CreateTableOptions
    from storage.partition_policy.auto_bucket import Disk
    from storage.partition_policy.buckets import BucketPolicy

    options = CreateTableOptions(bucket_policy=BucketPolicy((Disk("/d", 2 * 1024**4),)))
    stmt = parse("CREATE TABLE t (k1 INT, v INT) DISTRIBUTED BY HASH(k1) BUCKETS AUTO"
                 " PROPERTIES ('estimate_partition_size' = '100G')")[0]
    # seed rule: 100 GB / 5 = 20 GB -> N = 20; one 2 TB disk -> M = 41; min(M, N, 128) = 20
    assert bind_create_table(stmt, options).distribution.buckets == 20


def test_replication_allocation_given() -> None:
    spec = bind("CREATE TABLE t (k1 INT, v INT)" + DIST + " PROPERTIES ('replication_allocation' = 'tag.location.default:2')")
    assert spec.properties[0] == ("replication_allocation", "tag.location.default: 2")


def test_merge_on_write_can_be_disabled_for_unique() -> None:
    spec = bind("CREATE TABLE t (k1 INT, v INT) UNIQUE KEY(k1)" + DIST
                + " PROPERTIES ('enable_unique_key_merge_on_write' = 'false')")
    assert ("enable_unique_key_merge_on_write", "false") in spec.properties
    assert spec.columns[1].aggregation == "REPLACE"


def test_index_defs() -> None:
    spec = bind(
        "CREATE TABLE t (k1 INT, city VARCHAR(10), msg STRING, INDEX i1 (city) USING BITMAP COMMENT 'c',"
        " INDEX i2 (msg) USING INVERTED PROPERTIES('parser' = 'english'), INDEX i3 (CITY))"
        " DUPLICATE KEY(k1)" + DIST
    )
    assert [(i.name, i.columns, i.index_type, i.comment, i.properties) for i in spec.index_defs] == [
        ("i1", ("city",), "BITMAP", "c", ()),
        ("i2", ("msg",), "INVERTED", "", (("parser", "english"),)),
        ("i3", ("city",), "INVERTED", "", ()),
    ]


def test_no_distribution_clause_defaults_to_auto_buckets() -> None:
    dup = bind("CREATE TABLE t (k1 INT, v INT)")
    assert (dup.distribution.type, dup.distribution.auto, dup.distribution.buckets) == ("RANDOM", True, 10)
    uniq = bind("CREATE TABLE t (k1 INT, v INT) UNIQUE KEY(k1)")
    assert (uniq.distribution.type, uniq.distribution.columns) == ("HASH", ("k1",))
    agg = bind("CREATE TABLE t (k1 INT, v INT REPLACE) AGGREGATE KEY(k1)")
    assert agg.distribution.type == "HASH"


def test_in_memory_false_is_accepted_true_refused() -> None:
    from planner.bind.create_table import bind_create_table
    from sql.errors import SqlError
    from sql.parse import parse

    def create(value: str):
        (stmt,) = parse(f"CREATE TABLE t (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
                        f"PROPERTIES ('replication_num' = '1', 'in_memory' = '{value}')")
        return bind_create_table(stmt)

    assert "in_memory" not in dict(create("false").properties)
    for value, message in (("true", "Not support set 'in_memory'='true' now!"), ("yes", "Invalid boolean value")):
        try:
            create(value)
        except SqlError as e:
            assert message in e.message
        else:
            raise AssertionError(value)
