"""LIKE / ILIKE / REGEXP whose pattern is a column (`s LIKE concat(p, '%')`): Arrow's match kernels take one
pattern, so the rows are grouped by their distinct pattern and each group is matched with its pattern as a
constant (columnwise.by_distinct). A constant pattern keeps the evaluator's own handler."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from planner.expressions import _BY_CLASS, Evaluator, Handler, register
from planner.functions.casts import to_string
from planner.functions.columnwise import by_distinct, rows_of
from planner.values import Value, broadcast

_NULL_BOOL = pa.scalar(None, pa.bool_())


def _like(v: Value, pattern: str, e: exp.Expression) -> Value:
    out = pc.match_like(v, pattern, ignore_case=isinstance(e, exp.ILike))
    return pc.invert(out) if e.args.get("negate") else out


def _regexp(v: Value, pattern: str, e: exp.Expression) -> Value:
    return pc.match_substring_regex(v, pattern)


Segment = tuple[str | None, ...]  # the characters of a LIKE pattern between two %; None stands for _


def like_segments(pattern: str) -> list[Segment]:
    """A LIKE pattern split at its unescaped %."""
    segments: list[Segment] = []
    current: list[str | None] = []
    escaped = False
    for ch in pattern:
        if escaped:
            current.append(ch)  # MySQL: a backslash makes the next character literal
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "%":
            segments.append(tuple(current))
            current = []
        else:
            current.append(None if ch == "_" else ch)
    segments.append(tuple(current))  # a lone trailing backslash escapes nothing (as Arrow's match_like)
    return segments


def _at(text: str, pos: int, segment: Segment) -> bool:
    return pos + len(segment) <= len(text) and all(c is None or text[pos + i] == c for i, c in enumerate(segment))


def _find(text: str, start: int, segment: Segment) -> int:
    if None not in segment:
        return text.find("".join(segment), start)  # type: ignore[arg-type]
    for pos in range(start, len(text) - len(segment) + 1):
        if _at(text, pos, segment):
            return pos
    return -1


def like_one(text: str, pattern: str) -> bool:
    """One LIKE match without a regular expression (a compiled one per distinct pattern costs ~0.1 ms): the
    first segment anchors at the start, the last at the end, the middle ones are found leftmost in order."""
    segments = like_segments(pattern)
    first, last = segments[0], segments[-1]
    if len(segments) == 1:
        return len(text) == len(first) and _at(text, 0, first)
    if not _at(text, 0, first) or len(text) - len(last) < len(first) or not _at(text, len(text) - len(last), last):
        return False
    pos, end = len(first), len(text) - len(last)
    for segment in segments[1:-1]:
        found = _find(text[:end], pos, segment)
        if found < 0:
            return False
        pos = found + len(segment)
    return True


def _like_rows(v: pa.Array, patterns: pa.Array, e: exp.Expression) -> pa.Array:
    """LIKE over (text, pattern) pairs of which nearly every pattern is a distinct one: one Python match a row."""
    ignore_case, negate = isinstance(e, exp.ILike), bool(e.args.get("negate"))
    out = []
    for text, pattern in zip(v.to_pylist(), patterns.to_pylist(), strict=True):
        if text is None or pattern is None:
            out.append(None)
            continue
        if ignore_case:
            text, pattern = text.lower(), pattern.lower()
        if pattern.endswith("\\"):  # a trailing escape: whatever Arrow's constant-pattern LIKE makes of it
            out.append(pc.match_like(pa.array([text]), pattern)[0].as_py() != negate)
        else:
            out.append(like_one(text, pattern) != negate)
    return pa.array(out, pa.bool_())


def _column_pattern(constant: Handler, match, rows_match=None) -> Handler:  # noqa: ANN001
    def handler(ev: Evaluator, e: exp.Expression) -> Value:
        pattern = ev.eval(e.expression)
        if isinstance(pattern, pa.Scalar):
            return constant(ev, e)
        v = to_string(ev.eval(e.this))
        if pa.types.is_null(v.type):
            return _NULL_BOOL

        def run(rows: np.ndarray | None, scalars: list[pa.Scalar]) -> Value:
            (p,) = scalars
            text = rows_of(v, rows)
            if not p.is_valid:
                return _NULL_BOOL
            return match(text, p.as_py(), e)

        patterns = to_string(pattern)
        per_row = None
        if rows_match is not None:
            def per_row() -> pa.Array:
                return rows_match(broadcast(v, len(patterns)), patterns, e)

        return by_distinct([patterns], run, pa.bool_(), per_row)

    return handler


for _cls, _match, _rows in ((exp.Like, _like, _like_rows), (exp.ILike, _like, _like_rows),
                             (exp.RegexpLike, _regexp, None)):  # Python's re is not RE2: REGEXP stays per pattern
    register(_cls)(_column_pattern(_BY_CLASS[_cls], _match, _rows))
