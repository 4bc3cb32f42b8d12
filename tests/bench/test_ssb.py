"""SSB benchmark kit at a tiny scale factor: deterministic generator, spec cardinalities and domains,
flat = star join, every query non-empty in DuckDB, result comparison, and the full runner path."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

duckdb = pytest.importorskip("duckdb")

from bench.ssb.compare import diff  # noqa: E402
from bench.ssb.generate import FLAT_COLUMNS, cardinalities, flat_glob, flat_schema, generate  # noqa: E402
from bench.ssb.queries import QUERIES, duckdb_sql  # noqa: E402

SF = 0.01


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ssb") / "sf0.01"
    generate(SF, out, rows_per_file=25_000)  # several files, as at larger SFs
    return out


@pytest.fixture(scope="module")
def con(data: Path):
    c = duckdb.connect()
    c.execute(f"CREATE VIEW lineorder_flat AS SELECT * FROM read_parquet('{flat_glob(data)}')")
    for name in ("customer", "supplier", "part", "dates"):
        c.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet('{data / (name + '.parquet')}')")
    c.execute(f"CREATE VIEW lineorder AS SELECT * FROM read_parquet('{data / 'lineorder' / '*.parquet'}')")
    yield c
    c.close()


def _digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*.parquet"))}


def test_same_seed_same_files(data: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    generate(SF, again, rows_per_file=25_000)
    assert _digests(again) == _digests(data)
    other = tmp_path / "other"
    generate(SF, other, seed=7, rows_per_file=25_000)
    assert _digests(other) != _digests(data)


def test_cardinalities(con) -> None:
    card = cardinalities(SF)
    count = lambda t: con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]  # noqa: E731
    assert count("customer") == card.customers == 300
    assert count("supplier") == card.suppliers == 20
    assert count("part") == card.parts == 2_000
    assert count("dates") == 2556
    lo = count("lineorder")
    assert count("lineorder_flat") == lo
    assert 0.9 * 6_000_000 * SF < lo < 1.1 * 6_000_000 * SF
    assert con.execute("SELECT COUNT(DISTINCT lo_orderkey) FROM lineorder").fetchone()[0] == card.orders
    # Spec sizes above SF 1: part grows with log2(SF).
    assert cardinalities(1).parts == 200_000 and cardinalities(4).parts == 600_000
    assert cardinalities(1).customers == 30_000 and cardinalities(1).suppliers == 2_000


def test_domains(con) -> None:
    one = lambda sql: con.execute(sql).fetchone()  # noqa: E731
    assert one("SELECT MIN(d_datekey), MAX(d_datekey) FROM dates") == (19920101, 19981230)
    assert one("SELECT MIN(lo_quantity), MAX(lo_quantity), MIN(lo_discount), MAX(lo_discount), "
               "MIN(lo_tax), MAX(lo_tax), MIN(lo_linenumber), MAX(lo_linenumber) FROM lineorder") == \
        (1, 50, 0, 10, 0, 8, 1, 7)
    assert one("SELECT MIN(lo_orderdate) >= 19920101, MAX(lo_orderdate) <= 19980802, "
               "COUNT(*) FILTER (WHERE lo_orderdate NOT IN (SELECT d_datekey FROM dates)) FROM lineorder") == \
        (True, True, 0)
    assert one("SELECT COUNT(*) FROM lineorder WHERE lo_revenue != lo_extendedprice * (100 - lo_discount) // 100")[0] == 0
    assert one("SELECT COUNT(DISTINCT c_region), COUNT(DISTINCT c_nation) FROM customer") == (5, 25)
    # Cities: the nation's first 9 characters, blank padded, and one digit.
    assert one("SELECT COUNT(*) FROM customer WHERE c_city != rpad(left(c_nation, 9), 9, ' ') || "
               "right(c_city, 1) OR NOT regexp_matches(right(c_city, 1), '[0-9]')")[0] == 0
    assert one("SELECT COUNT(*) FROM supplier WHERE s_city != rpad(left(s_nation, 9), 9, ' ') || right(s_city, 1)")[0] == 0
    assert set(con.execute("SELECT DISTINCT c_region FROM customer").fetchall()) == \
        {("AFRICA",), ("AMERICA",), ("ASIA",), ("EUROPE",), ("MIDDLE EAST",)}
    # Part hierarchy: MFGR#m > MFGR#mc > MFGR#mcBB (40 brands per category).
    assert one("SELECT COUNT(*) FROM part WHERE NOT regexp_matches(p_brand, '^MFGR#[1-5][1-5](0[1-9]|[1-3][0-9]|40)$') "
               "OR NOT starts_with(p_brand, p_category) OR NOT starts_with(p_category, p_mfgr) "
               "OR length(p_category) != 7")[0] == 0
    assert one("SELECT MIN(p_size), MAX(p_size) FROM part") == (1, 50)


def test_flat_is_the_star_join(con) -> None:
    cols = ", ".join(c.lower() if c != "LO_COMMITDATE" else "CAST(strptime(CAST(lo_commitdate AS VARCHAR), "
                     "'%Y%m%d') AS DATE)" for c in FLAT_COLUMNS)
    joined = (f"SELECT {cols} FROM lineorder JOIN customer ON lo_custkey = c_custkey "
              "JOIN supplier ON lo_suppkey = s_suppkey JOIN part ON lo_partkey = p_partkey")
    assert con.execute(f"SELECT COUNT(*) FROM (({joined}) EXCEPT ALL (SELECT * FROM lineorder_flat))").fetchone()[0] == 0
    assert con.execute(f"SELECT COUNT(*) FROM ((SELECT * FROM lineorder_flat) EXCEPT ALL ({joined}))").fetchone()[0] == 0


def test_flat_schema_matches_files(data: Path) -> None:
    import pyarrow.parquet as pq

    for p in (data / "lineorder_flat").glob("*.parquet"):
        assert pq.read_schema(p).remove_metadata() == flat_schema()
    assert len(list((data / "lineorder_flat").glob("*.parquet"))) == 3


@pytest.mark.parametrize("name", list(QUERIES))
def test_query_non_empty_in_duckdb(con, name: str) -> None:
    rows = con.execute(duckdb_sql(QUERIES[name])).fetchall()
    assert rows and all(v is not None for r in rows for v in r)


def test_duckdb_spelling() -> None:
    assert "//" in duckdb_sql(QUERIES["Q2.1"]) and "DIV" not in duckdb_sql(QUERIES["Q2.1"])
    assert "strptime(CAST(LO_ORDERDATE AS VARCHAR), '%Y%m%d')" in duckdb_sql(QUERIES["Q1.3"])
    assert len(QUERIES) == 13


def test_compare() -> None:
    from decimal import Decimal

    assert diff([(2, "b"), (1, "a")], [(1, "a"), (2, "b")]) is None
    assert diff([(Decimal("10"),)], [(10,)]) is None
    assert diff([(1.0000000001,)], [(1.0,)]) is None
    assert diff([(11,)], [(10,)]) is not None
    assert diff([(1,)], []) is not None
    assert diff([("x", None)], [("x", None)]) is None


def test_runner_end_to_end(data: Path) -> None:
    """Load through INSERT ... SELECT * FROM local(...) on the server's Spark, run all 13 queries over
    MySQL and check each against DuckDB (the Spark baseline is skipped: a second JVM costs ~10 s)."""
    from bench.ssb.run import run

    report = run(SF, data=data, repeat=1, buckets=4, spark=False, warmup=False)
    assert report.correct, report.markdown()
    assert report.load_s and len(report.queries) == 13
