"""The one-line cause of a Spark failure, from the texts PySpark really produces (no Spark needed)."""

from __future__ import annotations

import pytest

from storage.errors import StorageError
from storage.spark.errors import java_cause, python_cause, spark_cause, spark_errors

DATA_SOURCE = """[PYTHON_DATA_SOURCE_ERROR] Failed to create Python data source instance: Traceback (most recent call last):
  File "/v/lib/python3.11/site-packages/pyspark/python/lib/pyspark.zip/pyspark/sql/worker/utils.py", line 98, in worker_run
    main(infile, outfile)
  File "/v/lib/python3.11/site-packages/pyspark/python/lib/pyspark.zip/pyspark/serializers.py", line 483, in loads
    return cloudpickle.loads(obj, encoding=encoding)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
ModuleNotFoundError: No module named 'storage'
 SQLSTATE: 38000"""

TASK = """An error occurred while calling o91.save.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 6.0 failed 1 times, most recent failure: Lost task 0.0 in stage 6.0 (TID 8) (192.0.2.2 executor driver): org.apache.spark.api.python.PythonException: [PYTHON_EXCEPTION] An exception was thrown from the Python worker: Traceback (most recent call last):
  File "/work/main/storage/spark/task_writer.py", line 170, in run
    raise ValueError(f"bad value")
ValueError: could not convert 'x' to INT: src line [x, bad]
 SQLSTATE: 38000
\tat org.apache.spark.api.python.BasePythonRunner$ReaderIterator.handlePythonException(PythonRunner.scala:1097)
\tat org.apache.spark.scheduler.Task.run(Task.scala:147)

Driver stacktrace:
\tat org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages(DAGScheduler.scala:2935)
Caused by: org.apache.spark.api.python.PythonException: [PYTHON_EXCEPTION] An exception was thrown from the Python worker: Traceback (most recent call last):
  File "/work/main/storage/spark/task_writer.py", line 170, in run
    raise ValueError(f"bad value")
ValueError: could not convert 'x' to INT: src line [x, bad]
 SQLSTATE: 38000
\tat org.apache.spark.api.python.BasePythonRunner$ReaderIterator.handlePythonException(PythonRunner.scala:1097)
"""

CHAINED = """Traceback (most recent call last):
  File "a.py", line 1, in f
KeyError: 'k'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "a.py", line 3, in f
storage.errors.StorageError: Unknown table 'db.t'
"""

JAVA_ONLY = """An error occurred while calling o54.load.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 1 in stage 2.0 failed 1 times
\tat org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages(DAGScheduler.scala:2935)
Caused by: java.io.IOException: Cannot run program "/nope/python": error=2, No such file or directory
\tat java.base/java.lang.ProcessBuilder.start(ProcessBuilder.java:1143)
"""


def test_python_cause() -> None:
    assert python_cause(DATA_SOURCE) == "ModuleNotFoundError: No module named 'storage'"
    assert python_cause(TASK) == "ValueError: could not convert 'x' to INT: src line [x, bad]"
    assert python_cause(CHAINED) == "StorageError: Unknown table 'db.t'"
    assert python_cause("Traceback (most recent call last):\n  File \"x\", line 1\nAssertionError\n") == "AssertionError"
    assert python_cause(JAVA_ONLY) is None


def test_java_cause() -> None:
    assert java_cause(JAVA_ONLY) == 'IOException: Cannot run program "/nope/python": error=2, No such file or directory'
    assert java_cause("no exception here") is None


class _FakePySparkError(Exception):
    pass


_FakePySparkError.__module__ = "pyspark.errors.exceptions.captured"


def test_spark_errors_gives_one_line_and_names_the_interpreter() -> None:
    with pytest.raises(StorageError) as e, spark_errors("Load", "/srv/venv/bin/python"):
        raise _FakePySparkError(DATA_SOURCE)
    assert e.value.message == (
        "errCode = 2, detailMessage = Load failed on Spark: ModuleNotFoundError: No module named 'storage' "
        "(Spark's Python workers run /srv/venv/bin/python: set spark.pyspark.python in fe.conf or PYSPARK_PYTHON "
        "to an interpreter that has dorislite installed)")
    with pytest.raises(StorageError) as e, spark_errors("Load", "/p"):
        raise _FakePySparkError(TASK)
    assert e.value.message.endswith("Load failed on Spark: ValueError: could not convert 'x' to INT: src line [x, bad]")
    assert spark_cause(_FakePySparkError("")) == "_FakePySparkError"
    assert spark_cause(_FakePySparkError("[CLASS_NAME] plain message\nmore")) == "_FakePySparkError: plain message"


def test_spark_errors_passes_other_errors_through() -> None:
    own = StorageError("errCode = 2, detailMessage = mine")
    with pytest.raises(StorageError) as e, spark_errors("Load", "/p"):
        raise own
    assert e.value is own
    with pytest.raises(KeyError), spark_errors("Load", "/p"):
        raise KeyError("x")
