"""The console's pages and login (see server/console/__init__.py). Every page runs as the logged-in MySQL user
and shows only what that user may see (SHOW's rules); KILL is for the connection's owner or ADMIN."""

from __future__ import annotations

import secrets
import threading
import time
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from http.cookies import SimpleCookie
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, unquote, urlsplit

import pyarrow as pa

from server.access import PEER_HEADER, Identity, basic_auth
from server.console import charts
from server.console.html import cards, h, link, page, path, scroll, size, table
from server.http_api import Page
from server.loads.jobs import show_time
from server.results import OkResult, ResultSet
from server.show_create import show_create_table
from server.show_partitions import show_partitions
from storage.catalog.model import OlapTable
from storage.catalog.table_versions import retention_seconds
from storage.partition_policy.auto_bucket import ema, estimate_next_partition_size, usable_history
from storage.partition_policy.buckets import BucketPolicy
from storage.partition_policy.dynamic_plan import plan_dynamic_partitions
from storage.partition_policy.scheduler import dynamic_property

if TYPE_CHECKING:
    from server.session import SessionContext

COOKIE = "dorislite_console"
SESSION_SECONDS = 8 * 3600
MAX_RESULT_ROWS = 1000  # the playground shows this many rows of a result
Reply = tuple


def _redirect(to: str, cookie: str | None = None) -> Reply:
    headers = {"Location": to}
    if cookie is not None:
        headers["Set-Cookie"] = cookie
    return 303, Page(b""), headers


def _form(body: bytes) -> dict[str, str]:
    return {k: v[-1] for k, v in parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items()}


def _time(t: float | None) -> str:
    return show_time(t) or ""


class ConsoleApi:
    def __init__(self, ctx: SessionContext) -> None:
        self.ctx = ctx
        self._sessions: dict[str, tuple[Identity, float]] = {}
        self._charts: dict[str, tuple[tuple, str]] = {}
        self._lock = threading.Lock()

    # -- login ------------------------------------------------------------------------------------------
    def _identity(self, headers: dict[str, str]) -> Identity | None:
        raw = headers.get("cookie", "")
        if raw:
            cookie = SimpleCookie()
            try:
                cookie.load(raw)
            except Exception:  # noqa: BLE001 - a malformed cookie is no login
                cookie = SimpleCookie()
            token = cookie.get(COOKIE)
            if token is not None:
                with self._lock:
                    found = self._sessions.get(token.value)
                    if found is not None and found[1] > time.time():
                        return found[0]
        if headers.get("authorization"):
            return basic_auth(self.ctx.users, headers)
        return None

    def _login(self, method: str, headers: dict[str, str], body: bytes) -> Reply:
        error = ""
        if method == "POST":
            form = _form(body)
            user = form.get("user", "")
            identity = self.ctx.users.login_plain(user, headers.get(PEER_HEADER, "127.0.0.1"), form.get("password", ""))
            if identity is not None:
                token = secrets.token_urlsafe(24)
                with self._lock:
                    now = time.time()
                    self._sessions = {k: v for k, v in self._sessions.items() if v[1] > now}
                    self._sessions[token] = (identity, now + SESSION_SECONDS)
                return _redirect("/console", f"{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict")
            error = f'<p class="error">Access denied for user \'{h(user)}\' (using password: YES)</p>'
        body_html = (f'<div class="login"><h1>Log in</h1>{error}<form method="post" action="/login">'
                     '<label for="user">User</label><input type="text" id="user" name="user" value="root">'
                     '<label for="password">Password</label><input type="password" id="password" name="password">'
                     '<p><input type="submit" value="Log in"></p></form>'
                     '<p class="note">The server\'s MySQL users and passwords.</p></div>')
        return 200, Page(page("Log in", body_html))

    def _logout(self, headers: dict[str, str]) -> Reply:
        cookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except Exception:  # noqa: BLE001
            pass
        if COOKIE in cookie:
            with self._lock:
                self._sessions.pop(cookie[COOKIE].value, None)
        return _redirect("/login", f"{COOKIE}=; Path=/; Max-Age=0")

    # -- dispatch ---------------------------------------------------------------------------------------
    def handles(self, path_text: str) -> bool:
        return path_text in ("/", "/login", "/logout") or path_text == "/console" or path_text.startswith("/console/")

    def handle(self, method: str, target: str, headers: dict[str, str], body: bytes) -> Reply:
        parts = urlsplit(target)
        route = parts.path.rstrip("/") or "/"
        if route == "/":
            return _redirect("/console")
        if route == "/login":
            return self._login(method, headers, body)
        if route == "/logout":
            return self._logout(headers)
        identity = self._identity(headers)
        if identity is None:
            return _redirect("/login")
        pieces = [unquote(p) for p in route.split("/")[2:]]
        params = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        try:
            status, html = self._page(method, identity, pieces, params, body)
        except PermissionError as e:
            status, html = 403, page("Forbidden", f'<p class="error">{h(e)}</p>', identity.name)
        except LookupError as e:
            status, html = 404, page("Not found", f'<p class="error">{h(e)}</p>', identity.name)
        return status, Page(html)

    def _page(self, method: str, who: Identity, pieces: list[str], params: dict[str, str],
              body: bytes) -> tuple[int, bytes]:
        match pieces:
            case []:
                return 200, self.overview(who)
            case ["db", db]:
                return 200, self.database(who, db)
            case ["table", db, name]:
                return 200, self.table(who, db, name)
            case ["tablet", tablet_id] if tablet_id.isdigit():
                return 200, self.tablet(who, int(tablet_id))
            case ["queries"]:
                return 200, self.queries(who, params.get("msg", ""))
            case ["query", query_id]:
                return 200, self.query(who, query_id)
            case ["kill"] if method == "POST":
                return 200, self.kill(who, _form(body))
            case ["loads"]:
                return 200, self.loads(who)
            case ["sql"]:
                form = _form(body) if method == "POST" else {}
                return 200, self.sql(who, form.get("sql", params.get("sql", "")), form.get("db", params.get("db", "")))
        raise LookupError("No such page")

    # -- helpers ----------------------------------------------------------------------------------------
    def _table(self, who: Identity, db: str, name: str) -> OlapTable:
        catalog = self.ctx.engine.catalog
        found = catalog.get_table(db, name) if catalog.get_database(db) is not None else None
        if found is None:
            raise LookupError(f"Unknown table '{db}.{name}'")
        if not self.ctx.users.has_any(who, db, name):
            raise PermissionError(f"Access denied for user '{who.name}' to table '{db}.{name}'")
        return found

    def _db_name(self, db_id: int) -> str:
        return next((d.name for d in self.ctx.engine.catalog.list_databases() if d.db_id == db_id), "")

    # -- pages ------------------------------------------------------------------------------------------
    def overview(self, who: Identity) -> bytes:
        ctx = self.ctx
        catalog = ctx.engine.catalog
        queries, errors, _statements, total_ms, _b, _r = ctx.query_stats.snapshot()
        connections = ctx.server.connections() if ctx.server is not None else []
        rows = []
        for db in catalog.list_databases():
            if not ctx.users.has_any(who, db.name):
                continue
            tables = catalog.list_tables(db.name)
            rows.append((link(db.name, "/console/db/" + path(db.name)), len(tables),
                         sum(len(t.partitions) for t in tables), size(sum(p.data_size for t in tables
                                                                           for p in t.partitions)),
                         sum(p.row_count for t in tables for p in t.partitions)))
        uptime = int(time.time() - ctx.started_at)
        c = ctx.compaction.counters
        body = ("<h1>Overview</h1>" + cards([
            ("uptime", f"{uptime // 3600}h {uptime % 3600 // 60}m"), ("connections", len(connections)),
            ("queries", queries), ("failed statements", errors),
            ("mean query ms", f"{total_ms / queries:.1f}" if queries else "0"),
            ("load jobs", len(ctx.loads.jobs())), ("compactions", c.cumulative_tasks + c.base_tasks)])
            + "<h2>Databases</h2>" + table(["Database", "Tables", "Partitions", "Data size", "Rows"], rows,
                                          numeric=(1, 2, 3, 4), raw=(0,))
            + '<p class="note">Metrics for monitoring: <a href="/metrics">/metrics</a> (Prometheus).</p>')
        return page("Overview", body, who.name)

    def database(self, who: Identity, db: str) -> bytes:
        catalog = self.ctx.engine.catalog
        if catalog.get_database(db) is None:
            raise LookupError(f"Unknown database '{db}'")
        if not self.ctx.users.has_any(who, db):
            raise PermissionError(f"Access denied for user '{who.name}' to database '{db}'")
        rows = []
        for t in catalog.list_tables(db):
            if not self.ctx.users.has_any(who, db, t.name):
                continue
            rollups = sum(1 for i in t.visible_indexes() if i.index_id != t.base_index_id)
            dynamic = "yes" if dynamic_property(t) is not None else ""
            buckets = "AUTO" if t.distribution.auto else t.distribution.buckets
            rows.append((link(t.name, "/console/table/" + path(db, t.name)), t.keys_type, len(t.partitions),
                         buckets, rollups, dynamic, size(sum(p.data_size for p in t.partitions)),
                         sum(p.row_count for p in t.partitions)))
        body = (f"<h1>Database {h(db)}</h1>" + table(
            ["Table", "Model", "Partitions", "Buckets", "Rollups", "Dynamic partitions", "Data size", "Rows"], rows,
            numeric=(2, 3, 4, 6, 7), raw=(0,)))
        return page(db, body, who.name)

    def table(self, who: Identity, db: str, name: str) -> bytes:
        t = self._table(who, db, name)
        catalog = self.ctx.engine.catalog
        tablets = catalog.tablets(t.table_id)
        summary = catalog.tablet_rowset_summary(t.table_id)
        indexes = {i.index_id: i for i in t.indexes}
        partitions = {p.partition_id: p for p in t.partitions}
        states = self.ctx.compaction
        sections = [f"<h1>Table {h(db)}.{h(name)}</h1>", cards([
            ("model", t.keys_type), ("partitions", len(t.partitions)), ("tablets", len(tablets)),
            ("rowsets", sum(v[0] for v in summary.values())), ("data size", size(sum(v[2] for v in summary.values()))),
            ("rows", sum(p.row_count for p in t.partitions)),
            # data kept for older versions (compaction inputs within time_travel_retention, scans still reading)
            ("retained for time travel" if retention_seconds(t.props) > 0 else "retained",
             size(sum(catalog.retained_bytes(t.table_id).values())))])]
        sections.append(self._rowset_chart(t, summary))
        sections.append(self._compaction_section(t))
        sections.append(self._dynamic_section(t))
        sections.append(self._bucket_section(t))
        shown = show_partitions(t)
        sections.append("<h2>Partitions</h2>" + scroll(table(shown.column_names, [list(r.values())
                                                                                  for r in shown.to_pylist()])))
        index_rows = [(i.name, "base" if i.index_id == t.base_index_id else "rollup",
                       ", ".join(c.name for c in i.columns), i.keys_type)
                      for i in t.visible_indexes()]
        sections.append("<h2>Rollups</h2>" + table(["Index", "Kind", "Columns", "Model"], index_rows))
        secondary = [(ix.name, ", ".join(ix.columns), ix.index_type, ix.comment or "")
                     for ix in t.index_defs]
        bloom = t.props.get("bloom_filter_columns", "").strip()
        if bloom:
            secondary.append(("(bloom_filter_columns)", bloom, "BLOOM_FILTER", f"fpp {t.props.get('bloom_filter_fpp', '0.05')}"))
        sections.append("<h2>Indexes</h2>" + table(["Name", "Columns", "Type", "Comment"], secondary))
        tablet_rows = []
        for tb in sorted(tablets, key=lambda x: (x.partition_id, x.index_id, x.bucket)):
            n, rows, data, version = summary.get(tb.tablet_id, (0, 0, 0, 0))
            point = states.state(tb.tablet_id).cumulative_point
            p = partitions.get(tb.partition_id)
            tablet_rows.append((link(tb.tablet_id, f"/console/tablet/{tb.tablet_id}"),
                                p.name if p else tb.partition_id, indexes[tb.index_id].name if tb.index_id in indexes
                                else tb.index_id, tb.bucket, n, version, point if point >= 0 else "", rows, size(data)))
        sections.append("<h2>Tablets</h2>" + table(
            ["Tablet", "Partition", "Index", "Bucket", "Rowsets", "Version", "Cumulative point", "Rows", "Data size"],
            tablet_rows, numeric=(3, 4, 5, 6, 7, 8), raw=(0,)))
        sections.append("<h2>DDL</h2><pre>" + h(show_create_table(t)) + "</pre>")
        return page(f"{db}.{name}", "".join(sections), who.name)

    def _cached(self, name: str, key: tuple, render: Callable[[], str]) -> str:
        """A chart section drawn once per change of `key` (pygal is slow: a page must stay fast with 1,000
        tablets and a viewer reloading it)."""
        with self._lock:
            found = self._charts.get(name)
            if found is not None and found[0] == key:
                return found[1]
        html = render()
        with self._lock:
            if len(self._charts) > 1000:
                self._charts.clear()
            self._charts[name] = (key, html)
        return html

    def _rowset_chart(self, t: OlapTable, summary: dict[int, tuple[int, int, int, int]]) -> str:
        history = self.ctx.console_history
        samples = history.samples(t.table_id) or [history.summarize(summary, time.time())]
        key = (len(samples), samples[-1].at, t.table_id)
        return self._cached(f"rowsets-{t.table_id}", key, lambda: self._draw_rowsets(samples))

    def _draw_rowsets(self, samples: list) -> str:
        history = self.ctx.console_history
        if not any(s.total[0] for s in samples):
            return "<h2>Rowsets and data per tablet over time</h2><p class=\"note\">No data loaded yet.</p>"
        tablet_ids = sorted({tid for s in samples for tid in s.tablets})
        names = {tid: ("others" if tid < 0 else f"tablet {tid}") for tid in tablet_ids}
        times = [s.at for s in samples]
        rowsets = {names[tid]: [s.tablets[tid][0] if tid in s.tablets else None for s in samples]
                   for tid in tablet_ids}
        sizes = {names[tid]: [s.tablets[tid][1] / 1024 / 1024 if tid in s.tablets else None for s in samples]
                 for tid in tablet_ids}
        return ("<h2>Rowsets and data per tablet over time</h2>"
                + charts.time_lines("Rowsets per tablet", times, rowsets, "rowsets")
                + charts.time_lines("Data size per tablet (MB)", times, sizes, "MB")
                + f'<p class="note">Sampled every {history.interval:g} s; loads add rowsets, compactions merge them '
                  "(below).</p>")

    def _compaction_section(self, t: OlapTable) -> str:
        events = [e for e in list(self.ctx.compaction.history) if e.table_id == t.table_id]
        key = (len(events), events[-1].at if events else 0, int(time.time() // self.ctx.console_history.interval))
        return self._cached(f"compactions-{t.table_id}", key, lambda: self._draw_compactions(events))

    def _draw_compactions(self, events: list) -> str:
        if events:
            kinds = sorted({e.kind for e in events})
            start = min(e.at for e in events)
            buckets: dict[str, Counter] = {k: Counter() for k in kinds}
            width = max(1.0, (time.time() - start) / 30)
            for e in events:
                buckets[e.kind][int((e.at - start) // width)] += e.input_rowsets
            slots = range(int((time.time() - start) // width) + 1)
            chart = charts.time_lines("Rowsets merged by compaction", [start + i * width for i in slots],
                                      {k: [float(buckets[k][i]) for i in slots] for k in kinds}, "rowsets merged")
        else:
            chart = '<p class="note">No compaction of this table since the server started.</p>'
        rows = [(_time(e.at), link(e.tablet_id, f"/console/tablet/{e.tablet_id}"), e.kind,
                 f"[{e.start_version}-{e.end_version}]", e.input_rowsets, e.input_rows, e.output_rows,
                 size(e.input_bytes), size(e.output_bytes), f"{e.seconds * 1000:.0f}", e.cumulative_point)
                for e in reversed(events[-50:])]
        return ("<h2>Compactions</h2>" + chart + table(
            ["Time", "Tablet", "Type", "Output version", "Input rowsets", "Input rows", "Output rows", "Input size",
             "Output size", "ms", "Cumulative point after"], rows, numeric=(4, 5, 6, 7, 8, 9, 10), raw=(1,)))

    def _dynamic_section(self, t: OlapTable) -> str:
        prop = dynamic_property(t)
        if prop is None:
            return ""
        column = t.column(t.partition_info.columns[0]) if t.partition_info.columns else None
        existing = [(p.name, p.item.lower, p.item.upper) for p in t.partitions]
        now = self.ctx.dynamic_partitions.now()
        plan = plan_dynamic_partitions(prop, column.type if column else "", existing, now)
        drops = {n.lower() for n in plan.to_drop}

        def seconds(text: str | None) -> float | None:
            if not text:
                return None
            raw = text.strip().strip("'")
            for fmt in ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d", "%Y%m%d", "%Y-%m"):
                try:
                    return datetime.strptime(raw, fmt).timestamp()
                except ValueError:
                    continue
            return None

        spans = []
        for p in t.partitions:
            lo, hi = seconds((p.item.lower or [None])[0]), seconds((p.item.upper or [None])[0])
            if lo is not None and hi is not None:
                spans.append((p.name, "to drop" if p.name.lower() in drops else "exists", lo, hi))
        for planned in plan.to_add:
            lo, hi = seconds(planned.lower), seconds(planned.upper)
            if lo is not None and hi is not None:
                spans.append((planned.name, "to create", lo, hi))
        spans.sort(key=lambda s: s[2])
        spans = spans[-80:]
        if spans:  # a line at the scheduler's now across every partition
            spans.append(("now", "now", now.timestamp(), now.timestamp()))
        info = self.ctx.dynamic_partitions.show_rows(self._db_name(t.db_id))
        row = next((r for r in info if r[0] == t.name), None)
        settings = [(k, v) for k, v in sorted(t.props.items()) if k.startswith("dynamic_partition.")]
        note = (f'<p class="note">Now: {now:%Y-%m-%d %H:%M:%S}. The scheduler keeps partitions from start to end '
                "(time units); reserved_history_periods keep older ones.</p>")
        chart = charts.timeline("Dynamic partitions", spans) if spans \
            else '<p class="note">No partition with a time range.</p>'
        scheduler = table(["LastSchedulerTime", "State", "LastCreatePartitionMsg", "LastDropPartitionMsg"],
                          [(row[-6], row[-4], row[-3], row[-2])] if row and len(row) >= 6 else [])
        return ("<h2>Dynamic partitions</h2>" + note + chart + table(["Property", "Value"], settings) + scheduler)

    def _bucket_section(self, t: OlapTable) -> str:
        parts = list(t.partitions)
        chart = charts.bars("Buckets per partition", [p.name for p in parts],
                            {"buckets": [p.buckets for p in parts]}, "buckets") if parts else ""
        if not t.distribution.auto:
            return "<h2>Buckets</h2>" + chart
        policy = BucketPolicy.from_settings(self.ctx.config.get, self.ctx.engine.root)
        history = usable_history([(p.name, p.data_size) for p in parts], None)
        window = history[-7:]
        deltas = [b - a for a, b in zip(window, window[1:], strict=False)]
        trend = bool(deltas) and all(d > 0 for d in deltas)
        estimate = estimate_next_partition_size(history)
        rows = [("earlier partitions' sizes (S1..S7)", ", ".join(size(s) for s in window) or "none"),
                ("rule", "increasing: S7 + EMA(deltas)" if trend else "EMA(S1..S7)"),
                ("EMA", size(ema(deltas if trend else window)) if window and (deltas or not trend) else ""),
                ("estimate of the next partition", size(estimate) if estimate is not None else "no history"),
                ("N (by size: <=100MB 1, <=1GB 2, one per started GB of size/5)", ""),
                ("M (by disks: one per started 50 GB per disk)", ", ".join(size(d.capacity_bytes)
                                                                            for d in policy.disks)),
                ("next partition's buckets", policy.from_history(t) or f"{t.distribution.buckets} (table default)")]
        return ("<h2>Buckets (AUTO)</h2>" + chart + table(["Auto bucket input", "Value"], rows))

    def tablet(self, who: Identity, tablet_id: int) -> bytes:
        found = self.ctx.compaction.tablet_and_table(tablet_id)
        if found is None:
            raise LookupError(f"Unknown tablet {tablet_id}")
        tablet, t = found
        db = self._db_name(t.db_id)
        self._table(who, db, t.name)
        catalog = self.ctx.engine.catalog
        stale = {s.rowset.rowset_id for s in catalog.stale_rowsets(tablet_id)}
        rowsets = [(f"[{r.start_version}-{r.end_version}]", r.num_rows, r.num_segments, size(r.data_size),
                    "yes" if r.overlapping else "", "merged (stale)" if r.rowset_id in stale else "visible",
                    _time(r.created_at), r.rowset_id)
                   for r in sorted(catalog.all_rowsets(tablet_id), key=lambda r: (r.start_version, r.end_version))]
        state = self.ctx.compaction.state(tablet_id)
        events = [(_time(e.at), e.kind, f"[{e.start_version}-{e.end_version}]", e.input_rowsets, e.input_rows,
                   e.output_rows, e.cumulative_point) for e in reversed(self.ctx.compaction.history)
                  if e.tablet_id == tablet_id]
        body = (f"<h1>Tablet {tablet_id}</h1><p>{link(f'{db}.{t.name}', '/console/table/' + path(db, t.name))}, "
                f"bucket {tablet.bucket}; cumulative point {state.cumulative_point}</p>"
                + "<h2>Rowsets</h2>" + table(["Versions", "Rows", "Segments", "Size", "Overlapping", "State",
                                             "Created", "Rowset id"], rowsets, numeric=(1, 2, 3))
                + "<h2>Compactions</h2>" + table(["Time", "Type", "Output version", "Input rowsets", "Input rows",
                                                 "Output rows", "Cumulative point after"], events,
                                                numeric=(3, 4, 5, 6)))
        return page(f"tablet {tablet_id}", body, who.name)

    def queries(self, who: Identity, message: str = "") -> bytes:
        admin = self.ctx.users.is_admin(who)
        running = []
        for c in self.ctx.server.connections() if self.ctx.server is not None else []:
            if not admin and c.user != who.name:
                continue
            kill = (f'<form class="inline" method="post" action="/console/kill"><input type="hidden" name="id" '
                    f'value="{c.id}"><button type="submit">Kill</button></form>')
            running.append((c.id, c.user, c.host, c.db or "", c.command, c.time, c.state, c.info or "", kill))
        recent = [(_time(s.at), s.user, s.db or "", s.state, f"{s.millis:.1f}", s.rows, s.sql[:300], s.error[:200])
                  for s in self.ctx.query_stats.recent() if admin or s.user == who.name][:200]
        profiles = [(link(p.query_id, "/console/query/" + path(p.query_id)), p.user, p.default_db, p.sql[:200],
                     p.list_row()[5], p.list_row()[7], p.state)
                    for p in self.ctx.profiles.recent() if admin or p.user == who.name]
        notice = f'<p class="note">{h(message)}</p>' if message else ""
        body = ("<h1>Queries</h1>" + notice + "<h2>Connections</h2>" + table(
            ["Id", "User", "Host", "Db", "Command", "Time", "State", "Info", ""], running, numeric=(0, 5), raw=(8,))
            + "<h2>Recent statements</h2>" + table(["Time", "User", "Db", "State", "ms", "Rows", "SQL", "Error"],
                                                   recent, numeric=(4, 5))
            + "<h2>Query profiles</h2><p class=\"note\">Recorded for sessions with <code>SET enable_profile = true"
              "</code>.</p>" + table(["Query id", "User", "Db", "SQL", "Start", "Total", "State"], profiles,
                                     raw=(0,)))
        return page("Queries", body, who.name)

    def query(self, who: Identity, query_id: str) -> bytes:
        profile = self.ctx.profiles.get(query_id)
        if profile is None:
            raise LookupError(f"Unknown query profile {query_id}")
        if profile.user != who.name and not self.ctx.users.is_admin(who):
            raise PermissionError("A query profile of another user needs ADMIN")
        explain = self._run(who, f"EXPLAIN {profile.sql}", profile.default_db or "")
        plan = "\n".join(str(r[0]) for r in explain[1]) if explain[0] is None else explain[0]
        body = (f"<h1>Query {h(query_id)}</h1><h2>Profile</h2><pre>" + h("\n".join(profile.text())) + "</pre>"
                "<h2>Plan (EXPLAIN now): the rollup chosen and PREAGGREGATION</h2><pre>" + h(plan) + "</pre>")
        return page(f"query {query_id}", body, who.name)

    def kill(self, who: Identity, form: dict[str, str]) -> bytes:
        text = form.get("id", "")
        server = self.ctx.server
        if not text.isdigit() or server is None:
            return self.queries(who, "Nothing to kill")
        owner = next((c.user for c in server.connections() if c.id == int(text)), None)
        if owner is None:
            return self.queries(who, f"Unknown thread id: {text}")
        if owner != who.name and not self.ctx.users.is_admin(who):
            raise PermissionError(f"You are not owner of thread or query: {text}")
        server.kill(int(text), query_only=False)
        return self.queries(who, f"Connection {text} killed")

    def loads(self, who: Identity) -> bytes:
        admin = self.ctx.users.is_admin(who)
        jobs = [j for j in self.ctx.loads.jobs() if admin or self.ctx.users.has_any(who, j.db)]
        rows = [(j.job_id, j.label, j.db, j.table, j.kind, j.state, j.loaded_rows, j.filtered_rows, size(j.file_size),
                 _time(j.create_time), _time(j.finish_time), j.user, (j.error_msg or "")[:200])
                for j in reversed(jobs[-300:])]
        finished = [j for j in jobs if j.finish_time is not None]
        key = (len(finished), max((j.finish_time or 0 for j in finished), default=0),
               int(time.time() // self.ctx.console_history.interval))
        chart = self._cached(f"loads-{who.name}", key, lambda: self._draw_loads(finished))
        body = ("<h1>Loads</h1>" + chart + table(
            ["Job", "Label", "Db", "Table", "Type", "State", "Rows", "Filtered", "Bytes", "Created", "Finished", "User",
             "Error"], rows, numeric=(0, 6, 7, 8)))
        return page("Loads", body, who.name)

    def _draw_loads(self, finished: list) -> str:
        chart = ""
        if finished:
            start = min(j.finish_time for j in finished)
            width = max(1.0, (time.time() - start) / 40)
            slots = range(int((time.time() - start) // width) + 1)
            rows_per: Counter = Counter()
            failed: Counter = Counter()
            for j in finished:
                slot = int((j.finish_time - start) // width)
                if j.state == "FINISHED":
                    rows_per[slot] += j.loaded_rows
                else:
                    failed[slot] += 1
            chart = (charts.time_lines("Rows loaded", [start + i * width for i in slots],
                                       {"rows": [float(rows_per[i]) for i in slots]}, "rows")
                     + charts.time_lines("Failed or cancelled loads", [start + i * width for i in slots],
                                         {"loads": [float(failed[i]) for i in slots]}, "loads"))
        return chart

    def _run(self, who: Identity, sql: str, db: str) -> tuple[str | None, list[tuple], list[str]]:
        """(error, rows, columns) of one statement run as `who`."""
        from server.session import Session

        session = Session.acting_for(self.ctx, who, who.client, "")
        try:
            if db:
                session.init_db(db)
            results = session.execute(sql, False)
        except Exception as e:  # noqa: BLE001 - the statement's error is the page's message
            return str(getattr(e, "message", None) or e), [], []
        finally:
            session.close()
        result = results[-1] if results else OkResult()
        if isinstance(result, ResultSet):
            data: pa.Table = result.table.slice(0, MAX_RESULT_ROWS)
            return None, [tuple(r.values()) for r in data.to_pylist()], data.column_names
        return None, [], [f"OK, {result.affected_rows} rows affected"]

    def sql(self, who: Identity, text: str, db: str) -> bytes:
        result = ""
        if text.strip():
            error, rows, columns = self._run(who, text, db)
            if error is not None:
                result = f'<p class="error">{h(error)}</p>'
            elif rows or len(columns) != 1 or not columns[0].startswith("OK,"):
                result = "<h2>Result</h2>" + table(columns, rows) + (
                    f'<p class="note">First {MAX_RESULT_ROWS} rows.</p>' if len(rows) >= MAX_RESULT_ROWS else "")
            else:
                result = f"<p>{h(columns[0])}</p>"
            if error is None and text.lstrip().lower().startswith(("select", "with")):
                plan_error, plan, _ = self._run(who, f"EXPLAIN {text}", db)
                if plan_error is None:
                    result += "<h2>EXPLAIN</h2><pre>" + h("\n".join(str(r[0]) for r in plan)) + "</pre>"
        databases = [d.name for d in self.ctx.engine.catalog.list_databases() if self.ctx.users.has_any(who, d.name)]
        options = "".join(f'<option{" selected" if d == db else ""}>{h(d)}</option>' for d in ["", *databases])
        body = ("<h1>SQL</h1><form method=\"post\" action=\"/console/sql\"><p>Database: <select name=\"db\">"
                f"{options}</select></p><textarea name=\"sql\" rows=\"8\">{h(text)}</textarea>"
                "<p><input type=\"submit\" value=\"Run\"> <span class=\"note\">Runs as "
                f"{h(who.name)}; a SELECT also shows its EXPLAIN.</span></p></form>{result}")
        return page("SQL", body, who.name)
