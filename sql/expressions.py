"""Doris-only AST nodes, declared by `arg_types` like sqlglot's own (sqlglot lacks these shapes).

Everything else reuses sqlglot's nodes: DuplicateKeyProperty / UniqueKeyProperty / AggregateKeyProperty,
DistributedByProperty (buckets = Var AUTO for `BUCKETS AUTO`), PartitionByRangeProperty /
PartitionByListProperty as the partition-clause containers, PartitionByRangePropertyDynamic for a batch
`FROM (..) TO (..) INTERVAL n [unit]` item, RollupProperty / RollupIndex, IndexColumnConstraint, Show.
"""

from __future__ import annotations

from sqlglot import exp


class AggTypeColumnConstraint(exp.Expression, exp.ColumnConstraintKind):
    """`cost BIGINT SUM`: the aggregation type of a value column (this = Var SUM/MAX/...)."""

    arg_types = {"this": True}


class KeyColumnConstraint(exp.Expression, exp.ColumnConstraintKind):
    """`k1 INT KEY`: the column is declared a key column in its own definition."""

    arg_types: dict[str, bool] = {}


class PartitionLessThan(exp.Expression):
    """`PARTITION p VALUES LESS THAN (v, ...)`; expressions = [Var MAXVALUE] for bare MAXVALUE."""

    arg_types = {"this": True, "expressions": True, "properties": False}


class PartitionFixedRange(exp.Expression):
    """`PARTITION p VALUES [(lower...), (upper...))` (left-closed, right-open)."""

    arg_types = {"this": True, "lower": True, "upper": True, "properties": False}


class PartitionValuesIn(exp.Expression):
    """`PARTITION p VALUES IN (v, ...)` or multi-column `IN ((a, b), ...)` (Tuples); no values: `PARTITION p`,
    the default partition."""

    arg_types = {"this": True, "expressions": False, "properties": False}


class IndexProperties(exp.Expression):
    """`INDEX idx (c) USING INVERTED PROPERTIES (...)`: kept among the index options."""

    arg_types = {"expressions": True}


class ShowPartitions(exp.Expression):
    """`SHOW [TEMPORARY] PARTITIONS FROM [db.]t [WHERE ..] [ORDER BY ..] [LIMIT ..]`."""

    arg_types = {
        "this": True,
        "temporary": False,
        "where": False,
        "order": False,
        "limit": False,
        "offset": False,
    }


class ShowTablets(exp.Expression):
    """`SHOW TABLETS FROM [db.]t [PARTITION (p, ..) | PARTITION p | PARTITIONS (p, ..)] [WHERE ..] [ORDER BY ..]
    [LIMIT ..]`: `expressions` are the partition names."""

    arg_types = {"this": True, "expressions": False, "where": False, "order": False, "limit": False, "offset": False}


class ShowTableVersions(exp.Expression):
    """`SHOW TABLE VERSIONS FROM [db.]t [WHERE ..] [ORDER BY ..] [LIMIT ..]` (dorislite's: time travel)."""

    arg_types = {"this": True, "where": False, "order": False, "limit": False, "offset": False}


class AdminShowRollupAdvice(exp.Expression):
    """`ADMIN SHOW ROLLUP ADVICE FOR [db.]t [LIMIT n]` (dorislite's rollup advisor)."""

    arg_types = {"this": True, "limit": False}


class AdminSetConfig(exp.Expression):
    """`ADMIN SET FRONTEND CONFIG ("k" = "v")`: expressions are Property(k, v)."""

    arg_types = {"expressions": True}


class SetPassword(exp.Expression):
    """`SET PASSWORD [FOR user@host] = PASSWORD('x') | 'hash'` (hashed = the second form)."""

    arg_types = {"this": True, "user": False, "host": False, "hashed": False}


class InsertLabel(exp.Expression):
    """`INSERT INTO t WITH LABEL l ...`: the load label."""

    arg_types = {"this": True}


class TableFunction(exp.Expression):
    """A table-valued function in FROM, Doris's file TVFs: `local("file_path" = "..", "format" = "csv")`,
    `s3(...)`, `hdfs(...)`, `http(...)`. this = Var with the lower-case name; expressions = Property(k, v)."""

    arg_types = {"this": True, "expressions": False}

    @property
    def properties(self) -> dict[str, str]:
        """Keys lower-cased (Doris matches them case-insensitively), values as written."""
        return {p.name.lower(): p.args["value"].name for p in self.expressions}


class ShowQueryProfile(exp.Expression):
    """`SHOW QUERY PROFILE "/path"`."""

    arg_types = {"this": True}


class ShowLoad(exp.Expression):
    """`SHOW LOAD [FROM db] [WHERE ..] [ORDER BY ..] [LIMIT ..]`."""

    arg_types = {"db": False, "where": False, "order": False, "limit": False, "offset": False}


class ShowExport(exp.Expression):
    """`SHOW EXPORT [FROM db] [WHERE ..] [ORDER BY ..] [LIMIT ..]`."""

    arg_types = {"db": False, "where": False, "order": False, "limit": False, "offset": False}


class CancelExport(exp.Expression):
    """`CANCEL EXPORT [FROM db] WHERE ...`."""

    arg_types = {"db": False, "where": True}


class ShowData(exp.Expression):
    """`SHOW DATA [FROM [db.]table] [ORDER BY ..]`."""

    arg_types = {"this": False, "order": False}


class CancelLoad(exp.Expression):
    """`CANCEL LOAD [FROM db] WHERE LABEL = "x" | LABEL LIKE "p" | STATE = "LOADING"`."""

    arg_types = {"db": False, "where": False}


class AddRollup(exp.Expression):
    """`ALTER TABLE t ADD ROLLUP r1 (c, ...) [DUPLICATE KEY (..)] [FROM idx] [PROPERTIES (..)], r2 ...`:
    expressions are RollupIndex nodes (their `properties` hold DuplicateKeyProperty / Property; `from_`
    is the FROM index)."""

    arg_types = {"expressions": True}


class DropRollup(exp.Expression):
    """`ALTER TABLE t DROP ROLLUP r1 [PROPERTIES (..)], r2`: expressions are the rollup names."""

    arg_types = {"expressions": True, "properties": False}


class ShowAlterTable(exp.Expression):
    """`SHOW ALTER TABLE ROLLUP | MATERIALIZED VIEW | COLUMN [FROM db] [WHERE] [ORDER BY] [LIMIT]`."""

    arg_types = {"this": True, "db": False, "where": False, "order": False, "limit": False, "offset": False}


class CancelAlterTable(exp.Expression):
    """`CANCEL ALTER TABLE ROLLUP | MATERIALIZED VIEW FROM [db.]t [(job_id, ...)]`."""

    arg_types = {"this": True, "table": True, "expressions": False}


class AddPartition(exp.Expression):
    """`ALTER TABLE t ADD [TEMPORARY] PARTITION [IF NOT EXISTS] p VALUES ... [DISTRIBUTED BY ...]`:
    this = the partition item (PartitionLessThan / PartitionFixedRange / PartitionValuesIn),
    distribution = DistributedByProperty."""

    arg_types = {"this": True, "distribution": False, "exists": False, "temporary": False, "properties": False}


class DropPartition(exp.Expression):
    """`ALTER TABLE t DROP [TEMPORARY] PARTITION [IF EXISTS] p [FORCE]`."""

    arg_types = {"this": True, "exists": False, "force": False, "temporary": False}


class ReplacePartition(exp.Expression):
    """`ALTER TABLE t REPLACE PARTITION (p, ..) WITH TEMPORARY PARTITION (tp, ..) [PROPERTIES (..)]`."""

    arg_types = {"expressions": True, "temp": True, "properties": False}


class ModifyPartition(exp.Expression):
    """`ALTER TABLE t MODIFY [TEMPORARY] PARTITION p | (p1, ..) | (*) SET (..)`: expressions are the names
    (empty for `(*)`), properties the Property(k, v) list."""

    arg_types = {"expressions": False, "all": False, "properties": True, "temporary": False}


# -- Doris's BITMAP / HLL aggregates (and ndv): aggregate nodes, so the binder finds them as it finds sum ---------


class BitmapUnion(exp.Expression, exp.AggFunc):
    """bitmap_union(bitmap): the union of a group's bitmaps."""


class BitmapUnionCount(exp.Expression, exp.AggFunc):
    """bitmap_union_count(bitmap): the size of that union (an exact distinct count)."""


class BitmapUnionInt(exp.Expression, exp.AggFunc):
    """bitmap_union_int(x): the distinct count of an integer column, as bitmap_union_count(to_bitmap(x))."""


class HllUnion(exp.Expression, exp.AggFunc):
    """hll_union(hll) / hll_raw_agg(hll): the union of a group's HyperLogLog sketches."""


class HllUnionAgg(exp.Expression, exp.AggFunc):
    """hll_union_agg(hll): the estimated cardinality of that union."""


class Ndv(exp.Expression, exp.AggFunc):
    """ndv(x): the estimated distinct count of x (approx_count_distinct)."""


class ValueList(exp.Expression):
    """A long `IN (...)` list of plain literals, read from the text without the parser (sql/parse.py):
    `values` their texts (numbers as written, strings without quotes), `strings` whether they are strings."""

    arg_types = {"values": True, "strings": True}

    @property
    def values(self) -> tuple[str, ...]:
        return self.args["values"]


class CollectList(exp.Expression, exp.AggFunc):
    """collect_list(x[, max_size]): a group's non-NULL values as an ARRAY (array_agg keeps the NULLs)."""

    arg_types = {"this": True, "expression": False}


class CollectSet(exp.Expression, exp.AggFunc):
    """collect_set(x[, max_size]) / group_uniq_array: a group's distinct non-NULL values as an ARRAY."""

    arg_types = {"this": True, "expression": False}


# -- Doris's aggregates of any number of arguments (the binder checks their arity and kinds) -----------------


class SequenceMatch(exp.Expression, exp.AggFunc):
    """sequence_match(pattern, timestamp, cond1, ...): whether a group's events, by time, hold the pattern."""

    arg_types = {"expressions": False}
    is_var_len_args = True


class SequenceCount(exp.Expression, exp.AggFunc):
    """sequence_count(pattern, timestamp, cond1, ...): how many non-overlapping event chains hold the pattern."""

    arg_types = {"expressions": False}
    is_var_len_args = True


class CountByEnum(exp.Expression, exp.AggFunc):
    """count_by_enum(x1, ...): each argument's value counts, NULLs and rows, as Doris's JSON text."""

    arg_types = {"expressions": False}
    is_var_len_args = True
