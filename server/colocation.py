"""Colocation groups (`"colocate_with" = "g"`): the checks Doris's ColocateTableIndex makes when a table joins a
group, and SHOW PROC '/colocation_group'. A single node keeps every bucket of every table on itself, so a group
is only its schema (bucket number, distribution column types, replica allocation) and its tables; the group is
derived from the tables' properties, with the id of its first table as its group id."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sql.errors import analysis_error
from sql.types import parse_type
from storage.catalog.model import DistributionInfo, OlapTable, TableSpec
from storage.catalog.store import Catalog

GLOBAL_PREFIX = "__global__"
PROC_COLUMNS = ("GroupId", "GroupName", "TableIds", "BucketsNum", "ReplicaAllocation", "DistCols", "IsStable",
                "ErrorMsg")


@dataclass(frozen=True)
class _Member:
    db_id: int
    table: OlapTable


def _group(table: OlapTable) -> str | None:
    name = table.props.get("colocate_with")
    return name or None


def _allocation(properties: dict[str, str]) -> str:
    return properties.get("replication_allocation", "tag.location.default: 1")


def _dist_types(columns: Sequence, distribution: DistributionInfo) -> list[str]:
    by_name = {c.name.lower(): c for c in columns}
    return [str(parse_type(by_name[n.lower()].type)) for n in distribution.columns]


def _members(catalog: Catalog, db_id: int, group: str) -> list[OlapTable]:
    out = []
    for db in catalog.list_databases():
        if not group.startswith(GLOBAL_PREFIX) and db.db_id != db_id:
            continue
        out += [t for t in catalog.list_tables(db.name) if _group(t) == group]
    return sorted(out, key=lambda t: t.table_id)


def check_colocation(catalog: Catalog, db_name: str, spec: TableSpec) -> None:
    """A new table joining a group must match the group's schema, with Doris's messages."""
    props = dict(spec.properties)
    group = props.get("colocate_with")
    if not group:
        return
    if spec.distribution.type != "HASH":
        raise analysis_error("Random distribution for colocate table is unsupported")
    db = catalog.get_database(db_name)
    members = _members(catalog, db.db_id if db is not None else -1, group)
    if not members:
        return
    first = members[0]
    if spec.distribution.buckets != first.distribution.buckets:
        raise analysis_error(f"Colocate tables must have same bucket num: {first.distribution.buckets}")
    theirs = _dist_types(first.columns, first.distribution)
    ours = _dist_types(spec.columns, spec.distribution)
    if len(theirs) != len(ours):
        raise analysis_error(f"Colocate tables distribution columns size must be same : {len(theirs)}")
    for name, want, got in zip(spec.distribution.columns, theirs, ours, strict=True):
        if want != got:
            raise analysis_error(f"Colocate tables distribution columns must have the same data type: {name} "
                                 f"should be {want}")
    if _allocation(props) != _allocation(first.props):
        raise analysis_error(f"Colocate tables must have same replication allocation: "
                             f"{{ {_allocation(first.props)} }} should be {{ {_allocation(props)} }}")


def colocation_rows(catalog: Catalog) -> list[list[str]]:
    """SHOW PROC '/colocation_group': a row per group."""
    groups: dict[tuple[int, str], list[OlapTable]] = {}
    for db in catalog.list_databases():
        for t in catalog.list_tables(db.name):
            group = _group(t)
            if group is not None:
                key = (0 if group.startswith(GLOBAL_PREFIX) else db.db_id, group)
                groups.setdefault(key, []).append(t)
    rows = []
    for (db_id, group), tables in sorted(groups.items(), key=lambda kv: min(t.table_id for t in kv[1])):
        tables.sort(key=lambda t: t.table_id)
        first = tables[0]
        name = group if db_id == 0 else f"{db_id}_{group}"
        rows.append([f"{db_id}.{first.table_id}", name, ", ".join(str(t.table_id) for t in tables),
                     str(first.distribution.buckets), _allocation(first.props),
                     ", ".join(ty.lower() for ty in _dist_types(first.columns, first.distribution)), "true", ""])
    return rows
