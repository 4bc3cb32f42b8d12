"""`dorislite serve [--conf DIR] [--port N] [--host H] [--storage DIR] [--http-port N]` (also `python -m server serve`)."""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import signal
import sys
from pathlib import Path

from server.config import Config


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dorislite", description="A single-node Apache Doris work-alike.")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="start the server (MySQL protocol, default 127.0.0.1:9030)")
    serve.add_argument("--conf", type=Path, default=None, help="folder holding fe.conf and be.conf")
    serve.add_argument("--port", type=int, default=None, help="MySQL protocol port (fe.conf query_port)")
    serve.add_argument("--host", default=None, help="bind address (fe.conf priority_networks)")
    serve.add_argument("--storage", type=Path, default=None, help="storage root (fe.conf meta_dir)")
    serve.add_argument("--http-port", type=int, default=None, help="HTTP API port (be.conf webserver_port; 0: off)")
    serve.add_argument("--fe-http-port", type=int, default=None,
                       help="FE HTTP API port (fe.conf http_port: /api/_set_config ...; 0: off)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("sqlglot").setLevel(logging.ERROR)  # its parse fallbacks are answered as SQL errors
    config = Config.load(args.conf)
    if args.port is not None:
        config.set_fe("query_port", str(args.port))
    if args.host is not None:
        config.set_fe("priority_networks", args.host)
    if args.storage is not None:
        config.set_fe("meta_dir", str(args.storage))
    if args.http_port is not None:
        config.be["webserver_port"] = str(args.http_port)
    if args.fe_http_port is not None:
        config.set_fe("http_port", str(args.fe_http_port))
    # a statement that gives the interpreter lock up at an Arrow or DuckDB call waits up to the switch interval
    # to get it back from a thread running Python: a dashboard read among busy writers waited 5 ms per call.
    # At 1 ms the 16-client soak's read p99 went 206 -> 169 ms and its throughput up 15% (point lookups alike)
    sys.setswitchinterval(0.001)
    return asyncio.run(_serve(config))


async def _serve(config: Config) -> int:
    from server.app import DorisLite

    app = DorisLite(config)
    await app.start()
    # the garbage collector: what the start built (modules, catalog) is never collected again, and a young
    # generation of 50,000 objects makes full collections rare. Each full one stops every statement for as long as
    # it walks the heap: under 16 busy clients one ran every ~8 s and took up to 375 ms, finding nothing to free
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    logging.getLogger("dorislite").info(
        "dorislite ready: mysql -h%s -P%d -uroot", app.host, app.port
    )
    await stop.wait()
    await app.stop()
    return 0
