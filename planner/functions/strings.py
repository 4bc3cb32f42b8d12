"""String functions over Arrow utf8 kernels: concat, concat_ws, upper/lower, length/char_length,
substring, left/right, trim, replace, locate/instr, lpad/rpad, reverse, repeat."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from planner.expressions import Evaluator, register, register_name

# registered with the string functions (planner.expressions imports this module): BITMAP / HLL functions, and
# LIKE / REGEXP with a column pattern
from planner.functions import bitmaps as _bitmaps  # noqa: F401
from planner.functions import patterns as _patterns  # noqa: F401
from planner.functions.casts import convert, to_string
from planner.functions.columnwise import by_distinct, rows_of
from planner.values import Value, broadcast
from sql.errors import analysis_error


def _str(v: Value) -> Value:
    return to_string(v)


def _const_int(ev: Evaluator, node: exp.Expression | None, what: str) -> int | None:
    if node is None:
        return None
    v = ev.eval(node)
    if not isinstance(v, pa.Scalar):
        raise analysis_error(f"{what} must be a constant")  # arrow's slice kernels take scalar bounds
    v = convert(v, pa.int64())
    return v.as_py()


@register(exp.Concat, exp.DPipe)  # DPipe: `a || b` under sql_mode PIPES_AS_CONCAT
def _concat(ev: Evaluator, e: exp.Concat) -> Value:
    parts = [_str(v) for v in _operands(ev, e)]
    return pc.binary_join_element_wise(*parts, "")  # any NULL argument gives NULL, as MySQL


def _operands(ev: Evaluator, e: exp.Expression) -> list[Value]:
    if isinstance(e, exp.DPipe):  # its `safe` flag is no operand
        return [ev.eval(e.this), ev.eval(e.expression)]
    return ev.args(e)


@register(exp.ConcatWs)
def _concat_ws(ev: Evaluator, e: exp.ConcatWs) -> Value:
    sep, *parts = [_str(v) for v in ev.args(e)]
    if not parts:
        return pa.scalar("", pa.string())
    if isinstance(sep, pa.Scalar) and not sep.is_valid:
        return pa.scalar(None, pa.string())
    # NULL parts are skipped. Arrow's skip mode drops rows whose parts are all NULL, so a never-NULL
    # empty last part keeps every row; the separator it leaves at the end is cut off again.
    joined = pc.binary_join_element_wise(*parts, pa.scalar("", pa.string()), sep, null_handling="skip")
    width = pc.utf8_length(sep)
    if isinstance(width, pa.Scalar):
        n = width.as_py()
        return pc.utf8_slice_codeunits(joined, 0, -n) if n else joined
    raise analysis_error("CONCAT_WS separator must be a constant")


@register(exp.Upper)
def _upper(ev: Evaluator, e: exp.Upper) -> Value:
    return pc.utf8_upper(_str(ev.eval(e.this)))


@register(exp.Lower)
def _lower(ev: Evaluator, e: exp.Lower) -> Value:
    return pc.utf8_lower(_str(ev.eval(e.this)))


@register(exp.Length)
def _length(ev: Evaluator, e: exp.Length) -> Value:
    v = _str(ev.eval(e.this))
    # LENGTH counts bytes (UTF-8), CHAR_LENGTH counts characters
    fn = pc.binary_length if e.args.get("binary") else pc.utf8_length
    return pc.cast(fn(v), pa.int32())


register_name("octet_length")(lambda ev, e: pc.cast(pc.binary_length(_str(ev.args(e)[0])), pa.int32()))


def _substring(v: Value, start: int | None, length: int | None) -> Value:
    """MySQL SUBSTRING: 1-based start, negative start counts from the end, start 0 gives ''."""
    if start is None:
        return pa.scalar(None, pa.string())
    if start == 0 or (length is not None and length <= 0):
        return pc.utf8_slice_codeunits(v, 0, 0)
    begin = start - 1 if start > 0 else start
    if length is None:
        out = pc.utf8_slice_codeunits(v, begin)
    elif begin < 0 and begin + length >= 0:
        out = pc.utf8_slice_codeunits(v, begin)
    else:
        out = pc.utf8_slice_codeunits(v, begin, begin + length)
    if begin < 0:  # a negative start before the beginning of the string gives '' (arrow would clamp)
        out = pc.if_else(pc.less(pc.utf8_length(v), -begin), pa.scalar("", pa.string()), out)
    return out


def _substring_per_row(v: Value, start: Value, length: Value | None) -> Value:
    """SUBSTRING with per-row bounds. Arrow's slice kernels take scalar bounds only, so this walks the
    rows in Python; such queries come from BI tools' metadata SQL over small catalog tables."""
    n = max(len(x) for x in (v, start, length) if isinstance(x, pa.Array | pa.ChunkedArray))

    def column(x: Value | None) -> list:
        if x is None:
            return [None] * n
        if isinstance(x, pa.Scalar):
            return [x.as_py()] * n
        return x.to_pylist()

    texts, starts = column(v), column(convert(start, pa.int64()))
    lengths = column(convert(length, pa.int64()) if length is not None else None)
    out = []
    for text, b, size in zip(texts, starts, lengths, strict=True):
        if text is None or b is None or (length is not None and size is None):
            out.append(None)
        else:
            out.append(_substring(pa.scalar(text, pa.string()), b, size).as_py())
    return pa.array(out, pa.string())


@register(exp.Substring)
def _substr(ev: Evaluator, e: exp.Substring) -> Value:
    v = _str(ev.eval(e.this))
    start_node, length_node = e.args.get("start"), e.args.get("length")
    start_value = ev.eval(start_node) if start_node is not None else None
    length_value = ev.eval(length_node) if length_node is not None else None
    if not all(x is None or isinstance(x, pa.Scalar) for x in (start_value, length_value)):
        return _substring_per_row(v, start_value if start_value is not None else pa.scalar(1), length_value)
    start = _const_int(ev, start_node, "substring start")
    length = _const_int(ev, e.args.get("length"), "substring length")
    if e.args.get("start") is None:
        start = 1
    return _substring(v, start, length)


@register_name("mid")
def _mid(ev: Evaluator, e: exp.Anonymous) -> Value:
    args = e.expressions
    v = _str(ev.eval(args[0]))
    return _substring(v, _const_int(ev, args[1], "mid start"),
                      _const_int(ev, args[2], "mid length") if len(args) > 2 else None)


@register(exp.Left)
def _left(ev: Evaluator, e: exp.Left) -> Value:
    n = _const_int(ev, e.expression, "left length")
    return pc.utf8_slice_codeunits(_str(ev.eval(e.this)), 0, max(n or 0, 0))


@register(exp.Right)
def _right(ev: Evaluator, e: exp.Right) -> Value:
    n = _const_int(ev, e.expression, "right length")
    v = _str(ev.eval(e.this))
    if not n or n <= 0:
        return pc.utf8_slice_codeunits(v, 0, 0)
    return pc.utf8_slice_codeunits(v, -n)


@register(exp.Trim)
def _trim(ev: Evaluator, e: exp.Trim) -> Value:
    v = _str(ev.eval(e.this))
    chars_node = e.expression
    position = str(e.args.get("position") or "BOTH").upper()
    if chars_node is None:
        chars = " "
    else:
        c = ev.eval(chars_node)
        if not isinstance(c, pa.Scalar):
            raise analysis_error("TRIM characters must be a constant")
        chars = to_string(c).as_py() or ""
    if chars_node is not None and len(chars) > 1:
        # MySQL removes a whole prefix/suffix string, repeatedly: a regex does exactly that
        import re

        lit = re.escape(chars)
        pattern = {"LEADING": f"^({lit})+", "TRAILING": f"({lit})+$"}.get(position, f"^({lit})+|({lit})+$")
        return pc.replace_substring_regex(v, pattern=pattern, replacement="")
    fn = {"LEADING": pc.utf8_ltrim, "TRAILING": pc.utf8_rtrim}.get(position, pc.utf8_trim)
    return fn(v, characters=chars)


@register(exp.Replace)
def _replace(ev: Evaluator, e: exp.Replace) -> Value:
    v = _str(ev.eval(e.this))
    pat = ev.eval(e.expression)
    rep = ev.eval(e.args["replacement"])
    if not (isinstance(pat, pa.Scalar) and isinstance(rep, pa.Scalar)):
        raise analysis_error("REPLACE pattern and replacement must be constants")
    if not pat.is_valid or not rep.is_valid:
        return pa.scalar(None, pa.string())
    pattern = to_string(pat).as_py()
    if pattern == "":
        return v
    return pc.replace_substring(v, pattern=pattern, replacement=to_string(rep).as_py())


@register(exp.StrPosition)
def _locate(ev: Evaluator, e: exp.StrPosition) -> Value:
    v = _str(ev.eval(e.this))
    sub = _str(ev.eval(e.args["substr"]))
    position = e.args.get("position")
    start = ev.eval(position) if position is not None else pa.scalar(1, pa.int64())

    def run(rows: np.ndarray | None, scalars: list[pa.Scalar]) -> Value:
        pattern, begin = scalars
        text = rows_of(v, rows)
        if not pattern.is_valid or not begin.is_valid:
            return pa.scalar(None, pa.int64())
        return _locate_in(text, pattern.as_py(), convert(begin, pa.int64()).as_py())

    def per_row() -> Value:  # nearly a substring a row: Python's str.find, row by row
        n = max(len(x) for x in (v, sub, start) if not isinstance(x, pa.Scalar))
        columns = [broadcast(x, n).to_pylist() for x in (v, sub, convert(start, pa.int64()))]
        return pa.array([_locate_one(*row) for row in zip(*columns, strict=True)], pa.int64())

    # a column substring or start: once per distinct (substring, start), not per row
    return by_distinct([sub, start], run, pa.int64(), per_row)


def _locate_one(text: str | None, pattern: str | None, start: int | None) -> int | None:
    if text is None or pattern is None or start is None:
        return None
    if start < 1 or (start > 1 and start > len(text)):
        return 0
    return text.find(pattern, start - 1) + 1


def _locate_in(v: Value, pattern: str, start: int) -> Value:
    if start > 1:
        tail = pc.utf8_slice_codeunits(v, start - 1)
        found = pc.find_substring(tail, pattern=pattern)
        found = _bytes_to_chars(tail, found)
        found = pc.if_else(pc.less(found, 0), 0, pc.add(found, start))
        # Doris: a start past the last character finds nothing, not even ''
        return pc.cast(pc.if_else(pc.less(pc.utf8_length(v), start), 0, found), pa.int64())
    if start < 1:  # Doris: a start before the first character finds nothing
        return pc.if_else(pc.is_valid(v), pa.scalar(0, pa.int64()), pa.scalar(None, pa.int64()))
    found = _bytes_to_chars(v, pc.find_substring(v, pattern=pattern))
    return pc.cast(pc.add(found, 1), pa.int64())


def _bytes_to_chars(v: Value, byte_pos: Value) -> Value:
    """find_substring returns a byte offset; turn it into a character offset for non-ASCII text."""
    if isinstance(v, pa.Scalar) and not v.is_valid:
        return pc.cast(byte_pos, pa.int64())
    ascii_only = pc.string_is_ascii(v)
    if isinstance(ascii_only, pa.Scalar) and ascii_only.as_py():
        return pc.cast(byte_pos, pa.int64())
    if not isinstance(ascii_only, pa.Scalar) and pc.all(pc.fill_null(ascii_only, True)).as_py():
        return pc.cast(byte_pos, pa.int64())
    # non-ASCII rows: count the characters of the text before the byte offset
    raw = pc.cast(v, pa.binary())
    n = len(raw) if not isinstance(raw, pa.Scalar) else 1
    pos = pc.cast(byte_pos, pa.int64())
    starts = pc.max_element_wise(pos, 0)
    chars = _prefix_char_count(raw, starts, n)
    return pc.if_else(pc.less(pos, 0), -1, chars)


def _prefix_char_count(raw: Value, byte_len: Value, n: int) -> Value:
    """Characters in the first byte_len bytes of each value: count UTF-8 lead bytes with numpy."""
    import numpy as np

    if isinstance(raw, pa.Scalar):
        b = raw.as_py() or b""
        k = byte_len.as_py() or 0
        return pa.scalar(len(b[:k].decode("utf-8", "ignore")), pa.int64())
    arr = raw if isinstance(raw, pa.Array) else raw.combine_chunks()
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32)[arr.offset: arr.offset + len(arr) + 1]
    data = np.frombuffer(arr.buffers()[2], dtype=np.uint8) if arr.buffers()[2] is not None else np.zeros(0, np.uint8)
    lead = ((data & 0xC0) != 0x80).astype(np.int64)
    cum = np.concatenate([[0], np.cumsum(lead)])
    lens = pc.fill_null(byte_len, 0).to_numpy(zero_copy_only=False).astype(np.int64)
    starts = offsets[:-1].astype(np.int64)
    return pa.array(cum[starts + lens] - cum[starts], pa.int64())


def _pad(ev: Evaluator, e: exp.Pad) -> Value:
    v = _str(ev.eval(e.this))
    width = _const_int(ev, e.expression, "pad length")
    fill_node = e.args.get("fill_pattern")
    fill = to_string(ev.eval(fill_node)).as_py() if fill_node is not None else " "
    if width is None or fill is None:
        return pa.scalar(None, pa.string())
    if width < 0:  # Doris: a negative length gives NULL
        return pa.scalar(None, pa.string()) if isinstance(v, pa.Scalar) else pa.nulls(len(v), pa.string())
    left = bool(e.args.get("is_left"))
    if fill == "":  # Doris: nothing to pad with gives '' unless the text is cut
        cut = pc.utf8_slice_codeunits(v, 0, width)
        return pc.if_else(pc.greater(pc.utf8_length(v), width), cut, pc.if_else(pc.equal(pc.utf8_length(v), width), v, ""))
    if len(fill) == 1:
        padded = pc.utf8_lpad(v, width=width, padding=fill) if left else pc.utf8_rpad(v, width=width, padding=fill)
    else:
        # multi-character fill: the pad of each row is a prefix of one filler string (vectorised take)
        filler = (fill * (width // len(fill) + 1))[:width]
        need = pc.max_element_wise(pc.subtract(width, pc.utf8_length(v)), 0)
        pad_txt = _slice_variable(pa.scalar(filler), need)
        padded = pc.binary_join_element_wise(pad_txt, v, "") if left else pc.binary_join_element_wise(v, pad_txt, "")
    return pc.utf8_slice_codeunits(padded, 0, width)  # MySQL truncates to the width


def _slice_variable(filler: pa.Scalar, need: Value) -> Value:
    """filler[:need] per row: group rows by their (few distinct) need values."""
    text = filler.as_py()
    if isinstance(need, pa.Scalar):
        return pa.scalar(text[: need.as_py() or 0], pa.string())
    # there are at most width+1 distinct prefixes: a dictionary array indexed by need
    prefixes = pa.array([text[:k] for k in range(len(text) + 1)], pa.string())
    return prefixes.take(pc.fill_null(need, 0))


register(exp.Pad)(_pad)


@register(exp.Reverse)
def _reverse(ev: Evaluator, e: exp.Reverse) -> Value:
    return pc.utf8_reverse(_str(ev.eval(e.this)))


@register(exp.Repeat)
def _repeat(ev: Evaluator, e: exp.Repeat) -> Value:
    v = _str(ev.eval(e.this))
    n = convert(ev.eval(e.args["times"]), pa.int64())
    return pc.binary_repeat(v, pc.max_element_wise(n, 0))


@register_name("space")
def _space(ev: Evaluator, e: exp.Anonymous) -> Value:
    n = convert(ev.args(e)[0], pa.int64())
    return pc.binary_repeat(pa.scalar(" "), pc.max_element_wise(n, 0))


@register_name("ascii")
def _ascii(ev: Evaluator, e: exp.Anonymous) -> Value:
    v = pc.cast(_str(ev.args(e)[0]), pa.binary())
    first = pc.binary_slice(v, 0, 1)
    return _ascii_codes(first)


def _ascii_codes(first: Value) -> Value:
    import numpy as np

    if isinstance(first, pa.Scalar):
        b = first.as_py()
        return pa.scalar(None if b is None else (b[0] if b else 0), pa.int32())
    arr = first.combine_chunks() if isinstance(first, pa.ChunkedArray) else first
    lens = pc.binary_length(arr).to_numpy(zero_copy_only=False)
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32)[arr.offset: arr.offset + len(arr) + 1]
    data = np.frombuffer(arr.buffers()[2], dtype=np.uint8) if arr.buffers()[2] is not None else np.zeros(1, np.uint8)
    codes = np.where(lens > 0, data[np.minimum(offsets[:-1], max(len(data) - 1, 0))], 0).astype(np.int32)
    return pa.array(codes, pa.int32(), mask=pc.is_null(arr).to_numpy(zero_copy_only=False))
