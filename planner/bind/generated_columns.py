"""Generated columns (`c INT AS (a + b)`, `GENERATED ALWAYS AS (..)`): stored, computed by every load from the
row's other columns, as Doris 2.1's are. The rules Doris checks at CREATE TABLE, the values INSERT and UPDATE
may give them, and their computation over a batch of rows (a query over the rows, so every function and cast
is the query engine's)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pyarrow as pa
import sqlglot
from sqlglot import exp

from sql import statements as st
from sql.dialect import DorisLite
from sql.errors import analysis_error
from storage.catalog.model import Column

# functions whose value is not fixed by the row: Doris refuses them in a generated column
_NONDETERMINISTIC = {
    "rand", "random", "uuid", "uuid_numeric", "now", "current_timestamp", "curdate", "current_date", "curtime",
    "current_time", "localtime", "localtimestamp", "unix_timestamp", "utc_timestamp", "sysdate", "connection_id",
    "database", "user", "current_user", "session_user", "last_query_id", "sleep",
}


def generated_text(expression: exp.Expression) -> str:
    """The expression as stored and shown (SHOW CREATE TABLE): columns back-quoted."""
    return expression.sql(dialect=DorisLite, identify=True)


def parse_generated(text: str) -> exp.Expression:
    return sqlglot.parse_one(text, read=DorisLite)


def check_generated(columns: Sequence[st.ColumnDefinition]) -> None:
    """Doris's (MySQL's) rules: refer only to existing columns, to generated ones defined before, no
    aggregate / window / subquery / non-deterministic function, no DEFAULT, no AUTO_INCREMENT."""
    position = {c.name.lower(): i for i, c in enumerate(columns)}
    for i, col in enumerate(columns):
        e = col.generated
        if e is None:
            continue
        if col.default is not None:
            raise analysis_error(f"Generated column '{col.name}' cannot have a default value")
        for node in e.walk():
            if isinstance(node, (exp.AggFunc, exp.Window, exp.Subquery, exp.Select)):
                raise analysis_error(f"Expression of generated column '{col.name}' contains a disallowed function.")
            if isinstance(node, exp.Func):
                name = (node.name if isinstance(node, exp.Anonymous) else node.sql_name()).lower()
                if name in _NONDETERMINISTIC or isinstance(node, (exp.Rand, exp.CurrentTimestamp, exp.CurrentDate)):
                    raise analysis_error(f"Expression of generated column '{col.name}' contains a disallowed "
                                         f"function: {name}.")
            if isinstance(node, exp.Column):
                j = position.get(node.name.lower())
                if j is None:
                    raise analysis_error(f"Unknown column '{node.name}' in 'generated column function'", 1054,
                                         "42S22")
                other = columns[j]
                if other.generated is not None and j >= i:
                    raise analysis_error("Generated column can refer only to generated columns defined prior to it.")
                if other.auto_increment:
                    raise analysis_error(f"Generated column '{col.name}' cannot refer to auto-increment column.")


def dependents(columns: Sequence[Column], name: str) -> list[str]:
    """The generated columns whose expression reads column `name`."""
    out = []
    for c in columns:
        if c.generated is not None and any(n.name.lower() == name.lower()
                                           for n in parse_generated(c.generated).find_all(exp.Column)):
            out.append(c.name)
    return out


def check_insert_targets(table_name: str, columns: Sequence[Column], targets: Sequence[str] | None,
                         rows: Sequence[Sequence[exp.Expression]] | None) -> None:
    """A generated column takes no value but DEFAULT (MySQL's and Doris's message otherwise)."""
    generated = {c.name.lower(): c.name for c in columns if c.generated is not None}
    if not generated:
        return
    names = [c.name for c in columns] if targets is None else list(targets)
    for k, name in enumerate(names):
        if name.lower() not in generated:
            continue
        is_default = rows is not None and all(_is_default(row[k]) for row in rows if k < len(row))
        if not is_default:
            raise analysis_error(f"The value specified for generated column '{generated[name.lower()]}' in table "
                                 f"'{table_name}' is not allowed.")


def _is_default(node: exp.Expression) -> bool:
    return isinstance(node, (exp.Var, exp.Column)) and node.name.upper() == "DEFAULT" and not node.args.get("table")


def compute_generated(data: pa.Table, columns: Sequence[Column],
                      run: Callable[[exp.Select, pa.Table], pa.Table]) -> pa.Table:
    """`data` (every column, generated ones with any value) with each generated column computed from the row,
    in column order (a generated column may read an earlier one). `run` answers a query over the rows, the
    table being `rows`."""
    for c in columns:
        if c.generated is None:
            continue
        query = exp.select(exp.alias_(parse_generated(c.generated), "v")).from_("rows")
        values = run(query, data).column(0)
        data = data.set_column(data.column_names.index(c.name), c.name, values.cast(data.schema.field(c.name).type)
                               if values.type != data.schema.field(c.name).type else values)
    return data
