"""The audit log, `log/fe.audit.log` as Doris writes it: one line per statement with who ran it from where, in
which database, how it ended and how long it took, the statement text with passwords masked.

    2026-11-27 13:00:00,123 [query] |Client=127.0.0.1:50000|User=bob|Ctl=internal|Db=d|State=EOF|ErrorCode=0|
    ErrorMessage=|Time(ms)=3|ScanBytes=0|ScanRows=0|ReturnRows=1|StmtId=7|QueryId=...|IsQuery=true|Stmt=select 1

Rotated at fe.conf `audit_log_roll_size_mb` (Doris's audit_log_roll_num files kept). Like Doris's audit event
processor, a statement only queues its line; one thread writes them in order (written under one lock by every
session's thread, the lines made 16 busy clients wait a fifth of their time for each other).
"""

from __future__ import annotations

import itertools
import logging
import logging.handlers
import queue
import re
import threading
import time
from pathlib import Path

log = logging.getLogger("dorislite.audit")

WRITE_EVERY = 0.05  # seconds: a line is in the file this long after its statement, at most (a kill -9 loses those)

_MASKS = (
    (re.compile(r"(IDENTIFIED\s+BY\s+(?:PASSWORD\s+)?)('(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.)*\")", re.I), r"\1'*XXX'"),
    (re.compile(r"(PASSWORD\s*\(\s*)('(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.)*\")(\s*\))", re.I), r"\1'*XXX'\3"),
    (re.compile(r"(SET\s+PASSWORD\b[^=]*=\s*)('(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.)*\")", re.I), r"\1'*XXX'"),
)


# every mask names one of these words: a text without them (nearly all) is returned after one scan, not three
_MAY_HOLD_PASSWORD = re.compile(r"PASSWORD|IDENTIFIED", re.I)


def mask_passwords(sql: str) -> str:
    if _MAY_HOLD_PASSWORD.search(sql) is None:
        return sql
    for pattern, replacement in _MASKS:
        sql = pattern.sub(replacement, sql)
    return sql


class AuditLog:
    def __init__(self, directory: Path, roll_size_mb: int = 1024, roll_num: int = 90) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / "fe.audit.log"
        self._max_bytes = roll_size_mb * 1024 * 1024
        # the standard handler for its file and its rotation (fe.audit.log.1, .2, ...); the lines are written by
        # _write, a batch at a time: per line, its checks and flush cost the writer as much as the statement
        self._file = logging.handlers.RotatingFileHandler(self.path, maxBytes=self._max_bytes, backupCount=roll_num,
                                                          encoding="utf-8")
        self._lines: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._writer = threading.Thread(target=self._write, name="audit-log", daemon=True)
        self._writer.start()
        self._ids = itertools.count(1)
        self._second, self._stamp = -1, ""

    def record(self, *, client: str, user: str, db: str | None, state: str, error_code: int, error: str,
               millis: float, return_rows: int, query_id: str, is_query: bool, masked_stmt: str) -> None:
        """Queue a statement's line; `masked_stmt` is its text with passwords masked (mask_passwords)."""
        text = masked_stmt.replace("\n", " ").replace("\r", " ")
        now = time.time()
        second = int(now)
        if second != self._second:  # the date and time are formatted once a second
            self._second, self._stamp = second, time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(second))
        self._lines.put(
            f"{self._stamp},{int(now * 1000) % 1000:03d} [query] "
            f"|Client={client}|User={user}|Ctl=internal|Db={db or ''}|State={state}|ErrorCode={error_code}"
            f"|ErrorMessage={error.replace(chr(10), ' ')}|Time(ms)={int(millis)}|ScanBytes=0|ScanRows=0"
            f"|ReturnRows={return_rows}|StmtId={next(self._ids)}|QueryId={query_id}"
            f"|IsQuery={'true' if is_query else 'false'}|Stmt={text}\n")

    def _write(self) -> None:
        """Write the lines queued so far at once, in order, until close() queues None."""
        while True:
            batch = [self._lines.get()]
            if batch[0] is not None:
                time.sleep(WRITE_EVERY)  # gather: busy clients' lines one write at a time cost a tenth of the server
            while True:
                try:
                    batch.append(self._lines.get_nowait())
                except queue.Empty:
                    break
            try:
                self._append([line for line in batch if line is not None])
            except Exception:  # noqa: BLE001 - a full disk or an unwritable text loses these lines, never the writer
                log.exception("could not write the audit log %s", self.path)
            if None in batch:
                return

    def _append(self, lines: list[str]) -> None:
        stream = self._file.stream
        size = stream.tell()
        pending: list[str] = []
        for line in lines:
            n = len(line.encode("utf-8"))
            if self._max_bytes and size and size + n > self._max_bytes:  # rotate where the file is full
                stream.write("".join(pending))
                self._file.doRollover()
                stream, size, pending = self._file.stream, 0, []
            pending.append(line)
            size += n
        stream.write("".join(pending))
        stream.flush()

    def close(self) -> None:
        """Write what is queued, then close the file."""
        self._lines.put(None)
        self._writer.join()
        self._file.close()
