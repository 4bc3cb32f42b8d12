"""The in-process run of a load: INSERT ... VALUES, a small INSERT ... SELECT (its query run here, files read with
Arrow), rows already computed (UPDATE). Convert, generated columns, route, then the engine writes and publishes
the rows in one step (storage.engine.load); short, so not cancellable. Group commit (server/loads/group_commit.py)
binds rows the same way (`bind_rows`) and publishes many statements' rows in one transaction."""

from __future__ import annotations

import pyarrow as pa

from planner.loads.convert import bind_insert_query_result, bind_insert_values, check_filtered
from planner.loads.request import InsertOutcome, LoadHandle, LoadRequest
from planner.loads.route import check_partitions, restrict_partitions
from planner.olap_source import arrow_schema
from sql.types import parse_type


def bind_rows(req: LoadRequest, every_partition: bool = False) -> tuple[pa.Table, int]:
    """The statement's rows converted to the table's schema, generated columns computed, and those outside the
    named partitions (`every_partition`: outside every partition) filtered; (rows, filtered count), checked against
    strict mode and the filter ratio."""
    table = req.table
    check_partitions(table, req.partitions)
    # a generated column is bound as a nullable placeholder and computed below
    columns = [(c.name, parse_type(c.type), c.nullable or c.generated is not None, c.default) for c in table.columns]
    if req.values is not None:
        ctx = req.runner.query_context() if req.runner is not None else None
        data, filtered = bind_insert_values(columns, req.target_columns, req.values, strict=req.strict, ctx=ctx)
    else:
        if req.rows is not None:
            result = req.rows
        else:
            assert req.query is not None and req.runner is not None
            result = req.runner.run_query(req.query, strict_files=req.strict)
        data, filtered = bind_insert_query_result(columns, req.target_columns, result, strict=req.strict,
                                                  rejects=req.options.rejects)
    schema = arrow_schema(table)
    if req.generate is not None:
        data = req.generate(data.cast(pa.schema([
            f.with_nullable(True) if c.generated is not None else f
            for f, c in zip(schema, table.columns, strict=True)])))
    data = data.cast(schema) if data.schema != schema else data
    partitions = req.partitions or ([p.name for p in table.partitions] if every_partition else ())
    if partitions and data.num_rows:
        data, outside = restrict_partitions(table, data, partitions, req.strict)
        filtered += outside
    check_filtered(data.num_rows, filtered, req.strict, req.max_filter_ratio)
    return data, filtered


def run_in_process(req: LoadRequest, handle: LoadHandle) -> InsertOutcome:
    with handle.commit_guard():
        data, filtered = bind_rows(req)
        if data.num_rows == 0 and (req.overwrite is None or not req.overwrite.targets(())):
            return InsertOutcome(req.label, None, 0, 0)
        load = req.engine.load(req.table, data, label=req.label, strict=req.strict, overwrite=req.overwrite,
                               temporary=req.temporary, precommit=req.options.precommit)
        handle.loading(load.txn_id)
        return InsertOutcome(load.label, load.txn_id, load.num_rows, filtered + load.filtered_rows)
