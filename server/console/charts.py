"""The console's charts: pygal drawn on the server as inline SVG. pygal's tooltip script is a CDN file, so it is
left out (js=[]) along with the config script that only it reads: the charts are static pictures."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

import pygal
from pygal.style import Style

_STYLE = Style(background="white", plot_background="white", foreground="#1d2430", foreground_strong="#1d2430",
               foreground_subtle="#8a94a6", opacity=".85", opacity_hover=".95", font_family="system-ui, sans-serif",
               colors=("#2f6db3", "#e0823d", "#3a9d5d", "#c44e52", "#8172b2", "#937860", "#da8bc3", "#8c8c8c",
                       "#ccb974", "#64b5cd"))
_SCRIPT = re.compile(r"<script\b.*?</script>", re.S)
MAX_SERIES = 6  # lines drawn per chart; the rest are summed into "others" (pygal draws ~9 ms per 30 points)
MAX_POINTS = 60  # points per line: longer histories are thinned evenly


def _config(title: str, **extra: object) -> dict:
    return {"title": title, "js": [], "disable_xml_declaration": True, "style": _STYLE, "width": 960,
            "height": 320, "explicit_size": False, "show_legend": True, "legend_at_bottom": True,
            "legend_at_bottom_columns": 6, "truncate_legend": 28, "print_values": False, "x_label_rotation": 20,
            "show_minor_x_labels": False, **extra}


def _svg(chart: pygal.graph.graph.Graph) -> str:
    return '<div class="chart">' + _SCRIPT.sub("", chart.render(is_unicode=True)) + "</div>"


def time_lines(title: str, times: Sequence[float], series: dict[str, Sequence[float | None]],
               y_title: str = "") -> str:
    """Lines over time (unix seconds), one per series; past MAX_SERIES the smallest are summed into 'others'."""
    if len(series) > MAX_SERIES:
        ranked = sorted(series, key=lambda k: -max((v or 0) for v in series[k]))
        kept = {k: series[k] for k in ranked[:MAX_SERIES - 1]}
        rest = ranked[MAX_SERIES - 1:]
        kept[f"{len(rest)} others"] = [sum((series[k][i] or 0) for k in rest) for i in range(len(times))]
        series = kept
    if len(times) > MAX_POINTS:
        keep = sorted({round(i * (len(times) - 1) / (MAX_POINTS - 1)) for i in range(MAX_POINTS)})
        times = [times[i] for i in keep]
        series = {k: [v[i] for i in keep] for k, v in series.items()}
    chart = pygal.DateTimeLine(**_config(title, y_title=y_title, dots_size=2, show_dots=len(times) < 30,
                                         x_value_formatter=lambda t: t.strftime("%H:%M:%S")))
    stamps = [datetime.fromtimestamp(t) for t in times]
    for name, values in series.items():
        chart.add(name, [(t, v) for t, v in zip(stamps, values, strict=True) if v is not None])
    return _svg(chart)


def bars(title: str, labels: Sequence[str], series: dict[str, Sequence[float | None]], y_title: str = "",
         stacked: bool = False) -> str:
    chart = (pygal.StackedBar if stacked else pygal.Bar)(**_config(title, y_title=y_title,
                                                                   show_minor_x_labels=len(labels) <= 40))
    chart.x_labels = list(labels)
    chart.x_labels_major = list(labels)[:: max(1, len(labels) // 20)]
    for name, values in series.items():
        chart.add(name, list(values))
    return _svg(chart)


def timeline(title: str, rows: Sequence[tuple[str, str, float, float]]) -> str:
    """Horizontal spans (label, group, start, end) in unix seconds: partitions and their fate over time."""
    chart = pygal.DateTimeLine(**_config(title, show_dots=True, dots_size=3, stroke_style={"width": 6},
                                         show_minor_x_labels=True, x_labels_major_count=8,
                                         x_value_formatter=lambda t: t.strftime("%Y-%m-%d %H:%M"),
                                         show_y_labels=True, y_labels=list(range(len(rows))),
                                         y_labels_major_every=1, height=max(220, 40 + 24 * len(rows))))
    chart.y_labels = [{"label": label, "value": i} for i, (label, *_rest) in enumerate(rows)]
    groups: dict[str, list] = {}
    for i, (_label, group, start, end) in enumerate(rows):
        points = groups.setdefault(group, [])
        if start == end:  # a moment (now): a vertical line across every row
            points.extend([(datetime.fromtimestamp(start), 0), (datetime.fromtimestamp(end), len(rows) - 1), None])
        else:
            points.extend([(datetime.fromtimestamp(start), i), (datetime.fromtimestamp(end), i), None])
    for group, points in groups.items():
        chart.add(group, points, allow_interruptions=True)
    return _svg(chart)
