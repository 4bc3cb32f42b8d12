"""Time travel: `FROM t FOR VERSION AS OF n` and `FROM t FOR TIME AS OF '...'` read an OLAP table as one of its
table versions left it (storage/catalog/table_versions.py): each partition at its version then, the partitions
made since left out, the rollups built since not chosen.

What may be read: the table's current version always; an older one only under the table property
`time_travel_retention`, for as long as it was the current version at some moment inside the window (from the
later of `now - retention` and the moment the retention was switched on): compaction keeps the rowsets such a
version needs that long. Anything else is an error naming the oldest readable time, never another version's rows.
"""

from __future__ import annotations

import datetime as dt
import time

from planner.logical import evolve
from planner.olap_source import OlapTableSource
from sql.errors import analysis_error
from storage.catalog.model import JOB_FINISHED, PARTITION_INIT_VERSION
from storage.catalog.table_versions import RETENTION_PROPERTY, TableVersion, retention_seconds

MODES = ("VERSION", "TIMESTAMP")  # FOR VERSION AS OF n, FOR TIME AS OF t (sqlglot's Version.this)


def _error(message: str) -> Exception:
    return analysis_error(message, 1105, "HY000")


def _text(epoch: float, tz: dt.tzinfo) -> str:
    return dt.datetime.fromtimestamp(epoch, tz).strftime("%Y-%m-%d %H:%M:%S")


def travel(source: OlapTableSource, mode: str, value: object, tz: dt.tzinfo | None,
           now: float | None = None) -> OlapTableSource:
    """`source` reading the version `value` names: a table version number (mode VERSION) or a datetime in the
    session's time zone (mode TIMESTAMP; the server's own when None)."""
    tz = tz or dt.datetime.now().astimezone().tzinfo or dt.UTC
    if source.temporary:
        raise _error("FOR VERSION AS OF / FOR TIME AS OF cannot read temporary partitions")
    now = time.time() if now is None else now
    catalog = source.engine.catalog
    table = source.table
    latest = catalog.latest_table_version(table.table_id)
    if mode == "VERSION":
        if not isinstance(value, int) or isinstance(value, bool):
            raise _error("FOR VERSION AS OF needs a table version number (SHOW TABLE VERSIONS lists them)")
        if latest is None or value > latest or value < 1:
            newest = "it has none yet" if latest is None else f"its newest is {latest}"
            raise _error(f"Table {table.name} has no version {value}: {newest}")
        found = catalog.table_version(table.table_id, value)
        asked = f"Version {value} of table {table.name}"
        moment = None
    else:
        if not isinstance(value, dt.datetime):
            raise _error("FOR TIME AS OF needs a DATETIME, such as '2026-11-24 10:00:00'")
        moment = (value if value.tzinfo is not None else value.replace(tzinfo=tz)).timestamp()
        if moment > now:
            raise _error(f"FOR TIME AS OF {_text(moment, tz)}: that time is still to come")
        # (a version's time as SHOW TABLE VERSIONS prints it, to the microsecond, names that version)
        found = catalog.table_version_at(table.table_id, moment + 5e-7)
        asked = f"Table {table.name} at {_text(moment, tz)}"
    if found is None or found.version != latest:
        _check_retained(source, found, moment, asked, now, tz)
    if found is None:  # (_check_retained refused it)
        raise _error(f"{asked} cannot be read")
    return _at_version(source, found)


def _check_retained(source: OlapTableSource, found: TableVersion | None, moment: float | None, asked: str,
                    now: float, tz: dt.tzinfo) -> None:
    table, catalog = source.table, source.engine.catalog
    retention = retention_seconds(table.props)
    if retention <= 0:
        raise _error(f"Time travel is off for table {table.name}: only its current version can be read; set its "
                     f"property \"{RETENTION_PROPERTY}\" to keep older ones (ALTER TABLE {table.name} SET "
                     f"(\"{RETENTION_PROPERTY}\" = \"1d\"))")
    started = catalog.retention_started(table.table_id)
    oldest = max(now - retention, started if started is not None else now - retention)
    if found is not None:
        later = catalog.next_table_version(table.table_id, found.version)
        until = now if later is None else later.published_at
        if (moment if moment is not None else until) >= oldest:
            return
    window = table.props.get(RETENTION_PROPERTY, "")
    raise _error(f"{asked} is older than what its {RETENTION_PROPERTY} ({window}) keeps: the oldest readable "
                 f"time is {_text(oldest, tz)}")


def _at_version(source: OlapTableSource, version: TableVersion) -> OlapTableSource:
    table = source.table
    current = {p.partition_id for p in table.partitions}
    for pid, v in version.partitions.items():
        if pid not in current and v > PARTITION_INIT_VERSION:
            raise _error(f"Version {version.version} of table {table.name} holds a partition dropped since (id "
                         f"{pid}); it cannot be read")
    wanted = [pid for pid in version.partitions if pid in current]
    if source.partition_ids is not None:
        wanted = [pid for pid in source.partition_ids if pid in version.partitions]
    readable = readable_indexes(source, version)
    if table.base_index_id not in readable:
        raise _error(f"Version {version.version} of table {table.name} was written before a schema change that "
                     "rebuilt the table; it cannot be read")
    return evolve(source, partition_ids=tuple(wanted), as_of=version, readable_indexes=frozenset(readable),
                  versions={pid: version.partitions[pid] for pid in wanted})


def readable_indexes(source: OlapTableSource, version: TableVersion) -> set[int]:
    """The table's indexes holding the rows of `version`: an index an ADD ROLLUP or a rebuilding schema change
    back-filled at a later version of a partition does not (its rows start there)."""
    catalog = source.engine.catalog
    table = source.table
    backfilled: dict[int, tuple[tuple[int, int], ...]] = {}  # index_id -> (partition_id, version) back-filled
    for job in catalog.rollup_jobs(table_id=table.table_id):
        if job.state == JOB_FINISHED:
            backfilled[job.rollup_index_id] = job.backfilled
    for change in catalog.schema_change_jobs(table_id=table.table_id):
        if change.state == JOB_FINISHED:
            for _, shadow in change.shadows:
                backfilled[shadow] = change.backfilled
    out = set()
    for index in table.indexes:
        built = backfilled.get(index.index_id, ())
        if all(version.partitions.get(pid, 0) >= v for pid, v in built if pid in version.partitions):
            out.add(index.index_id)
    return out
