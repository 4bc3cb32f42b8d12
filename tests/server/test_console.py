"""The web console (issue 16) in a real headless browser (Debian's chromium over the DevTools protocol): log in as
a MySQL user, open every page, read what it shows, and find no console error or failed request; charts are SVG
drawn on the server. A server holding a table loaded in ten increments with compaction running, a
dynamic-partition table and a BUCKETS AUTO table."""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from pathlib import Path

import pymysql
import pytest

from tests.browser import CHROMIUM, Browser
from tests.conftest import ServerProcess, free_port

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("console")
    srv = ServerProcess(free_port(), tmp / "data", fe_overrides={
        "spark_prestart": "false", "console_sample_interval_seconds": "1"}).start()
    with srv.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE DATABASE shop")
        cur.execute("USE shop")
        cur.execute("CREATE TABLE orders (k INT, city VARCHAR(20), amount INT) DUPLICATE KEY(k) "
                    "DISTRIBUTED BY HASH(k) BUCKETS 4 PROPERTIES ('replication_num' = '1')")
        cur.execute("ALTER TABLE orders ADD ROLLUP by_city (city, amount)")
        for i in range(10):  # ten increments: ten versions per tablet for compaction to merge
            cur.execute("INSERT INTO orders VALUES " + ", ".join(
                f"({i * 50 + j}, 'city{j % 5}', {j})" for j in range(50)))
            time.sleep(0.3)
        cur.execute("CREATE TABLE daily (d DATE, k INT, v INT SUM) AGGREGATE KEY(d, k) PARTITION BY RANGE(d) () "
                    "DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ('replication_num' = '1', "
                    "'dynamic_partition.enable' = 'true', 'dynamic_partition.time_unit' = 'DAY', "
                    "'dynamic_partition.start' = '-2', 'dynamic_partition.end' = '2', "
                    "'dynamic_partition.prefix' = 'p', 'dynamic_partition.create_history_partition' = 'true')")
        cur.execute("CREATE TABLE auto_b (d DATE, k INT) DUPLICATE KEY(d) PARTITION BY RANGE(d) "
                    "(PARTITION p1 VALUES LESS THAN ('2024-01-02'), PARTITION p2 VALUES LESS THAN ('2024-01-03')) "
                    "DISTRIBUTED BY HASH(k) BUCKETS AUTO PROPERTIES ('replication_num' = '1')")
        cur.execute("INSERT INTO auto_b VALUES ('2024-01-01', 1), ('2024-01-02', 2)")
        cur.execute("CREATE USER 'ann'@'%' IDENTIFIED BY 'pw'")
        cur.execute("CREATE DATABASE other")
        cur.execute("GRANT SELECT_PRIV ON other.* TO 'ann'@'%'")
        cur.execute("SET enable_profile = true")
        cur.execute("SELECT city, sum(amount) FROM orders GROUP BY city")
    time.sleep(2.5)  # a few history samples
    browser = Browser(free_port())
    yield srv, browser
    browser.close()
    srv.stop()


def _login(browser: Browser, srv: ServerProcess, user: str, password: str) -> str:
    browser.open(f"http://127.0.0.1:{srv.fe_http_port}/logout")
    text = browser.open(f"http://127.0.0.1:{srv.fe_http_port}/console")
    assert "Log in" in text  # not logged in: the login page
    return browser.submit(f"document.getElementById('user').value = {user!r}; "
                          f"document.getElementById('password').value = {password!r}; document.forms[0].submit()")


def test_every_page_renders_in_a_browser(console, tmp_path: Path) -> None:
    srv, browser = console
    base = f"http://127.0.0.1:{srv.fe_http_port}"
    text = _login(browser, srv, "root", "")
    assert "Overview" in text and "shop" in text and "root" in text
    text = browser.open(f"{base}/console/db/shop")
    assert all(name in text for name in ("orders", "daily", "auto_b", "AUTO"))
    text = browser.open(f"{base}/console/table/shop/orders")
    for expected in ("Rowsets per tablet", "Data size per tablet", "Compactions", "Tablets", "by_city",
                     "CREATE TABLE", "Cumulative point"):
        assert expected in text, expected
    assert browser.evaluate("document.querySelectorAll('.chart svg').length") >= 3
    assert browser.evaluate("document.querySelectorAll('script').length") == 0  # static pictures, no JavaScript
    browser.screenshot(tmp_path / "table.png")
    assert (tmp_path / "table.png").stat().st_size > 10_000
    tablet = browser.evaluate("document.querySelector('a[href^=\"/console/tablet/\"]').getAttribute('href')")
    text = browser.open(base + tablet)
    assert "Rowsets" in text and "Versions" in text and "visible" in text
    text = browser.open(f"{base}/console/table/shop/daily")
    assert "Dynamic partitions" in text and "dynamic_partition.start" in text and "-2" in text
    text = browser.open(f"{base}/console/table/shop/auto_b")
    assert "Buckets (AUTO)" in text and "estimate of the next partition" in text and "EMA" in text
    text = browser.open(f"{base}/console/loads")
    assert "Rows loaded" in text and "FINISHED" in text
    text = browser.open(f"{base}/console/queries")
    assert "SELECT city, sum(amount) FROM orders GROUP BY city" in text
    profile = browser.evaluate("document.querySelector('a[href^=\"/console/query/\"]').getAttribute('href')")
    text = browser.open(base + profile)
    assert "OlapScanNode" in text and "PREAGGREGATION" in text and "by_city" in text
    text = browser.open(f"{base}/console/sql")
    text = browser.submit("document.querySelector('select[name=db]').value = 'shop'; "
                          "document.querySelector('textarea').value = 'SELECT city, sum(amount) AS s FROM orders "
                          "GROUP BY city ORDER BY city'; document.forms[0].submit()")
    assert "city0" in text and "EXPLAIN" in text and "shop.orders(by_city), PREAGGREGATION: ON" in text
    text = browser.submit("document.querySelector('textarea').value = 'SELECT * FROM nope'; "
                          "document.forms[0].submit()")
    assert "Table [nope] does not exist in database [shop]" in text
    assert browser.errors == [], browser.errors


def test_kill_from_the_queries_page(console) -> None:
    srv, browser = console
    victim = srv.connect()
    with victim.cursor() as cur:
        cur.execute("SELECT connection_id()")
        (conn_id,) = cur.fetchone()
    _login(browser, srv, "root", "")
    browser.open(f"http://127.0.0.1:{srv.fe_http_port}/console/queries")
    text = browser.submit(f"document.querySelector('input[name=id][value=\"{conn_id}\"]').form.submit()")
    assert f"Connection {conn_id} killed" in text
    with pytest.raises(pymysql.err.MySQLError), victim.cursor() as cur:
        cur.execute("SELECT 1")
    assert browser.errors == [], browser.errors


def test_a_user_sees_only_what_the_user_may(console) -> None:
    srv, browser = console
    text = _login(browser, srv, "ann", "wrong")
    assert "Access denied for user 'ann'" in text
    text = browser.submit("document.getElementById('user').value = 'ann'; "
                          "document.getElementById('password').value = 'pw'; document.forms[0].submit()")
    assert "other" in text and "shop" not in text
    browser.errors.clear()
    text = browser.open(f"http://127.0.0.1:{srv.fe_http_port}/console/table/shop/orders")
    assert "Access denied" in text
    browser.errors.clear()  # the 403 document itself is the expected answer


def test_pages_need_a_login_and_answer_errors_as_pages(console) -> None:
    srv, _ = console
    base = f"http://127.0.0.1:{srv.fe_http_port}"

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):  # noqa: ANN002, ANN003
            return None

    opener = urllib.request.build_opener(NoRedirect)
    with pytest.raises(urllib.error.HTTPError) as e:
        opener.open(f"{base}/console/table/shop/orders", timeout=10)
    assert e.value.code == 303 and e.value.headers["Location"] == "/login"
    auth = {"Authorization": "Basic cm9vdDo="}  # root with no password
    with pytest.raises(urllib.error.HTTPError) as e:
        opener.open(urllib.request.Request(f"{base}/console/table/shop/missing", headers=auth), timeout=10)
    assert e.value.code == 404 and b"Unknown table" in e.value.read()
    with opener.open(urllib.request.Request(f"{base}/console/table/shop/orders", headers=auth), timeout=10) as r:
        assert r.status == 200 and r.headers["Content-Type"].startswith("text/html")
