"""Typed statements: what `sql.parse.parse` returns and what the server dispatches on.

Small frozen dataclasses built from the dialect's structured AST. Names are kept as written (db is None
when the statement did not qualify the table). Expressions that are evaluated later (SET values, INSERT
rows, queries, WHERE filters of SHOW) stay sqlglot expressions; everything else is plain Python data.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

Props = tuple[tuple[str, str], ...]  # PROPERTIES ("k" = "v", ...) in written order


class Statement:
    """Marker base of every typed statement."""


# -- CREATE TABLE pieces (parsed, not yet validated: planner.bind.create_table checks them) -----------


@dataclass(frozen=True)
class DefaultValue:
    """A column DEFAULT: `value` is the literal text, None for DEFAULT NULL; `is_function` marks
    CURRENT_TIMESTAMP / CURRENT_DATE / BITMAP_EMPTY written without quotes."""

    value: str | None
    is_function: bool = False


@dataclass(frozen=True)
class ColumnDefinition:
    name: str
    type: exp.DataType
    is_key: bool = False  # the `KEY` marker in the column definition
    agg_type: str | None = None  # SUM / MAX / MIN / REPLACE / ...
    nullable: bool | None = None  # None: neither NULL nor NOT NULL written
    default: DefaultValue | None = None
    comment: str = ""
    auto_increment: bool = False
    generated: exp.Expression | None = None  # `AS (expr)` / `GENERATED ALWAYS AS (expr)`: a generated column


@dataclass(frozen=True)
class KeysDesc:
    type: str  # AGGREGATE / UNIQUE / DUPLICATE
    columns: tuple[str, ...]


# A partition bound value as written; None inside a tuple stands for MAXVALUE
Bound = tuple[str | None, ...]


@dataclass(frozen=True)
class RangeLessThan:
    name: str
    upper: Bound | None  # None: LESS THAN MAXVALUE
    properties: Props = ()


@dataclass(frozen=True)
class RangeFixed:
    name: str
    lower: Bound
    upper: Bound
    properties: Props = ()


@dataclass(frozen=True)
class RangeBatch:
    """`FROM (start) TO (end) INTERVAL n [unit]`; unit None on integer columns."""

    start: Bound
    end: Bound
    interval: int
    unit: str | None


@dataclass(frozen=True)
class ListValues:
    name: str
    values: tuple[Bound, ...]  # one tuple per listed value, one element per partition column
    properties: Props = ()


PartitionItemDesc = RangeLessThan | RangeFixed | RangeBatch | ListValues


@dataclass(frozen=True)
class PartitionDesc:
    type: str  # RANGE / LIST
    columns: tuple[str, ...]
    items: tuple[PartitionItemDesc, ...]


@dataclass(frozen=True)
class DistributionDesc:
    type: str  # HASH / RANDOM
    columns: tuple[str, ...]
    buckets: int | None  # None: BUCKETS omitted (or AUTO)
    auto: bool = False


@dataclass(frozen=True)
class RollupDesc:
    name: str
    columns: tuple[str, ...]
    duplicate_keys: tuple[str, ...] | None = None
    properties: Props = ()
    from_index: str | None = None  # ALTER TABLE ... ADD ROLLUP r (..) FROM index; None = the base index


@dataclass(frozen=True)
class IndexDesc:
    name: str
    columns: tuple[str, ...]
    index_type: str | None  # BITMAP / INVERTED / NGRAM_BF; None when USING was omitted
    comment: str = ""
    properties: Props = ()


# -- statements -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CreateDatabase(Statement):
    name: str
    if_not_exists: bool = False
    properties: Props = ()


@dataclass(frozen=True)
class DropDatabase(Statement):
    name: str
    if_exists: bool = False
    force: bool = False


@dataclass(frozen=True)
class Use(Statement):
    db: str


@dataclass(frozen=True)
class CreateTable(Statement):
    db: str | None
    name: str
    columns: tuple[ColumnDefinition, ...]
    keys: KeysDesc | None = None
    partition: PartitionDesc | None = None
    distribution: DistributionDesc | None = None
    rollups: tuple[RollupDesc, ...] = ()
    indexes: tuple[IndexDesc, ...] = ()
    properties: Props = ()
    comment: str | None = None
    engine: str | None = None
    if_not_exists: bool = False
    query: exp.Expression | None = None  # CREATE TABLE ... AS SELECT: `columns` empty, names optional
    column_names: tuple[str, ...] = ()  # CTAS's `t (c1, c2) AS SELECT`: the new names of the query's columns


@dataclass(frozen=True)
class CreateTableLike(Statement):
    """CREATE TABLE [IF NOT EXISTS] [db.]t LIKE [db.]src [WITH ROLLUP [(r, ...)]]; `rollups` None = copy no
    rollup, () = every rollup."""

    db: str | None
    name: str
    source_db: str | None
    source: str
    rollups: tuple[str, ...] | None = None
    if_not_exists: bool = False


@dataclass(frozen=True)
class DropTable(Statement):
    db: str | None
    name: str
    if_exists: bool = False
    force: bool = False


@dataclass(frozen=True)
class CreateView(Statement):
    """CREATE [OR REPLACE] VIEW [IF NOT EXISTS] [db.]v [(c1 [COMMENT ''], ...)] [COMMENT ''] AS query."""

    db: str | None
    name: str
    query: exp.Expression
    columns: tuple[str, ...] = ()
    comment: str = ""
    or_replace: bool = False
    if_not_exists: bool = False


@dataclass(frozen=True)
class AlterView(Statement):
    db: str | None
    name: str
    query: exp.Expression
    columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class DropView(Statement):
    db: str | None
    name: str
    if_exists: bool = False


@dataclass(frozen=True)
class ShowCreateView(Statement):
    db: str | None
    name: str


@dataclass(frozen=True)
class TruncateTable(Statement):
    db: str | None
    name: str
    partitions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Describe(Statement):
    db: str | None
    name: str
    all: bool = False


@dataclass(frozen=True)
class ShowCreateTable(Statement):
    db: str | None
    name: str


@dataclass(frozen=True)
class ShowCreateDatabase(Statement):
    name: str


@dataclass(frozen=True)
class ShowDatabases(Statement):
    like: str | None = None
    where: exp.Expression | None = None


@dataclass(frozen=True)
class ShowTables(Statement):
    db: str | None = None
    full: bool = False
    like: str | None = None
    where: exp.Expression | None = None


@dataclass(frozen=True)
class ShowColumns(Statement):
    db: str | None
    table: str
    full: bool = False
    like: str | None = None
    where: exp.Expression | None = None


@dataclass(frozen=True)
class ShowIndex(Statement):
    db: str | None
    table: str


@dataclass(frozen=True)
class ShowTableStatus(Statement):
    db: str | None = None
    like: str | None = None
    where: exp.Expression | None = None


@dataclass(frozen=True)
class ShowVariables(Statement):
    scope: str = "SESSION"  # SESSION / GLOBAL
    like: str | None = None
    where: exp.Expression | None = None


@dataclass(frozen=True)
class ShowPartitions(Statement):
    db: str | None
    table: str
    temporary: bool = False
    where: exp.Expression | None = None
    order_by: tuple[exp.Ordered, ...] = ()
    limit: int | None = None
    offset: int | None = None


@dataclass(frozen=True)
class ShowTablets(Statement):
    db: str | None
    table: str
    partitions: tuple[str, ...] = ()
    where: exp.Expression | None = None
    order_by: tuple[exp.Ordered, ...] = ()
    limit: int | None = None
    offset: int | None = None


@dataclass(frozen=True)
class AdminShowRollupAdvice(Statement):
    db: str | None
    table: str
    limit: int | None = None


@dataclass(frozen=True)
class ShowTableVersions(Statement):
    db: str | None
    table: str
    where: exp.Expression | None = None
    order_by: tuple[exp.Ordered, ...] = ()
    limit: int | None = None
    offset: int | None = None


@dataclass(frozen=True)
class ShowDynamicPartitionTables(Statement):
    db: str | None
    where: exp.Expression | None = None  # Doris's grammar has no WHERE: taken rather than ignored


@dataclass(frozen=True)
class ShowSimple(Statement):
    """SHOWs with no target: ENGINES, CHARSET, COLLATION, PLUGINS, PROCESSLIST, WARNINGS, ERRORS, STATUS."""

    kind: str
    full: bool = False
    scope: str = "SESSION"  # STATUS only: SESSION / GLOBAL
    like: str | None = None
    where: exp.Expression | None = None
    limit: int | None = None
    offset: int | None = None


@dataclass(frozen=True)
class ShowConfig(Statement):
    """SHOW FRONTEND CONFIG / ADMIN SHOW FRONTEND CONFIG [LIKE 'pat']."""

    like: str | None = None


@dataclass(frozen=True)
class AdminSetConfig(Statement):
    configs: Props


# One SET assignment: (scope, name, value). scope is SESSION / GLOBAL / USER (`@var`); name is
# lower-case for system variables; value is the unevaluated expression (Var DEFAULT for `= DEFAULT`).
Assignment = tuple[str, str, exp.Expression]


@dataclass(frozen=True)
class SetVariables(Statement):
    assignments: tuple[Assignment, ...]


@dataclass(frozen=True)
class SetPassword(Statement):
    user: str | None  # None: the current user
    host: str | None
    password: str  # plain text, or the hash when `hashed`
    hashed: bool = False


@dataclass(frozen=True)
class Kill(Statement):
    connection_id: int
    query_only: bool = False  # KILL QUERY n: cancel the running statement, keep the connection


@dataclass(frozen=True)
class Transaction(Statement):
    kind: str  # BEGIN / COMMIT / ROLLBACK


@dataclass(frozen=True)
class Insert(Statement):
    db: str | None
    table: str
    columns: tuple[str, ...] | None = None  # None: no column list
    partitions: tuple[str, ...] = ()
    label: str | None = None
    values: tuple[tuple[exp.Expression, ...], ...] | None = None  # INSERT ... VALUES rows
    query: exp.Expression | None = None  # INSERT ... SELECT
    overwrite: bool = False  # INSERT OVERWRITE: the rows replace the table's (or the named partitions') data
    temporary: bool = False  # INSERT INTO t TEMPORARY PARTITION (tp, ..): `partitions` are temporary ones


@dataclass(frozen=True)
class Query(Statement):
    """SELECT / UNION / WITH ...: the sqlglot expression goes to the planner as is."""

    expression: exp.Expression


@dataclass(frozen=True)
class SelectIntoOutfile(Statement):
    """<query> INTO OUTFILE "file:///dir/prefix_" [FORMAT AS csv | csv_with_names | ... | parquet | orc]
    [PROPERTIES (...)]."""

    query: exp.Expression
    path: str
    format: str = "csv"
    properties: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ExportTable(Statement):
    """EXPORT TABLE [db.]t [PARTITION (p, ...)] [WHERE ...] TO "file:///dir/" [PROPERTIES (...)]."""

    db: str | None
    table: str
    partitions: tuple[str, ...]
    where: str | None  # the condition's text (checked by the parser)
    path: str
    properties: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Explain(Statement):
    query: exp.Expression
    level: str | None = None  # VERBOSE / GRAPH / ... / None for plain EXPLAIN


@dataclass(frozen=True)
class ShowQueryProfile(Statement):
    """SHOW QUERY PROFILE "/" (recent profiled queries) or "/<query id>" (that query's scan counters)."""

    path: str


@dataclass(frozen=True)
class ShowLoad(Statement):
    """SHOW LOAD [FROM db] [WHERE LABEL = "x" | LABEL LIKE "p" | STATE = "s"] [ORDER BY ..] [LIMIT ..]."""

    db: str | None = None
    where: exp.Expression | None = None
    order_by: tuple[exp.Ordered, ...] = ()
    limit: int | None = None
    offset: int | None = None


@dataclass(frozen=True)
class CancelLoad(Statement):
    """CANCEL LOAD [FROM db] WHERE LABEL = "x" (or LABEL LIKE / STATE =): the WHERE runs over SHOW LOAD rows."""

    db: str | None
    where: exp.Expression


@dataclass(frozen=True)
class DataDescription:
    """One DATA INFILE (...) INTO TABLE t ... clause of LOAD LABEL."""

    paths: tuple[str, ...]
    table: str
    partitions: tuple[str, ...] = ()
    column_separator: str | None = None
    line_delimiter: str | None = None
    format: str | None = None
    columns: tuple[str, ...] = ()
    sets: tuple[str, ...] = ()  # "c = expr"
    where: str | None = None
    properties: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class LoadLabel(Statement):
    """LOAD LABEL [db.]label (DATA INFILE ... , ...) [WITH RESOURCE | BROKER | LOCAL] [PROPERTIES (...)]."""

    db: str | None
    label: str
    descriptions: tuple[DataDescription, ...]
    kind: str  # BROKER | SPARK
    resource: str | None = None
    with_properties: tuple[tuple[str, str], ...] = ()
    properties: tuple[tuple[str, str], ...] = ()
    comment: str = ""


@dataclass(frozen=True)
class CreateResource(Statement):
    name: str
    properties: tuple[tuple[str, str], ...]
    if_not_exists: bool = False


@dataclass(frozen=True)
class DropResource(Statement):
    name: str
    if_exists: bool = False


@dataclass(frozen=True)
class ShowResources(Statement):
    like: str | None = None
    where: exp.Expression | None = None


@dataclass(frozen=True)
class ShowExport(ShowLoad):
    """SHOW EXPORT [FROM db] [WHERE ID = n | LABEL = "x" | LABEL LIKE "p" | STATE = "s"] [ORDER BY ..] [LIMIT ..]."""


@dataclass(frozen=True)
class CancelExport(CancelLoad):
    """CANCEL EXPORT [FROM db] WHERE LABEL = "x" | LABEL LIKE "p" | STATE = "PENDING" | "EXPORTING"."""


# -- ALTER TABLE ... ROLLUP ---------------------------------------------------------------------------


@dataclass(frozen=True)
class AddRollup(Statement):
    """ALTER TABLE [db.]t ADD ROLLUP r1 (..) [DUPLICATE KEY (..)] [FROM idx] [PROPERTIES (..)], r2 (..) ..."""

    db: str | None
    table: str
    rollups: tuple[RollupDesc, ...]


@dataclass(frozen=True)
class DropRollup(Statement):
    """ALTER TABLE [db.]t DROP ROLLUP r1 [PROPERTIES (..)], r2 ..."""

    db: str | None
    table: str
    names: tuple[str, ...]
    properties: Props = ()


@dataclass(frozen=True)
class ShowAlterTableRollup(Statement):
    """SHOW ALTER TABLE ROLLUP | MATERIALIZED VIEW | COLUMN [FROM db] [WHERE ...] [ORDER BY ...] [LIMIT n]."""

    db: str | None = None
    kind: str = "ROLLUP"  # ROLLUP / COLUMN
    where: exp.Expression | None = None
    order_by: tuple[exp.Expression, ...] = ()
    limit: int | None = None
    offset: int | None = None


@dataclass(frozen=True)
class CancelAlterTableRollup(Statement):
    """CANCEL ALTER TABLE ROLLUP FROM [db.]t [(job_id, ...)]: job_ids empty = every unfinished job of t."""

    db: str | None
    table: str
    job_ids: tuple[int, ...] = ()
    kind: str = "ROLLUP"  # ROLLUP / COLUMN


@dataclass(frozen=True)
class AddIndex(Statement):
    """ALTER TABLE [db.]t ADD INDEX idx (c) USING BITMAP [COMMENT '..'] / CREATE INDEX [IF NOT EXISTS] idx ON t .."""

    db: str | None
    table: str
    index: IndexDesc
    if_not_exists: bool = False


@dataclass(frozen=True)
class DropIndex(Statement):
    """ALTER TABLE [db.]t DROP INDEX idx / DROP INDEX [IF EXISTS] idx ON [db.]t."""

    db: str | None
    table: str
    name: str
    if_exists: bool = False


@dataclass(frozen=True)
class AlterTableRename(Statement):
    """ALTER TABLE [db.]t RENAME new / RENAME ROLLUP old new / RENAME PARTITION old new (`kind` TABLE /
    ROLLUP / PARTITION; `old` is the table's name for TABLE)."""

    db: str | None
    table: str
    kind: str
    old: str
    new: str


@dataclass(frozen=True)
class AddPartitions(Statement):
    """ALTER TABLE [db.]t ADD PARTITIONS FROM (..) TO (..) INTERVAL n [unit] [DISTRIBUTED BY ...]."""

    db: str | None
    table: str
    batch: RangeBatch
    distribution: DistributionDesc | None = None


@dataclass(frozen=True)
class ModifyDistribution(Statement):
    """ALTER TABLE [db.]t MODIFY DISTRIBUTION DISTRIBUTED BY HASH(..) | RANDOM BUCKETS n | AUTO."""

    db: str | None
    table: str
    distribution: DistributionDesc


@dataclass(frozen=True)
class AlterTableComment(Statement):
    """ALTER TABLE [db.]t MODIFY COMMENT 'text'."""

    db: str | None
    table: str
    comment: str


@dataclass(frozen=True)
class AddColumns:
    """ADD COLUMN c ... / ADD COLUMN (c1 ..., c2 ...): each definition with its position (None, "FIRST" or
    the column it goes after)."""

    columns: tuple[tuple[ColumnDefinition, str | None], ...]
    rollup: str | None = None


@dataclass(frozen=True)
class DropColumn:
    name: str
    rollup: str | None = None


@dataclass(frozen=True)
class ModifyColumn:
    column: ColumnDefinition
    position: str | None = None
    rollup: str | None = None


@dataclass(frozen=True)
class RenameColumn:
    old: str
    new: str


@dataclass(frozen=True)
class ReorderColumns:
    names: tuple[str, ...]
    rollup: str | None = None


ColumnClause = AddColumns | DropColumn | ModifyColumn | RenameColumn | ReorderColumns


@dataclass(frozen=True)
class AlterColumns(Statement):
    """ALTER TABLE [db.]t <column clause>, ... [PROPERTIES (...)] (sql.text_statements.alter_columns)."""

    db: str | None
    table: str
    clauses: tuple[ColumnClause, ...]
    properties: str = ""  # as written; Doris takes e.g. ("timeout" = "...") here


@dataclass(frozen=True)
class AlterTableSetProperties(Statement):
    """ALTER TABLE [db.]t SET ("key" = "value", ...)."""

    db: str | None
    table: str
    properties: Props


# -- ALTER TABLE ... PARTITION ------------------------------------------------------------------------


@dataclass(frozen=True)
class AddPartition(Statement):
    """ALTER TABLE [db.]t ADD [TEMPORARY] PARTITION [IF NOT EXISTS] p VALUES ... [("k" = "v")]
    [DISTRIBUTED BY HASH (..) | RANDOM [BUCKETS n | AUTO]]."""

    db: str | None
    table: str
    item: RangeLessThan | RangeFixed | ListValues
    distribution: DistributionDesc | None = None
    if_not_exists: bool = False
    temporary: bool = False


@dataclass(frozen=True)
class DropPartition(Statement):
    """ALTER TABLE [db.]t DROP [TEMPORARY] PARTITION [IF EXISTS] p [FORCE]."""

    db: str | None
    table: str
    name: str
    if_exists: bool = False
    force: bool = False
    temporary: bool = False


@dataclass(frozen=True)
class ReplacePartition(Statement):
    """ALTER TABLE [db.]t REPLACE PARTITION (p, ..) WITH TEMPORARY PARTITION (tp, ..) [PROPERTIES (..)]."""

    db: str | None
    table: str
    names: tuple[str, ...]
    temp_names: tuple[str, ...]
    properties: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ModifyPartition(Statement):
    """ALTER TABLE [db.]t MODIFY [TEMPORARY] PARTITION p | (p1, p2) | (*) SET ("k" = "v", ...);
    names None = every partition (`(*)`)."""

    db: str | None
    table: str
    names: tuple[str, ...] | None
    properties: Props
    temporary: bool = False


# -- DELETE -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Delete(Statement):
    """DELETE FROM [db.]t [alias] [PARTITION p | PARTITIONS (p, ...)] [USING relations] WHERE ...;
    `partitions` empty = no partition clause; `using` the USING relations (sqlglot tables / joins)."""

    db: str | None
    table: str
    alias: str | None = None
    partitions: tuple[str, ...] = ()
    temporary: bool = False
    using: tuple[exp.Expression, ...] = ()
    where: exp.Expression | None = None


@dataclass(frozen=True)
class Update(Statement):
    """UPDATE [db.]t [alias] SET c = expr, ... [FROM relations] [WHERE ...]."""

    db: str | None
    table: str
    alias: str | None
    assignments: tuple[tuple[str, exp.Expression], ...]
    sources: tuple[exp.Expression, ...] = ()
    where: exp.Expression | None = None


@dataclass(frozen=True)
class ShowNodes(Statement):
    """SHOW BACKENDS | SHOW FRONTENDS."""

    kind: str  # BACKENDS | FRONTENDS


@dataclass(frozen=True)
class ShowData(Statement):
    """SHOW DATA [FROM [db.]table] [ORDER BY ..]."""

    db: str | None = None
    table: str | None = None
    order_by: tuple[exp.Ordered, ...] = ()


@dataclass(frozen=True)
class ShowProc(Statement):
    """SHOW PROC '/path' (Doris's proc tree: '/', '/colocation_group', '/dbs', '/backends' ...)."""

    path: str


@dataclass(frozen=True)
class ShowDelete(Statement):
    """SHOW DELETE [FROM db]."""

    db: str | None = None


# -- accounts (sql.text_statements.accounts) ------------------------------------------------------------------


@dataclass(frozen=True)
class UserIdent:
    name: str
    host: str = "%"

    @property
    def text(self) -> str:
        return f"'{self.name}'@'{self.host}'"


@dataclass(frozen=True)
class CreateUser(Statement):
    user: UserIdent
    if_not_exists: bool = False
    password: str | None = None  # plain text (never logged)
    password_hash: str | None = None  # IDENTIFIED BY PASSWORD '*HEX'
    default_role: str | None = None
    policy: tuple[tuple[str, object], ...] = ()
    comment: str = ""


@dataclass(frozen=True)
class AlterUser(Statement):
    user: UserIdent
    if_exists: bool = False
    password: str | None = None
    password_hash: str | None = None
    policy: tuple[tuple[str, object], ...] = ()
    unlock: bool = False
    comment: str | None = None


@dataclass(frozen=True)
class DropUser(Statement):
    user: UserIdent
    if_exists: bool = False


@dataclass(frozen=True)
class CreateRole(Statement):
    name: str
    if_not_exists: bool = False
    comment: str = ""


@dataclass(frozen=True)
class DropRole(Statement):
    name: str
    if_exists: bool = False


@dataclass(frozen=True)
class Grant(Statement):
    """GRANT / REVOKE of privileges on a level, or of roles (`roles`) to a user."""

    privileges: tuple[str, ...]
    level: tuple[str, str, str] | None  # (catalog, db, table), '*' for all
    user: UserIdent | None
    role: str | None
    roles: tuple[str, ...] = ()
    revoke: bool = False
    resource: str | None = None  # GRANT ... ON RESOURCE 'name' | * (then `level` is None)


@dataclass(frozen=True)
class ShowGrants(Statement):
    user: UserIdent | None  # None: the current user (or everyone with `every`)
    every: bool = False


@dataclass(frozen=True)
class ShowRoles(Statement):
    pass
