"""System variables: Doris's defaults, session and global scopes, SET / SELECT @@var / SHOW VARIABLES."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from planner.context import system_zone
from server.results import StatementError

VERSION = "5.7.99"
VERSION_COMMENT = "Doris version doris-2.1.0-dorislite"


SYSTEM_TIME_ZONE = system_zone() or time.strftime("%Z") or "UTC"

# name -> default value. Values are Python ints or strings as SELECT @@name returns them.
DEFAULTS: dict[str, Any] = {
    "version": VERSION,
    "version_comment": VERSION_COMMENT,
    "lower_case_table_names": 0,
    "license": "Apache License, Version 2.0",
    "language": "/palo/share/english/",
    "init_connect": "",
    "system_time_zone": SYSTEM_TIME_ZONE,
    "time_zone": SYSTEM_TIME_ZONE,
    "query_cache_size": 1048576,
    "query_cache_type": 0,
    "performance_schema": "OFF",
    "auto_increment_increment": 1,
    "auto_increment_offset": 1,
    "autocommit": 1,
    "character_set_client": "utf8mb4",
    "character_set_connection": "utf8mb4",
    "character_set_results": "utf8mb4",
    "character_set_server": "utf8mb4",
    "character_set_database": "utf8mb4",
    "character_set_system": "utf8",
    "collation_connection": "utf8mb4_0900_bin",
    "collation_server": "utf8mb4_0900_bin",
    "collation_database": "utf8mb4_0900_bin",
    "max_allowed_packet": 16777216,
    "net_buffer_length": 16384,
    "net_read_timeout": 60,
    "net_write_timeout": 600,
    "wait_timeout": 28800,
    "interactive_timeout": 3600,
    "sql_mode": "ONLY_FULL_GROUP_BY",
    "sql_auto_is_null": 0,
    "sql_select_limit": 9223372036854775807,
    "sql_safe_updates": 0,
    "sql_quote_show_create": 1,
    "transaction_isolation": "REPEATABLE-READ",
    "tx_isolation": "REPEATABLE-READ",
    "transaction_read_only": 0,
    "tx_read_only": 0,
    "have_query_cache": "YES",
    "names": "utf8mb4",
    "optimizer_switch": "",
    "max_execution_time": 0,
    "max_statement_time": 0,
    "foreign_key_checks": 1,
    "unique_checks": 1,
    "default_storage_engine": "olap",
    "default_tmp_storage_engine": "olap",
    "storage_engine": "olap",
    "div_precision_increment": 4,
    "group_concat_max_len": 2147483646,
    "long_query_time": 10,
    "max_connections": 1024,
    "protocol_version": 10,
    "port": 9030,
    "hostname": "localhost",
    "socket": "",
    "tmpdir": "/tmp",
    "datadir": "",
    "read_only": 0,
    "super_read_only": 0,
    "event_scheduler": "OFF",
    "default_week_format": 0,
    "explicit_defaults_for_timestamp": 1,
    "resource_group": "",
    "gtid_mode": "OFF",
    # Doris-specific
    "query_timeout": 900,
    "exec_mem_limit": 2147483648,
    "enable_nereids_planner": "true",
    "enable_fallback_to_original_planner": "true",
    "enable_insert_strict": "true",
    "insert_timeout": 14400,
    "enable_profile": "false",
    "delete_without_partition": "false",
    "show_hidden_columns": "false",
    "allow_partition_column_nullable": "true",
    "parallel_fragment_exec_instance_num": 8,
    "batch_size": 4064,
    "disable_colocate_plan": "false",
    "enable_vectorized_engine": "true",
    "insert_max_filter_ratio": 1.0,
    "group_commit": "off_mode",  # off_mode / sync_mode / async_mode (server/loads/group_commit.py)
    "runtime_filter_mode": "GLOBAL",
    "default_order_by_limit": -1,
    "enable_spilling": "false",
    # comma-separated planner rule names to skip (planner/rewrite.py RULES: prune_partitions, prune_buckets,
    # preaggregation, select_rollup, ...); for debugging and A/B runs
    "disable_nereids_rules": "",
    # dorislite: false makes every OLAP scan read the base index (rollup selection off), e.g. to check a
    # rollup's answer against the base table's
    "enable_rollup_selection": "true",
    "disable_join_reorder": "false",
    "enable_unique_key_partial_update": "false",
    "dry_run_query": "false",
}

# Variables that only exist globally (SET without GLOBAL is refused in MySQL for these).
READ_ONLY = frozenset({"version", "version_comment", "license", "language", "system_time_zone",
                       "lower_case_table_names", "have_query_cache", "protocol_version", "hostname",
                       "datadir", "port", "character_set_system"})


def _normalise(value: Any, default: Any) -> Any:
    """Coerce a SET value to the variable's kind (booleans as Doris prints them)."""
    if isinstance(default, str) and default in ("true", "false"):
        text = str(value).lower()
        if text in ("1", "true", "on"):
            return "true"
        if text in ("0", "false", "off"):
            return "false"
        raise ValueError(text)
    if isinstance(default, bool) or (isinstance(default, int) and not isinstance(value, str)):
        return int(value) if not isinstance(value, bool) else int(value)
    if isinstance(default, int):
        text = str(value).strip().lower()
        if text in ("on", "true"):
            return 1
        if text in ("off", "false"):
            return 0
        return int(text)
    if isinstance(default, float):
        return float(value)
    return "" if value is None else str(value)


_MISSING = object()


def unknown_variable(name: str) -> StatementError:
    return StatementError(f"Unknown system variable '{name}'", 1193, "HY000")


@dataclass
class GlobalVariables:
    values: dict[str, Any] = field(default_factory=lambda: dict(DEFAULTS))
    lock: threading.Lock = field(default_factory=threading.Lock)

    def get(self, name: str) -> Any:
        # no lock: a name is never removed, and one dict read sees a whole value (a point query reads ten)
        value = self.values.get(name.lower(), _MISSING)
        if value is _MISSING:
            raise unknown_variable(name)
        return value

    def set(self, name: str, value: Any) -> None:
        key = name.lower()
        with self.lock:
            if key not in self.values:
                raise unknown_variable(name)
            self.values[key] = _coerce(key, value)


_CHOICES = {"group_commit": ("off_mode", "sync_mode", "async_mode")}


def _coerce(key: str, value: Any) -> Any:
    if value is None or (isinstance(value, str) and value.upper() == "DEFAULT"):
        return DEFAULTS[key]
    if key in _CHOICES:
        if str(value).strip().lower() not in _CHOICES[key]:
            raise StatementError(f"Variable '{key}' can't be set to the value of '{value}'", 1231, "42000")
        return str(value).strip().lower()
    try:
        return _normalise(value, DEFAULTS[key])
    except (ValueError, TypeError):
        raise StatementError(f"Variable '{key}' can't be set to the value of '{value}'", 1231, "42000") from None


@dataclass
class SessionVariables:
    """A session's view: its own overrides over the global values."""

    globals: GlobalVariables
    overrides: dict[str, Any] = field(default_factory=dict)
    user: dict[str, Any] = field(default_factory=dict)  # @user_variables

    def get(self, name: str, scope: str = "session") -> Any:
        key = name.lower()
        if scope == "user":
            return self.user.get(key)
        if scope == "global":
            return self.globals.get(key)
        if key in self.overrides:
            return self.overrides[key]
        return self.globals.get(key)

    def set(self, name: str, value: Any, scope: str = "session") -> None:
        key = name.lower()
        if scope == "user":
            self.user[key] = value
            return
        if key not in DEFAULTS:
            raise unknown_variable(name)
        if key in READ_ONLY:
            raise StatementError(f"Variable '{key}' is a read only variable", 1238, "HY000")
        if scope == "global":
            self.globals.set(key, value)
            self.overrides.pop(key, None)
        else:
            self.overrides[key] = _coerce(key, value)

    def rows(self, scope: str = "session") -> list[tuple[str, str, str, str]]:
        """SHOW VARIABLES rows: Variable_name, Value, Default_Value, Changed (2.1 layout)."""
        out = []
        for key in sorted(DEFAULTS):
            value = self.get(key, scope)
            default = DEFAULTS[key]
            out.append((key, _text(value), _text(default), "1" if value != default else "0"))
        return out

    def flag(self, name: str) -> bool:
        return str(self.get(name)).lower() in ("true", "1", "on")


def _text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(value)
    return str(value)
