"""The console's page shell and the few HTML pieces every page uses (escaped: every value shown is data)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape
from typing import Any
from urllib.parse import quote

STYLE = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: #1d2430; background: #f5f6f8; }
header { background: #1f3a5f; color: #fff; padding: 10px 24px; display: flex; gap: 22px; align-items: center; }
header a { color: #dce6f5; text-decoration: none; } header a:hover { color: #fff; }
header .brand { font-weight: 700; color: #fff; margin-right: 12px; } header .who { margin-left: auto; color: #b8c7dc; }
main { padding: 18px 24px 40px; max-width: 1400px; }
h1 { font-size: 22px; margin: 6px 0 14px; } h2 { font-size: 17px; margin: 26px 0 8px; }
table { border-collapse: collapse; background: #fff; font-size: 13px; margin: 4px 0 10px; }
th, td { border: 1px solid #dde2ea; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #eef1f6; font-weight: 600; } td:first-child { white-space: nowrap; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
pre { background: #fff; border: 1px solid #dde2ea; padding: 10px; overflow-x: auto; font-size: 12.5px; }
.cards { display: flex; gap: 12px; flex-wrap: wrap; margin-bottom: 8px; }
.card { background: #fff; border: 1px solid #dde2ea; border-radius: 6px; padding: 10px 16px; min-width: 130px; }
.card b { display: block; font-size: 20px; } .card span { color: #5b6678; font-size: 12px; }
.chart { background: #fff; border: 1px solid #dde2ea; border-radius: 6px; padding: 6px; margin: 6px 0 12px; max-width: 1000px; }
.chart svg { width: 100%; height: auto; } .note { color: #5b6678; font-size: 12.5px; }
.error { background: #fdecea; border: 1px solid #f3b5ae; padding: 8px 12px; color: #8a1f11; }
form.inline { display: inline; } textarea { width: 100%; max-width: 1000px; font: 13px monospace; }
button, input[type=submit] { background: #1f3a5f; color: #fff; border: 0; padding: 6px 14px; border-radius: 4px; cursor: pointer; }
input[type=text], input[type=password] { padding: 6px; border: 1px solid #c4ccd8; border-radius: 4px; width: 240px; }
.login { max-width: 340px; margin: 80px auto; background: #fff; padding: 24px; border: 1px solid #dde2ea; border-radius: 8px; }
.login label { display: block; margin: 10px 0 4px; }
.scroll { overflow-x: auto; max-width: 100%; } .scroll td { white-space: nowrap; }
"""

NAV = (("Overview", "/console"), ("Queries", "/console/queries"), ("Loads", "/console/loads"),
       ("SQL", "/console/sql"))


def h(value: Any) -> str:
    return "" if value is None else escape(str(value))


def link(text: Any, href: str) -> str:
    return f'<a href="{h(href)}">{h(text)}</a>'


def path(*parts: Any) -> str:
    return "/".join(quote(str(p), safe="") for p in parts)


def page(title: str, body: str, user: str | None = None) -> bytes:
    nav = "".join(link(name, href) for name, href in NAV) if user is not None else ""
    who = (f'<span class="who">{h(user)} · <a href="/logout">log out</a></span>' if user is not None else "")
    return (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{h(title)} · dorislite</title>"
            f"<link rel=\"icon\" href=\"data:,\"><style>{STYLE}</style></head><body><header>"
            f"<span class=\"brand\">dorislite</span>{nav}{who}</header><main>{body}</main></body></html>").encode()


def table(columns: Sequence[str], rows: Iterable[Sequence[Any]], numeric: Iterable[int] = (),
          raw: Iterable[int] = ()) -> str:
    """An HTML table; `numeric` columns align right, `raw` columns are HTML already (links)."""
    right, html_cols = set(numeric), set(raw)
    head = "".join(f"<th>{h(c)}</th>" for c in columns)
    body = []
    for row in rows:
        cells = "".join(f'<td{" class=n" if i in right else ""}>{v if i in html_cols else h(v)}</td>'
                        for i, v in enumerate(row))
        body.append(f"<tr>{cells}</tr>")
    if not body:
        body.append(f'<tr><td colspan="{len(columns)}" class="note">none</td></tr>')
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def scroll(html_table: str) -> str:
    """A wide table that scrolls sideways instead of wrapping its cells."""
    return f'<div class="scroll">{html_table}</div>'


def cards(items: Iterable[tuple[str, Any]]) -> str:
    return '<div class="cards">' + "".join(f'<div class="card"><b>{h(v)}</b><span>{h(k)}</span></div>'
                                           for k, v in items) + "</div>"


def size(n: int | float | None) -> str:
    if n is None:
        return ""
    value = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(value) < 1024 or unit == "TB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.2f} {unit}"
        value /= 1024
    return str(n)
