"""Functions about the statement rather than the data: SLEEP (scripts and clients use it to wait)."""

from __future__ import annotations

import time

import pyarrow as pa
from sqlglot import exp

from planner.expressions import Evaluator, register_name
from planner.functions.casts import convert
from planner.values import Value
from sql.errors import analysis_error

MAX_SLEEP_SECONDS = 3600.0


@register_name("sleep")
def _sleep(ev: Evaluator, e: exp.Anonymous) -> Value:
    """MySQL SLEEP(n): waits n seconds once per statement and returns 0 (NULL for a NULL argument)."""
    if len(e.expressions) != 1:
        raise analysis_error("sleep() takes exactly one argument")
    seconds = ev.eval(e.expressions[0])
    if not isinstance(seconds, pa.Scalar):
        raise analysis_error("sleep() argument must be a constant")
    value = convert(seconds, pa.float64()).as_py()
    if value is None:
        return pa.scalar(None, pa.int64())
    time.sleep(min(max(value, 0.0), MAX_SLEEP_SECONDS))
    return pa.scalar(0, pa.int64())
