"""Result column names as MySQL reports them: the alias, the column's spelling, or the expression text."""

from __future__ import annotations

from sqlglot import exp


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
    # MySQL uses the text as typed; the closest we have is the expression printed back with
    # lower-case function names (`count(*)`, `sum(v)`), which is what users mostly type.
    return e.sql(dialect="mysql", normalize_functions="lower")
