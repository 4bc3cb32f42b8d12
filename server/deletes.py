"""DELETE FROM and SHOW DELETE: running a bound DELETE (planner.bind.bind_delete) and what the client sees.

A predicate DELETE answers `Query OK, 0 rows affected` with `{'label':'delete_<uuid>', 'status':'VISIBLE',
'txnId':'N'}` and is listed by SHOW DELETE. A key DELETE (UNIQUE merge-on-write, DELETE ... USING) is, as
in Doris, a load of the matched keys: its rows affected are the rows its WHERE matched, its label an
INSERT label, and SHOW DELETE does not list it.
"""

from __future__ import annotations

import time

import pyarrow as pa

from planner.bind.bind_delete import KeyDelete, PredicateDelete
from server.results import OkResult
from storage.catalog.delete_jobs import DeleteInfo
from storage.catalog.store import Catalog, new_label
from storage.engine import StorageEngine
from storage.jobs.delete import delete_label, publish_key_delete, publish_predicate_delete

SHOW_DELETE_COLUMNS = ("TableName", "PartitionName", "CreateTime", "DeleteCondition", "State")


def _info(label: str, txn_id: int) -> str:
    return f"{{'label':'{label}', 'status':'VISIBLE', 'txnId':'{txn_id}'}}"


def run_predicate_delete(engine: StorageEngine, bound: PredicateDelete) -> OkResult:
    if bound.matches_nothing:  # Doris folds the WHERE to false and publishes nothing
        return OkResult()
    table = bound.table
    info = DeleteInfo(db_id=table.db_id, table_id=table.table_id, table_name=table.name, label=delete_label(),
                      partition_names=bound.partition_names, no_partition_specified=bound.no_partition_specified,
                      conditions=bound.conditions, create_time=time.time())
    result = publish_predicate_delete(engine, table, bound.partition_ids, bound.predicates, info)
    return OkResult(affected_rows=0, info=_info(result.label, result.txn_id))


def run_key_delete(engine: StorageEngine, bound: KeyDelete, matched: pa.Table) -> OkResult:
    """`matched`: the rows bound.query returned (the keys of the rows to delete)."""
    result = publish_key_delete(engine, bound.table, matched, new_label())
    if result is None:
        return OkResult()  # nothing matched: as an INSERT of no rows, no transaction
    return OkResult(affected_rows=result.rows, info=_info(result.label, result.txn_id))


def show_delete_rows(catalog: Catalog, db_id: int) -> list[tuple[str, str, str, str, str]]:
    """SHOW DELETE: one row per finished predicate DELETE of the database, oldest first."""
    return [(i.table_name, "*" if i.no_partition_specified else ", ".join(i.partition_names),
             time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(i.create_time)), ", ".join(i.conditions),
             "FINISHED") for i in catalog.delete_infos(db_id)]
