"""External resources (CREATE EXTERNAL RESOURCE 'spark0' PROPERTIES ("type" = "spark", ...)): the Spark a
LOAD ... WITH RESOURCE runs on. Kept in `<root>/resources.json`. The server runs one Spark session (fe.conf
spark_master); a resource naming another master is refused when a load uses it, since one process cannot hold
two SparkContexts."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from server.config import Config
from sql.errors import analysis_error

SHOW_RESOURCES_COLUMNS = ("Name", "ResourceType", "Item", "Value")
TYPES = ("spark",)


class Resources:
    def __init__(self, root: Path) -> None:
        self.path = Path(root) / "resources.json"
        self._lock = threading.Lock()
        self._items: dict[str, dict[str, str]] = json.loads(self.path.read_text()) if self.path.exists() else {}

    def _save(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self._items, indent=1, sort_keys=True))
        tmp.replace(self.path)

    def create(self, name: str, props: dict[str, str], if_not_exists: bool) -> None:
        kind = props.get("type", "").strip().lower()
        if not kind:
            raise analysis_error("Resource type can't be null")
        if kind not in TYPES:
            raise analysis_error(f"dorislite supports spark resources only, not {kind}")
        if not props.get("spark.master", "").strip():
            raise analysis_error("Missing spark.master in properties")
        with self._lock:
            if name in self._items:
                if if_not_exists:
                    return
                raise analysis_error(f"Resource({name}) already exist")
            self._items[name] = {**props, "type": kind}
            self._save()

    def drop(self, name: str, if_exists: bool) -> None:
        with self._lock:
            if name not in self._items:
                if if_exists:
                    return
                raise analysis_error(f"Resource({name}) does not exist")
            del self._items[name]
            self._save()

    def get(self, name: str) -> dict[str, str] | None:
        with self._lock:
            found = self._items.get(name)
            return dict(found) if found is not None else None

    def rows(self) -> list[list[str]]:
        with self._lock:
            return [[name, props["type"], key, value] for name, props in sorted(self._items.items())
                    for key, value in sorted(props.items()) if key != "type"] + \
                [[name, props["type"], "type", props["type"]] for name, props in sorted(self._items.items())]

    def check_usable(self, name: str, config: Config) -> dict[str, str]:
        """The resource a LOAD ... WITH RESOURCE names, if this server's Spark is the one it describes."""
        props = self.get(name)
        if props is None:
            raise analysis_error(f"Resource does not exist. name: {name}")
        master = props.get("spark.master", "")
        ours = config.get("spark_master", "local[*]") or "local[*]"
        if master != ours and not (master.startswith("local") and ours.startswith("local")):
            raise analysis_error(f"Resource {name} runs on spark.master {master}, but this server's Spark is {ours} "
                                 "(fe.conf spark_master): one process holds one Spark session")
        return props
