"""Doris's string functions beyond MySQL's core set: find_in_set, money_format, mask / mask_first_n /
mask_last_n, split_part, substring_index, strleft / strright, starts_with / ends_with, hex / unhex,
to_base64 / from_base64, url_encode / url_decode, parse_url, regexp_extract / regexp_extract_all /
regexp_replace / regexp_replace_one, append_trailing_char_if_absent, elt, field, null_or_empty /
not_null_or_empty, initcap, translate."""

from __future__ import annotations

import base64
import binascii
import re
import urllib.parse

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from planner.expressions import Evaluator, register, register_name
from planner.functions.casts import convert, to_string
from planner.functions.columnwise import (
    affix_match,
    by_distinct,
    byte_layout,
    like_input,
    per_distinct,
    position_in_row,
    rows_of,
    string_array,
    with_data,
)
from planner.functions.time_units import arguments
from planner.values import Value, broadcast
from sql.errors import analysis_error

NULL_TEXT = pa.scalar(None, pa.string())


def _text(v: Value) -> Value:
    return to_string(v)


def _constant(ev: Evaluator, node: exp.Expression, what: str) -> pa.Scalar:
    v = ev.eval(node)
    if not isinstance(v, pa.Scalar):
        raise analysis_error(f"{what} must be a constant")
    return v


def _const_text(ev: Evaluator, node: exp.Expression, what: str) -> str | None:
    return to_string(_constant(ev, node, what)).as_py()


def _const_int(ev: Evaluator, node: exp.Expression, what: str) -> int | None:
    return convert(_constant(ev, node, what), pa.int64()).as_py()


def _nulls_like(v: Value, t: pa.DataType | None = None) -> Value:
    t = t or pa.string()
    return pa.scalar(None, t) if isinstance(v, pa.Scalar) else pa.nulls(len(v), t)


# -- find_in_set, elt, field -------------------------------------------------------------------------


@register_name("find_in_set")
def _find_in_set(ev: Evaluator, e: exp.Expression) -> Value:
    needle_node, list_node = arguments(e, "find_in_set", 2, 2)
    needle, items = _text(ev.eval(needle_node)), _text(ev.eval(list_node))
    scalar = isinstance(needle, pa.Scalar) and isinstance(items, pa.Scalar)
    n = 1 if scalar else len(needle if not isinstance(needle, pa.Scalar) else items)
    needles, lists = broadcast(needle, n), pc.split_pattern(broadcast(items, n), pattern=",")
    parent = pc.list_parent_indices(lists).to_numpy(zero_copy_only=False)
    flat = pc.list_flatten(lists)
    hit = pc.fill_null(pc.equal(flat, needles.take(pa.array(parent, pa.int64()))), False).to_numpy(
        zero_copy_only=False)
    offsets = lists.offsets.to_numpy(zero_copy_only=False)[:-1]
    position = np.arange(len(flat)) - offsets[parent] + 1
    first = np.zeros(n, np.int64)
    hit_rows, hit_pos = parent[hit], position[hit]
    order = np.lexsort((-hit_pos, hit_rows))  # the last write per row wins: the smallest position
    first[hit_rows[order]] = hit_pos[order]
    # a needle holding a comma is never found (MySQL)
    valid = pc.and_(pc.is_valid(needles), pc.is_valid(lists)).to_numpy(zero_copy_only=False)
    comma = pc.fill_null(pc.match_substring(needles, ","), False).to_numpy(zero_copy_only=False)
    out = pa.array(np.where(comma, 0, first), pa.int32(), mask=~valid)
    return out[0] if scalar else out


@register(exp.Elt)
def _elt(ev: Evaluator, e: exp.Elt) -> Value:
    index = convert(ev.eval(e.this), pa.int64())
    values = [_text(ev.eval(x)) for x in e.expressions]
    k = len(values)
    inside = pc.and_(pc.greater_equal(index, 1), pc.less_equal(index, k))
    choice = pc.if_else(inside, pc.subtract(index, 1), pa.scalar(None, pa.int64()))
    if isinstance(choice, pa.Scalar) and all(isinstance(v, pa.Scalar) for v in values):
        return values[choice.as_py()] if choice.is_valid else NULL_TEXT
    n = max(len(x) for x in [choice, *values] if not isinstance(x, pa.Scalar))
    return pc.choose(broadcast(choice, n), *[broadcast(v, n) for v in values])


@register_name("field")
def _field(ev: Evaluator, e: exp.Expression) -> Value:
    nodes = arguments(e, "field", 2, 1 << 16)
    from planner.expressions import comparable

    target = ev.eval(nodes[0])
    out: Value = pa.scalar(0, pa.int32())
    for i, node in reversed(list(enumerate(nodes[1:], start=1))):
        a, b = comparable(target, ev.eval(node))
        out = pc.if_else(pc.fill_null(pc.equal(a, b), False), pa.scalar(i, pa.int32()), out)
    return out


@register_name("null_or_empty")
def _null_or_empty(ev: Evaluator, e: exp.Expression) -> Value:
    (node,) = arguments(e, "null_or_empty", 1, 1)
    v = _text(ev.eval(node))
    return pc.fill_null(pc.equal(v, ""), True)


@register_name("not_null_or_empty")
def _not_null_or_empty(ev: Evaluator, e: exp.Expression) -> Value:
    (node,) = arguments(e, "not_null_or_empty", 1, 1)
    v = _text(ev.eval(node))
    return pc.fill_null(pc.not_equal(v, ""), False)


# -- prefixes, suffixes, padding ---------------------------------------------------------------------


@register_name("strleft")
def _strleft(ev: Evaluator, e: exp.Expression) -> Value:
    v, n = arguments(e, "strleft", 2, 2)
    return ev.eval(exp.Left(this=v, expression=n))


@register_name("strright")
def _strright(ev: Evaluator, e: exp.Expression) -> Value:
    v, n = arguments(e, "strright", 2, 2)
    return ev.eval(exp.Right(this=v, expression=n))


def _affix(ev: Evaluator, e: exp.Expression, name: str, fn) -> Value:  # noqa: ANN001
    v, affix = _text(ev.eval(e.this)), _text(ev.eval(e.expression))
    if not isinstance(affix, pa.Scalar):  # a column affix: every row's bytes compared at once
        return affix_match(v, affix, at_end=fn is pc.ends_with)
    if not affix.is_valid:
        return _nulls_like(v, pa.bool_())
    return fn(v, pattern=affix.as_py())


register(exp.StartsWith)(lambda ev, e: _affix(ev, e, "starts_with", pc.starts_with))
register(exp.EndsWith)(lambda ev, e: _affix(ev, e, "ends_with", pc.ends_with))


@register_name("append_trailing_char_if_absent")
def _append_trailing(ev: Evaluator, e: exp.Expression) -> Value:
    v_node, c_node = arguments(e, "append_trailing_char_if_absent", 2, 2)
    v = _text(ev.eval(v_node))
    c = _const_text(ev, c_node, "append_trailing_char_if_absent character")
    if c is None or len(c) != 1:  # Doris: the trailing character must be exactly one character
        return _nulls_like(v)
    return pc.if_else(pc.ends_with(v, pattern=c), v, pc.binary_join_element_wise(v, c, ""))


# -- split_part, substring_index ---------------------------------------------------------------------


def _nth_part(v: Value, delimiter: str, k: int) -> Value:
    """The k-th (1-based) piece of v split by delimiter; NULL when there is none."""
    arr = string_array(v)
    lists = pc.split_pattern(arr, pattern=delimiter)
    lengths = pc.fill_null(pc.list_value_length(lists), 0).to_numpy(zero_copy_only=False)
    offsets = lists.offsets.to_numpy(zero_copy_only=False)[:-1]
    has = (lengths >= k) & pc.is_valid(lists).to_numpy(zero_copy_only=False)
    flat = pc.list_flatten(lists)
    out = flat.take(pa.array(np.where(has, offsets + k - 1, 0), pa.int64(), mask=~has)) if len(flat) else \
        pa.nulls(len(arr), pa.string())
    return like_input(v, out)


@register(exp.SplitPart)
def _split_part(ev: Evaluator, e: exp.SplitPart) -> Value:
    v = _text(ev.eval(e.this))
    delimiter = _text(ev.eval(e.args["delimiter"]))
    index = ev.eval(e.args["part_index"])

    def run(rows: np.ndarray | None, scalars: list[pa.Scalar]) -> Value:
        text = rows_of(v, rows)
        d, k = scalars[0].as_py(), convert(scalars[1], pa.int64()).as_py()
        if d is None or k is None or k == 0 or d == "":
            return _nulls_like(text)
        if k > 0:
            return _nth_part(text, d, k)
        # a negative index counts from the right, matching the delimiter from the right too
        return pc.utf8_reverse(_nth_part(pc.utf8_reverse(text), d[::-1], -k))

    return by_distinct([delimiter, index], run, pa.string())  # column arguments: once per distinct pair


@register(exp.SubstringIndex)
def _substring_index(ev: Evaluator, e: exp.SubstringIndex) -> Value:
    v = _text(ev.eval(e.this))
    delimiter = _text(ev.eval(e.args["delimiter"]))
    count = ev.eval(e.args["count"])

    def run(rows: np.ndarray | None, scalars: list[pa.Scalar]) -> Value:
        text = rows_of(v, rows)
        d, n = scalars[0].as_py(), convert(scalars[1], pa.int64()).as_py()
        if d is None or n is None:
            return _nulls_like(text)
        return _first_parts(text, d, n)

    return by_distinct([delimiter, count], run, pa.string())


def _first_parts(v: Value, delimiter: str, count: int) -> Value:
    """substring_index: the text before the count-th delimiter (from the right when count < 0)."""
    if count == 0 or delimiter == "":
        return pc.if_else(pc.is_valid(v), "", NULL_TEXT)
    if count > 0:
        arr = string_array(v)
        head = pc.list_slice(pc.split_pattern(arr, pattern=delimiter), 0, count)
        return like_input(v, pc.binary_join(head, delimiter))
    arr = string_array(pc.utf8_reverse(v))
    head = pc.list_slice(pc.split_pattern(arr, pattern=delimiter[::-1]), 0, -count)
    return like_input(v, pc.utf8_reverse(pc.binary_join(head, delimiter[::-1])))


# -- money_format ------------------------------------------------------------------------------------

_GROUP = r"^(-?\d+)(\d{3})"


@register_name("money_format")
def _money_format(ev: Evaluator, e: exp.Expression) -> Value:
    (node,) = arguments(e, "money_format", 1, 1)
    v = ev.eval(node)
    if not (pa.types.is_integer(v.type) or pa.types.is_floating(v.type) or pa.types.is_decimal(v.type)
            or pa.types.is_null(v.type)):
        v = convert(v, pa.float64())
    text = to_string(convert(v, pa.decimal128(38, 2)))  # rounded half away from zero to two decimals
    for _ in range(12):  # one thousands separator per pass, from the left
        grouped = pc.replace_substring_regex(text, pattern=_GROUP, replacement=r"\1,\2")
        if pc.all(pc.fill_null(pc.equal(grouped, text), True)).as_py():
            break
        text = grouped
    return text


# -- masks -------------------------------------------------------------------------------------------


def _mask_table(upper: str, lower: str, digit: str) -> np.ndarray:
    table = np.arange(256, dtype=np.uint8)
    table[ord("A"): ord("Z") + 1] = ord(upper[0]) if upper and ord(upper[0]) < 128 else ord("X")
    table[ord("a"): ord("z") + 1] = ord(lower[0]) if lower and ord(lower[0]) < 128 else ord("x")
    table[ord("0"): ord("9") + 1] = ord(digit[0]) if digit and ord(digit[0]) < 128 else ord("n")
    return table


def _mask(v: Value, table: np.ndarray, first: int | None = None, last: int | None = None) -> Value:
    """Rewrite ASCII letters and digits through `table`, all of them or the first / last n bytes of a row."""
    arr = string_array(v)
    offsets, data = byte_layout(arr)
    out = data.copy()
    if first is None and last is None:
        out = table[data]
    else:
        row, pos = position_in_row(offsets, len(data))
        inside = row >= 0
        if first is not None:
            pick = inside & (pos < first)
        else:
            row_len = (offsets[1:] - offsets[:-1])[np.clip(row, 0, None)]
            pick = inside & (pos >= row_len - (last or 0))
        out = np.where(pick, table[data], data).astype(np.uint8)
    return like_input(v, with_data(arr, out))


@register_name("mask")
def _mask_fn(ev: Evaluator, e: exp.Expression) -> Value:
    nodes = arguments(e, "mask", 1, 4)
    v = _text(ev.eval(nodes[0]))
    chars = [_const_text(ev, n, "mask character") for n in nodes[1:]]
    if any(c is None for c in chars):
        return _nulls_like(v)
    chars += ["X", "x", "n"][len(chars):]
    return _mask(v, _mask_table(*chars))


def _mask_part(name: str, side: str):  # noqa: ANN202
    def handler(ev: Evaluator, e: exp.Expression) -> Value:
        nodes = arguments(e, name, 1, 2)
        v = _text(ev.eval(nodes[0]))
        n = _const_int(ev, nodes[1], f"{name} length") if len(nodes) > 1 else None
        table = _mask_table("X", "x", "n")
        if n is None and len(nodes) > 1:
            return _nulls_like(v)
        if n is None:
            return _mask(v, table)
        n = max(n, 0)
        return _mask(v, table, first=n) if side == "first" else _mask(v, table, last=n)

    return handler


register_name("mask_first_n")(_mask_part("mask_first_n", "first"))
register_name("mask_last_n")(_mask_part("mask_last_n", "last"))


# -- initcap, translate ------------------------------------------------------------------------------


def _is_alnum(b: np.ndarray) -> np.ndarray:
    return ((b >= 48) & (b <= 57)) | ((b >= 65) & (b <= 90)) | ((b >= 97) & (b <= 122))


@register(exp.Initcap)
def _initcap(ev: Evaluator, e: exp.Initcap) -> Value:
    """Upper-case the first letter of each word (a run of ASCII letters and digits), lower-case the rest."""
    v = pc.utf8_lower(_text(ev.eval(e.this)))
    arr = string_array(v)
    offsets, data = byte_layout(arr)
    if len(data) == 0:
        return v
    row, pos = position_in_row(offsets, len(data))
    previous = np.concatenate([[0], data[:-1]])
    starts_word = (pos == 0) | ~_is_alnum(previous)
    lower = (data >= 97) & (data <= 122)
    out = np.where((row >= 0) & starts_word & lower, data - 32, data).astype(np.uint8)
    return like_input(v, with_data(arr, out))


@register(exp.Translate)
def _translate(ev: Evaluator, e: exp.Translate) -> Value:
    v = _text(ev.eval(e.this))
    source = _const_text(ev, e.args["from_"], "translate from")
    target = _const_text(ev, e.args["to"], "translate to")
    if source is None or target is None:
        return _nulls_like(v)
    table: dict[int, int | None] = {}
    for i, ch in enumerate(source):
        if ord(ch) not in table:  # the first mapping of a character wins
            table[ord(ch)] = ord(target[i]) if i < len(target) else None
    return per_distinct(v, lambda s: s.translate(table), pa.string())


# -- hex, base64, URLs -------------------------------------------------------------------------------

_HEX = np.frombuffer(b"".join(f"{i:02X}".encode() for i in range(256)), dtype=np.uint8).reshape(256, 2)


@register(exp.Hex)
def _hex(ev: Evaluator, e: exp.Hex) -> Value:
    v = ev.eval(e.this)
    if pa.types.is_integer(v.type) or pa.types.is_boolean(v.type):
        return per_distinct(pc.cast(v, pa.int64()), lambda x: f"{x & 0xFFFFFFFFFFFFFFFF:X}", pa.string())
    if pa.types.is_floating(v.type) or pa.types.is_decimal(v.type):
        return per_distinct(convert(v, pa.int64()), lambda x: f"{x & 0xFFFFFFFFFFFFFFFF:X}", pa.string())
    arr = string_array(v)
    offsets, data = byte_layout(arr)
    body = _HEX[data[offsets[0]: offsets[-1]]].reshape(-1)
    new_offsets = ((offsets - offsets[0]) * 2).astype(np.int32)
    validity = arr.buffers()[0] if arr.null_count else None
    if validity is not None and arr.offset:
        validity = pc.is_valid(arr)
        out = pa.Array.from_buffers(pa.string(), len(arr), [None, pa.py_buffer(new_offsets.tobytes()),
                                                            pa.py_buffer(body.tobytes())])
        out = pc.if_else(validity, out, NULL_TEXT)
    else:
        out = pa.Array.from_buffers(pa.string(), len(arr), [validity, pa.py_buffer(new_offsets.tobytes()),
                                                            pa.py_buffer(body.tobytes())], null_count=arr.null_count,
                                    offset=0)
    return like_input(v, out)


def _unhex_one(s: str) -> str:
    try:
        return bytes.fromhex(s).decode("utf-8", "replace") if len(s) % 2 == 0 else ""
    except ValueError:
        return ""


@register(exp.Unhex)
def _unhex(ev: Evaluator, e: exp.Unhex) -> Value:
    return per_distinct(_text(ev.eval(e.this)), _unhex_one, pa.string())


@register(exp.ToBase64)
def _to_base64(ev: Evaluator, e: exp.ToBase64) -> Value:
    return per_distinct(_text(ev.eval(e.this)), lambda s: base64.b64encode(s.encode()).decode(), pa.string())


def _from_base64_one(s: str) -> str | None:
    try:
        return base64.b64decode(s.encode(), validate=True).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return None


@register(exp.FromBase64)
def _from_base64(ev: Evaluator, e: exp.FromBase64) -> Value:
    return per_distinct(_text(ev.eval(e.this)), _from_base64_one, pa.string())


@register_name("url_encode")
def _url_encode(ev: Evaluator, e: exp.Expression) -> Value:
    (node,) = arguments(e, "url_encode", 1, 1)
    return per_distinct(_text(ev.eval(node)), lambda s: urllib.parse.quote_plus(s, safe="*-._"), pa.string())


@register_name("url_decode")
def _url_decode(ev: Evaluator, e: exp.Expression) -> Value:
    (node,) = arguments(e, "url_decode", 1, 1)
    return per_distinct(_text(ev.eval(node)), urllib.parse.unquote_plus, pa.string())


def _url_part(url: str, part: str, key: str | None) -> str | None:
    try:
        u = urllib.parse.urlsplit(url)
    except ValueError:
        return None
    if not u.scheme:
        return None
    if part == "QUERY" and key is not None:
        values = urllib.parse.parse_qs(u.query, keep_blank_values=True).get(key)
        return values[0] if values else None
    authority = u.netloc
    found = {
        "PROTOCOL": u.scheme, "HOST": u.hostname or "", "PATH": u.path, "QUERY": u.query or None,
        "REF": u.fragment or None, "AUTHORITY": authority, "FILE": u.path + ("?" + u.query if u.query else ""),
        "USERINFO": authority.rpartition("@")[0] if "@" in authority else None,
        "PORT": str(u.port) if u.port is not None else None,
    }
    return found.get(part)


@register(exp.ParseUrl)
def _parse_url(ev: Evaluator, e: exp.ParseUrl) -> Value:
    v = _text(ev.eval(e.this))
    part = _const_text(ev, e.args["part_to_extract"], "parse_url part")
    key_node = e.args.get("key")
    key = _const_text(ev, key_node, "parse_url key") if key_node is not None else None
    if part is None:
        return _nulls_like(v)
    part = part.upper()
    if part not in ("PROTOCOL", "HOST", "PATH", "QUERY", "REF", "AUTHORITY", "FILE", "USERINFO", "PORT"):
        raise analysis_error(f"Illegal parse_url part: {part}")
    return per_distinct(v, lambda s: _url_part(s, part, key), pa.string())


# -- regular expressions -----------------------------------------------------------------------------


def _named_groups(pattern: str) -> tuple[str, int]:
    """The RE2 pattern with each capturing group named g1, g2 ... and the whole match as g0 (Arrow's
    extract_regex returns named groups only), and the number of groups."""
    out, i, groups, in_class = [], 0, 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i: i + 2])
            i += 2
            continue
        if in_class:
            if c == "[" and pattern[i: i + 2] == "[:":
                end = pattern.find(":]", i)
                if end > 0:
                    out.append(pattern[i: end + 2])
                    i = end + 2
                    continue
            if c == "]":
                in_class = False
        elif c == "[":
            in_class = True
            if pattern[i + 1: i + 2] == "]" or pattern[i + 1: i + 3] == "^]":
                out.append(pattern[i: i + (2 if pattern[i + 1] == "]" else 3)])
                i += 2 if pattern[i + 1] == "]" else 3
                continue
        elif c == "(" and pattern[i + 1: i + 2] != "?":
            groups += 1
            out.append(f"(?P<g{groups}>")
            i += 1
            continue
        out.append(c)
        i += 1
    return f"(?P<g0>{''.join(out)})", groups


def _regex_error(pattern: str) -> Exception:
    return analysis_error(f"Invalid regex expression: {pattern}")


@register(exp.RegexpExtract)
def _regexp_extract(ev: Evaluator, e: exp.RegexpExtract) -> Value:
    v = _text(ev.eval(e.this))
    pattern = _const_text(ev, e.expression, "regexp_extract pattern")
    index_node = e.args.get("position") or e.args.get("group")
    index = _const_int(ev, index_node, "regexp_extract index") if index_node is not None else 1
    if pattern is None or index is None:
        return _nulls_like(v)
    named, groups = _named_groups(pattern)
    if index < 0 or index > groups:
        return pc.if_else(pc.is_valid(v), "", NULL_TEXT)
    try:
        found = pc.extract_regex(v, pattern=named)
    except pa.ArrowInvalid:
        raise _regex_error(pattern) from None
    part = pc.struct_field(found, f"g{index}")
    return pc.if_else(pc.is_valid(v), pc.fill_null(part, ""), NULL_TEXT)  # no match gives ''


_POSIX_CLASSES = {"[:lower:]": "a-z", "[:upper:]": "A-Z", "[:digit:]": "0-9", "[:alpha:]": "a-zA-Z",
                  "[:alnum:]": "a-zA-Z0-9", "[:space:]": r"\s", "[:punct:]": r"!-/:-@\[-`{-~",
                  "[:xdigit:]": "0-9A-Fa-f", "[:word:]": r"\w"}


def _python_regex(pattern: str) -> re.Pattern[str]:
    for k, v in _POSIX_CLASSES.items():
        pattern = pattern.replace(k, v)
    try:
        return re.compile(pattern)
    except re.error:
        raise _regex_error(pattern) from None


@register(exp.RegexpExtractAll)
def _regexp_extract_all(ev: Evaluator, e: exp.RegexpExtractAll) -> Value:
    """Doris returns the first group of every match as text: ['18','17']."""
    v = _text(ev.eval(e.this))
    pattern = _const_text(ev, e.expression, "regexp_extract_all pattern")
    if pattern is None:
        return _nulls_like(v)
    _, groups = _named_groups(pattern)
    compiled = _python_regex(pattern)
    if groups == 0:
        return pc.if_else(pc.is_valid(v), "", NULL_TEXT)

    def extract(s: str) -> str:
        found = [m.group(1) for m in compiled.finditer(s)]
        return "[" + ",".join(f"'{x}'" for x in found) + "]" if found else ""

    return per_distinct(v, extract, pa.string())


def _regexp_replace(ev: Evaluator, e: exp.Expression, once: bool) -> Value:
    if isinstance(e, exp.Anonymous):
        v_node, p_node, r_node = arguments(e, "regexp_replace_one", 3, 3)
    else:
        v_node, p_node, r_node = e.this, e.expression, e.args["replacement"]
    v = _text(ev.eval(v_node))
    pattern = _const_text(ev, p_node, "regexp_replace pattern")
    replacement = _const_text(ev, r_node, "regexp_replace replacement")
    if pattern is None or replacement is None:
        return _nulls_like(v)
    try:
        return pc.replace_substring_regex(v, pattern=pattern, replacement=replacement,
                                          max_replacements=1 if once else None)
    except pa.ArrowInvalid:
        raise _regex_error(pattern) from None


register(exp.RegexpReplace)(lambda ev, e: _regexp_replace(ev, e, once=False))
register_name("regexp_replace_one")(lambda ev, e: _regexp_replace(ev, e, once=True))
