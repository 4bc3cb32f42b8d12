"""Catalog bounds checked before work starts (issue 14): loads in flight per database, buckets per partition."""

from __future__ import annotations

from pathlib import Path

import pytest

from storage.catalog.store import Catalog
from storage.errors import StorageError


def test_running_transactions_per_database_are_bounded(tmp_path: Path) -> None:
    catalog = Catalog(tmp_path)
    db = catalog.create_database("d")
    catalog.max_running_txn_num_per_db = 3
    txns = [catalog.begin_txn(db.db_id, 1) for _ in range(3)]
    with pytest.raises(StorageError) as info:
        catalog.begin_txn(db.db_id, 1)
    assert info.value.message.endswith(f"current running txns on db {db.db_id} is 3, larger than limit 3")
    catalog.abort_txn(txns[0], "done")
    catalog.begin_txn(db.db_id, 1)  # room again
    catalog.close()
