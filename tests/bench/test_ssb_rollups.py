"""`python -m bench.ssb.run --rollups` at SF 0.01: the rollups build, every query reads the rollup meant for
it (EXPLAIN), and every answer with rollups and without equals DuckDB's."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("duckdb")

from bench.ssb.generate import generate  # noqa: E402
from bench.ssb.queries import QUERIES  # noqa: E402
from bench.ssb.schema import ROLLUPS, add_rollups_sql, flat_ddl  # noqa: E402

SF = 0.01
EXPECTED = {"Q1.1": "r_q1", "Q1.2": "r_q1", "Q1.3": "r_q1", "Q2.1": "r_q2", "Q2.2": "r_q2", "Q2.3": "r_q2",
            "Q3.1": "r_q31", "Q3.2": "r_q32", "Q3.3": "r_q33", "Q3.4": "r_q33", "Q4.1": "r_q41",
            "Q4.2": "r_q41", "Q4.3": "r_q43"}


def test_rollup_ddl() -> None:
    assert {name for name, _, _ in ROLLUPS} == set(EXPECTED.values())
    assert "ROLLUP (r_q1 (`LO_DISCOUNT`" in flat_ddl(rollups=True)
    assert "ROLLUP" not in flat_ddl()
    assert add_rollups_sql().startswith("ALTER TABLE `lineorder_flat` ADD ROLLUP r_q1 (")


def test_rollups_mode_end_to_end(tmp_path: Path) -> None:
    """The ALTER path (load, ADD ROLLUP job, wait for FINISHED); the CREATE path differs only in the DDL
    above (one server run costs ~20 s, so only one is run here)."""
    from bench.ssb.rollups import run

    data = tmp_path / "sf0.01"
    generate(SF, data)
    report = run(SF, data=data, repeat=1, buckets=2, build="alter")
    assert report.correct, report.markdown()
    assert report.build_s is not None and len(report.queries) == len(QUERIES)
    assert {q.name: q.index for q in report.queries} == EXPECTED
    assert {q.base_index for q in report.queries} == {"lineorder_flat"}
    assert {q.preaggregation for q in report.queries} == {"ON"}
    text = report.markdown()
    assert "| Q3.2 |" in text and "r_q32" in text and "**geomean**" in text
