"""The Doris dialect on sqlglot: statement parsing into sqlglot expressions or typed statements,
and the type system (Doris types <-> Arrow types <-> MySQL column types). Knows sqlglot only."""
