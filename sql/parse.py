"""Text -> typed statements.

`parse(text)` runs one sqlglot parse with the DorisLite dialect over the whole text (statements split on
`;`), then turns each expression into a `sql.statements` dataclass through `_BUILDERS`, a table keyed by
sqlglot node class. A generic `exp.Command` (sqlglot's raw-text fallback) is never passed on: it becomes
an "Unsupported statement" error. Syntax errors are MySQL 1064 with a clean, colour-free message.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, SqlglotError

from sql import expressions as dx
from sql import statements as st
from sql.dialect import DorisLite, dialect_for_sql_mode
from sql.errors import SqlError, analysis_error, parse_error
from sql.fast_insert import parse_simple_insert
from sql.limits import DEFAULT_LIMITS, ExprLimits, check_text, check_tree
from sql.text_statements.accounts import is_account_statement, parse_account_statement
from sql.text_statements.alter_columns import is_alter_columns, parse_alter_columns
from sql.text_statements.export import is_export, parse_export
from sql.text_statements.load_label import (
    is_load_label,
    is_resource_statement,
    parse_load_label,
    parse_resource_statement,
)
from sql.text_statements.outfile import split_outfile

_DIALECT = DorisLite()
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


_MODE_DIALECTS: dict[type, DorisLite] = {DorisLite: _DIALECT}
# Doris's join distribution hints (`JOIN [shuffle] t`, TPC-H Q9 as Doris publishes it): a single node has one
# way to distribute a join, so the hint is read and dropped
_JOIN_HINT = re.compile(r"\bJOIN\s*\[\s*(?:SHUFFLE|BROADCAST|BUCKET_SHUFFLE|COLOCATE)\s*\]", re.IGNORECASE)


def parse(text: str, sql_mode: str | None = None, limits: ExprLimits = DEFAULT_LIMITS) -> list[st.Statement]:
    """Parse one or more `;`-separated statements (read as `sql_mode` says: PIPES_AS_CONCAT,
    NO_BACKSLASH_ESCAPES), each expression within Doris's depth and width `limits`. Raises SqlError (1064
    syntax, 1105 unsupported or too large)."""
    check_text(text, limits)
    if text.lstrip()[:6].upper() == "INSERT" and (insert := parse_simple_insert(text, limits.children)) is not None:
        return [insert]
    if is_alter_columns(text):
        return [parse_alter_columns(text, _read_column)]
    if is_account_statement(text):
        return [parse_account_statement(text)]
    if is_export(text):
        return [parse_export(text)]
    if is_load_label(text):
        return [parse_load_label(text)]
    if is_resource_statement(text):
        return [parse_resource_statement(text)]
    if "outfile" in text.lower() and (outfile := split_outfile(text)) is not None:
        query_text, path, fmt, props = outfile
        [query] = parse(query_text, sql_mode, limits)
        if not isinstance(query, st.Query):
            raise parse_error("errCode = 2, detailMessage = INTO OUTFILE follows a query")
        return [st.SelectIntoOutfile(query.expression, path, fmt, props)]
    if "/*!" in text:
        text = expand_executable_comments(text)
    if "[" in text:
        text = _JOIN_HINT.sub("JOIN", text)
    kind = dialect_for_sql_mode(sql_mode)
    dialect = _MODE_DIALECTS.get(kind) or _MODE_DIALECTS.setdefault(kind, kind())
    try:
        expressions = _parse_with_value_lists(dialect, text)
    except SqlglotError as e:
        raise _syntax_error(e, text) from None
    except RecursionError:
        raise parse_error("errCode = 2, detailMessage = Syntax error: statement is nested too deeply") from None
    statements = [e for e in expressions if e is not None and not isinstance(e, exp.Semicolon)]
    for statement in statements:
        check_tree(statement, limits)
    statements = [balance_chains(e) for e in statements]
    source = text.strip().rstrip(";") if len(statements) == 1 else None
    return [to_statement(e, source) for e in statements]


# a query's `IN (` list of at least 64 plain literals, all numbers or all simple strings: read by a regular
# expression instead of token by token (sqlglot takes ~40 us per literal; BI tools send thousands)
_NUMBER = r"[+-]?\d+(?:\.\d+)?"
_STRING = r"'[^'\\\n]*'"
_LONG_IN = re.compile(rf"\bIN\s*\(\s*((?:(?:{_NUMBER}|{_STRING})\s*,\s*){{63,}}(?:{_NUMBER}|{_STRING}))\s*\)",
                      re.IGNORECASE)
_ITEM = re.compile(rf"{_NUMBER}|{_STRING}")
_QUERY_START = re.compile(r"\s*(?:\(\s*)*(?:SELECT|WITH|EXPLAIN\s+(?:VERBOSE\s+)?SELECT)\b", re.IGNORECASE)
_PLACEHOLDER = "__dorislite_in_list_{}__"


def _parse_with_value_lists(dialect: Dialect, text: str) -> list[exp.Expr | None]:
    """Parse `text`; in a query, long literal IN lists become ValueList nodes without going through the
    parser. If a list's placeholder does not come back as an IN list (the text matched inside a string or a
    comment), the text is parsed the ordinary way."""
    if not _QUERY_START.match(text):
        return dialect.parse(text)
    lists: list[dx.ValueList] = []

    def fold(m: re.Match) -> str:
        items = _ITEM.findall(m.group(1))
        strings = {i.startswith("'") for i in items}
        if len(strings) > 1:
            return m.group(0)
        quoted = strings == {True}
        lists.append(dx.ValueList(values=tuple(i[1:-1] if quoted else i for i in items), strings=quoted))
        return f"IN ({_PLACEHOLDER.format(len(lists) - 1)})"

    folded = _LONG_IN.sub(fold, text)
    if not lists:
        return dialect.parse(text)
    expressions = dialect.parse(folded)
    restored = 0
    for root in expressions:
        for node in list(root.find_all(exp.In)) if root is not None else []:
            items = node.expressions
            if len(items) == 1 and isinstance(items[0], exp.Column) and items[0].name.startswith("__dorislite_in_list_"):
                index = int(items[0].name.removeprefix("__dorislite_in_list_").removesuffix("__"))
                node.set("expressions", [lists[index]])
                restored += 1
    return expressions if restored == len(lists) else dialect.parse(text)


# operators whose long chains (`a OR b OR c ...`, `x + y + z ...`) are rebuilt as balanced trees: the parser
# makes them left-deep, and a 10,000-term chain would be 10,000 levels of recursion in every later pass.
# AND / OR / || are associative outright; + and * only up to rounding and decimal scale growth, so they are
# rebalanced only past a length no hand-written query reaches. A long OR's equalities on one column become
# an IN list first.
_CHAINS: dict[type, int] = {exp.And: 32, exp.Or: 32, exp.DPipe: 32, exp.Add: 256, exp.Mul: 256}


def balance_chains(root: exp.Expr) -> exp.Expr:
    for node in list(root.walk()):  # walk is iterative: safe on a deep tree
        kind = type(node)
        limit = _CHAINS.get(kind)
        if limit is None or type(node.parent) is kind:
            continue  # not a chain's top
        operands = _chain_operands(node, kind)
        if len(operands) <= limit:
            continue
        if kind is exp.Or:
            operands = _or_to_in(operands)
        balanced = _balanced(kind, operands)
        if node is root:
            root = balanced
        else:
            node.replace(balanced)
    return root


def _chain_operands(node: exp.Expr, kind: type) -> list[exp.Expr]:
    """The operands of a chain of `kind`, in order, without recursion."""
    out: list[exp.Expr] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if type(current) is kind:
            stack.append(current.expression)
            stack.append(current.this)
        else:
            out.append(current)
    return out


def _or_to_in(operands: list[exp.Expr]) -> list[exp.Expr]:
    """A long OR's `c = literal` terms on one column become `c IN (literals)`, as Doris's OrToIn rewrite does:
    one value set to bind and test instead of thousands of comparisons. The other terms stay as they are."""
    groups: dict[str, tuple[exp.Expr, list[exp.Expr]]] = {}
    kept: list[exp.Expr] = []
    for operand in operands:
        term = operand.unnest() if isinstance(operand, exp.Paren) else operand
        if isinstance(term, exp.EQ):
            column, value = term.this, term.expression
            if isinstance(column, exp.Literal | exp.Neg):
                column, value = value, column
            literal = value.this if isinstance(value, exp.Neg) else value
            if isinstance(column, exp.Column) and isinstance(literal, exp.Literal):
                key = column.sql()
                if key not in groups:
                    groups[key] = (column, [])
                    kept.append(exp.Placeholder(this=key))
                groups[key][1].append(value)
                continue
        kept.append(operand)
    if not groups:
        return operands
    out: list[exp.Expr] = []
    for operand in kept:
        if isinstance(operand, exp.Placeholder) and operand.name in groups:
            column, values = groups[operand.name]
            out.append(exp.In(this=column, expressions=values) if len(values) > 1 else exp.EQ(this=column, expression=values[0]))
        else:
            out.append(operand)
    return out


def _balanced(kind: type, operands: list[exp.Expr]) -> exp.Expr:
    if len(operands) == 1:
        return operands[0]
    middle = len(operands) // 2
    return kind(this=_balanced(kind, operands[:middle]), expression=_balanced(kind, operands[middle:]))


def to_statement(expression: exp.Expr, source: str | None = None) -> st.Statement:
    for cls in type(expression).__mro__:
        builder = _BUILDERS.get(cls)
        if builder is not None:
            return builder(expression)
    if isinstance(expression, (exp.Condition, exp.Alias, exp.Identifier)):
        # a bare expression is not a statement (`SELEC 1` may parse as `SELEC AS 1`): echo what was typed
        raise _syntax_error_at(source or expression.sql(dialect=_DIALECT))
    raise unsupported(expression.key.upper())


def unsupported(kind: str) -> SqlError:
    return analysis_error(f"Unsupported statement: {kind}")


# -- executable comments ------------------------------------------------------------------------------

_EXEC_COMMENT_VERSION = re.compile(r"\d{5,6}")


def expand_executable_comments(text: str) -> str:
    """MySQL runs the body of `/*! ... */` (optionally `/*!40100 ... */`) as part of the statement.

    Scans quotes and ordinary comments so that `/*!` inside a string or a comment is left alone.
    """
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "'\"`":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" and c != "`" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("/*!", i):
            end = text.find("*/", i + 3)
            end = n if end < 0 else end
            body = text[i + 3 : end]
            m = _EXEC_COMMENT_VERSION.match(body)
            out.append(" " + (body[m.end() :] if m else body) + " ")
            i = end + 2
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(text[i:end])
            i = end
        elif text.startswith("--", i) or c == "#":
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(text[i:end])
            i = end
        else:
            out.append(c)
            i += 1
    return "".join(out)


# -- errors -------------------------------------------------------------------------------------------


_TOKEN_REPR = re.compile(r"<Token token_type: TokenType\.(\w+), text: ([^,]*),[^>]*>")
_CLASS_REPR = re.compile(r"<class '(?:[\w]+\.)*(\w+)'>")


def _clean(description: str) -> str:
    """sqlglot's descriptions without its internals: token and class reprs become plain words."""
    text = _ANSI.sub("", description)
    text = _TOKEN_REPR.sub(lambda m: "EOF" if m.group(1) == "SENTINEL" else f"'{m.group(2)}'", text)
    text = _CLASS_REPR.sub(lambda m: m.group(1).upper(), text)
    return text.replace("Required keyword: 'this' missing for", "Incomplete")


# Doris column types the server does not store: a column of one is refused by name, not as a syntax error
_UNSUPPORTED_TYPES = frozenset({"BITMAP", "HLL", "QUANTILE_STATE", "AGG_STATE", "IPV4", "IPV6", "VARIANT"})
_DDL = re.compile(r"^\s*(?:CREATE|ALTER)\s+TABLE\b", re.IGNORECASE)


def _syntax_error(error: SqlglotError, text: str) -> SqlError:
    if isinstance(error, ParseError) and error.errors:
        first = error.errors[0]
        line_no = first.get("line") or 1
        lines = text.splitlines() or [""]
        line = lines[min(line_no, len(lines)) - 1]
        highlight = _ANSI.sub("", first.get("highlight") or "")
        if highlight.upper() in _UNSUPPORTED_TYPES and _DDL.match(text):
            return analysis_error(f"Unsupported data type: {highlight.upper()}")
        col = max((first.get("col") or 1) - len(highlight), 0)
        detail = (
            f"Syntax error in line {line_no}:\n{line}\n{' ' * col}^\n"
            f"Encountered: {highlight or 'EOF'}\n{_clean(first.get('description') or '')}"
        )
        return parse_error(f"errCode = 2, detailMessage = {detail}")
    return parse_error(f"errCode = 2, detailMessage = Syntax error in line 1:\n{text}\n{_clean(str(error))}")


def _syntax_error_at(statement_text: str) -> SqlError:
    first = statement_text.split()[0] if statement_text.split() else ""
    return parse_error(
        f"errCode = 2, detailMessage = Syntax error in line 1:\n{statement_text}\n^\n"
        f"Encountered: {first}\nExpected: a statement"
    )


# -- small converters ---------------------------------------------------------------------------------


def _table_name(table: exp.Expr) -> tuple[str | None, str]:
    if not isinstance(table, exp.Table) or table.args.get("catalog"):
        raise parse_error("errCode = 2, detailMessage = Syntax error: expected [db.]table")
    return (table.db or None), table.name


def _text(node: exp.Expr | None) -> str | None:
    """A literal or identifier as plain text (string literals unquoted)."""
    if node is None:
        return None
    if isinstance(node, (exp.Literal, exp.Identifier, exp.Var)):
        return node.name
    if isinstance(node, exp.Column):
        return node.name
    if isinstance(node, exp.Boolean):
        return "true" if node.this else "false"
    return node.sql(dialect=_DIALECT)


def _int(node: exp.Expr | None) -> int | None:
    if node is None:
        return None
    try:
        return int(_text(node) or "")
    except ValueError:
        raise _syntax_error_at(node.sql(dialect=_DIALECT)) from None


def _names(nodes: list[exp.Expr] | None) -> tuple[str, ...]:
    return tuple(_text(n) or "" for n in nodes or [])


def _props(nodes: list[exp.Expr] | None) -> st.Props:
    out = []
    for node in nodes or []:
        if not isinstance(node, exp.Property) or type(node) is not exp.Property:
            raise parse_error(
                f"errCode = 2, detailMessage = Syntax error: expected \"key\" = \"value\", got {node.sql()}"
            )
        out.append((_text(node.this) or "", _text(node.args.get("value")) or ""))
    return tuple(out)


def _where(node: exp.Expr | None) -> exp.Expression | None:
    return node.this if isinstance(node, exp.Where) else None


def _bound_value(node: exp.Expr) -> str | None:
    if isinstance(node, exp.Var) and node.name.upper() == "MAXVALUE":
        return None
    if isinstance(node, exp.Null):
        return None
    return _text(node)


def _bound(node: exp.Expr | list) -> st.Bound:
    items = node.expressions if isinstance(node, exp.Tuple) else node
    return tuple(_bound_value(v) for v in items)


# -- CREATE -------------------------------------------------------------------------------------------


def _default(node: exp.Expr) -> st.DefaultValue:
    if isinstance(node, exp.Null):
        return st.DefaultValue(None)
    if isinstance(node, exp.Literal):
        return st.DefaultValue(node.name)
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal):
        return st.DefaultValue(f"-{node.this.name}")
    if isinstance(node, exp.Boolean):
        return st.DefaultValue("true" if node.this else "false")
    if isinstance(node, exp.CurrentTimestamp):
        return st.DefaultValue("CURRENT_TIMESTAMP", is_function=True)
    if isinstance(node, exp.CurrentDate):
        return st.DefaultValue("CURRENT_DATE", is_function=True)
    if isinstance(node, (exp.Column, exp.Anonymous, exp.Var)):
        return st.DefaultValue(node.name.upper(), is_function=True)
    return st.DefaultValue(node.sql(dialect=_DIALECT), is_function=True)


# column constraint kind -> (ColumnDefinition field, value from the node)
_COLUMN_CONSTRAINTS: dict[type, Callable[[exp.Expr], tuple[str, object]]] = {
    exp.NotNullColumnConstraint: lambda k: ("nullable", bool(k.args.get("allow_null"))),
    exp.DefaultColumnConstraint: lambda k: ("default", _default(k.this)),
    exp.CommentColumnConstraint: lambda k: ("comment", _text(k.this) or ""),
    exp.AutoIncrementColumnConstraint: lambda k: ("auto_increment", True),
    exp.GeneratedAsIdentityColumnConstraint: lambda k: ("generated", k.args["expression"])
    if k.args.get("expression") is not None else ("auto_increment", True),
    exp.ComputedColumnConstraint: lambda k: ("generated", k.this.unnest() if isinstance(k.this, exp.Paren) else k.this),
    dx.AggTypeColumnConstraint: lambda k: ("agg_type", k.name.upper()),
    dx.KeyColumnConstraint: lambda k: ("is_key", True),
}


def _column(node: exp.ColumnDef) -> st.ColumnDefinition:
    if not isinstance(node.args.get("kind"), exp.DataType):
        raise parse_error(f"errCode = 2, detailMessage = Syntax error: column {node.name} has no type")
    fields: dict[str, object] = {}
    for constraint in node.constraints:
        kind = constraint.args.get("kind")
        handler = _COLUMN_CONSTRAINTS.get(type(kind))
        if handler is None:
            raise analysis_error(f"Unsupported column attribute: {constraint.sql(dialect=_DIALECT)}")
        key, value = handler(kind)
        fields[key] = value
    return st.ColumnDefinition(name=node.name, type=node.args["kind"], **fields)  # type: ignore[arg-type]


def _read_column(text: str) -> tuple[st.ColumnDefinition, str | None]:
    """One column definition of ALTER TABLE ... COLUMN (with AFTER c / FIRST), read by the dialect."""
    words = text.split()
    type_name = re.sub(r"\W.*", "", words[1]).upper() if len(words) > 1 else ""
    if type_name in _UNSUPPORTED_TYPES:
        raise analysis_error(f"Unsupported data type: {type_name}")
    try:
        (node,) = _DIALECT.parse(f"ALTER TABLE __t ADD COLUMN {text}")
    except SqlglotError as e:
        raise _syntax_error(e, text) from None
    actions = node.args.get("actions") if isinstance(node, exp.Alter) else None
    if not actions or len(actions) != 1 or not isinstance(actions[0], exp.ColumnDef):
        raise parse_error(f"errCode = 2, detailMessage = Syntax error in column definition: {text}")
    column = actions[0]
    position = column.args.get("position")
    where = None
    if isinstance(position, exp.ColumnPosition):
        where = "FIRST" if str(position.args.get("position") or "").upper() == "FIRST" else \
            position.this.name if position.this is not None else None
    return _column(column), where


def _index(node: exp.IndexColumnConstraint) -> st.IndexDesc:
    index_type, comment, props = None, "", ()
    for option in node.args.get("options") or []:
        if isinstance(option, dx.IndexProperties):
            props = _props(option.expressions)
        elif option.args.get("using"):
            index_type = str(option.args["using"]).upper()
        elif option.args.get("comment"):
            comment = _text(option.args["comment"]) or ""
    return st.IndexDesc(
        name=node.name, columns=_names(node.expressions), index_type=index_type, comment=comment,
        properties=props,
    )


def _partition_item(node: exp.Expr) -> st.PartitionItemDesc:
    props = _props(node.args["properties"].expressions) if node.args.get("properties") else ()
    if isinstance(node, dx.PartitionLessThan):
        values = node.expressions
        maxvalue = len(values) == 1 and isinstance(values[0], exp.Var)
        return st.RangeLessThan(node.name, None if maxvalue else _bound(values), props)
    if isinstance(node, dx.PartitionFixedRange):
        return st.RangeFixed(node.name, _bound(node.args["lower"]), _bound(node.args["upper"]), props)
    if isinstance(node, dx.PartitionValuesIn):
        values = tuple(
            _bound(v) if isinstance(v, exp.Tuple) else (_bound_value(v),) for v in node.expressions
        )
        return st.ListValues(node.name, values, props)
    if isinstance(node, exp.PartitionByRangePropertyDynamic):
        every = node.args["every"]
        unit = every.args.get("unit")
        return st.RangeBatch(
            start=_bound(node.args["start"]),
            end=_bound(node.args["end"]),
            interval=_int(every.this) or 0,
            unit=unit.name.upper() if unit else None,
        )
    raise _syntax_error_at(node.sql(dialect=_DIALECT))


def _partition(node: exp.Expr) -> st.PartitionDesc:
    return st.PartitionDesc(
        type="RANGE" if isinstance(node, exp.PartitionByRangeProperty) else "LIST",
        columns=_names(node.args.get("partition_expressions")),
        items=tuple(_partition_item(i) for i in node.args.get("create_expressions") or []),
    )


def _distribution(node: exp.DistributedByProperty) -> st.DistributionDesc:
    buckets = node.args.get("buckets")
    auto = isinstance(buckets, exp.Var)
    return st.DistributionDesc(
        type=str(node.args.get("kind") or "HASH").upper(),
        columns=_names(node.expressions),
        buckets=None if auto else _int(buckets),
        auto=auto,
    )


def _rollup(node: exp.RollupIndex) -> st.RollupDesc:
    dup, props = None, []
    for prop in node.args["properties"].expressions if node.args.get("properties") else []:
        if isinstance(prop, exp.DuplicateKeyProperty):
            dup = _names(prop.expressions)
        else:
            props.append(prop)
    from_index = node.args.get("from_index")
    return st.RollupDesc(node.name, _names(node.expressions), dup, _props(props), _text(from_index))


_KEYS = {exp.AggregateKeyProperty: "AGGREGATE", exp.UniqueKeyProperty: "UNIQUE", exp.DuplicateKeyProperty: "DUPLICATE"}

# table property node -> (CreateTable field, value); `properties` entries accumulate
_TABLE_PROPERTIES: dict[type, Callable[[exp.Expr], tuple[str, object]]] = {
    exp.EngineProperty: lambda p: ("engine", _text(p.this)),
    exp.SchemaCommentProperty: lambda p: ("comment", _text(p.this)),
    exp.PartitionByRangeProperty: lambda p: ("partition", _partition(p)),
    exp.PartitionByListProperty: lambda p: ("partition", _partition(p)),
    exp.DistributedByProperty: lambda p: ("distribution", _distribution(p)),
    exp.RollupProperty: lambda p: ("rollups", tuple(_rollup(r) for r in p.expressions)),
    **{
        cls: (lambda p, kind=kind: ("keys", st.KeysDesc(kind, _names(p.expressions))))
        for cls, kind in _KEYS.items()
    },
}


def _create_table(node: exp.Create) -> st.CreateTable:
    schema = node.this
    if node.args.get("replace"):
        raise unsupported("CREATE OR REPLACE TABLE")
    like = node.find(exp.LikeProperty)
    if like is not None:
        return _create_table_like(node, like)
    query = node.args.get("expression")
    if query is not None and not isinstance(query, exp.Query):
        raise _syntax_error_at(node.sql(dialect=_DIALECT))
    if not isinstance(schema, exp.Schema):
        if query is None:
            raise _syntax_error_at(node.sql(dialect=_DIALECT))
        schema = exp.Schema(this=schema, expressions=[])
    db, name = _table_name(schema.this)
    columns, indexes, column_names = [], [], []
    for item in schema.expressions:
        if query is not None and isinstance(item, exp.Identifier):
            column_names.append(item.name)
        elif query is not None:
            raise analysis_error("Column definitions are not allowed in CREATE TABLE AS SELECT: name the "
                                 "columns only")
        elif isinstance(item, exp.ColumnDef):
            columns.append(_column(item))
        elif isinstance(item, exp.IndexColumnConstraint):
            indexes.append(_index(item))
        else:
            raise analysis_error(f"Unsupported table element: {item.sql(dialect=_DIALECT)}")
    fields: dict[str, object] = {}
    properties: list[exp.Expr] = []
    props_node = node.args.get("properties")
    for prop in props_node.expressions if props_node else []:
        if type(prop) is exp.Property:
            properties.append(prop)
            continue
        handler = _TABLE_PROPERTIES.get(type(prop))
        if handler is None:
            raise analysis_error(f"Unsupported table property: {prop.sql(dialect=_DIALECT)}")
        key, value = handler(prop)
        fields[key] = value
    return st.CreateTable(
        db=db, name=name, columns=tuple(columns), indexes=tuple(indexes), properties=_props(properties),
        if_not_exists=bool(node.args.get("exists")), query=query, column_names=tuple(column_names),
        **fields,  # type: ignore[arg-type]
    )


def _create_table_like(node: exp.Create, like: exp.LikeProperty) -> st.Statement:
    props = node.args.get("properties")
    if isinstance(node.this, exp.Schema) or node.args.get("expression") is not None or len(props.expressions) > 1:
        raise _syntax_error_at(node.sql(dialect=_DIALECT))
    db, name = _table_name(node.this)
    source_db, source = _table_name(like.this)
    rollups: tuple[str, ...] | None = None
    for option in like.expressions:
        if option.name != "ROLLUP":  # INCLUDING / EXCLUDING ...: not Doris
            raise _syntax_error_at(node.sql(dialect=_DIALECT))
        rollups = _names(option.args["value"].expressions)
    return st.CreateTableLike(db, name, source_db, source, rollups, bool(node.args.get("exists")))


def _create(node: exp.Create) -> st.Statement:
    kind = str(node.args.get("kind") or "").upper()
    if kind == "TABLE":
        return _create_table(node)
    if kind in ("DATABASE", "SCHEMA"):
        props = node.args.get("properties")
        kv = [p for p in (props.expressions if props else []) if type(p) is exp.Property]
        return st.CreateDatabase(
            name=node.this.name or node.this.db, if_not_exists=bool(node.args.get("exists")), properties=_props(kv)
        )
    if kind == "VIEW":
        return _create_view(node)
    raise unsupported(f"CREATE {kind}".strip())


def _view_target(node: exp.Expr) -> tuple[str | None, str, tuple[str, ...]]:
    """`[db.]v [(c1, c2 ...)]`: sqlglot gives a Schema over the Table when columns are listed."""
    if isinstance(node, exp.Schema):
        db, name = _table_name(node.this)
        return db, name, tuple(c.name for c in node.expressions)
    db, name = _table_name(node)
    return db, name, ()


def _view_query(node: exp.Expr | None) -> exp.Expression:
    if not isinstance(node, exp.Select | exp.SetOperation | exp.Subquery):
        raise parse_error("errCode = 2, detailMessage = Syntax error: a view is defined AS a query")
    return node


def _create_view(node: exp.Create) -> st.Statement:
    props = node.args.get("properties")
    if props is not None and any(isinstance(p, exp.MaterializedProperty) for p in props.expressions):
        raise unsupported("CREATE MATERIALIZED VIEW")
    comment = next((_text(p.this) or "" for p in (props.expressions if props else [])
                    if isinstance(p, exp.SchemaCommentProperty)), "")
    db, name, columns = _view_target(node.this)
    return st.CreateView(db, name, _view_query(node.expression), columns, comment,
                         or_replace=bool(node.args.get("replace")), if_not_exists=bool(node.args.get("exists")))


def _drop(node: exp.Drop) -> st.Statement:
    kind = str(node.args.get("kind") or "").upper()
    tables = node.args.get("tables") or []
    if len(tables) != 1:
        raise unsupported(f"DROP {kind} with several names")
    target = tables[0]
    if kind in ("DATABASE", "SCHEMA"):
        # sqlglot puts a lone schema name in Table.db
        return st.DropDatabase(
            name=target.name or target.db, if_exists=bool(node.args.get("exists")),
            force=bool(node.args.get("force")),
        )
    if kind == "TABLE":
        db, name = _table_name(target)
        return st.DropTable(db, name, bool(node.args.get("exists")), bool(node.args.get("force")))
    if kind == "VIEW" and not node.args.get("materialized"):
        db, name = _table_name(target)
        return st.DropView(db, name, bool(node.args.get("exists")))
    on = node.args.get("cluster")
    if kind == "INDEX" and isinstance(on, exp.OnProperty):
        db, name = _table_name(on.this)
        return st.DropIndex(db, name, target.name, bool(node.args.get("exists")))
    raise unsupported(f"DROP {kind}".strip())


def _truncate(node: exp.TruncateTable) -> st.Statement:
    if node.args.get("is_database") or len(node.expressions) != 1:
        raise unsupported("TRUNCATE")
    table = node.expressions[0]
    db, name = _table_name(table)
    partition = table.args.get("partition")
    return st.TruncateTable(db, name, _names(partition.expressions) if partition else ())


def _describe(node: exp.Describe) -> st.Statement:
    this = node.this
    style = node.args.get("style")
    if isinstance(this, exp.Query):
        return st.Explain(this, style)
    if isinstance(this, exp.Table):
        db, name = _table_name(this)
        return st.Describe(db, name, all=style == "ALL")
    raise unsupported(f"EXPLAIN {this.key.upper()}")


# -- SHOW ---------------------------------------------------------------------------------------------

_SIMPLE_SHOWS = {
    "ENGINES": "ENGINES", "CHARACTER SET": "CHARSET", "COLLATION": "COLLATION", "PLUGINS": "PLUGINS",
    "PROCESSLIST": "PROCESSLIST", "WARNINGS": "WARNINGS", "ERRORS": "ERRORS", "STATUS": "STATUS",
}


def _show_target(node: exp.Show) -> tuple[str | None, str]:
    return _text(node.args.get("db")), _text(node.args.get("target")) or ""


def _show_like(node: exp.Show) -> str | None:
    return _text(node.args.get("like"))


_SHOWS: dict[str, Callable[[exp.Show], st.Statement]] = {
    "DATABASES": lambda s: st.ShowDatabases(_show_like(s), _where(s.args.get("where"))),
    "TABLES": lambda s: st.ShowTables(
        _text(s.args.get("db")), bool(s.args.get("full")), _show_like(s), _where(s.args.get("where"))
    ),
    "COLUMNS": lambda s: st.ShowColumns(
        *_show_target(s), bool(s.args.get("full")), _show_like(s), _where(s.args.get("where"))
    ),
    "INDEX": lambda s: st.ShowIndex(*_show_target(s)),
    "TABLE STATUS": lambda s: st.ShowTableStatus(
        _text(s.args.get("db")), _show_like(s), _where(s.args.get("where"))
    ),
    "VARIABLES": lambda s: st.ShowVariables(
        "GLOBAL" if s.args.get("global_") else "SESSION", _show_like(s), _where(s.args.get("where"))
    ),
    "CREATE TABLE": lambda s: st.ShowCreateTable(*_show_target(s)),
    "CREATE VIEW": lambda s: st.ShowCreateView(*_show_target(s)),
    "DYNAMIC PARTITION TABLES": lambda s: st.ShowDynamicPartitionTables(_text(s.args.get("db")),
                                                                        _where(s.args.get("where"))),
    "CREATE DATABASE": lambda s: st.ShowCreateDatabase(_text(s.args.get("target")) or ""),
    "FRONTEND CONFIG": lambda s: st.ShowConfig(_show_like(s)),
    "DELETE": lambda s: st.ShowDelete(_text(s.args.get("db"))),
    "PROC": lambda s: st.ShowProc(_text(s.args.get("target")) or ""),
    "BACKENDS": lambda s: st.ShowNodes("BACKENDS"),
    "FRONTENDS": lambda s: st.ShowNodes("FRONTENDS"),
    **{
        kind: (
            lambda s, name=name: st.ShowSimple(
                kind=name, full=bool(s.args.get("full")),
                scope="GLOBAL" if s.args.get("global_") else "SESSION",
                like=_show_like(s), where=_where(s.args.get("where")),
                limit=_int(s.args.get("limit")), offset=_int(s.args.get("offset")),
            )
        )
        for kind, name in _SIMPLE_SHOWS.items()
    },
}


def _show(node: exp.Show) -> st.Statement:
    kind = str(node.this).upper()
    builder = _SHOWS.get(kind)
    if builder is None:
        raise unsupported(f"SHOW {kind}")
    return builder(node)


def _show_filters(node: exp.Expr) -> tuple:
    """(where, order_by, limit, offset) of a SHOW over a table's rows (the parser's _parse_show_filters)."""
    order = node.args.get("order")
    return (_where(node.args.get("where")), tuple(order.expressions) if order else (), _int(node.args.get("limit")),
            _int(node.args.get("offset")))


def _show_partitions(node: dx.ShowPartitions) -> st.Statement:
    return st.ShowPartitions(*_table_name(node.this), bool(node.args.get("temporary")), *_show_filters(node))


def _show_table_versions(node: dx.ShowTableVersions) -> st.Statement:
    return st.ShowTableVersions(*_table_name(node.this), *_show_filters(node))


def _show_tablets(node: dx.ShowTablets) -> st.Statement:
    return st.ShowTablets(*_table_name(node.this), tuple(p.name for p in node.expressions), *_show_filters(node))


def _show_query_profile(node: dx.ShowQueryProfile) -> st.Statement:
    return st.ShowQueryProfile(node.this.name)


def _show_load(node: dx.ShowLoad | dx.ShowExport) -> st.Statement:
    order = node.args.get("order")
    kind = st.ShowExport if isinstance(node, dx.ShowExport) else st.ShowLoad
    return kind(
        _text(node.args.get("db")), _where(node.args.get("where")), tuple(order.expressions) if order else (),
        _int(node.args.get("limit")), _int(node.args.get("offset")),
    )


def _show_data(node: dx.ShowData) -> st.Statement:
    order = node.args.get("order")
    table = node.this
    return st.ShowData(_text(table.args.get("db")) if table else None, table.name if table else None,
                       tuple(order.expressions) if order else ())


def _cancel_load(node: dx.CancelLoad) -> st.Statement:
    where = _where(node.args.get("where"))
    assert where is not None  # the parser requires it
    return st.CancelLoad(_text(node.args.get("db")), where)


# -- SET ----------------------------------------------------------------------------------------------

_SCOPES = {None: "SESSION", "SESSION": "SESSION", "LOCAL": "SESSION", "GLOBAL": "GLOBAL",
           "PERSIST": "GLOBAL", "PERSIST_ONLY": "GLOBAL"}


def _charset_items(item: exp.SetItem, scope: str) -> list[st.Assignment]:
    value = exp.Literal.string(_text(item.this) or "")
    names = ["character_set_client", "character_set_results"]
    if item.args.get("kind") == "NAMES":
        names.insert(1, "character_set_connection")
    out: list[st.Assignment] = [(scope, n, value) for n in names]
    if item.args.get("collate"):
        out.append((scope, "collation_connection", exp.Literal.string(_text(item.args["collate"]) or "")))
    return out


def _transaction_items(item: exp.SetItem, scope: str) -> list[st.Assignment]:
    scope = "GLOBAL" if item.args.get("global_") else scope
    out: list[st.Assignment] = []
    for characteristic in item.expressions:
        text = characteristic.name.upper()
        if text.startswith("ISOLATION LEVEL "):
            level = text.removeprefix("ISOLATION LEVEL ").replace(" ", "-")
            out.append((scope, "transaction_isolation", exp.Literal.string(level)))
        elif text in ("READ ONLY", "READ WRITE"):
            out.append((scope, "transaction_read_only", exp.Literal.number(int(text == "READ ONLY"))))
    return out


def _assignment_items(item: exp.SetItem, scope: str) -> list[st.Assignment]:
    eq = item.this
    if not isinstance(eq, exp.EQ):
        raise _syntax_error_at(item.sql(dialect=_DIALECT))
    target, value = eq.this, eq.expression
    if isinstance(target, exp.Parameter):
        return [("USER", target.name.lower(), value)]
    if isinstance(target, exp.SessionParameter):
        kind = str(target.args.get("kind") or "").upper() or None
        return [(_SCOPES.get(kind, scope) if kind else scope, target.name.lower(), value)]
    if isinstance(target, (exp.Column, exp.Identifier, exp.Var)):
        return [(scope, target.name.lower(), value)]
    raise _syntax_error_at(item.sql(dialect=_DIALECT))


_SET_KINDS: dict[str, Callable[[exp.SetItem, str], list[st.Assignment]]] = {
    "NAMES": _charset_items,
    "CHARACTER SET": _charset_items,
    "TRANSACTION": _transaction_items,
}


def _set(node: exp.Set) -> st.Statement:
    items = node.expressions
    if any(isinstance(i, dx.SetPassword) for i in items):
        if len(items) != 1:
            raise _syntax_error_at(node.sql(dialect=_DIALECT))
        p = items[0]
        return st.SetPassword(
            user=_text(p.args.get("user")), host=_text(p.args.get("host")),
            password=_text(p.this) or "", hashed=bool(p.args.get("hashed")),
        )
    if node.args.get("unset") or node.args.get("tag"):
        raise unsupported("UNSET")
    assignments: list[st.Assignment] = []
    for item in items:
        kind = item.args.get("kind")
        kind = str(kind).upper() if kind else None
        handler = _SET_KINDS.get(kind or "")
        if handler is not None:
            assignments.extend(handler(item, "SESSION"))
        else:
            assignments.extend(_assignment_items(item, _SCOPES.get(kind, "SESSION")))
    return st.SetVariables(tuple(assignments))


# -- DML / misc ---------------------------------------------------------------------------------------


def _insert(node: exp.Insert) -> st.Statement:
    for flag, kind in (("ignore", "INSERT IGNORE"),
                       ("alternative", "INSERT OR ..."), ("conflict", "INSERT ... ON DUPLICATE KEY")):
        if node.args.get(flag):
            raise unsupported(kind)
    target = node.this
    columns = None
    if isinstance(target, exp.Schema):
        columns = _names(target.expressions)
        target = target.this
    db, name = _table_name(target)
    if target.args.get("alias"):
        raise _syntax_error_at(node.sql(dialect=_DIALECT))
    partition = target.args.get("partition")
    label = node.args.get("label")
    source = node.args.get("expression")
    values = query = None
    if isinstance(source, exp.Values):
        values = tuple(
            tuple(row.expressions) if isinstance(row, exp.Tuple) else (row,) for row in source.expressions
        )
    elif isinstance(source, exp.Query):
        query = source
    else:
        raise _syntax_error_at(node.sql(dialect=_DIALECT))
    partitions = tuple("*" if isinstance(p, exp.Star) else p.name for p in partition.expressions) if partition else ()
    if "*" in partitions and (len(partitions) > 1 or not node.args.get("overwrite")):
        raise _syntax_error_at(node.sql(dialect=_DIALECT))
    temporary = bool(partition is not None and partition.args.get("temporary"))
    if temporary and node.args.get("overwrite"):
        raise _syntax_error_at(node.sql(dialect=_DIALECT))
    return st.Insert(
        db=db, table=name, columns=columns, partitions=partitions,
        label=_text(label.this) if label else None, values=values, query=query,
        overwrite=bool(node.args.get("overwrite")), temporary=temporary,
    )


def _update(node: exp.Update) -> st.Statement:
    target = node.this
    if not isinstance(target, exp.Table) or node.args.get("order") or node.args.get("limit") \
            or node.args.get("returning") or node.args.get("with_"):
        raise _syntax_error_at(node.sql(dialect=_DIALECT))
    db, name = _table_name(target)
    assignments = []
    for item in node.expressions:
        if not isinstance(item, exp.EQ) or not isinstance(item.this, exp.Column):
            raise _syntax_error_at(node.sql(dialect=_DIALECT))
        column = item.this
        if column.table and column.table.lower() not in {name.lower(), (target.alias or "").lower()}:
            raise analysis_error(f"column {column.sql(dialect=_DIALECT)} is not a column of the updated table")
        assignments.append((column.name, item.expression))
    source = node.args.get("from_") or node.args.get("from")
    sources: tuple[exp.Expression, ...] = ()
    if source is not None:
        sources = (source.this, *(j for j in node.args.get("joins") or ()))
    return st.Update(db, name, target.alias or None, tuple(assignments), sources, _where(node.args.get("where")))


def _delete(node: exp.Delete) -> st.Statement:
    target = node.this
    if node.args.get("tables") or not isinstance(target, exp.Table):
        raise _syntax_error_at(node.sql(dialect=_DIALECT))
    db, name = _table_name(target)
    partition = target.args.get("partition")
    return st.Delete(
        db=db, table=name, alias=target.alias or None, partitions=_names(partition.expressions) if partition else (),
        temporary=bool(node.args.get("temporary")), using=tuple(node.args.get("using") or ()),
        where=_where(node.args.get("where")),
    )


def _kill(node: exp.Kill) -> st.Statement:
    kind = node.args.get("kind")
    return st.Kill(_int(node.this) or 0, query_only=bool(kind) and kind.name.upper() == "QUERY")


# ALTER TABLE action node -> statement builder (db, table, action)
_ALTER_ACTIONS: dict[type, Callable[[str | None, str, exp.Expr], st.Statement]] = {
    dx.AddRollup: lambda db, t, a: st.AddRollup(db, t, tuple(_rollup(r) for r in a.expressions)),
    dx.DropRollup: lambda db, t, a: st.DropRollup(
        db, t, _names(a.expressions),
        _props(a.args["properties"].expressions) if a.args.get("properties") else (),
    ),
}


def _add_partition(db: str | None, table: str, action: exp.Expr) -> st.Statement:
    item = _partition_item(action.this)
    assert not isinstance(item, st.RangeBatch)  # the parser reads PARTITION p VALUES ... only
    if action.args.get("properties"):  # ADD PARTITION ... PROPERTIES (..) after the distribution
        item = replace(item, properties=item.properties + _props(action.args["properties"].expressions))
    dist = action.args.get("distribution")
    return st.AddPartition(
        db, table, item, _distribution(dist) if dist is not None else None,
        if_not_exists=bool(action.args.get("exists")), temporary=bool(action.args.get("temporary")),
    )


def _drop_partition(db: str | None, table: str, action: exp.Expr) -> st.Statement:
    return st.DropPartition(
        db, table, _text(action.this) or "", if_exists=bool(action.args.get("exists")),
        force=bool(action.args.get("force")), temporary=bool(action.args.get("temporary")),
    )


def _modify_partition(db: str | None, table: str, action: exp.Expr) -> st.Statement:
    names = None if action.args.get("all") else _names(action.expressions)
    return st.ModifyPartition(
        db, table, names, _props(action.args["properties"].expressions), bool(action.args.get("temporary"))
    )


def _replace_partition(db: str | None, table: str, action: exp.Expr) -> st.Statement:
    props = action.args.get("properties")
    return st.ReplacePartition(db, table, _names(action.expressions), _names(action.args["temp"]),
                               _props(props.expressions) if props is not None else ())


def _add_constraint(db: str | None, table: str, action: exp.Expr) -> st.Statement:
    items = action.expressions
    if len(items) != 1 or not isinstance(items[0], exp.IndexColumnConstraint):
        raise unsupported("ALTER TABLE ADD")
    return st.AddIndex(db, table, _index(items[0]))


def _alter_drop(db: str | None, table: str, action: exp.Expr) -> st.Statement:
    kind = str(action.args.get("kind") or "").upper()
    names = action.args.get("tables") or []
    if kind != "INDEX" or len(names) != 1:
        raise unsupported(f"ALTER TABLE DROP {kind}".strip())
    return st.DropIndex(db, table, names[0].name, bool(action.args.get("exists")))


def _alter_set(db: str | None, table: str, action: exp.Expr) -> st.Statement:
    props = []
    for e in action.expressions:
        if not isinstance(e, exp.EQ):
            raise unsupported("ALTER TABLE SET")
        props.append((_text(e.this) or "", _text(e.expression) or ""))
    return st.AlterTableSetProperties(db, table, tuple(props))


def _alter_rename(db: str | None, table: str, action: exp.Expr) -> st.Statement:
    target = action.this
    if not isinstance(target, exp.Table) or target.args.get("db"):
        raise unsupported("ALTER TABLE RENAME")
    return st.AlterTableRename(db, table, "TABLE", table, target.name)


_ALTER_ACTIONS[exp.AlterRename] = _alter_rename
_ALTER_ACTIONS[dx.AddPartition] = _add_partition
_ALTER_ACTIONS[dx.DropPartition] = _drop_partition
_ALTER_ACTIONS[dx.ModifyPartition] = _modify_partition
_ALTER_ACTIONS[dx.ReplacePartition] = _replace_partition
_ALTER_ACTIONS[exp.AddConstraint] = _add_constraint
_ALTER_ACTIONS[exp.Drop] = _alter_drop
_ALTER_ACTIONS[exp.AlterSet] = _alter_set

_CREATE_INDEX = re.compile(
    r"^INDEX\s+(IF\s+NOT\s+EXISTS\s+)?`?(\w+)`?\s+ON\s+(?:`?(\w+)`?\s*\.\s*)?`?(\w+)`?\s*\(\s*`?(\w+)`?\s*\)"
    r"(?:\s+USING\s+(\w+))?(?:\s+COMMENT\s+(['\"])(.*?)\7)?\s*;?\s*$", re.IGNORECASE | re.DOTALL)


def _create_index(rest: str) -> st.Statement:
    m = _CREATE_INDEX.match(rest.strip())
    if m is None:
        raise _syntax_error_at(f"CREATE {rest}")
    index = st.IndexDesc(name=m.group(2), columns=(m.group(5),), index_type=m.group(6) and m.group(6).upper(),
                         comment=m.group(8) or "")
    return st.AddIndex(m.group(3), m.group(4), index, bool(m.group(1)))


def _alter(node: exp.Alter) -> st.Statement:
    kind = str(node.args.get("kind") or "TABLE").upper()
    actions = node.args.get("actions") or []
    if kind == "VIEW" and len(actions) == 1:
        db, name, columns = _view_target(node.this)
        return st.AlterView(db, name, _view_query(actions[0]), columns)
    builder = _ALTER_ACTIONS.get(type(actions[0])) if kind == "TABLE" and len(actions) == 1 else None
    if builder is None or node.args.get("options"):
        raise unsupported(f"ALTER {kind}")
    db, name = _table_name(node.this)
    return builder(db, name, actions[0])


def _cancel_alter_table(node: dx.CancelAlterTable) -> st.Statement:
    db, name = _table_name(node.args["table"])
    return st.CancelAlterTableRollup(db, name, tuple(_int(n) or 0 for n in node.expressions), node.name.upper())


_NAME = r"(?:`([^`]+)`|(\w+))"
_ALTER_TABLE_HEAD = rf"^TABLE\s+(?:{_NAME}\s*\.\s*)?{_NAME}\s+"
_RENAME_PART = re.compile(rf"{_ALTER_TABLE_HEAD}RENAME\s+(ROLLUP|PARTITION)\s+{_NAME}\s+{_NAME}\s*;?\s*$",
                          re.IGNORECASE)
_MODIFY_COMMENT = re.compile(rf"{_ALTER_TABLE_HEAD}MODIFY\s+COMMENT\s+(?:'((?:[^'\\]|\\.|'')*)'|\"((?:[^\"\\]|\\.)*)\")"
                             r"\s*;?\s*$", re.IGNORECASE | re.DOTALL)


_VALUE = r"(?:'[^']*'|\"[^\"]*\"|-?\d+(?:\.\d+)?)"
_VALUES = rf"\(\s*({_VALUE}(?:\s*,\s*{_VALUE})*)\s*\)"
_DISTRIBUTION = (r"DISTRIBUTED\s+BY\s+(?:HASH\s*\(([^)]*)\)|(RANDOM))(?:\s+BUCKETS\s+(\d+|AUTO))?")
_ADD_PARTITIONS = re.compile(rf"{_ALTER_TABLE_HEAD}ADD\s+PARTITIONS\s+FROM\s*{_VALUES}\s*TO\s*{_VALUES}\s*"
                             rf"INTERVAL\s+(\d+)(?:\s+(YEAR|MONTH|WEEK|DAY|HOUR))?(?:\s+{_DISTRIBUTION})?\s*;?\s*$",
                             re.IGNORECASE)
_MODIFY_DISTRIBUTION = re.compile(rf"{_ALTER_TABLE_HEAD}MODIFY\s+DISTRIBUTION\s+{_DISTRIBUTION}\s*;?\s*$",
                                  re.IGNORECASE)


def _values_of(text: str) -> st.Bound:
    return tuple(v.strip()[1:-1] if v.strip()[0] in "'\"" else v.strip() for v in re.findall(_VALUE, text))


def _distribution_of(hash_columns: str | None, random: str | None, buckets: str | None) -> st.DistributionDesc:
    auto = buckets is not None and buckets.upper() == "AUTO"
    columns = tuple(c.strip().strip("`") for c in (hash_columns or "").split(",") if c.strip())
    return st.DistributionDesc("RANDOM" if random else "HASH", columns,
                               None if auto or buckets is None else int(buckets), auto)


def _alter_table_command(text: str) -> st.Statement | None:
    """The ALTER TABLE forms sqlglot reads only as a raw Command: RENAME ROLLUP / PARTITION, MODIFY COMMENT,
    ADD PARTITIONS FROM .. TO .. INTERVAL, MODIFY DISTRIBUTION."""
    if m := _ADD_PARTITIONS.match(text.strip()):
        g = m.groups()
        batch = st.RangeBatch(_values_of(g[4]), _values_of(g[5]), int(g[6]), g[7].upper() if g[7] else None)
        distribution = _distribution_of(g[8], g[9], g[10]) if (g[8] is not None or g[9]) else None
        return st.AddPartitions(g[0] or g[1], g[2] or g[3], batch, distribution)
    if m := _MODIFY_DISTRIBUTION.match(text.strip()):
        g = m.groups()
        return st.ModifyDistribution(g[0] or g[1], g[2] or g[3], _distribution_of(g[4], g[5], g[6]))
    if m := _RENAME_PART.match(text.strip()):
        g = m.groups()
        return st.AlterTableRename(g[0] or g[1], g[2] or g[3], g[4].upper(), g[5] or g[6], g[7] or g[8])
    if m := _MODIFY_COMMENT.match(text.strip()):
        g = m.groups()
        comment = g[4] if g[4] is not None else g[5]
        return st.AlterTableComment(g[0] or g[1], g[2] or g[3], comment.replace("''", "'").replace("\\'", "'"))
    return None


def _command(node: exp.Command) -> st.Statement:
    head = str(node.this).upper()
    text = str(node.args.get("expression") or "")
    if head == "CREATE" and text.lstrip().upper().startswith("INDEX"):
        return _create_index(text)
    if head == "ALTER" and (statement := _alter_table_command(text)) is not None:
        return statement
    rest = text.split()
    kind = " ".join([head, *rest[:1]]).upper()
    # ADD / DROP ROLLUP and ADD / DROP / MODIFY PARTITION are supported
    rollup = head == "ALTER" and any(w.upper() in ("ROLLUP", "PARTITION") for w in rest)
    if head == "SET" or head in _SUPPORTED_HEADS or kind in _SUPPORTED_HEADS or rollup:
        # a statement we support that sqlglot could not read whole: a syntax error, not "unsupported"
        raise _syntax_error_at(f"{head} {' '.join(rest)}".strip())
    raise unsupported(kind)


_SUPPORTED_HEADS = frozenset({
    "CREATE DATABASE", "CREATE SCHEMA", "CREATE TABLE", "DROP DATABASE", "DROP SCHEMA", "DROP TABLE",
    "TRUNCATE", "INSERT", "DELETE", "SELECT", "WITH", "USE", "DESC", "DESCRIBE", "KILL",
})


_BUILDERS: dict[type, Callable[[exp.Expr], st.Statement]] = {
    exp.Create: _create,
    exp.Drop: _drop,
    exp.Use: lambda n: st.Use(n.this.name if n.this else ""),
    exp.TruncateTable: _truncate,
    exp.Describe: _describe,
    exp.Show: _show,
    dx.ShowPartitions: _show_partitions,
    dx.ShowTablets: _show_tablets,
    dx.ShowTableVersions: _show_table_versions,
    dx.ShowLoad: _show_load,
    dx.ShowData: _show_data,
    dx.ShowExport: _show_load,
    dx.CancelExport: lambda n: st.CancelExport(_text(n.args.get("db")), _where(n.args.get("where"))),
    dx.ShowQueryProfile: _show_query_profile,
    dx.CancelLoad: _cancel_load,
    dx.ShowAlterTable: lambda n: st.ShowAlterTableRollup(
        _text(n.args.get("db")), n.name.upper(), _where(n.args.get("where")),
        tuple(n.args["order"].expressions) if n.args.get("order") else (), _int(n.args.get("limit")),
        _int(n.args.get("offset"))),
    dx.CancelAlterTable: _cancel_alter_table,
    dx.AdminSetConfig: lambda n: st.AdminSetConfig(_props(n.expressions)),
    dx.AdminShowRollupAdvice: lambda n: st.AdminShowRollupAdvice(*_table_name(n.this), _int(n.args.get("limit"))),
    exp.Set: _set,
    exp.Kill: _kill,
    exp.Commit: lambda n: st.Transaction("COMMIT"),
    exp.Rollback: lambda n: st.Transaction("ROLLBACK"),
    exp.Transaction: lambda n: st.Transaction("BEGIN"),
    exp.Insert: _insert,
    exp.Delete: _delete,
    exp.Update: _update,
    exp.Query: lambda n: st.Query(n),
    exp.Command: _command,
    exp.Alter: _alter,
}
