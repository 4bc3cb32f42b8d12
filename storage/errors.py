"""Errors raised by storage, carrying the MySQL error the server sends."""

from __future__ import annotations


class StorageError(Exception):
    """A user-visible failure. `message` is the exact text the client sees."""

    def __init__(self, message: str, code: int = 1105, sqlstate: str = "HY000") -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.sqlstate = sqlstate


def doris_error(detail: str, code: int = 1105, sqlstate: str = "HY000") -> StorageError:
    """Doris wraps FE user errors as `errCode = 2, detailMessage = <detail>`."""
    return StorageError(f"errCode = 2, detailMessage = {detail}", code, sqlstate)


class CorruptDataError(StorageError):
    """A segment or page failed its checksum or structural check."""
