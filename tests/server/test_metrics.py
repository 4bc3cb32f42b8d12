"""GET /metrics on both HTTP ports (issue 16): Prometheus text with Doris's metric names, parsed with
prometheus_client's own parser; the counters move with what the server does."""

from __future__ import annotations

import urllib.request

import pymysql
import pytest
from prometheus_client.parser import text_string_to_metric_families

PROPS = "DISTRIBUTED BY HASH(k) BUCKETS 3 PROPERTIES ('replication_num' = '1')"


def scrape(port: int) -> dict[str, dict[tuple, float]]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        assert r.status == 200 and r.headers["Content-Type"].startswith("text/plain")
        text = r.read().decode()
    out: dict[str, dict[tuple, float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            # the parser names a counter's samples <family>_total; Doris's names (doris_fe_query_err) are families
            name = family.name if family.type == "counter" else sample.name
            out.setdefault(name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return out


def test_metrics_follow_queries_loads_and_tablets(server, cur, db) -> None:
    before = scrape(server.fe_http_port)
    cur.execute(f"CREATE TABLE m (k INT, v INT) DUPLICATE KEY(k) {PROPS}")
    cur.execute("INSERT INTO m VALUES (1, 1), (2, 2), (3, 3)")
    for _ in range(5):
        cur.execute("SELECT sum(v) FROM m")
    with pytest.raises(pymysql.err.MySQLError):
        cur.execute("SELECT * FROM no_such_table")
    fe = scrape(server.fe_http_port)
    assert fe["doris_fe_query"][()] >= before["doris_fe_query"][()] + 5  # the family of doris_fe_query_total
    assert fe["doris_fe_query_err"][()] >= before["doris_fe_query_err"][()] + 1
    assert set(fe["doris_fe_query_latency_ms"]) >= {(("quantile", "0.99"),), (("quantile", "0.75"),)}
    assert fe["doris_fe_query_latency_seconds_count"][()] == fe["doris_fe_query"][()]
    assert fe["doris_fe_connection_total"][()] >= 1
    assert fe["doris_fe_txn_counter"][(("type", "success"),)] >= 1
    assert any(dict(k)["job"] == "load" and dict(k)["state"] == "FINISHED" for k in fe["doris_fe_job"])
    assert fe["doris_fe_tablet_num"][()] >= 3
    be = scrape(server.http_port)
    assert be["doris_be_tablet_num"][()] >= 3 and be["doris_be_rowset_num"][()] >= 1
    assert be["doris_be_load_rows"][()] >= 3
    for name in ("doris_be_tablet_cumulative_max_compaction_score", "doris_be_tablet_base_max_compaction_score",
                 "doris_be_memory_allocated_bytes", "doris_be_disks_avail_capacity"):
        assert name in be, name
    assert be["doris_be_memory_allocated_bytes"][()] > 0


def test_counters_keep_doris_names(server) -> None:
    with urllib.request.urlopen(f"http://127.0.0.1:{server.fe_http_port}/metrics", timeout=10) as r:
        text = r.read().decode()
    assert "# TYPE doris_fe_query_err counter\ndoris_fe_query_err " in text
    assert '\ndoris_fe_query_latency_ms{quantile="0.99"} ' in text


def test_health_endpoints_need_no_login(server) -> None:
    import json

    for port, path in ((server.fe_http_port, "/api/health"), (server.http_port, "/api/health")):
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
            assert r.status == 200
            assert json.loads(r.read())


def test_the_grafana_dashboard_reads_metrics_the_server_exports(server) -> None:
    """docs/grafana/dorislite-dashboard.json imports into Grafana (its schema's keys) and each of its queries
    names metrics the two /metrics endpoints export."""
    import json
    import re
    from pathlib import Path

    dashboard = json.loads((Path(__file__).resolve().parents[2] / "docs" / "grafana" /
                            "dorislite-dashboard.json").read_text())
    assert dashboard["__inputs"][0]["pluginId"] == "prometheus" and dashboard["panels"]
    exported = set(scrape(server.fe_http_port)) | set(scrape(server.http_port))
    with urllib.request.urlopen(f"http://127.0.0.1:{server.fe_http_port}/metrics", timeout=10) as r:
        raw = r.read().decode()
    with urllib.request.urlopen(f"http://127.0.0.1:{server.http_port}/metrics", timeout=10) as r:
        raw += r.read().decode()
    names = {m for p in dashboard["panels"] for t in p["targets"]
             for m in re.findall(r"\b(doris_[a-z_]+)", t["expr"])}
    missing = sorted(n for n in names if n not in exported and f"\n{n}" not in raw and f"\n{n}{{" not in raw)
    assert not missing, missing
