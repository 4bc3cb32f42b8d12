"""fe.conf / be.conf loading: `key = value` lines, Doris's key names, typed access, runtime changes."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_CONF_DIR = Path(__file__).resolve().parent.parent / "conf"

# Keys Doris lets ADMIN SET FRONTEND CONFIG change at runtime; others need a restart.
MUTABLE_FE_KEYS = frozenset(
    {
        "dynamic_partition_enable",
        "dynamic_partition_check_interval_seconds",
        "max_dynamic_partition_num",
        "dynamic_partition_debug_current_time",
        "max_multi_partition_num",
        "max_bucket_num_per_partition",
        "autobucket_min_buckets",
        "autobucket_max_buckets",
        "insert_load_default_timeout_second",
        "qe_max_connection",
        "expr_depth_limit",
        "expr_children_limit",
    }
)


def parse_conf(text: str) -> dict[str, str]:
    conf: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        conf[key.strip()] = value
    return conf


@dataclass
class Config:
    """The merged configuration. Reads are by key with a typed default; writes are runtime overrides."""

    fe: dict[str, str] = field(default_factory=dict)
    be: dict[str, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def load(cls, conf_dir: Path | None = None) -> Config:
        d = conf_dir or DEFAULT_CONF_DIR
        fe = parse_conf((d / "fe.conf").read_text()) if (d / "fe.conf").exists() else {}
        be = parse_conf((d / "be.conf").read_text()) if (d / "be.conf").exists() else {}
        return cls(fe=fe, be=be)

    def get(self, key: str, default: str = "") -> str:
        with self._lock:
            if key in self.fe:
                return self.fe[key]
            return self.be.get(key, default)

    def get_int(self, key: str, default: int) -> int:
        value = self.get(key, "")
        try:
            return int(value) if value != "" else default
        except ValueError:
            return default

    def get_bool(self, key: str, default: bool) -> bool:
        value = self.get(key, "").lower()
        return default if value == "" else value == "true"

    def set_fe(self, key: str, value: str) -> None:
        with self._lock:
            self.fe[key] = value

    def items_fe(self) -> list[tuple[str, str]]:
        with self._lock:
            return sorted(self.fe.items())
