"""Result column names as MySQL reports them: the alias, the column's spelling, or the expression text."""

from __future__ import annotations

from sqlglot import exp

from planner.functions.casts import arrow_type_of_cast
from sql.errors import SqlError


def output_name(e: exp.Expression) -> str:
    if isinstance(e, exp.Alias):
        return e.alias
    if isinstance(e, exp.Column) and not isinstance(e.this, exp.Star):
        return e.this.name if isinstance(e.this, exp.Identifier) else e.name
    if isinstance(e, exp.Literal):
        return e.this if e.is_string else str(e.this)
    if isinstance(e, exp.Null):
        return "NULL"
    if isinstance(e, exp.Boolean):
        return "TRUE" if e.this else "FALSE"
    if isinstance(e, exp.SessionParameter):
        kind = e.args.get("kind")
        return f"@@{kind.lower()}.{e.this.name}" if kind else f"@@{e.this.name}"
    if isinstance(e, exp.Parameter):
        return f"@{e.this.name}"
    if isinstance(e, exp.CurrentSchema):
        return "database()"  # sqlglot prints it back as schema()
    if isinstance(e, exp.Neg) and isinstance(e.this, exp.Literal):
        return f"-{e.this.this}"
    return _expression_label(e)


def _expression_label(e: exp.Expression) -> str:
    """Doris labels an expression with its SQL as the analyser prints it (Expression.toSql): lower-case
    functions under the name typed (`ifnull(x, 0)`, not coalesce), every binary operator in parentheses
    (`(x + 1)`, `((a > 1) AND (b < 2))`), casts as `cast(x as DECIMALV3(10, 2))`."""
    label = e.copy().transform(_doris_spelling, copy=False)
    for node in list(label.find_all(*_PARENTHESIZED)):
        if not isinstance(node.parent, exp.Paren):
            paren = exp.Paren()
            node.replace(paren)
            paren.set("this", node)
    if isinstance(label, _PARENTHESIZED):
        label = exp.Paren(this=label)
    return label.sql(dialect="mysql", normalize_functions="lower")


_PARENTHESIZED = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.IntDiv, exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT,
                  exp.LTE, exp.NullSafeEQ, exp.And, exp.Or, exp.BitwiseAnd, exp.BitwiseOr, exp.BitwiseXor)


def _doris_spelling(node: exp.Expression) -> exp.Expression:
    if type(node) is exp.Cast and isinstance(node.args.get("to"), exp.DataType):
        try:
            _, target = arrow_type_of_cast(node.args["to"])
        except SqlError:
            return node
        if target is not None:
            spelled = "TEXT" if target.name == "STRING" else target.internal()
            return exp.Var(this=f"cast({_expression_label(node.this)} as {spelled})")
    if isinstance(node, exp.Match):
        kind = str(node.args.get("kind") or "ANY").upper()
        return exp.Var(this=f"({_expression_label(node.this)} MATCH_{kind} {_expression_label(node.expression)})")
    if isinstance(node, exp.Interval) and isinstance(node.this, exp.Literal) and node.this.is_string \
            and node.this.this.lstrip("-").isdigit():
        return exp.Interval(this=exp.Literal.number(node.this.this), unit=node.args.get("unit"))
    typed = node.meta.get("typed_name") if isinstance(node, exp.Func) and node.meta else None
    if isinstance(node, exp.GroupConcat):
        return _group_concat(node)
    if typed and isinstance(node, exp.AggFunc):
        # an aggregate under the name typed (group_bit_or, not bit_or; stddev, not stddev_pop), its arguments
        # plain (count(*), count(DISTINCT a, b) print as they are)
        if node.sql(dialect="mysql").split("(", 1)[0].lower() == typed:
            return node
        args = [a for key in node.arg_types for a in _as_list(node.args.get(key))]
        return exp.Anonymous(this=typed, expressions=args)
    if typed and typed != node.sql_name().lower():
        if isinstance(node, exp.StrPosition):  # instr(str, substr) / locate(substr, str[, pos])
            args = [node.this, node.args.get("substr")] if typed == "instr" else \
                [node.args.get("substr"), node.this, node.args.get("position")]
        else:
            args = [a for key in node.arg_types for a in _as_list(node.args.get(key))]
        return exp.Anonymous(this=typed, expressions=[a for a in args if a is not None])
    return node


def _group_concat(node: exp.GroupConcat) -> exp.Expression:
    """group_concat([DISTINCT] x[, sep] [ORDER BY ...]) as typed: sqlglot prints MySQL's SEPARATOR form."""
    value, separator = node.this, node.args.get("separator")
    order = None
    for part in (value, separator):
        if isinstance(part, exp.Order):
            order = part
    value = value.this if isinstance(value, exp.Order) else value
    separator = separator.this if isinstance(separator, exp.Order) else separator
    args = list(value.expressions) if isinstance(value, exp.Distinct) else [value]
    if separator is not None:
        args.append(separator)
    if order is not None:
        args[-1] = exp.Order(this=args[-1], expressions=order.expressions)
    if isinstance(value, exp.Distinct):
        args = [exp.Distinct(expressions=args)]
    return exp.Anonymous(this="group_concat", expressions=args)


def _as_list(value: object) -> list:
    if value is None or isinstance(value, bool | str):
        return []
    return list(value) if isinstance(value, list) else [value]
