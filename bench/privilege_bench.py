"""The cost of privilege checks on the point-lookup query (issue 14), through the server, in one run.

    python -m bench.privilege_bench [--rows N] [--repeat R]

A DUPLICATE KEY table of N rows (default 1,000,000) and the point lookup `SELECT * FROM t WHERE k = 123456` sent
again and again (the plan cache path: no parse, no planning; the table privilege is checked on every run). Timed
as root (global privileges) and as `analyst` (SELECT_PRIV on that one table; 50 other users hold grants too),
best of R runs each, interleaved; the check's own time is measured apart, as a micro-benchmark of
AccessControl.require_table on the server's catalog, and given as a share of the query. Writes
bench/out/privileges.md.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pymysql

from bench.harness import best_of, dorislite_server, report, scratch_dir
from server.access import AccessControl, Identity
from storage.catalog.store import Catalog

OUT = Path(__file__).resolve().parent / "out" / "privileges.md"
QUERY = "SELECT * FROM t WHERE k = 123456"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=2000)
    args = ap.parse_args()
    with scratch_dir("privileges-") as work:
        with dorislite_server(work / "data", timeout=120) as (port, _):
            root = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
            cur = root.cursor()
            cur.execute("CREATE DATABASE b")
            cur.execute("USE b")
            cur.execute("CREATE TABLE t (k BIGINT, v BIGINT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 8 "
                        "PROPERTIES ('replication_num' = '1')")
            step = 100_000
            for start in range(0, args.rows, step):
                values = ", ".join(f"({i}, {i * 7})" for i in range(start, min(args.rows, start + step)))
                cur.execute(f"INSERT INTO t VALUES {values}")
            for i in range(50):  # other users' grants: the check must not scan them
                cur.execute(f"CREATE USER 'u{i}' IDENTIFIED BY 'x'")
                cur.execute(f"GRANT SELECT_PRIV ON b.t TO 'u{i}'")
            cur.execute("CREATE USER 'analyst' IDENTIFIED BY 'pw'")
            cur.execute("GRANT SELECT_PRIV ON b.t TO 'analyst'")
            analyst = pymysql.connect(host="127.0.0.1", port=port, user="analyst", password="pw", database="b",
                                      autocommit=True).cursor()

            def run(c) -> object:
                c.execute(QUERY)
                return c.fetchall()

            for c in (cur, analyst):
                assert run(c) == ((123456, 864192),)
            times: dict[str, float] = {"root": float("inf"), "analyst": float("inf")}
            for _ in range(5):  # interleaved rounds: drift hits both alike
                for name, c in (("root", cur), ("analyst", analyst)):
                    t, _ = best_of(lambda c=c: run(c), args.repeat // 5)
                    times[name] = min(times[name], t)
            catalog = Catalog(work / "data")
            access = AccessControl(catalog)
            who = Identity("analyst", "%", "127.0.0.1")
            n = 20000
            started = time.perf_counter()
            for _ in range(n):
                access.require_table(who, "SELECT_PRIV", "b", "t")
            check = (time.perf_counter() - started) / n
            catalog.close()
    lines = [f"### Privilege checks on the cached point lookup ({args.rows:,} rows, best of {args.repeat // 5} x 5)",
             "", "| user | ms |", "|---|---:|",
             f"| root (global privileges) | {times['root'] * 1000:.3f} |",
             f"| analyst (SELECT_PRIV on the table; 50 other users' grants) | {times['analyst'] * 1000:.3f} |", "",
             f"One table check: {check * 1e6:.2f} us, **{check / times['analyst'] * 100:.2f}%** of the query; "
             f"analyst / root: {times['analyst'] / times['root']:.3f}."]
    report(OUT, lines)


if __name__ == "__main__":
    main()
