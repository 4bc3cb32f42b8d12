"""Randomized: hundreds of seeded queries over an AGGREGATE and a DUPLICATE table with several rollups
(and several loads, so rowsets hold unmerged duplicates). Every answer with rollup selection and
PREAGGREGATION must equal the base index read with merge-on-read forced; some must hit rollups."""

from __future__ import annotations

import random
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pytest
from rollup_harness import Harness

AGG_DDL = """CREATE TABLE ra (k1 INT NOT NULL, k2 INT NOT NULL, k3 VARCHAR(8) NOT NULL, k4 DATE NOT NULL,
    s1 BIGINT SUM NOT NULL, s2 BIGINT SUM NOT NULL, s3 BIGINT SUM NULL, mx INT MAX NULL, mn INT MIN NULL,
    rp INT REPLACE NULL)
AGGREGATE KEY(k1, k2, k3, k4) DISTRIBUTED BY HASH(k1) BUCKETS 3"""
AGG_ROLLUPS = [("ra_k1", ["k1", "s1", "s2", "s3", "mx", "mn"]),
               ("ra_k2k3", ["k2", "k3", "s1", "s2", "mx"]),
               ("ra_k3k1", ["k3", "k1", "s1", "mn", "s3"]),
               ("ra_all", ["k2", "k1", "k3", "k4", "s1", "s2", "s3", "mx", "mn", "rp"])]
DUP_DDL = """CREATE TABLE rd (k1 INT, k2 INT, k3 VARCHAR(8), k4 DATE, s1 BIGINT, s2 BIGINT, s3 BIGINT)
DUPLICATE KEY(k1, k2, k3) DISTRIBUTED BY HASH(k2) BUCKETS 2"""
DUP_ROLLUPS = [("rd_k2", ["k2", "s1", "s2"]), ("rd_k3", ["k3", "k1", "s3"]),
               ("rd_k4", ["k4", "k2", "k1", "s1", "s2", "s3"])]
KEYS = ["k1", "k2", "k3", "k4"]
VALUES = {"ra": ["s1", "s2", "s3", "mx", "mn", "rp"], "rd": ["s1", "s2", "s3"]}
AGGS = {"s1": "sum", "s2": "sum", "s3": "sum", "mx": "max", "mn": "min", "rp": "max"}
N_QUERIES = 300


def _batch(rng: np.random.Generator, n: int, nulls: bool) -> dict[str, pa.Array]:
    def maybe_null(a: np.ndarray) -> pa.Array:
        return pa.array(a, mask=rng.random(n) < 0.1) if nulls else pa.array(a)

    return {
        "k1": pa.array(rng.integers(0, 6, n).astype(np.int32)),
        "k2": pa.array(rng.integers(0, 4, n).astype(np.int32)),
        "k3": pa.array([f"c{x}" for x in rng.integers(0, 3, n)]),
        "k4": pa.array(np.datetime64("2024-01-01") + rng.integers(0, 5, n).astype("timedelta64[D]")),
        "s1": pa.array(rng.integers(-50, 100, n)), "s2": pa.array(rng.integers(0, 20, n)),
        "s3": maybe_null(rng.integers(0, 9, n)),
    }


@pytest.fixture(scope="module")
def h(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Harness]:
    h = Harness(tmp_path_factory.mktemp("rollup_random"))
    h.create(AGG_DDL, AGG_ROLLUPS)
    h.create(DUP_DDL, DUP_ROLLUPS)
    rng = np.random.default_rng(20240501)
    for _ in range(4):  # four loads: keys repeat across rowsets, so skipping the merge is visible
        n = 150
        cols = _batch(rng, n, nulls=True)
        for name in ("mx", "mn", "rp"):
            cols[name] = pa.array(rng.integers(-30, 30, n).astype(np.int32), mask=rng.random(n) < 0.1)
        h.load("ra", pa.table(cols))
        h.load("rd", pa.table(_batch(rng, n, nulls=True)))
    yield h
    h.close()


def _predicate(r: random.Random, table: str) -> str:
    col = r.choice(KEYS + (VALUES[table][:2] if r.random() < 0.2 else []))
    if col == "k3":
        return r.choice([f"k3 = 'c{r.randrange(3)}'", f"k3 IN ('c0', 'c{r.randrange(3)}')", "k3 > 'c0'"])
    if col == "k4":
        return r.choice([f"k4 >= '2024-01-0{r.randrange(1, 6)}'", f"k4 = '2024-01-0{r.randrange(1, 6)}'"])
    op = r.choice(["=", "<", ">=", "IN", "BETWEEN"])
    if op == "IN":
        return f"{col} IN ({r.randrange(6)}, {r.randrange(6)})"
    if op == "BETWEEN":
        return f"{col} BETWEEN {r.randrange(3)} AND {r.randrange(2, 6)}"
    return f"{col} {op} {r.randrange(6)}"


def _query(r: random.Random) -> str:
    table = r.choice(["ra", "rd"])
    values = VALUES[table]
    group = r.sample(KEYS, r.randrange(0, 3))
    calls: list[str] = []
    for _ in range(r.randrange(1, 4)):
        kind = r.random()
        v = r.choice(values)
        if kind < 0.45:
            calls.append(f"{AGGS[v] if table == 'ra' else r.choice(['sum', 'min', 'max'])}({v})")
        elif kind < 0.55:
            calls.append(f"{r.choice(['min', 'max'])}({r.choice(KEYS)})")
        elif kind < 0.62:
            calls.append(f"count(DISTINCT {r.choice(KEYS)})")
        elif kind < 0.70:
            calls.append("count(*)")
        elif kind < 0.78:
            calls.append("sum(s1 - s2)" if r.random() < 0.5 else f"sum(s{r.randrange(1, 4)} * k{r.randrange(1, 3)})")
        elif kind < 0.85:
            calls.append("sum(s1 - s3)")  # s3 is nullable: never a rewrite
        else:
            calls.append(f"{r.choice(['sum', 'min', 'max', 'count'])}({v})")  # maybe a mismatch
    if r.random() < 0.15:  # no aggregation at all
        cols = r.sample(KEYS + values, r.randrange(1, 4))
        select, group_by = ", ".join(cols), ""
    else:
        select = ", ".join(group + calls)
        group_by = f" GROUP BY {', '.join(group)}" if group else ""
    where = ""
    if r.random() < 0.6:
        where = " WHERE " + " AND ".join(_predicate(r, table) for _ in range(r.randrange(1, 3)))
    return f"SELECT {select} FROM {table}{where}{group_by}"


def _rows(t: pa.Table) -> list[tuple]:
    return sorted((tuple(r.values()) for r in t.to_pylist()), key=repr)


def test_random_queries_agree_with_the_merged_base_index(h: Harness) -> None:
    r = random.Random(4242)
    rollup_hits = preagg_on = 0
    failures = []
    for _ in range(N_QUERIES):
        q = _query(r)
        text = "\n".join(h.explain(q))
        got = _rows(h.query(q))
        base_preagg = _rows(h.query(q, enable_rollup_selection="false"))
        truth = _rows(h.query(q, enable_rollup_selection="false", disable_nereids_rules="preaggregation"))
        if not (got == base_preagg == truth):
            failures.append(f"{q}\n{text}\n  rollups: {got[:5]}\n  base: {base_preagg[:5]}\n  merged: {truth[:5]}")
        rollup_hits += any(f"({name})," in text for name, _ in AGG_ROLLUPS + DUP_ROLLUPS)
        preagg_on += "TABLE: db.ra(" in text and "PREAGGREGATION: ON" in text
    assert not failures, f"{len(failures)} mismatches:\n\n" + "\n\n".join(failures[:5])
    # the generator must exercise what it tests
    assert rollup_hits > N_QUERIES // 5, rollup_hits
    assert preagg_on > N_QUERIES // 10, preagg_on
