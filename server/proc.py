"""The part of Doris's proc tree a single node keeps (SHOW PROC and the FE HTTP API's /api/show_proc):
'/', '/backends', '/frontends', '/colocation_group'."""

from __future__ import annotations

from typing import TYPE_CHECKING

from server.colocation import PROC_COLUMNS, colocation_rows
from server.nodes import BACKEND_COLUMNS, FRONTEND_COLUMNS, backend_rows, frontend_rows

if TYPE_CHECKING:
    from server.session import SessionContext

ROOT = ("backends", "colocation_group", "frontends")


def proc_table(ctx: SessionContext, path: str) -> tuple[list[str], list[list]] | None:
    """(columns, rows) of a normalised proc path ('/', '/backends', ...), None for a path not kept."""
    if path == "/":
        return ["name"], [[name] for name in ROOT]
    if path == "/backends":
        return list(BACKEND_COLUMNS), backend_rows(ctx)
    if path == "/frontends":
        return list(FRONTEND_COLUMNS), frontend_rows(ctx)
    if path == "/colocation_group":
        return list(PROC_COLUMNS), colocation_rows(ctx.engine.catalog)
    return None
