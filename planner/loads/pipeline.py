"""One load, whatever its entry point: choose where it runs, then run it.

INSERT, Stream Load and LOAD LABEL all arrive here as a LoadRequest (Stream Load and LOAD as the INSERT ... SELECT
FROM local(...) they amount to, with their LoadOptions). A SELECT that reads tables or files runs on Spark unless its
input is small; everything else runs in-process. Both runs then take the same stages (see planner.loads).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence

from sqlglot import exp

from planner.loads.in_process import run_in_process
from planner.loads.request import InsertOutcome, LoadHandle, LoadRequest
from planner.loads.spark_sources import reads_data
from storage.catalog.model import OlapTable


def spark_available() -> bool:
    """Spark loads need pyspark and the storage layer's Spark data source."""
    return importlib.util.find_spec("pyspark") is not None and \
        importlib.util.find_spec("storage.spark.load") is not None


def _small(req: LoadRequest, sources: Sequence[OlapTable] | None, file_bytes: int, threshold_bytes: int) -> bool:
    """The input (the tables' data, the files) is under the threshold, so the load runs in-process as INSERT
    VALUES does; and a load that reads or writes a LARGEINT column, whose 39-digit values do not fit Spark's
    widest decimal (38 digits), always does. `sources`: None when the SELECT reads a view (size unknown)."""
    tables = [req.table, *(sources or ())]
    if any(c.type.upper().startswith("LARGEINT") for t in tables for c in t.columns):
        return True
    size = file_bytes + sum(p.data_size for t in sources or () for p in t.partitions)
    return sources is not None and size < threshold_bytes


def runs_on_spark(req: LoadRequest, current_db: str | None, sources: Sequence[OlapTable] | None, file_bytes: int,
                  threshold_bytes: int) -> bool:
    if req.query is None or req.rows is not None or req.temporary or not reads_data(req.query, current_db) or not spark_available():
        return False
    if any(c.generated is not None for c in req.table.columns):
        return False  # generated columns are computed in-process from the bound rows
    if any(t.args.get("version") is not None for t in req.query.find_all(exp.Table)):
        return False  # FOR VERSION / TIME AS OF: the in-process planner reads a table's past versions
    path = req.options.path
    return path == "spark" or (path == "auto" and not _small(req, sources, file_bytes, threshold_bytes))


def run_load(req: LoadRequest, handle: LoadHandle, on_spark: bool) -> InsertOutcome:
    if on_spark:
        from planner.loads.spark_run import run_on_spark

        return run_on_spark(req, handle)
    return run_in_process(req, handle)
