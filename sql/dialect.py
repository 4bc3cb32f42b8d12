"""dorislite's SQL dialect: sqlglot's Doris dialect plus the Doris grammar it lacks.

Every difference is a table entry (tokenizer keywords, constraint / property / SHOW / SET / ADMIN parsers);
a `_parse_*` method is overridden only where the grammar itself differs (partition items, BUCKETS AUTO,
DESC t ALL / EXPLAIN levels, INSERT ... WITH LABEL).
"""

from __future__ import annotations

import typing as t

from sqlglot import exp
from sqlglot.dialects.doris import Doris
from sqlglot.helper import seq_get
from sqlglot.parsers.doris import DorisParser
from sqlglot.tokens import TokenType
from sqlglot.trie import new_trie

from sql import expressions as dx

AGG_TYPES = (
    "SUM", "MAX", "MIN", "REPLACE", "REPLACE_IF_NOT_NULL",
    "HLL_UNION", "BITMAP_UNION", "QUANTILE_UNION", "GENERIC",
)

# EXPLAIN [level] <query>; multi-word levels are matched as token sequences
EXPLAIN_LEVELS: tuple[tuple[str, ...], ...] = (
    ("VERBOSE",), ("GRAPH",), ("TREE",), ("DUMP",), ("PLAN",),
    ("PARSED", "PLAN"), ("ANALYZED", "PLAN"), ("REWRITTEN", "PLAN"), ("LOGICAL", "PLAN"),
    ("OPTIMIZED", "PLAN"), ("PHYSICAL", "PLAN"), ("SHAPE", "PLAN"), ("MEMO", "PLAN"),
    ("DISTRIBUTED", "PLAN"), ("ALL", "PLAN"),
)

BATCH_UNITS = ("HOUR", "DAY", "WEEK", "MONTH", "YEAR")

# tokens that start a query after EXPLAIN / DESC
_QUERY_START = {TokenType.SELECT, TokenType.WITH, TokenType.L_PAREN, TokenType.VALUES}


def _agg_type(name: str) -> t.Callable[[DorisLiteParser], exp.Expr]:
    return lambda self: self.expression(dx.AggTypeColumnConstraint(this=exp.var(name)))


def _show(this: str, **kwargs: t.Any) -> t.Callable[[DorisLiteParser], exp.Expr]:
    return lambda self: self._parse_show_mysql(this, **kwargs)


def _array_agg(args: list[exp.Expr]) -> exp.ArrayAgg:
    """array_agg(x): Doris's takes one argument; a second is kept (sqlglot drops it) for the binder's arity error."""
    node = exp.ArrayAgg(this=seq_get(args, 0))
    if len(args) > 1:
        node.set("expression", args[1])
    return node


class DorisLiteParser(DorisParser):
    # time travel (planner/time_travel.py): FOR TIME AS OF '...' beside sqlglot's FOR VERSION AS OF n
    VERSION_PHRASES = {**DorisParser.VERSION_PHRASES, ("FOR", "TIME"): "TIMESTAMP"}

    # functions sqlglot rewrites into MySQL spellings that do not run (to_days -> datediff from '0000-01-01',
    # a date no DATE holds): kept as calls, planner/functions evaluates them
    FUNCTIONS = {
        **DorisParser.FUNCTIONS,
        "TO_DAYS": lambda args: exp.Anonymous(this="to_days", expressions=args),
        # Doris's aggregate spellings as sqlglot's aggregate nodes (the binder finds aggregates by AggFunc)
        "GROUP_BIT_AND": lambda args: exp.BitwiseAndAgg(this=seq_get(args, 0)),
        "GROUP_BIT_OR": lambda args: exp.BitwiseOrAgg(this=seq_get(args, 0)),
        "GROUP_BIT_XOR": lambda args: exp.BitwiseXorAgg(this=seq_get(args, 0)),
        "COVAR": lambda args: exp.CovarPop(this=seq_get(args, 0), expression=seq_get(args, 1)),
        "PERCENTILE": lambda args: exp.Quantile(this=seq_get(args, 0), quantile=seq_get(args, 1)),
        "PERCENTILE_APPROX": lambda args: exp.ApproxQuantile(this=seq_get(args, 0), quantile=seq_get(args, 1)),
        "BITMAP_UNION": lambda args: dx.BitmapUnion(this=seq_get(args, 0)),
        "BITMAP_UNION_COUNT": lambda args: dx.BitmapUnionCount(this=seq_get(args, 0)),
        "BITMAP_UNION_INT": lambda args: dx.BitmapUnionInt(this=seq_get(args, 0)),
        "HLL_UNION": lambda args: dx.HllUnion(this=seq_get(args, 0)),
        "HLL_RAW_AGG": lambda args: dx.HllUnion(this=seq_get(args, 0)),
        "HLL_UNION_AGG": lambda args: dx.HllUnionAgg(this=seq_get(args, 0)),
        "NDV": lambda args: dx.Ndv(this=seq_get(args, 0)),
        "COLLECT_LIST": lambda args: dx.CollectList(this=seq_get(args, 0), expression=seq_get(args, 1)),
        "GROUP_ARRAY": lambda args: dx.CollectList(this=seq_get(args, 0), expression=seq_get(args, 1)),
        "COLLECT_SET": lambda args: dx.CollectSet(this=seq_get(args, 0), expression=seq_get(args, 1)),
        "GROUP_UNIQ_ARRAY": lambda args: dx.CollectSet(this=seq_get(args, 0), expression=seq_get(args, 1)),
        "ARRAY_AGG": lambda args: _array_agg(args),
        "SEQUENCE_MATCH": lambda args: dx.SequenceMatch(expressions=args),
        "SEQUENCE_COUNT": lambda args: dx.SequenceCount(expressions=args),
        "COUNT_BY_ENUM": lambda args: dx.CountByEnum(expressions=args),
    }

    CONSTRAINT_PARSERS = {
        **DorisParser.CONSTRAINT_PARSERS,
        **{name: _agg_type(name) for name in AGG_TYPES},
    }

    PROPERTY_PARSERS = {
        **DorisParser.PROPERTY_PARSERS,
        "AGGREGATE": lambda self: self._parse_composite_key_property(exp.AggregateKeyProperty),
        "DUPLICATE": lambda self: self._parse_composite_key_property(exp.DuplicateKeyProperty),
        "ROLLUP": lambda self: self._parse_rollup_property(),
    }

    SHOW_PARSERS = {
        **DorisParser.SHOW_PARSERS,
        "INDEXES": _show("INDEX", target="FROM"),
        "KEYS": _show("INDEX", target="FROM"),
        "FRONTEND CONFIG": _show("FRONTEND CONFIG"),
        "PARTITIONS": lambda self: self._parse_show_partitions(temporary=False),
        "TEMPORARY PARTITIONS": lambda self: self._parse_show_partitions(temporary=True),
        "TABLETS": lambda self: self._parse_show_tablets(),
        "TABLE VERSIONS": lambda self: self._parse_show_table_versions(),
        "LOAD": lambda self: self._parse_show_load(),
        "EXPORT": lambda self: self._parse_show_load(dx.ShowExport),
        "QUERY PROFILE": lambda self: self._parse_show_query_profile(),
        "DYNAMIC PARTITION TABLES": _show("DYNAMIC PARTITION TABLES"),
        "ALTER TABLE ROLLUP": lambda self: self._parse_show_alter_table("ROLLUP"),
        "ALTER TABLE MATERIALIZED VIEW": lambda self: self._parse_show_alter_table("ROLLUP"),
        "ALTER TABLE COLUMN": lambda self: self._parse_show_alter_table("COLUMN"),
        "DELETE": _show("DELETE"),
        "BACKENDS": _show("BACKENDS"),
        "FRONTENDS": _show("FRONTENDS"),
        "DATA": lambda self: self.expression(dx.ShowData(
            this=self._parse_table_parts() if self._match(TokenType.FROM) else None, order=self._parse_order())),
        "PROC": lambda self: self.expression(exp.Show(
            this="PROC", target=self._parse_string() or self.raise_error("Expected a quoted proc path"))),
    }
    SHOW_TRIE = new_trie(key.split(" ") for key in SHOW_PARSERS)

    # ALTER TABLE actions Doris has and sqlglot lacks, tried (by their leading words) before sqlglot's own
    # ADD / DROP / MODIFY
    DORIS_ALTER_ACTIONS: t.ClassVar[dict[str, tuple[tuple[tuple[str, ...], t.Callable[..., exp.Expr]], ...]]] = {
        "ADD": (
            (("ROLLUP",), lambda self: self._parse_add_rollup()),
            (("TEMPORARY", "PARTITION"), lambda self: self._parse_add_partition(temporary=True)),
            (("PARTITION",), lambda self: self._parse_add_partition(temporary=False)),
        ),
        "DROP": (
            (("ROLLUP",), lambda self: self._parse_drop_rollup()),
            (("TEMPORARY", "PARTITION"), lambda self: self._parse_drop_partition_clause(temporary=True)),
            (("PARTITION",), lambda self: self._parse_drop_partition_clause(temporary=False)),
        ),
        "REPLACE": (
            (("PARTITION",), lambda self: self._parse_replace_partition()),
        ),
        "MODIFY": (
            (("TEMPORARY", "PARTITION"), lambda self: self._parse_modify_partition(temporary=True)),
            (("PARTITION",), lambda self: self._parse_modify_partition(temporary=False)),
        ),
    }
    ALTER_PARSERS = {
        **DorisParser.ALTER_PARSERS,
        **{verb: (lambda self, verb=verb: self._parse_doris_alter_action(verb)) for verb in DORIS_ALTER_ACTIONS},
    }

    SET_PARSERS = {
        **DorisParser.SET_PARSERS,
        "PASSWORD": lambda self: self._parse_set_password(),
    }
    SET_TRIE = new_trie(key.split(" ") for key in SET_PARSERS)

    # Statements that start with a plain word sqlglot has no token type for
    ADMIN_PARSERS: t.ClassVar[dict[str, t.Callable[[DorisLiteParser], exp.Expr]]] = {
        "SET FRONTEND CONFIG": lambda self: self.expression(
            dx.AdminSetConfig(expressions=self._parse_wrapped_properties())
        ),
        "SHOW FRONTEND CONFIG": _show("FRONTEND CONFIG"),
        "SHOW ROLLUP ADVICE": lambda self: self._parse_rollup_advice(),
    }
    ADMIN_TRIE = new_trie(key.split(" ") for key in ADMIN_PARSERS)

    CANCEL_PARSERS: t.ClassVar[dict[str, t.Callable[[DorisLiteParser], exp.Expr]]] = {
        "LOAD": lambda self: self._parse_cancel_load(),
        "EXPORT": lambda self: self._parse_cancel_load(dx.CancelExport),
        "ALTER TABLE ROLLUP": lambda self: self._parse_cancel_alter_table("ROLLUP"),
        "ALTER TABLE MATERIALIZED VIEW": lambda self: self._parse_cancel_alter_table("ROLLUP"),
        "ALTER TABLE COLUMN": lambda self: self._parse_cancel_alter_table("COLUMN"),
    }
    CANCEL_TRIE = new_trie(key.split(" ") for key in CANCEL_PARSERS)

    # statement word -> (sub-statement parsers, their trie)
    WORD_STATEMENTS: t.ClassVar[dict[str, tuple[str, str]]] = {
        "ADMIN": ("ADMIN_PARSERS", "ADMIN_TRIE"),
        "CANCEL": ("CANCEL_PARSERS", "CANCEL_TRIE"),
    }

    # Doris's file table-valued functions; `local` is the one dorislite executes
    TABLE_FUNCTIONS = frozenset({"LOCAL", "S3", "HDFS", "HTTP"})

    def _parse_statement(self) -> exp.Expr | None:
        word = self._curr.text.upper() if self._curr and self._curr.token_type == TokenType.VAR else None
        if word in self.WORD_STATEMENTS:
            parsers, trie = (getattr(self, name) for name in self.WORD_STATEMENTS[word])
            start = self._curr
            self._advance()
            parser = self._find_parser(parsers, trie)
            if parser:
                return parser(self)
            return self._parse_as_command(start)
        return super()._parse_statement()

    # -- table-valued functions -------------------------------------------------------------------
    def _parse_table_part(self, schema: bool = False) -> exp.Expr | None:
        if (
            not schema
            and self._curr
            and self._next
            and self._next.token_type == TokenType.L_PAREN
            and self._curr.text.upper() in self.TABLE_FUNCTIONS
        ):
            name = self._curr.text.lower()
            self._advance()
            props = self._parse_wrapped_properties()
            return self.expression(dx.TableFunction(this=exp.var(name), expressions=props))
        return super()._parse_table_part(schema=schema)

    # -- column definitions -----------------------------------------------------------------------
    def _parse_column_constraint(self) -> exp.Expr | None:
        # Doris: `k INT KEY` marks a key column (MySQL would read a PRIMARY KEY)
        if self._match(TokenType.KEY):
            return self.expression(exp.ColumnConstraint(kind=dx.KeyColumnConstraint()))
        return super()._parse_column_constraint()

    def _parse_index_constraint(self, kind: str | None = None) -> exp.IndexColumnConstraint:
        index = super()._parse_index_constraint(kind)
        # INDEX idx (c) USING INVERTED PROPERTIES ("parser" = "english") [COMMENT '..']
        options = list(index.args.get("options") or [])
        while self._match_text_seq("PROPERTIES"):
            options.append(dx.IndexProperties(expressions=self._parse_wrapped_properties()))
            options.extend(self._parse_index_constraint_options())
        index.set("options", options)
        return index

    # -- table properties -------------------------------------------------------------------------
    def _parse_distributed_property(self) -> exp.DistributedByProperty:
        if self._match_text_seq("BY", "HASH"):
            kind, expressions = "HASH", self._parse_wrapped_id_vars()
        elif self._match_text_seq("BY", "RANDOM"):
            kind, expressions = "RANDOM", None
        else:
            self.raise_error("Expected HASH (...) or RANDOM after DISTRIBUTED BY")
            kind, expressions = "HASH", None
        buckets: exp.Expr | None = None
        if self._match_text_seq("BUCKETS"):
            # keep AUTO distinct from an omitted BUCKETS clause (sqlglot folds both into None)
            buckets = exp.var("AUTO") if self._match_text_seq("AUTO") else self._parse_number()
            if buckets is None:
                self.raise_error("Expected a number or AUTO after BUCKETS")
        return self.expression(
            exp.DistributedByProperty(expressions=expressions, kind=kind, buckets=buckets)
        )

    def _parse_rollup_index(self, allow_from: bool = False) -> exp.RollupIndex:
        """`r (c, ...) [DUPLICATE KEY (c, ...)] [FROM index] [PROPERTIES (...)]` (FROM only in ALTER)."""
        name = self._parse_id_var()
        columns = self._parse_wrapped_id_vars()
        props: list[exp.Expr] = []
        if self._match_text_seq("DUPLICATE", "KEY"):
            props.append(exp.DuplicateKeyProperty(expressions=self._parse_wrapped_id_vars()))
        from_index = self._parse_id_var() if allow_from and self._match(TokenType.FROM) else None
        if self._match_text_seq("PROPERTIES"):
            props.extend(t.cast(list, self._parse_wrapped_properties()))
        return self.expression(
            exp.RollupIndex(
                this=name,
                expressions=columns,
                from_index=from_index,
                properties=exp.Properties(expressions=props) if props else None,
            )
        )

    def _parse_function_call(self, functions: t.Any = None, anonymous: bool = False, optional_parens: bool = True,
                             any_token: bool = False) -> exp.Expr | None:
        # the name as typed (ifnull, nvl, instr ...): a result column is labelled with it, as Doris does
        typed = self._curr.text.lower() if self._curr is not None else None
        node = super()._parse_function_call(functions, anonymous, optional_parens, any_token)
        if isinstance(node, exp.Func) and typed:
            node.meta["typed_name"] = typed
        return node

    def _parse_create_like(self) -> exp.LikeProperty | None:
        """`LIKE [db.]t [WITH ROLLUP [(r, ...)]]`: the rollups to copy go in `expressions` (ROLLUP alone: all)."""
        like = super()._parse_create_like()
        if like is not None and self._match_text_seq("WITH", "ROLLUP"):
            names = self._parse_wrapped_id_vars() if self._match(TokenType.L_PAREN, advance=False) else []
            like.set("expressions", [exp.Property(this="ROLLUP", value=exp.Tuple(expressions=names))])
        return like

    def _parse_rollup_property(self) -> exp.RollupProperty:
        return self.expression(exp.RollupProperty(expressions=self._parse_wrapped_csv(self._parse_rollup_index)))

    # -- ALTER TABLE ... ROLLUP / PARTITION / SHOW / CANCEL ALTER -----------------------------------
    def _parse_doris_alter_action(self, verb: str) -> t.Any:
        for words, parser in self.DORIS_ALTER_ACTIONS[verb]:
            if self._match_text_seq(*words):
                return parser(self)
        return DorisParser.ALTER_PARSERS[verb](self)

    def _parse_add_partition(self, temporary: bool) -> dx.AddPartition:
        """`[IF NOT EXISTS] p VALUES ... [("k" = "v")] [DISTRIBUTED BY ...] [PROPERTIES (...)]`."""
        exists = self._match_text_seq("IF", "NOT", "EXISTS")
        item = self._parse_partition_definition()
        distribution = self._parse_distributed_property() if self._match_text_seq("DISTRIBUTED") else None
        props = self._parse_wrapped_properties() if self._match_text_seq("PROPERTIES") else None
        return self.expression(
            dx.AddPartition(
                this=item, distribution=distribution, exists=exists, temporary=temporary,
                properties=exp.Properties(expressions=props) if props else None,
            )
        )

    def _parse_replace_partition(self) -> dx.ReplacePartition:
        """`(p, ..) WITH TEMPORARY PARTITION (tp, ..) [PROPERTIES (...)]` (a lone name needs no brackets)."""
        def names() -> list[exp.Expr]:
            if self._match(TokenType.L_PAREN, advance=False):
                return self._parse_wrapped_csv(self._parse_id_var)
            name = self._parse_id_var()
            if name is None:
                self.raise_error("Expected partition names")
            return [name] if name is not None else []

        formal = names()
        if not self._match_text_seq("WITH", "TEMPORARY", "PARTITION"):
            self.raise_error("Expected WITH TEMPORARY PARTITION")
        temp = names()
        props = self._parse_wrapped_properties() if self._match_text_seq("PROPERTIES") else None
        return self.expression(dx.ReplacePartition(
            expressions=formal, temp=temp, properties=exp.Properties(expressions=props) if props else None))

    def _parse_drop_partition_clause(self, temporary: bool) -> dx.DropPartition:
        exists = self._match_text_seq("IF", "EXISTS")
        name = self._parse_id_var()
        if name is None:
            self.raise_error("Expected a partition name")
        force = self._match_text_seq("FORCE")
        return self.expression(dx.DropPartition(this=name, exists=exists, force=force, temporary=temporary))

    def _parse_modify_partition(self, temporary: bool) -> dx.ModifyPartition:
        names: list[exp.Expr] = []
        every = False
        if self._match_pair(TokenType.L_PAREN, TokenType.STAR):
            self._match_r_paren()
            every = True
        elif self._match(TokenType.L_PAREN, advance=False):
            names = self._parse_wrapped_csv(self._parse_id_var)
        else:
            name = self._parse_id_var()
            if name is None:
                self.raise_error("Expected a partition name, (p1, ...) or (*)")
            else:
                names = [name]
        self._match(TokenType.SET) or self.raise_error("Expected SET (...) after MODIFY PARTITION")
        return self.expression(
            dx.ModifyPartition(
                expressions=names, all=every, temporary=temporary,
                properties=exp.Properties(expressions=self._parse_wrapped_properties()),
            )
        )

    def _parse_add_rollup(self) -> dx.AddRollup:
        return self.expression(
            dx.AddRollup(expressions=self._parse_csv(lambda: self._parse_rollup_index(allow_from=True)))
        )

    def _parse_drop_rollup(self) -> dx.DropRollup:
        names: list[exp.Expr] = []
        props: list[exp.Expr] = []
        while True:
            name = self._parse_id_var()
            if name is None:
                self.raise_error("Expected a rollup name")
                break
            names.append(name)
            if self._match_text_seq("PROPERTIES"):
                props.extend(t.cast(list, self._parse_wrapped_properties()))
            if not self._match(TokenType.COMMA):
                break
        return self.expression(dx.DropRollup(expressions=names, properties=exp.Properties(expressions=props)))

    def _parse_show_alter_table(self, kind: str) -> dx.ShowAlterTable:
        """`SHOW ALTER TABLE ROLLUP | COLUMN [FROM db] [WHERE ...] [ORDER BY ...] [LIMIT [m,] n]`."""
        db = self._parse_id_var() if self._match(TokenType.FROM) or self._match(TokenType.IN) else None
        where = self._parse_where()
        order = self._parse_order()
        offset, limit = self._parse_oldstyle_limit()
        if self._match_text_seq("OFFSET"):
            offset = self._parse_number()
        return self.expression(dx.ShowAlterTable(this=exp.var(kind), db=db, where=where, order=order, limit=limit,
                                                 offset=offset))

    def _parse_cancel_alter_table(self, kind: str) -> dx.CancelAlterTable:
        self._match(TokenType.FROM) or self.raise_error("Expected FROM [db.]table")
        table = self._parse_table_parts(schema=True)  # schema: `t (1, 2)` is not a call of t
        job_ids = self._parse_wrapped_csv(self._parse_number) if self._match(TokenType.L_PAREN, advance=False) else []
        return self.expression(dx.CancelAlterTable(this=exp.var(kind), table=table, expressions=job_ids))

    # -- partitions -------------------------------------------------------------------------------
    def _parse_partition_property(self) -> exp.Expr | None | list[exp.Expr]:
        if self._match_text_seq("RANGE"):
            container: type[exp.Expr] = exp.PartitionByRangeProperty
        elif self._match_text_seq("LIST"):
            container = exp.PartitionByListProperty
        else:
            return self._parse_partitioned_by()
        columns = self._parse_wrapped_csv(self._parse_column)
        self._match_l_paren()
        items = [] if self._match(TokenType.R_PAREN, advance=False) else self._parse_csv(
            self._parse_partition_item
        )
        self._match_r_paren()
        node = container(partition_expressions=columns, create_expressions=items)
        # `PARTITION BY RANGE(k) ()` is valid Doris (dynamic partitions fill it); sqlglot's
        # validation would reject the empty list, so only non-empty clauses are validated
        return self.expression(node) if items else node

    def _parse_partition_item(self) -> exp.Expr | None:
        if self._match(TokenType.FROM):
            start = self._parse_wrapped_csv(self._parse_partition_value)
            self._match_text_seq("TO") or self.raise_error("Expected TO")
            end = self._parse_wrapped_csv(self._parse_partition_value)
            self._match(TokenType.INTERVAL) or self.raise_error("Expected INTERVAL")
            number = self._parse_partition_value()
            unit = exp.var(self._prev.text.upper()) if self._match_texts(BATCH_UNITS) else None
            return self.expression(
                exp.PartitionByRangePropertyDynamic(
                    start=exp.Tuple(expressions=start),
                    end=exp.Tuple(expressions=end),
                    every=exp.Interval(this=number, unit=unit),
                )
            )

        self._match(TokenType.PARTITION) or self.raise_error("Expected PARTITION")
        return self._parse_partition_definition()

    def _parse_partition_definition(self) -> exp.Expr | None:
        """`[IF NOT EXISTS] p VALUES LESS THAN (..) | [(..), (..)) | IN (..) [("k" = "v")]` (after PARTITION)."""
        self._match_text_seq("IF", "NOT", "EXISTS")
        name = self._parse_id_var()
        if self._curr is None or self._curr.token_type in (TokenType.COMMA, TokenType.R_PAREN):
            return self.expression(dx.PartitionValuesIn(this=name, expressions=[]))  # LIST's default partition
        self._match(TokenType.VALUES) or self.raise_error("Expected VALUES")
        node: exp.Expr
        if self._match_text_seq("LESS", "THAN"):
            if self._match_text_seq("MAXVALUE"):
                values = [exp.var("MAXVALUE")]
            else:
                values = self._parse_wrapped_csv(self._parse_partition_value)
            node = dx.PartitionLessThan(this=name, expressions=values)
        elif self._match(TokenType.L_BRACKET):
            lower = self._parse_wrapped_csv(self._parse_partition_value)
            self._match(TokenType.COMMA) or self.raise_error("Expected , between range bounds")
            upper = self._parse_wrapped_csv(self._parse_partition_value)
            self._match(TokenType.R_PAREN) or self.raise_error("Expected ) closing the range")
            node = dx.PartitionFixedRange(
                this=name, lower=exp.Tuple(expressions=lower), upper=exp.Tuple(expressions=upper)
            )
        elif self._match(TokenType.IN):
            node = dx.PartitionValuesIn(
                this=name, expressions=self._parse_wrapped_csv(self._parse_list_partition_value)
            )
        else:
            self.raise_error("Expected LESS THAN, [ or IN after VALUES")
            return None
        if self._match(TokenType.L_PAREN, advance=False):
            node.set("properties", exp.Properties(expressions=self._parse_wrapped_properties()))
        return self.expression(node)

    def _parse_list_partition_value(self) -> exp.Expr | None:
        if self._match(TokenType.L_PAREN, advance=False):
            return exp.Tuple(expressions=self._parse_wrapped_csv(self._parse_partition_value))
        return self._parse_partition_value()

    def _parse_partition_value(self) -> exp.Expr | None:
        if self._match_text_seq("MAXVALUE"):
            return exp.var("MAXVALUE")
        negative = self._match(TokenType.DASH)
        value = self._parse_primary()
        if not isinstance(value, (exp.Literal, exp.Null, exp.Boolean)):
            self.raise_error("Expected a literal partition value")
            return value
        if negative:
            if not (isinstance(value, exp.Literal) and value.is_number):
                self.raise_error("Expected a number after -")
            return exp.Literal.number(f"-{value.this}")
        return value

    # -- SHOW / SET / DESC / INSERT ---------------------------------------------------------------
    def _parse_show_from_table(self) -> exp.Expr:
        self._match(TokenType.FROM) or self._match(TokenType.IN) or self.raise_error("Expected FROM")
        return self._parse_table_parts()

    def _parse_show_filters(self) -> dict[str, t.Any]:
        """`[WHERE ..] [ORDER BY ..] [LIMIT [m,] n [OFFSET m]]` of a SHOW over a table's rows."""
        where = self._parse_where()
        order = self._parse_order()
        offset, limit = self._parse_oldstyle_limit()
        if self._match_text_seq("OFFSET"):
            offset = self._parse_number()
        return {"where": where, "order": order, "limit": limit, "offset": offset}

    def _parse_show_partitions(self, temporary: bool) -> dx.ShowPartitions:
        table = self._parse_show_from_table()
        return self.expression(dx.ShowPartitions(this=table, temporary=temporary, **self._parse_show_filters()))

    def _parse_show_tablets(self) -> dx.ShowTablets:
        table = self._parse_show_from_table()
        names = self._parse_partition_names()
        return self.expression(dx.ShowTablets(this=table, expressions=names, **self._parse_show_filters()))

    def _parse_rollup_advice(self) -> dx.AdminShowRollupAdvice:
        self._match(TokenType.FOR) or self.raise_error("Expected FOR")
        table = self._parse_table_parts()
        limit = self._parse_number() if self._match(TokenType.LIMIT) else None
        return self.expression(dx.AdminShowRollupAdvice(this=table, limit=limit))

    def _parse_show_table_versions(self) -> dx.ShowTableVersions:
        table = self._parse_show_from_table()
        return self.expression(dx.ShowTableVersions(this=table, **self._parse_show_filters()))

    def _parse_show_query_profile(self) -> dx.ShowQueryProfile:
        path = self._parse_string()
        if path is None:
            self.raise_error('Expected a path string after SHOW QUERY PROFILE, e.g. "/"')
        return self.expression(dx.ShowQueryProfile(this=path))

    def _parse_show_load(self, kind: type = dx.ShowLoad) -> exp.Expression:
        db = self._parse_id_var() if self._match(TokenType.FROM) or self._match(TokenType.IN) else None
        where = self._parse_where()
        order = self._parse_order()
        offset, limit = self._parse_oldstyle_limit()
        if self._match_text_seq("OFFSET"):
            offset = self._parse_number()
        return self.expression(kind(db=db, where=where, order=order, limit=limit, offset=offset))

    def _parse_cancel_load(self, kind: type = dx.CancelLoad) -> exp.Expression:
        db = self._parse_id_var() if self._match(TokenType.FROM) else None
        where = self._parse_where()
        if where is None:
            what = "LOAD" if kind is dx.CancelLoad else "EXPORT"
            self.raise_error(f"Expected WHERE LABEL = \"label\" after CANCEL {what}")
        return self.expression(kind(db=db, where=where))

    def _parse_set_password(self) -> dx.SetPassword:
        user = host = None
        if self._match(TokenType.FOR):
            user = self._parse_string() or self._parse_id_var()
            if self._match(TokenType.PARAMETER):
                host = self._parse_string() or self._parse_id_var()
        self._match(TokenType.EQ) or self.raise_error("Expected = in SET PASSWORD")
        if self._match_text_seq("PASSWORD"):
            password, hashed = self._parse_wrapped(self._parse_string), False
        else:
            password, hashed = self._parse_string(), True
        if password is None:
            self.raise_error("Expected a password string")
        return self.expression(dx.SetPassword(this=password, user=user, host=host, hashed=hashed))

    def _parse_describe(self) -> exp.Describe:
        level = None
        for words in EXPLAIN_LEVELS:
            if self._match_text_seq(*words):
                level = " ".join(words)
                break
        if self._curr and self._curr.token_type in _QUERY_START | {TokenType.INSERT}:
            this = self._parse_statement()
            return self.expression(exp.Describe(this=this, style=level))
        if level:
            self.raise_error(f"Expected a query after EXPLAIN {level}")
        this = self._parse_table_parts()
        style = "ALL" if self._match(TokenType.ALL) else None
        return self.expression(exp.Describe(this=this, style=style))

    def _parse_delete(self) -> exp.Delete:
        """Doris: `DELETE FROM [db.]t [alias] [[TEMPORARY] PARTITION p | PARTITION (p, ..) | PARTITIONS (p, ..)]
        [alias] [USING relations] [WHERE ...]` (the alias may come before or after the partitions)."""
        self._match(TokenType.FROM) or self.raise_error("Expected FROM after DELETE")
        table = self._parse_table_parts(schema=True)
        named = table.args.get("partition")  # `t TEMPORARY PARTITION p` read with the table
        alias = self._parse_delete_alias()
        temporary = self._match_text_seq("TEMPORARY") or bool(named is not None and named.args.get("temporary"))
        names = self._parse_partition_names() or (list(named.expressions) if named is not None else [])
        if temporary and not names:
            self.raise_error("Expected PARTITION after TEMPORARY")
        if names:
            table.set("partition", exp.Partition(expressions=names))
        alias = alias or self._parse_delete_alias()
        if alias is not None:
            table.set("alias", exp.TableAlias(this=alias))
        using = self._parse_csv(lambda: self._parse_table(joins=True)) if self._match(TokenType.USING) else None
        delete = self.expression(exp.Delete(this=table, using=using, where=self._parse_where()))
        if temporary:
            delete.set("temporary", True)
        return delete

    def _parse_partition_names(self) -> list[exp.Expr]:
        """`PARTITION p | PARTITION (p, ..) | PARTITIONS (p, ..)`, or nothing."""
        if self._match(TokenType.PARTITION):
            if self._match(TokenType.L_PAREN, advance=False):
                return self._parse_wrapped_csv(self._parse_id_var)
            return [self._parse_id_var() or self.raise_error("Expected a partition name")]
        if self._match_text_seq("PARTITIONS"):
            return self._parse_wrapped_csv(self._parse_id_var)
        return []

    def _parse_delete_alias(self) -> exp.Expr | None:
        if self._curr is None or self._curr.token_type in (TokenType.PARTITION, TokenType.USING, TokenType.WHERE) \
                or self._curr.text.upper() in ("PARTITIONS", "TEMPORARY"):
            return None
        self._match(TokenType.ALIAS)
        return self._parse_id_var(any_token=False)

    def _parse_partition(self) -> exp.Partition | None:
        """Doris also writes `PARTITION p` without parentheses."""
        if self._match(TokenType.PARTITION, advance=False) and self._next is not None \
                and self._next.token_type != TokenType.L_PAREN:
            self._advance()
            name = self._parse_id_var() or self.raise_error("Expected a partition name")
            return self.expression(exp.Partition(expressions=[exp.column(name)]))
        return super()._parse_partition()

    def _parse_table_parts(self, *args: t.Any, **kwargs: t.Any) -> t.Any:
        """A table reference; Doris's `t PARTITIONS (p, ...)` is read as `t PARTITION (p, ...)` (not as an alias
        named partitions), and `t TEMPORARY PARTITION (tp, ..)` names temporary partitions (the Partition node's
        `temporary` flag)."""
        table = super()._parse_table_parts(*args, **kwargs)
        if not isinstance(table, exp.Table):
            return table
        if self._curr is not None and self._curr.text.upper() == "PARTITIONS" and self._next is not None \
                and self._next.token_type == TokenType.L_PAREN:
            self._advance()
            table.set("partition", self.expression(exp.Partition(
                expressions=self._parse_wrapped_csv(self._parse_disjunction))))
        elif self._curr is not None and self._curr.text.upper() == "TEMPORARY" and self._next is not None \
                and self._next.text.upper() in ("PARTITION", "PARTITIONS"):
            self._advance()
            partition = self.expression(exp.Partition(expressions=[
                exp.column(n) for n in self._parse_partition_names()]))
            partition.set("temporary", True)
            table.set("partition", partition)
        return table

    def _parse_insert_table(self) -> exp.Expr | None:
        # table parts only: `t (a, b)` must not read as a call of a function named t
        this = self._parse_table_parts(schema=True)
        if self._match(TokenType.PARTITION, advance=False):
            this.set("partition", self._parse_partition())
        if self._match_text_seq("WITH", "LABEL"):
            self._insert_label = self._parse_id_var()
        return self._parse_schema(this=this)

    def _parse_insert(self) -> exp.Insert | exp.MultitableInserts:
        self._insert_label: exp.Expr | None = None
        insert = super()._parse_insert()
        if self._insert_label is not None:
            insert.set("label", dx.InsertLabel(this=self._insert_label))
        return insert


class DorisLite(Doris):
    class Tokenizer(Doris.Tokenizer):
        KEYWORDS = {
            **Doris.Tokenizer.KEYWORDS,
            "LARGEINT": TokenType.INT128,
            "DATEV2": TokenType.DATE,
            "DATETIMEV2": TokenType.DATETIME,
            "DATEV1": TokenType.DATE,  # Doris converts v1 dates to v2 (enable_date_conversion)
            "DATETIMEV1": TokenType.DATETIME,
            "DECIMALV2": TokenType.DECIMAL,
            "DECIMALV3": TokenType.DECIMAL,
            "MINUS": TokenType.EXCEPT,  # Doris's other spelling of EXCEPT
        }

    Parser = DorisLiteParser

    class Generator(Doris.Generator):
        TRANSFORMS = {
            **Doris.Generator.TRANSFORMS,
            dx.TableFunction: lambda self, e: f"{e.name}({self.expressions(e, flat=True)})",
            dx.ValueList: lambda self, e: ", ".join(
                "'" + v + "'" if e.args["strings"] else v for v in e.values),
        }


class _PipesAsConcatParser(DorisLiteParser):
    DISJUNCTION = {k: v for k, v in DorisLiteParser.DISJUNCTION.items() if k != TokenType.DPIPE}

    def _parse_bitwise(self) -> exp.Expr | None:
        this = super()._parse_bitwise()
        while self._match(TokenType.DPIPE):
            this = self.expression(exp.DPipe(this=this, expression=super()._parse_bitwise(), safe=False))
        return this


class DorisLitePipesAsConcat(DorisLite):
    """sql_mode PIPES_AS_CONCAT: `a || b` concatenates (MySQL reads it as OR otherwise)."""

    DPIPE_IS_STRING_CONCAT = True
    Parser = _PipesAsConcatParser


class DorisLiteNoBackslashEscapes(DorisLite):
    """sql_mode NO_BACKSLASH_ESCAPES: a backslash in a string literal is an ordinary character."""

    class Tokenizer(DorisLite.Tokenizer):
        STRING_ESCAPES = ["'"]


class DorisLitePipesNoBackslash(DorisLitePipesAsConcat):
    class Tokenizer(DorisLite.Tokenizer):
        STRING_ESCAPES = ["'"]


def dialect_for_sql_mode(sql_mode: str | None) -> type[DorisLite]:
    """The dialect the session's sql_mode asks for (the modes that change how text is read)."""
    modes = {m.strip().upper() for m in str(sql_mode or "").split(",")}
    pipes, no_backslash = "PIPES_AS_CONCAT" in modes or "ANSI" in modes, "NO_BACKSLASH_ESCAPES" in modes
    if pipes and no_backslash:
        return DorisLitePipesNoBackslash
    if pipes:
        return DorisLitePipesAsConcat
    return DorisLiteNoBackslashEscapes if no_backslash else DorisLite


def quote_ident(name: str) -> str:
    """A name as a back-quoted Doris identifier (statements the server writes itself)."""
    return "`" + name.replace("`", "``") + "`"
