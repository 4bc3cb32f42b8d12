"""The cluster as Doris describes it, for a single node: one frontend (the MySQL and FE HTTP ports) and one backend
(the HTTP API that takes Stream Loads), in SHOW BACKENDS / SHOW FRONTENDS, SHOW PROC '/backends' / '/frontends',
and the FE HTTP endpoints Doris's Spark / Flink connectors ask to find where to send data."""

from __future__ import annotations

import json
import os
import shutil
import time
from datetime import datetime
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from server.show_data import footprint
from server.show_partitions import readable_size
from server.show_tablets import BACKEND_ID
from server.variables import VERSION_COMMENT

if TYPE_CHECKING:
    from server.session import SessionContext

BACKEND_COLUMNS = (
    "BackendId", "Host", "HeartbeatPort", "BePort", "HttpPort", "BrpcPort", "ArrowFlightSqlPort", "LastStartTime",
    "LastHeartbeat", "Alive", "SystemDecommissioned", "TabletNum", "DataUsedCapacity", "TrashUsedCapacity",
    "AvailCapacity", "TotalCapacity", "UsedPct", "MaxDiskUsedPct", "RemoteUsedCapacity", "Tag", "ErrMsg", "Version",
    "Status", "HeartbeatFailureCounter", "CpuCores", "Memory", "RunningTasks", "NodeRole",
)
FRONTEND_COLUMNS = (
    "Name", "IP", "HostName", "EditLogPort", "HttpPort", "QueryPort", "RpcPort", "ArrowFlightSqlPort", "Role",
    "IsMaster", "ClusterId", "Join", "Alive", "ReplayedJournalId", "LastStartTime", "LastHeartbeat", "IsHelper",
    "ErrMsg", "Version", "CurrentConnected",
)
VERSION = VERSION_COMMENT.removeprefix("Doris version ")
def _stamp(t: float) -> str:
    return datetime.fromtimestamp(t).strftime("%Y-%m-%d %H:%M:%S")


def _memory_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 0


def backend_port(ctx: SessionContext) -> tuple[str, int]:
    parts = urlsplit(ctx.http_base)
    return parts.hostname or "127.0.0.1", parts.port or 8040


def backend_rows(ctx: SessionContext) -> list[list[str]]:
    host, http_port = backend_port(ctx)
    catalog = ctx.engine.catalog
    tables = [t for db in catalog.list_databases() for t in catalog.list_tables(db.name)]
    sizes = [footprint(t) for t in tables]
    used, tablets = sum(s[0] for s in sizes), sum(s[1] for s in sizes)
    disk = shutil.disk_usage(ctx.engine.root)
    status = {"lastSuccessReportTabletsTime": _stamp(time.time()), "lastStreamLoadTime": -1, "isQueryDisabled": False,
              "isLoadDisabled": False, "isActive": True, "currentFragmentNum": 0, "lastFragmentUpdateTime": 0}
    used_pct = f"{100 * (disk.total - disk.free) / disk.total:.2f} %" if disk.total else "0.00 %"
    return [[
        str(BACKEND_ID), host, "9050", "9060", str(http_port), "8060", "-1", _stamp(ctx.started_at),
        _stamp(time.time()), "true", "false", str(tablets), readable_size(used), readable_size(0),
        readable_size(disk.free), readable_size(disk.total), used_pct, used_pct, readable_size(0),
        '{"location" : "default"}', "", VERSION, json.dumps(status), "0", str(os.cpu_count() or 1),
        readable_size(_memory_bytes()), "0", "mix",
    ]]


def frontend_rows(ctx: SessionContext) -> list[list[str]]:
    host, _ = backend_port(ctx)
    query_port = ctx.server.port if ctx.server is not None and getattr(ctx.server, "port", None) else \
        ctx.config.get_int("query_port", 9030)
    return [[
        f"fe_{host.replace('.', '_')}_9010", host, host, "9010", str(ctx.fe_http_port), str(query_port), "9020",
        "-1", "FOLLOWER", "true", "0", "true", "true", "0", _stamp(ctx.started_at), _stamp(time.time()), "true", "",
        VERSION, "Yes",
    ]]
