"""One compaction of one tablet (storage/compaction/merge.py) on real segments, without a server: per-model
merging, sorted output with rebuilt indexes, versions [a-b], readers holding replaced rowsets, older
snapshots, clean failure when an input disappears, and a crash between the rename and the catalog commit."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from storage_specs import key, spec, table_rows, value

from storage.catalog.compaction import CompactionConflict
from storage.catalog.model import KEYS_AGG, KEYS_DUP, KEYS_UNIQUE, IndexDef, OlapTable, Tablet
from storage.compaction.merge import compact_rowsets
from storage.engine import ScanRequest, StorageEngine
from storage.predicate import ColumnPredicate, Op
from storage.segment.reader import SegmentReader

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = pa.schema([("k1", pa.int32()), ("k2", pa.string()), ("v_sum", pa.int64()), ("v_max", pa.int32()),
                    ("v_rep", pa.string())])


def columns(keys_type: str) -> list:
    aggs = ("SUM", "MAX", "REPLACE") if keys_type == KEYS_AGG else ("NONE", "NONE", "NONE")
    return [key("k1", "INT"), key("k2", "VARCHAR(16)"), value("v_sum", "BIGINT", aggs[0]),
            value("v_max", "INT", aggs[1]), value("v_rep", "VARCHAR(16)", aggs[2])]


def batch(rng: np.random.Generator, n: int, load_no: int) -> pa.Table:
    k1 = rng.integers(0, 300, n).astype(np.int32)
    k2 = np.array([f"s{v}" for v in rng.integers(0, 4, n)], dtype=object)
    nulls = rng.random(n) < 0.05
    return pa.table({
        "k1": pa.array(k1, mask=nulls),
        "k2": pa.array(k2, pa.string()),
        "v_sum": pa.array(rng.integers(0, 100, n), pa.int64()),
        "v_max": pa.array(rng.integers(0, 1000, n).astype(np.int32)),
        "v_rep": pa.array([f"load{load_no}"] * n, pa.string()),
    })


@pytest.fixture(params=["1", "0"], ids=["worker_process", "in_process"])
def engine(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[StorageEngine]:
    e = StorageEngine(tmp_path / "storage", {"tablet_rowset_stale_sweep_time_sec": "0",
                                             "compaction_worker_processes": request.param})
    e.open()
    e.catalog.create_database("db")
    yield e
    e.close()


def make_table(engine: StorageEngine, keys_type: str, loads: int = 6, rows: int = 400, **props: str) -> OlapTable:
    s = spec("t", keys_type, columns(keys_type), buckets=1)
    s = type(s)(**{**s.__dict__, "properties": tuple(props.items()),
                   "index_defs": (IndexDef("idx_v_max", ("v_max",), "BITMAP"),) if props else ()})
    table = engine.catalog.create_table("db", s)
    rng = np.random.default_rng(42)
    for n in range(loads):
        engine.load(table, batch(rng, rows, n))
    return engine.catalog.get_table_by_id(table.table_id)


def scan(engine: StorageEngine, table: OlapTable, **kw) -> pa.Table:
    return engine.scan(ScanRequest(table=table, schema=SCHEMA, columns=SCHEMA.names, **kw)).table


def tablet_visible_rowsets(catalog, tablet_id: int) -> list:
    return catalog.rowsets(tablet_id, 1 << 62)


def only_tablet(engine: StorageEngine, table: OlapTable) -> Tablet:
    (tablet,) = engine.catalog.tablets(table.table_id)
    return tablet


def compact_all(engine: StorageEngine, table: OlapTable, batch_rows: int | None = 37):
    tablet = only_tablet(engine, table)
    inputs = tablet_visible_rowsets(engine.catalog, tablet.tablet_id)
    out = compact_rowsets(engine, table, table.base_index, tablet, inputs, inputs[0].start_version,
                          inputs[-1].end_version, batch_rows=batch_rows)
    return tablet, inputs, out


def sorted_by_keys(t: pa.Table) -> bool:
    idx = pc.sort_indices(t, sort_keys=[("k1", "ascending", "at_start"), ("k2", "ascending", "at_start")])
    return idx.equals(pa.array(np.arange(t.num_rows), pa.uint64()))


@pytest.mark.parametrize("keys_type", [KEYS_AGG, KEYS_UNIQUE, KEYS_DUP])
def test_merge_per_model_gives_the_same_answers(engine: StorageEngine, keys_type: str) -> None:
    table = make_table(engine, keys_type)
    before = table_rows(scan(engine, table))
    raw_before = scan(engine, table, merge=False).num_rows
    tablet, inputs, out = compact_all(engine, table)
    assert [(rs.start_version, rs.end_version) for rs in inputs] == [(v, v) for v in range(2, 8)]
    (only,) = tablet_visible_rowsets(engine.catalog, tablet.tablet_id)
    assert (only.start_version, only.end_version) == (2, 7) and only.rowset_id == out.rowset.rowset_id
    assert not only.overlapping
    assert table_rows(scan(engine, table)) == before
    stored = pa.concat_tables([SegmentReader(p).read(SCHEMA.names) for p in engine.segment_paths(only)])
    assert sorted_by_keys(stored)
    if keys_type == KEYS_DUP:
        assert stored.num_rows == raw_before == 6 * 400  # every row kept
    else:
        # rows with equal keys became one: no duplicate keys left, and no merge needed to read them
        assert stored.num_rows == len(before) < raw_before
        assert table_rows(scan(engine, table, merge=False)) == before
    assert out.stats.input_rows == raw_before and out.stats.output_rows == stored.num_rows
    # the replaced rowsets and their files are gone (no reader, no sweep delay)
    assert engine.catalog.stale_rowsets(tablet.tablet_id) == []
    assert not any(p.exists() for rs in inputs for p in engine.segment_paths(rs))


def test_unique_keeps_the_newest_row(engine: StorageEngine) -> None:
    table = engine.catalog.create_table("db", spec("u", KEYS_UNIQUE, columns(KEYS_UNIQUE), buckets=1))
    for n in range(5):
        engine.load(table, pa.table({"k1": pa.array([1, 2], pa.int32()), "k2": ["a", "a"],
                                     "v_sum": pa.array([n, n], pa.int64()), "v_max": pa.array([n, -n], pa.int32()),
                                     "v_rep": [f"load{n}", None]}))
    compact_all(engine, table, batch_rows=1)
    assert table_rows(scan(engine, table, merge=False)) == [(1, "a", 4, 4, "load4"), (2, "a", 4, -4, None)]


def test_segments_are_split_at_max_segment_size(tmp_path: Path) -> None:
    engine = StorageEngine(tmp_path / "s", {"max_segment_bytes": "20000", "tablet_rowset_stale_sweep_time_sec": "0"})
    engine.open()
    engine.catalog.create_database("db")
    table = make_table(engine, KEYS_DUP, loads=4, rows=1000)
    before = table_rows(scan(engine, table))
    _, _, out = compact_all(engine, table, batch_rows=None)
    assert out.rowset.num_segments > 1
    sizes = [SegmentReader(p).read(SCHEMA.names).nbytes for p in engine.segment_paths(out.rowset)]
    assert max(sizes) <= 20000
    assert table_rows(scan(engine, table)) == before
    engine.close()


def test_indexes_are_rebuilt_and_used(engine: StorageEngine) -> None:
    table = make_table(engine, KEYS_AGG, bloom_filter_columns="k2")
    compact_all(engine, table)
    table = engine.catalog.get_table_by_id(table.table_id)
    pred = [ColumnPredicate("v_max", Op.EQ, (123,))]
    got = engine.scan(ScanRequest(table=table, schema=SCHEMA, columns=SCHEMA.names, predicates=pred, merge=False))
    assert got.stats.rows_bitmap_index_filtered > 0
    full = scan(engine, table, merge=False)
    assert table_rows(got.table) == table_rows(full.filter(pc.equal(full["v_max"], 123)))
    pred = [ColumnPredicate("k2", Op.EQ, ("s15",))]
    got = engine.scan(ScanRequest(table=table, schema=SCHEMA, columns=SCHEMA.names, predicates=pred, merge=False))
    assert got.table.num_rows == 0 and got.stats.rows_bloom_filter_filtered > 0


def test_a_reader_keeps_the_replaced_rowsets_until_it_ends(engine: StorageEngine) -> None:
    table = make_table(engine, KEYS_AGG)
    tablet = only_tablet(engine, table)
    versions = engine.snapshot(table)
    with engine.readers.reading() as hold:
        held = hold.lookup(lambda: engine.catalog.rowsets_for_tablets([tablet], versions))[tablet.tablet_id]
        _, inputs, _ = compact_all(engine, table)
        assert {rs.rowset_id for rs in held} == {rs.rowset_id for rs in inputs}
        # swapped in the catalog, still readable on disk
        assert len(tablet_visible_rowsets(engine.catalog, tablet.tablet_id)) == 1
        assert all(p.exists() for rs in held for p in engine.segment_paths(rs))
        assert engine.readers.pending() == len(inputs)
        assert sum(SegmentReader(p).num_rows for rs in held for p in engine.segment_paths(rs)) == sum(rs.num_rows for rs in held)
    assert engine.readers.pending() == 0
    assert not any(p.exists() for rs in held for p in engine.segment_paths(rs))
    assert engine.catalog.stale_rowsets() == []


def test_an_older_snapshot_reads_the_stale_rowsets(tmp_path: Path) -> None:
    engine = StorageEngine(tmp_path / "s", {"tablet_rowset_stale_sweep_time_sec": "3600"})
    engine.open()
    engine.catalog.create_database("db")
    table = make_table(engine, KEYS_AGG, loads=4)
    (pid,) = engine.snapshot(table)
    at_v4 = table_rows(scan(engine, table, versions={pid: 4}))
    latest = table_rows(scan(engine, table))
    _, inputs, out = compact_all(engine, table)
    assert (out.rowset.start_version, out.rowset.end_version) == (2, 5)
    assert table_rows(scan(engine, table, versions={pid: 4})) == at_v4  # stale [2-2] .. [4-4]
    assert table_rows(scan(engine, table)) == latest  # [2-5]
    assert len(engine.catalog.stale_rowsets()) == 4
    assert engine.readers.collect() == 0  # the sweep delay has not passed
    assert engine.readers.collect(now=float("inf")) == 4
    assert engine.catalog.stale_rowsets() == []
    engine.close()
    # a restart drops stale rowsets at once (no reader survives it)
    engine = StorageEngine(tmp_path / "s2", {"tablet_rowset_stale_sweep_time_sec": "3600"})
    engine.open()
    engine.catalog.create_database("db")
    table = make_table(engine, KEYS_AGG, loads=3)
    _, inputs, _ = compact_all(engine, table)
    engine.close()
    engine = StorageEngine(tmp_path / "s2")
    engine.open()
    assert engine.catalog.stale_rowsets() == []
    assert not any(p.exists() for rs in inputs for p in engine.segment_paths(rs))
    engine.close()


def test_swap_fails_cleanly_when_an_input_disappeared(engine: StorageEngine) -> None:
    table = make_table(engine, KEYS_AGG, loads=3)
    tablet = only_tablet(engine, table)
    inputs = tablet_visible_rowsets(engine.catalog, tablet.tablet_id)
    compact_rowsets(engine, table, table.base_index, tablet, inputs, 2, 4)
    with pytest.raises(CompactionConflict, match="no longer exists"):  # the inputs were replaced
        compact_rowsets(engine, table, table.base_index, tablet, inputs, 2, 4)
    # a TRUNCATE while the merge runs: the swap fails, nothing is published, nothing is left behind
    engine.load(table, batch(np.random.default_rng(1), 50, 9))
    current = tablet_visible_rowsets(engine.catalog, tablet.tablet_id)
    publish = engine.catalog.publish_compaction

    def truncate_first(*args):
        engine.catalog.truncate_table("db", "t")
        publish(*args)

    engine.catalog.publish_compaction = truncate_first
    with pytest.raises(CompactionConflict, match=f"tablet {tablet.tablet_id} no longer exists"):
        compact_rowsets(engine, table, table.base_index, tablet, current, 2, 5)
    assert list(engine.staging_root.iterdir()) == []
    assert not engine.tablet_dir(tablet.tablet_id).exists() or not any(engine.tablet_dir(tablet.tablet_id).iterdir())
    assert engine.catalog.stale_rowsets() == []


def test_a_crash_before_the_commit_loses_nothing(tmp_path: Path) -> None:
    root = tmp_path / "s"
    engine = StorageEngine(root)
    engine.open()
    engine.catalog.create_database("db")
    table = make_table(engine, KEYS_AGG)
    tablet = only_tablet(engine, table)
    before = table_rows(scan(engine, table))
    engine.close()
    # another process compacts and dies (kill -9) after renaming the output into the tablet folder
    script = textwrap.dedent(f"""
        import os
        from storage.engine import StorageEngine
        from storage.compaction.merge import compact_rowsets
        e = StorageEngine({str(root)!r})
        e.open()
        e.catalog.publish_compaction = lambda *a: os._exit(9)
        t = e.catalog.get_table_by_id({table.table_id})
        (tablet,) = e.catalog.tablets(t.table_id)
        inputs = e.catalog.rowsets(tablet.tablet_id, 1 << 62)
        compact_rowsets(e, t, t.base_index, tablet, inputs, 2, 7)
    """)
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 9, proc.stderr
    files = {p.name for p in engine.tablet_dir(tablet.tablet_id).iterdir()}
    assert len(files) == 7  # six loads + the unpublished output
    engine = StorageEngine(root)
    engine.open()
    assert len({p.name for p in engine.tablet_dir(tablet.tablet_id).iterdir()}) == 6
    assert len(tablet_visible_rowsets(engine.catalog, tablet.tablet_id)) == 6
    assert table_rows(scan(engine, engine.catalog.get_table_by_id(table.table_id))) == before
    engine.close()


@pytest.mark.parametrize("keys_type", [KEYS_DUP, KEYS_AGG])
def test_base_compaction_applies_a_delete_physically(engine: StorageEngine, keys_type: str) -> None:
    from storage.catalog.delete_jobs import DeleteInfo
    from storage.jobs.delete import delete_label, publish_predicate_delete

    table = make_table(engine, keys_type, loads=3)
    (pid,) = engine.snapshot(table)
    column = "v_max" if keys_type == KEYS_DUP else "k1"  # AGGREGATE deletes name keys only
    pred = ColumnPredicate(column, Op.GT, (150,))
    label = delete_label()
    publish_predicate_delete(engine, table, [pid], [pred], DeleteInfo(
        table.db_id, table.table_id, "t", label, ("t",), True, (f"{column} GT \"150\"",), 0.0))
    rng = np.random.default_rng(5)
    for n in range(2):
        engine.load(table, batch(rng, 200, 10 + n))
    before = table_rows(scan(engine, table))
    later = scan(engine, table, versions={pid: 7})
    assert later.num_rows  # rows matching the predicate loaded after the delete are visible
    tablet, inputs, out = compact_all(engine, table)
    assert [rs.kind for rs in inputs] == ["DATA"] * 3 + ["DELETE"] + ["DATA"] * 2
    assert out.stats.rows_deleted > 0
    assert (out.rowset.start_version, out.rowset.end_version) == (2, 7)
    after = engine.scan(ScanRequest(table=table, schema=SCHEMA, columns=SCHEMA.names))
    assert table_rows(after.table) == before
    assert after.stats.rows_del_filtered == 0  # nothing left for the read path to filter
    stored = pa.concat_tables([SegmentReader(p).read(SCHEMA.names) for p in engine.segment_paths(out.rowset)])
    assert stored.num_rows == out.stats.output_rows


def test_overwrite_replaces_rowsets_and_compacts_after(engine: StorageEngine) -> None:
    """INSERT OVERWRITE's publish: new data as [0-v], the old rowsets stale and deleted once unread, later
    loads and compaction on top of it."""
    from storage.engine import Overwrite

    table = make_table(engine, KEYS_DUP, loads=3, rows=100)
    tablet = only_tablet(engine, table)
    old = tablet_visible_rowsets(engine.catalog, tablet.tablet_id)
    rng = np.random.default_rng(7)
    replacement = batch(rng, 10, 9)
    everything = Overwrite(frozenset(p.partition_id for p in table.partitions))
    engine.load(table, replacement, overwrite=everything)
    table = engine.catalog.get_table_by_id(table.table_id)
    (only,) = tablet_visible_rowsets(engine.catalog, tablet.tablet_id)
    assert (only.start_version, only.end_version) == (0, 5) and only.num_rows == 10
    assert table_rows(scan(engine, table)) == table_rows(replacement)
    assert table.partitions[0].row_count == 10
    # the replaced rowsets are gone (no reader holds them, no sweep delay) ...
    assert not any(p.exists() for rs in old for p in engine.segment_paths(rs))
    assert engine.catalog.stale_rowsets(tablet.tablet_id) == []
    more = batch(rng, 5, 10)
    engine.load(table, more)
    rowsets = tablet_visible_rowsets(engine.catalog, tablet.tablet_id)
    assert [(r.start_version, r.end_version) for r in rowsets] == [(0, 5), (6, 6)]
    _, _, out = compact_all(engine, table)
    assert (out.rowset.start_version, out.rowset.end_version) == (0, 6)
    assert sorted(table_rows(scan(engine, table)), key=str) == sorted(table_rows(pa.concat_tables([replacement, more])), key=str)
    # an empty overwrite empties the table, with an empty [0-v] rowset
    engine.load(table, replacement.slice(0, 0), overwrite=everything)
    assert scan(engine, table).num_rows == 0
    (empty,) = tablet_visible_rowsets(engine.catalog, tablet.tablet_id)
    assert (empty.start_version, empty.num_segments, empty.num_rows) == (0, 0, 0)


@pytest.mark.parametrize("keys_type", [KEYS_AGG, KEYS_UNIQUE, KEYS_DUP])
def test_kept_reads_answer_as_fresh_ones_after_compactions(engine: StorageEngine, keys_type: str) -> None:
    """A whole-tablet read keeps its rows (storage/tablet/scan_cache.py) and a later one reads only what came
    after them. After a compaction across the last version a read kept, and after one that leaves that version
    a rowset's end, a read answers exactly as one without kept rows."""
    table = make_table(engine, keys_type)  # versions 2-7, one rowset each
    tablet = only_tablet(engine, table)
    rng = np.random.default_rng(3)

    def fresh() -> list:
        engine.tablet_scans.clear()
        return table_rows(scan(engine, table))

    def compact(first: int, last: int) -> None:
        inputs = [rs for rs in tablet_visible_rowsets(engine.catalog, tablet.tablet_id)
                  if first <= rs.start_version and rs.end_version <= last]
        compact_rowsets(engine, table, table.base_index, tablet, inputs, first, last)

    table_rows(scan(engine, table))  # kept: versions 0-7
    engine.load(table, batch(rng, 400, 10))
    engine.load(table, batch(rng, 400, 11))  # 8, 9: not read yet
    compact(6, 9)  # across 7
    assert table_rows(scan(engine, table)) == fresh()
    table_rows(scan(engine, table))  # kept: up to 9
    engine.load(table, batch(rng, 400, 12))
    engine.load(table, batch(rng, 400, 13))
    assert table_rows(scan(engine, table)) == fresh()
    table_rows(scan(engine, table))  # kept: up to 11
    hits = engine.tablet_scans.hits
    compact(2, 5)  # 11 still ends a rowset: the kept rows serve
    assert table_rows(scan(engine, table)) == fresh()
    engine.load(table, batch(rng, 400, 14))
    table_rows(scan(engine, table))
    assert engine.tablet_scans.hits > hits
    engine.load(table, batch(rng, 400, 15))
    assert table_rows(scan(engine, table)) == fresh()
