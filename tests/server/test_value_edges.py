"""Values Doris stores and compares that the server got wrong: NaN and infinities into DOUBLE, DATETIME(p)
against text with more fractional digits, fractions before 1970, DELETE conditions with constant expressions."""

from __future__ import annotations

import pytest

PROPS = "DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ('replication_num' = '1')"


@pytest.fixture
def f(cur) -> None:
    cur.execute(f"CREATE TABLE f (k INT, d DOUBLE, t DATETIME(0), t3 DATETIME(3)) DUPLICATE KEY(k) {PROPS}")
    cur.execute("INSERT INTO f VALUES (1, 1.5, '2024-01-01 00:00:00', '2024-01-01 00:00:00.123'), "
                "(2, 2.5, '2024-01-01 00:00:01', '2024-01-01 00:00:00.124')")


def keys(cur, sql: str) -> list[int]:
    cur.execute(sql)
    return [r[0] for r in cur.fetchall()]


def test_nan_and_infinities_load_into_double(cur, f) -> None:
    cur.execute("INSERT INTO f (k, d) VALUES (3, 'nan'), (4, '-Infinity'), (5, 'inf')")
    assert keys(cur, "SELECT k FROM f WHERE d > 1000 ORDER BY k") == [5]
    assert keys(cur, "SELECT k FROM f WHERE d < -1000 ORDER BY k") == [4]
    cur.execute("SELECT d FROM f WHERE k = 3")
    assert cur.fetchall() == ((None,),)  # NaN goes over the wire as NULL, as Doris sends it
    cur.execute("SELECT count(*) FROM f WHERE d IS NULL")
    assert cur.fetchall()[0][0] == 0  # stored as NaN, not NULL


def test_datetime_compared_with_more_fractional_digits(cur, f) -> None:
    assert keys(cur, "SELECT k FROM f WHERE t = '2024-01-01 00:00:00.5'") == []
    assert keys(cur, "SELECT k FROM f WHERE t > '2024-01-01 00:00:00.5'") == [2]
    assert keys(cur, "SELECT k FROM f WHERE t3 = '2024-01-01 00:00:00.1234'") == []
    assert keys(cur, "SELECT k FROM f WHERE t3 < '2024-01-01 00:00:00.1235' ORDER BY k") == [1]
    assert keys(cur, "SELECT k FROM f WHERE t3 = '2024-01-01 00:00:00.123000'") == [1]
    # the same under a join (DuckDB evaluates it)
    assert keys(cur, "SELECT a.k FROM f a JOIN f b ON a.k = b.k WHERE a.t3 = '2024-01-01 00:00:00.1234'") == []


def test_fractions_before_1970(cur, f) -> None:
    cur.execute("INSERT INTO f (k, t, t3) VALUES (6, '1900-01-01 00:00:00.111111', '1900-01-01 00:00:00.111111'), "
                "(7, '1969-12-31 23:59:59.999', '1969-12-31 23:59:59.9999')")
    cur.execute("SELECT t, t3, CAST(t3 AS CHAR) FROM f WHERE k >= 6 ORDER BY k")
    assert [tuple(str(v) for v in r) for r in cur.fetchall()] == [
        ("1900-01-01 00:00:00", "1900-01-01 00:00:00.111000", "1900-01-01 00:00:00.111000"),
        ("1969-12-31 23:59:59", "1969-12-31 23:59:59.999000", "1969-12-31 23:59:59.999000")]


def test_delete_conditions_take_constant_expressions(cur, f) -> None:
    cur.execute("DELETE FROM f WHERE k = 3 - 1")
    assert keys(cur, "SELECT k FROM f") == [1]
    cur.execute("INSERT INTO f (k, t) VALUES (8, now()), (9, '2000-01-01 00:00:00')")
    cur.execute("DELETE FROM f WHERE t < date_sub(curdate(), INTERVAL 1 DAY)")
    assert keys(cur, "SELECT k FROM f") == [8]
    cur.execute("SET @gone = 8")
    cur.execute("DELETE FROM f WHERE k = @gone")
    assert keys(cur, "SELECT k FROM f") == []
