"""Errors raised while parsing or analysing statements."""

from __future__ import annotations


class SqlError(Exception):
    """A user-visible failure. `message` is the exact text the client sees."""

    def __init__(self, message: str, code: int = 1105, sqlstate: str = "HY000") -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.sqlstate = sqlstate


def analysis_error(detail: str, code: int = 1105, sqlstate: str = "HY000") -> SqlError:
    """Doris's FE analysis errors: `errCode = 2, detailMessage = <detail>`."""
    return SqlError(f"errCode = 2, detailMessage = {detail}", code, sqlstate)


def parse_error(detail: str) -> SqlError:
    return SqlError(detail, 1064, "42000")
