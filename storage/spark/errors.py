"""A failure inside Spark as the one line a user can act on.

PySpark reports a Python worker's exception as a Py4J wrapper or a captured AnalysisException /
PythonException whose text is a Java or Python stack with the cause at its end; a client that gets the
text's first line learns nothing ("An error occurred while calling o54.load", "Traceback (most recent call
last):"). `spark_errors()` turns any such exception into a StorageError carrying the worker exception's type
and message (`ModuleNotFoundError: No module named 'pyarrow'`), or the Java root cause when no Python code
failed, and writes the whole original text to the server log.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager

from storage.errors import StorageError, doris_error

log = logging.getLogger("dorislite.spark")

_TRACEBACK = "Traceback (most recent call last):"
# a Java exception line: "org.apache.spark.SparkException: message" or "Caused by: java.io.IOException: m"
_JAVA_CAUSE = re.compile(r"^(?:Caused by: )?((?:[a-z_$][\w$]*\.)+[A-Z][\w$]*)(?:: (.*))?$")
_SQLSTATE = re.compile(r"\s*SQLSTATE: \w+\s*$")
_ERROR_CLASS = re.compile(r"^\[[A-Z_.]+\] ")
MAX_MESSAGE = 1000
# failures that mean the workers' interpreter cannot run the project: the message names the interpreter
_INTERPRETER_HINTS = ("ModuleNotFoundError", "ImportError", "Cannot run program", "Python worker exited",
                      "PYTHON_VERSION_MISMATCH", "Python in worker has different version")


def _simple(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def python_cause(text: str) -> str | None:
    """`Type: message` of the last Python traceback in `text` (the exception that ended the worker)."""
    at = text.rfind(_TRACEBACK)
    if at < 0:
        return None
    for line in text[at + len(_TRACEBACK):].splitlines():
        if not line.strip() or line[0].isspace():
            continue  # frames, source lines and carets are indented
        line = _SQLSTATE.sub("", line).strip()
        name, sep, message = line.partition(": ")
        if " " in name:  # not an exception line ("During handling of the above exception, ...")
            continue
        return f"{_simple(name)}{sep}{message}"
    return None


def java_cause(text: str) -> str | None:
    """`SimpleName: message` of the innermost Java exception named in a stack trace's text."""
    found = None
    for line in text.splitlines():
        m = _JAVA_CAUSE.match(line.strip())
        if m and not line.startswith("\tat "):
            found = _simple(m.group(1)) + (f": {_SQLSTATE.sub('', m.group(2))}" if m.group(2) else "")
    return found


def _java_exception_cause(e: BaseException) -> str | None:
    """The root cause of a Py4JJavaError's Java exception, asked of the JVM (when it is still there)."""
    java = getattr(e, "java_exception", None)
    if java is None:
        return None
    try:
        seen = 0
        while java.getCause() is not None and seen < 20:
            java, seen = java.getCause(), seen + 1
        message = java.getMessage()
        return _simple(java.getClass().getName()) + (f": {message}" if message else "")
    except Exception:  # noqa: BLE001 - the JVM may be gone; the text is parsed instead
        return None


def spark_cause(e: BaseException) -> str:
    """The one-line cause of a Spark failure."""
    text = str(e)
    java = getattr(e, "java_exception", None)
    if java is not None:
        try:
            text = text + "\n" + java.toString()
        except Exception:  # noqa: BLE001
            pass
    cause = python_cause(text) or _java_exception_cause(e) or java_cause(text)
    if not cause:
        lines = [ln for ln in text.splitlines() if ln.strip()]
        cause = f"{type(e).__name__}: {lines[0].strip()}" if lines else type(e).__name__
    name, sep, message = cause.splitlines()[0].partition(": ")
    # Spark's error class ("[PYTHON_EXCEPTION] ") and SQLSTATE tell a user nothing the message does not
    message = _ERROR_CLASS.sub("", _SQLSTATE.sub("", message)).strip()
    return f"{name}{sep}{message}"[:MAX_MESSAGE]


def is_spark_failure(e: BaseException) -> bool:
    """An exception raised by PySpark or Py4J (not one of the project's own errors passing through)."""
    if isinstance(e, StorageError) or (hasattr(e, "code") and hasattr(e, "message")):
        return False
    module = type(e).__module__ or ""
    return module.startswith(("pyspark", "py4j"))


@contextmanager
def spark_errors(action: str, python: str) -> Iterator[None]:
    """Run Spark work: a Spark failure leaves as StorageError `<action> failed on Spark: <cause>` (with the
    workers' interpreter named when it is the likely culprit); the full text goes to the server log."""
    try:
        yield
    except Exception as e:
        if not is_spark_failure(e):
            raise
        cause = spark_cause(e)
        log.error("%s failed on Spark: %s", action, cause, exc_info=e)
        hint = ""
        if any(h in cause for h in _INTERPRETER_HINTS):
            hint = (f" (Spark's Python workers run {python}: set spark.pyspark.python in fe.conf or PYSPARK_PYTHON "
                    "to an interpreter that has dorislite installed)")
        raise doris_error(f"{action} failed on Spark: {cause}{hint}") from e
