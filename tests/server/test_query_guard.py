"""A query never takes the server down: exec_mem_limit bounds what a query materializes, query_timeout and
KILL QUERY interrupt it, and the connection and the server carry on.

The runaway queries are cross joins of a 10,000-row table (10^8 rows; with a third table 10^10), which
DuckDB, where joins run, would otherwise happily compute.
"""

from __future__ import annotations

import threading
import time

import pymysql
import pytest

from tests.conftest import ServerProcess

DDL = "DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ('replication_num' = '1')"
N = 10_000
SLOW = "SELECT count(*) FROM big a, big b, small c WHERE a.k + b.k + c.k = -1"


@pytest.fixture
def big(cur) -> None:
    cur.execute(f"CREATE TABLE big (k INT, v VARCHAR(20)) {DDL}")
    cur.execute("INSERT INTO big VALUES " + ", ".join(f"({i}, 'value-{i}')" for i in range(N)))
    cur.execute(f"CREATE TABLE small (k INT) {DDL}")
    cur.execute("INSERT INTO small VALUES " + ", ".join(f"({i})" for i in range(100)))


def test_a_huge_result_is_an_error_not_a_dead_server(server: ServerProcess, cur, big) -> None:
    cur.execute("SET exec_mem_limit = 67108864")  # 64 MB
    started = time.monotonic()
    with pytest.raises(pymysql.err.OperationalError) as e:
        cur.execute("SELECT a.k, a.v, b.k, b.v FROM big a, big b")
    assert e.value.args[0] == 1105
    assert "[MEM_LIMIT_EXCEEDED]" in e.value.args[1] and "exec_mem_limit (64.00 MB)" in e.value.args[1]
    assert time.monotonic() - started < 60
    cur.execute("SELECT count(*) FROM big a JOIN big b ON a.k = b.k")  # the same connection goes on
    assert cur.fetchone() == (N,)
    cur.execute("SET exec_mem_limit = 2147483648")
    assert server.proc.poll() is None


def test_working_memory_beyond_exec_mem_limit_ends_the_query(server: ServerProcess, cur, big) -> None:
    """A small result whose hash table grows without bound (10^8 groups): DuckDB's working memory is watched
    while it runs, not only what the result holds."""
    cur.execute("SET exec_mem_limit = 67108864")  # 64 MB
    started = time.monotonic()
    with pytest.raises(pymysql.err.OperationalError) as e:
        cur.execute("SELECT a.v, b.v, count(*) FROM big a, big b GROUP BY a.v, b.v ORDER BY 3 DESC LIMIT 1")
    assert e.value.args[0] == 1105 and "[MEM_LIMIT_EXCEEDED]" in e.value.args[1], e.value.args
    assert time.monotonic() - started < 60
    cur.execute("SET exec_mem_limit = 2147483648")
    cur.execute("SELECT count(*) FROM big a JOIN small c ON a.k = c.k")
    assert cur.fetchone() == (100,) and server.proc.poll() is None


def test_query_timeout_interrupts_a_running_query(cur, big) -> None:
    cur.execute("SET query_timeout = 1")
    started = time.monotonic()
    with pytest.raises(pymysql.err.OperationalError) as e:
        cur.execute(SLOW)
    took = time.monotonic() - started
    assert e.value.args[0] == 3024 and "query_timeout (1 s)" in e.value.args[1]
    assert took < 15, took
    cur.execute("SET query_timeout = 900")
    cur.execute("SELECT count(*) FROM big a JOIN small c ON a.k = c.k")
    assert cur.fetchone() == (100,)


def test_kill_query_interrupts_a_running_query(server: ServerProcess, db: str, cur, big) -> None:
    outcome: list = []
    conn = server.connect(db)
    conn_id = conn.thread_id()

    def run() -> None:
        try:
            with conn.cursor() as c:
                c.execute(SLOW)
                outcome.append(c.fetchall())
        except Exception as err:  # noqa: BLE001 - the test inspects it
            outcome.append(err)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    time.sleep(1.5)
    cur.execute(f"KILL QUERY {conn_id}")
    thread.join(30)
    assert not thread.is_alive()
    assert isinstance(outcome[0], pymysql.err.OperationalError), outcome
    assert outcome[0].args == (1317, "Query execution was interrupted")
    with conn.cursor() as c:  # KILL QUERY keeps the connection
        c.execute("SELECT count(*) FROM small")
        assert c.fetchone() == (100,)
    conn.close()
