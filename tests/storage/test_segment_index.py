"""Short key index and zone maps: results are supersets of the matching rows and really prune."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from storage.errors import CorruptDataError
from storage.predicate import ColumnPredicate as P
from storage.predicate import Op
from storage.segment.ordinal_index import OrdinalIndex
from storage.segment.reader import SegmentReader
from storage.segment.row_ranges import RowRanges
from storage.segment.short_key_index import encode_rows, encode_value, short_key_columns
from storage.segment.writer import write_segments
from storage.stats import ScanStats

_CMP = {Op.EQ: pc.equal, Op.NE: pc.not_equal, Op.LT: pc.less, Op.LE: pc.less_equal, Op.GT: pc.greater,
        Op.GE: pc.greater_equal}


def matching_rows(table: pa.Table, preds: list[P]) -> np.ndarray:
    """Exact evaluation of the AND of `preds` (the reference the index must never undercut)."""
    mask = pa.array(np.ones(table.num_rows, bool))
    for p in preds:
        if p.column not in table.column_names:
            continue
        col = table.column(p.column)
        if p.op == Op.IS_NULL:
            m = pc.is_null(col)
        elif p.op == Op.IS_NOT_NULL:
            m = pc.is_valid(col)
        elif p.op in (Op.IN, Op.NOT_IN):
            m = pc.is_in(col, value_set=pa.array(p.values, col.type))
            m = pc.and_(pc.invert(m), pc.is_valid(col)) if p.op == Op.NOT_IN else m
        else:
            m = _CMP[p.op](col, pa.scalar(p.value))
        mask = pc.and_(mask, pc.fill_null(m, False))
    return np.flatnonzero(mask.to_numpy(zero_copy_only=False))


def check_superset(reader: SegmentReader, table: pa.Table, preds: list[P]) -> tuple[RowRanges, ScanStats]:
    stats = ScanStats()
    ranges = reader.row_ranges(preds, stats)
    got = ranges.to_indices()
    want = matching_rows(table, preds)
    assert np.isin(want, got).all(), f"{preds}: index dropped matching rows"
    assert stats.rows_key_range_filtered + stats.rows_stats_filtered == table.num_rows - len(got)
    return ranges, stats


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> tuple[SegmentReader, pa.Table]:
    """A DUPLICATE-style table sorted by (k1 INT, k2 DATE, k3 VARCHAR) with nulls first in k1."""
    n = 200_000
    rng = np.random.default_rng(11)
    k1 = np.sort(rng.integers(-500, 500, n)).astype(np.int32)
    k2 = rng.integers(17987, 18087, n).astype(np.int32)  # 2019-04-01 + 0..99 days
    k3 = np.array([f"name-{x:05d}-with-a-long-common-tail" for x in rng.integers(0, 5000, n)], dtype=object)
    order = np.lexsort((k3, k2, k1))
    nulls = np.zeros(n, bool)
    nulls[:3000] = True  # NULL keys sort first (Doris)
    table = pa.table({
        "k1": pa.array(k1[order], mask=nulls),
        "k2": pa.array(k2[order], pa.date32()),
        "k3": pa.array(k3[order].tolist()),
        "v": pa.array(rng.standard_normal(n)),
        "vi": pa.array(np.arange(n, dtype=np.int64)),  # correlates with row order: page zone maps prune it
    })
    directory = tmp_path_factory.mktemp("keyed")
    write_segments(directory, "k", table, num_key_columns=3, num_short_key_columns=3)
    return SegmentReader(directory / "k_0.dat"), table


def test_prefix_rule() -> None:
    schema = pa.schema([("a", pa.int64()), ("s", pa.string()), ("b", pa.int32())])
    assert short_key_columns(schema, 3, 3) == 2  # a VARCHAR ends the prefix
    assert short_key_columns(schema, 1, 3) == 1  # never beyond the key columns
    schema = pa.schema([("a", pa.int64()), ("f", pa.float64()), ("b", pa.int32())])
    assert short_key_columns(schema, 3, 3) == 1  # a float cannot be a key: the prefix stops before it


@pytest.mark.parametrize("arrow_type,values", [
    (pa.int8(), [-128, -1, 0, 1, 127]),
    (pa.int16(), [-2**15, -1, 0, 2**15 - 1]),
    (pa.int32(), [-2**31, -7, 0, 2**31 - 1]),
    (pa.int64(), [-2**63, -5, 0, 3, 2**63 - 1]),
    (pa.date32(), [dt.date(1900, 1, 1), dt.date(1969, 12, 31), dt.date(2024, 2, 29)]),
    (pa.timestamp("us"), [dt.datetime(1960, 1, 1), dt.datetime(2024, 1, 1, 0, 0, 0, 1)]),
    (pa.decimal128(9, 2), [Decimal("-9999999.99"), Decimal("-0.01"), Decimal("0.00"), Decimal("12.34")]),
    (pa.decimal128(38, 0), [Decimal(-10**37), Decimal(-1), Decimal(0), Decimal(2**64), Decimal(10**37)]),
    (pa.string(), ["", "a", "a\x00", "ab", "b"]),
    (pa.bool_(), [False, True]),
])
def test_key_encoding_preserves_order(arrow_type: pa.DataType, values: list) -> None:
    encoded = encode_rows([pa.array([None] + values, arrow_type)])
    assert encoded == sorted(encoded) and len(set(encoded)) == len(encoded)  # NULL first, strictly ascending
    assert [encode_value(v, arrow_type) for v in values] == encoded[1:]


def test_key_encoding_tuple_order() -> None:
    a = pa.array([1, 1, 1, 2, None], pa.int32())
    b = pa.array([None, -3, 7, -100, 5], pa.int64())
    encoded = encode_rows([a, b])
    order = sorted(range(5), key=lambda i: encoded[i])
    assert order == [4, 0, 1, 2, 3]


def test_unrepresentable_values_do_not_prune() -> None:
    assert encode_value(2.5, pa.int32()) is None
    assert encode_value(dt.datetime(2020, 1, 1, 12), pa.date32()) is None
    assert encode_value(Decimal("1.234"), pa.decimal128(10, 2)) is None
    assert encode_value(300, pa.int8()) is None
    assert encode_value(-129, pa.int8()) is None
    assert encode_value(2**63, pa.int64()) is None and encode_value(-2**63 - 1, pa.int64()) is None


SHORT_KEY_CASES = [
    [P("k1", Op.EQ, (17,))],
    [P("k1", Op.IN, (-400, 3, 250))],
    [P("k1", Op.GE, (100,)), P("k1", Op.LT, (120,))],
    [P("k1", Op.GT, (490,))],
    [P("k1", Op.LE, (-480,))],
    [P("k1", Op.EQ, (5,)), P("k2", Op.EQ, (dt.date(2019, 4, 1),))],
    [P("k1", Op.EQ, (5,)), P("k2", Op.GT, (dt.date(2019, 4, 5),))],
    [P("k1", Op.IN, (5, 6)), P("k2", Op.IN, (dt.date(2019, 4, 1), dt.date(2019, 4, 2))),
     P("k3", Op.EQ, ("name-00042-with-a-long-common-tail",))],
    [P("k1", Op.EQ, (-1,)), P("k2", Op.EQ, (dt.date(2019, 4, 3),)), P("k3", Op.LT, ("name-01000",))],
    [P("k1", Op.EQ, (7,)), P("k1", Op.EQ, (8,))],  # contradiction: nothing
    [P("k1", Op.LT, (2.5,))],  # not an int: must not prune wrongly
    [P("k2", Op.EQ, (dt.date(2019, 4, 1),))],  # not a leading prefix: no short key narrowing
]


@pytest.mark.parametrize("preds", SHORT_KEY_CASES)
def test_short_key_superset(keyed, preds: list[P]) -> None:
    reader, table = keyed
    check_superset(reader, table, preds)


def test_short_key_prunes_sorted_data(keyed) -> None:
    reader, table = keyed
    _, stats = check_superset(reader, table, [P("k1", Op.EQ, (17,))])
    assert stats.rows_key_range_filtered > 0.98 * table.num_rows  # ~200 rows per k1 value
    ranges, stats = check_superset(reader, table, [P("k1", Op.EQ, (5,)), P("k2", Op.EQ, (dt.date(2019, 4, 1),))])
    assert ranges.count() <= 3 * 1024  # the second key column narrows further
    _, stats = check_superset(reader, table, [P("k1", Op.IN, (-400, 3, 250))])
    assert stats.rows_key_range_filtered > 0.97 * table.num_rows
    ranges, stats = check_superset(reader, table, [P("k1", Op.EQ, (7,)), P("k1", Op.EQ, (8,))])
    assert ranges.is_empty and stats.rows_key_range_filtered == table.num_rows
    _, stats = check_superset(reader, table, [P("k2", Op.EQ, (dt.date(2019, 4, 1),))])
    assert stats.rows_key_range_filtered == 0


def test_short_key_result_reads_correct_rows(keyed) -> None:
    reader, table = keyed
    preds = [P("k1", Op.GE, (100,)), P("k1", Op.LT, (120,))]
    out = reader.read(["k1", "vi"], reader.row_ranges(preds))
    got = out.filter(pc.and_(pc.greater_equal(out["k1"], 100), pc.less(out["k1"], 120)))
    assert got["vi"].to_numpy().tolist() == matching_rows(table, preds).tolist()


def test_short_key_randomized(keyed) -> None:
    reader, table = keyed
    rng = np.random.default_rng(2)
    ops = [Op.EQ, Op.LT, Op.LE, Op.GT, Op.GE]
    for _ in range(60):
        preds = [P("k1", ops[rng.integers(5)], (int(rng.integers(-520, 520)),))]
        if rng.random() < 0.5:
            preds.append(P("k2", ops[rng.integers(5)], (dt.date(2019, 4, 1) + dt.timedelta(int(rng.integers(0, 110))),)))
        check_superset(reader, table, preds)


def test_first_key_comparisons_seek_their_exact_rows(keyed, no_column_cache) -> None:
    """With the first key column in the column cache, its comparisons find their rows by binary search: the
    scan reads exactly the matching rows and filters none (as Doris seeks a key range's ends); NULL keys,
    missing values and ranges past either end answer as the filter does."""
    reader, table = keyed
    no_column_cache.limit = 1 << 30
    rng = np.random.default_rng(5)
    ops = [Op.EQ, Op.LT, Op.LE, Op.GT, Op.GE]
    cases = [[P("k1", Op.EQ, (17,))], [P("k1", Op.EQ, (-501,))], [P("k1", Op.EQ, (10**6,))],
             [P("k1", Op.GE, (100,)), P("k1", Op.LT, (120,))], [P("k1", Op.GT, (499,))], [P("k1", Op.LE, (-500,))],
             [P("k1", Op.EQ, (3,)), P("k2", Op.GE, (dt.date(2019, 5, 1),))]]
    cases += [[P("k1", ops[rng.integers(5)], (int(rng.integers(-520, 520)),)) for _ in range(rng.integers(1, 3))]
              for _ in range(80)]
    reader.scan(["k1"], [], [], ScanStats())  # fills the cache with the whole column
    for preds in cases:
        stats = ScanStats()
        got = reader.scan(["vi", "k1"], preds, preds, stats)
        want = matching_rows(table, preds)
        assert got["vi"].to_numpy().tolist() == want.tolist(), preds
        assert stats.raw_rows_read == stats.rows_vector_pred_filtered + got.num_rows
        # away from the NULL keys' first blocks, a range of the first key is read exactly
        low = min((p.value for p in preds if p.column == "k1" and p.op in (Op.EQ, Op.GT, Op.GE)), default=None)
        if all(p.column == "k1" for p in preds) and low is not None and low >= -400:
            assert stats.raw_rows_read == len(want) and stats.rows_vector_pred_filtered == 0, preds
    # without the cached column the filter answers the same
    no_column_cache.clear()
    no_column_cache.limit = 0
    preds = [P("k1", Op.EQ, (17,))]
    stats = ScanStats()
    assert reader.scan(["vi"], preds, preds, stats)["vi"].to_numpy().tolist() == matching_rows(table, preds).tolist()
    assert stats.rows_vector_pred_filtered > 0


def test_nulls_last_data_disables_the_index(tmp_path: Path) -> None:
    k = pa.array(list(range(5000)) + [None] * 3000, pa.int32())  # pyarrow's default null placement
    table = pa.table({"k": k})
    write_segments(tmp_path, "n", table, 1, 1)
    reader = SegmentReader(tmp_path / "n_0.dat")
    assert reader.footer.short_key_index is None
    check_superset(reader, table, [P("k", Op.GE, (4000,))])
    check_superset(reader, table, [P("k", Op.IS_NULL)])


# ------------------------------------------------------------------------------------------- zone maps


@pytest.fixture(scope="module")
def zoned(tmp_path_factory: pytest.TempPathFactory) -> tuple[SegmentReader, pa.Table]:
    """Columns whose pages hold disjoint value ranges, and a column null in its first half only."""
    n = 100_000  # int64 pages hold 8192 rows
    x = np.arange(n, dtype=np.int64)
    half_null = np.arange(n) < n // 2
    table = pa.table({
        "x": pa.array(x),
        "s": pa.array([f"{v:08d}" for v in x]),
        "h": pa.array(x, mask=half_null),
        "d": pa.array(x.astype(np.int32), pa.date32()),
        "m": pa.array([Decimal(int(v)).scaleb(-2) for v in x], pa.decimal128(12, 2)),
    })
    directory = tmp_path_factory.mktemp("zoned")
    write_segments(directory, "z", table, num_key_columns=0, num_short_key_columns=0)
    return SegmentReader(directory / "z_0.dat"), table


ZONE_CASES = [
    (P("x", Op.EQ, (50_000,)), 1),
    (P("x", Op.LT, (8192,)), 1),
    (P("x", Op.LE, (8192,)), 2),
    (P("x", Op.GT, (n := 100_000 - 8192 * 2,)), None),
    (P("x", Op.GE, (99_000,)), 1),
    (P("x", Op.IN, (5, 70_000, 99_999)), 3),
    (P("x", Op.EQ, (-1,)), 0),
    (P("x", Op.NE, (5,)), None),
    (P("h", Op.IS_NULL), None),
    (P("h", Op.IS_NOT_NULL), None),
    (P("s", Op.EQ, ("00050000",)), None),
    (P("d", Op.GE, (dt.date(1970, 1, 1) + dt.timedelta(days=95_000),)), None),
    (P("m", Op.LT, (Decimal("10.00"),)), None),
    (P("x", Op.EQ, (2.5,)), None),
]


@pytest.mark.parametrize("pred,pages", ZONE_CASES)
def test_zone_map_superset(zoned, pred: P, pages: int | None) -> None:
    reader, table = zoned
    ranges, stats = check_superset(reader, table, [pred])
    assert stats.rows_key_range_filtered == 0
    if pages is not None:
        oi = reader._ordinal_index("x")
        assert len(oi.pages_for(ranges)) == pages


def test_zone_map_prunes_each_op(zoned) -> None:
    reader, table = zoned
    n = table.num_rows
    for pred in [P("x", Op.EQ, (50_000,)), P("x", Op.LT, (100,)), P("x", Op.LE, (100,)), P("x", Op.GT, (99_000,)),
                 P("x", Op.GE, (99_000,)), P("x", Op.IN, (1, 2)), P("h", Op.IS_NOT_NULL), P("s", Op.LT, ("00000100",)),
                 P("d", Op.EQ, (dt.date(1970, 1, 2),)), P("m", Op.GT, (Decimal("999.99"),))]:
        _, stats = check_superset(reader, table, [pred])
        assert stats.rows_stats_filtered >= n / 3, pred
    _, stats = check_superset(reader, table, [P("h", Op.IS_NULL)])
    assert stats.rows_stats_filtered >= n / 3  # pages past the null half have no nulls
    for pred in [P("x", Op.EQ, (-5,)), P("x", Op.GT, (10**9,)), P("x", Op.IN, ()), P("s", Op.GE, ("z",)),
                 P("x", Op.IS_NULL)]:
        ranges, stats = check_superset(reader, table, [pred])
        assert ranges.is_empty and stats.rows_stats_filtered == n, pred  # the segment zone map rules it out


def test_predicates_on_missing_columns_are_ignored(zoned) -> None:
    reader, table = zoned
    ranges, stats = check_superset(reader, table, [P("added_later", Op.EQ, (1,))])
    assert ranges == RowRanges.full(table.num_rows) and stats == ScanStats()


def test_zone_maps_and_short_key_combine(keyed) -> None:
    reader, table = keyed
    preds = [P("k1", Op.GE, (0,)), P("vi", Op.LT, (120_000,))]
    _, stats = check_superset(reader, table, preds)
    assert stats.rows_key_range_filtered > 0 and stats.rows_stats_filtered > 0


def test_float_nan_pages_are_not_pruned(tmp_path: Path) -> None:
    v = np.linspace(0, 1, 20_000)
    v[100] = np.nan
    table = pa.table({"f": pa.array(v)})
    write_segments(tmp_path, "f", table, 0, 0)
    reader = SegmentReader(tmp_path / "f_0.dat")
    for pred in [P("f", Op.NE, (0.5,)), P("f", Op.GT, (0.9,)), P("f", Op.EQ, (0.0,))]:
        check_superset(reader, table, [pred])


def test_second_key_column_narrows(tmp_path: Path) -> None:
    n = 100_000
    k1 = np.repeat(np.arange(4, dtype=np.int64), n // 4)  # few values: k1 alone keeps a quarter
    k2 = np.tile(np.arange(n // 4, dtype=np.int32), 4)
    table = pa.table({"k1": k1, "k2": k2, "v": np.arange(n)})
    write_segments(tmp_path, "t", table, 2, 2)
    reader = SegmentReader(tmp_path / "t_0.dat")
    only_k1, _ = check_superset(reader, table, [P("k1", Op.EQ, (2,))])
    both, _ = check_superset(reader, table, [P("k1", Op.EQ, (2,)), P("k2", Op.GE, (100,)), P("k2", Op.LE, (200,))])
    assert only_k1.count() <= n // 4 + 2048
    assert both.count() <= 2 * 1024 < only_k1.count()
    in_list, _ = check_superset(reader, table, [P("k1", Op.IN, (0, 3)), P("k2", Op.EQ, (7,))])
    assert in_list.count() <= 4 * 1024 and len(in_list) == 2


def test_open_segment_shares_a_reader_until_forgotten(tmp_path: Path) -> None:
    """Scans share one reader per segment file (its footer and loaded indexes) without a stat per query:
    segment names are never reused, so a path only gets a fresh reader after forget_segments (what a writer
    replacing a file at the same name would have to call)."""
    from storage.segment.reader import forget_segments, open_segment

    def write(prefix: str, values: list[int]) -> Path:
        write_segments(tmp_path, prefix, pa.table({"k": pa.array(values, pa.int32())}),
                       num_key_columns=1, num_short_key_columns=1)
        return tmp_path / f"{prefix}_0.dat"

    path = write("s", [1, 2, 3])
    first = open_segment(path)
    assert first.num_rows == 3
    assert first.row_ranges([P("k", Op.EQ, (2,))]).count() <= 3  # loads indexes into the shared reader
    assert open_segment(path) is first
    assert open_segment(str(path)) is first  # str and Path name the same entry
    write("t", [5, 6, 7, 8]).replace(path)
    forget_segments([path])
    again = open_segment(path)
    assert again is not first
    assert again.read(["k"]).column("k").to_pylist() == [5, 6, 7, 8]


@pytest.mark.parametrize(("arrow_type", "values", "probes"), [
    (pa.int32(), [[1, 5], [None, None], [-3, 0], [7, 7], [2, None]], [-4, -3, 0, 1, 3, 5, 7, 8]),
    # the type's edges and values past them (a point query's key is compared as the Python int it is)
    (pa.int8(), [[-128, 5], [None, None], [0, 127], [3, 3]], [-129, -128, 0, 3, 127, 128, 2**70]),
    (pa.date32(), [[dt.date(2024, 1, 1), dt.date(2024, 2, 1)], [None, None], [dt.date(2023, 5, 5)] * 2],
     [dt.date(2023, 5, 5), dt.date(2024, 1, 15), dt.date(2025, 1, 1)]),
    (pa.timestamp("us"), [[dt.datetime(2024, 1, 1), dt.datetime(2024, 1, 1, 0, 0, 1)], [None, None]],
     [dt.datetime(2024, 1, 1), dt.datetime(2024, 1, 1, 0, 0, 0, 500), dt.datetime(2023, 1, 1)]),
    (pa.float64(), [[1.5, 2.5], [None, None], [float("nan"), 1.0], [-0.5, 0.0]], [-1.0, 0.0, 1.0, 2.0, 3.0]),
    (pa.string(), [["ASIA", "EUROPE"], [None, None], ["é", "ü"], ["AFRICA", "AFRICA"], ["", "a"]],
     ["", "AFRICA", "ASIA", "B", "EUROPE", "Z", "a", "é", "ü", "zz"]),
])
def test_zone_map_numpy_path_equals_pyarrow(tmp_path: Path, arrow_type: pa.DataType, values: list,
                                            probes: list) -> None:
    """Zone-map pruning on numpy bounds (integers, floats, strings) answers exactly as the pyarrow kernels."""
    from storage.segment.page import read_page
    from storage.segment.zone_map import ZoneMapIndex, build_zone_maps, encode_zone_map_page

    flat = [v for page in values for v in page]
    batch = build_zone_maps(pa.array(flat, arrow_type), np.arange(0, len(flat) + 1, 2))
    _, body = read_page(memoryview(encode_zone_map_page(batch)), "zm")
    fast = ZoneMapIndex(body, arrow_type, len(values))
    slow = ZoneMapIndex(body, arrow_type, len(values))
    slow._np_mins = slow._np_maxs = None
    assert fast._np_mins is not None
    preds = [P("c", op, (v,)) for v in probes for op in (Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE)]
    preds += [P("c", Op.IN, tuple(probes[:3])), P("c", Op.NOT_IN, tuple(probes[-2:]))]
    for p in preds:
        assert fast.may_match(p).tolist() == slow.may_match(p).tolist(), p
        if fast.pages_all_match(p):  # the shortcut never claims more than the page arrays say
            assert fast.may_match(p)[1:].all(), p
        for page in range(len(values)):  # one page in plain Python (a key range's) answers as the arrays
            verdict = fast.page_may_match(p, page)
            assert verdict is None or verdict == bool(fast.may_match(p)[page + 1]), (p, page)
            assert slow.page_may_match(p, page) is None
    # the per-segment check on Python bounds answers as the arrays' segment row, also for segments of one
    # page (all NULL, a single value: NE can drop it, NaN bounds)
    preds += [P("c", Op.IS_NULL), P("c", Op.IS_NOT_NULL), P("c", Op.IN, ()), P("c", Op.NOT_IN, ()),
              P("c", Op.IN, tuple(probes) * 40)]  # past MAX_IN_VALUES: pruned by the list's min and max
    for page in [flat] + values:
        one = build_zone_maps(pa.array(page, arrow_type), np.array([0, len(page)]))
        _, body = read_page(memoryview(encode_zone_map_page(one)), "zm")
        zm = ZoneMapIndex(body, arrow_type, 1)
        for p in preds:
            assert zm.segment_may_match(p) == bool(zm.may_match(p)[0]), (page, p)
            if zm.pages_all_match(p):
                assert zm.may_match(p)[1:].all(), (page, p)


@pytest.mark.parametrize("arrow_type", [pa.int64(), pa.float64(), pa.string()])
def test_pages_all_match_equals_the_page_arrays(arrow_type: pa.DataType) -> None:
    """Without NULL pages, the plain-Python shortcut of narrowing says 'every page passes' exactly when the
    per-page arrays do, for every one-value comparison."""
    from storage.segment.page import read_page
    from storage.segment.zone_map import ZoneMapIndex, build_zone_maps, encode_zone_map_page

    rng = np.random.default_rng(5)
    for spread in (5, 50, 1000):
        raw = rng.integers(0, spread, 400)
        values = [f"v{x:04d}" for x in raw] if pa.types.is_string(arrow_type) else raw.tolist()
        arr = pa.array(values, arrow_type)
        batch = build_zone_maps(arr, np.arange(0, 401, 40))
        _, body = read_page(memoryview(encode_zone_map_page(batch)), "zm")
        zm = ZoneMapIndex(body, arrow_type, 10)
        assert zm._page_bounds is not None
        for v in sorted(set(values))[::7] + values[:3]:
            for op in (Op.EQ, Op.LT, Op.LE, Op.GT, Op.GE):
                p = P("c", op, (v,))
                assert zm.pages_all_match(p) == bool(zm.may_match(p)[1:].all()), p


@pytest.mark.parametrize("pages", [1, 3])
def test_ordinal_index_checks_its_pages_against_the_column(pages: int) -> None:
    """One page (checked in plain Python) and several (numpy) refuse the same inconsistencies."""
    first_rows = [0, 4, 9][:pages]
    sizes = [10, 20, 30][:pages]
    offsets = list(np.cumsum([100] + sizes[:-1]))
    body = np.array([first_rows, offsets, sizes], dtype=np.int64).tobytes()
    end = 100 + sum(sizes)
    got = OrdinalIndex.decode(body, pages, 12, 100, end)
    assert got.first_rows.tolist() == first_rows and got.num_pages == pages
    for num_rows, start, stop in ((first_rows[-1], 100, end), (12, 101, end), (12, 100, end + 1)):
        with pytest.raises(CorruptDataError):
            OrdinalIndex.decode(body, pages, num_rows, start, stop)
