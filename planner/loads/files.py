"""Files as tables: Doris's `local(...)` table-valued function.

`FileScanOptions.parse` reads the TVF properties with Doris's names and defaults (format, column_separator
"\\t", line_delimiter "\\n", csv_schema "k1:int;k2:string", skip_lines, trim_double_quotes,
read_json_by_line, strip_outer_array); `file_schema` gives the columns both execution paths use (csv:
c1..cN strings unless csv_schema, header names for csv_with_names*, parquet/json: the file's own
schema); `FileTableSource` reads the files in-process with pyarrow for a bare `SELECT ... FROM local(...)`.
`bind_table_functions` swaps each TVF in a query for a named source the planner resolves like a table.

dorislite is one node: `file_path` is any local path (absolute, or relative to the server's working
directory) and may be a glob (`/data/part-*.csv`); `backend_id` / `shared_storage` are accepted and ignored.
"""

from __future__ import annotations

import csv
import glob
import io
import itertools
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.dataset as ds
import pyarrow.json as pajson
from sqlglot import exp

from planner.functions.casts import convert
from planner.sources import apply_predicates
from sql import expressions as dx
from sql.errors import SqlError, analysis_error
from sql.types import DorisType, parse_type
from storage.predicate import ColumnPredicate

CSV_FORMATS = ("csv", "csv_with_names", "csv_with_names_and_types")
FORMATS = (*CSV_FORMATS, "json", "parquet")
STRICT_FILE_ERROR = "Insert has filtered data in strict mode. Reason: "
EXECUTED_FUNCTIONS = ("local",)

# header lines each csv format carries before the data
_HEADER_LINES = {"csv": 0, "csv_with_names": 1, "csv_with_names_and_types": 2}

# compress_type -> pyarrow codec name ("" = by file extension, as Doris's UNKNOWN)
_COMPRESSION = {"unknown": "detect", "plain": None, "gz": "gzip", "bz2": "bz2", "lz4frame": "lz4",
                "zstd": "zstd"}


def tvf_error(detail: str) -> SqlError:
    return analysis_error(detail, 1105, "HY000")


def _unescape(text: str) -> str:
    r"""Separators are written escaped in SQL text: '\t', '\n', '\x01'."""
    if "\\" not in text:
        return text
    try:
        return text.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except UnicodeDecodeError:
        return text


def _flag(props: dict[str, str], key: str, default: bool) -> bool:
    value = props.get(key)
    return default if value is None else value.strip().lower() == "true"


def parse_csv_schema(text: str) -> tuple[tuple[str, DorisType], ...]:
    """`"k1:int;k2:decimal(10,2);k3:string"` -> ((name, type), ...)."""
    out: list[tuple[str, DorisType]] = []
    for item in text.split(";"):
        if not item.strip():
            continue
        name, sep, type_text = item.partition(":")
        if not sep or not name.strip() or not type_text.strip():
            raise tvf_error(f"invalid csv_schema: '{text}', expected \"name1:type1;name2:type2;...\"")
        try:
            out.append((name.strip(), parse_type(type_text.strip())))
        except SqlError:
            raise tvf_error(f"invalid csv_schema: unsupported type '{type_text.strip()}' of column "
                            f"'{name.strip()}'") from None
    if not out:
        raise tvf_error(f"invalid csv_schema: '{text}'")
    return tuple(out)


@dataclass(frozen=True)
class FileScanOptions:
    function: str
    file_path: str
    format: str
    paths: tuple[str, ...]  # the glob's matches, sorted
    column_separator: str = "\t"
    line_delimiter: str = "\n"
    csv_schema: tuple[tuple[str, DorisType], ...] = ()
    skip_lines: int = 0
    trim_double_quotes: bool = False
    read_json_by_line: bool = True
    strip_outer_array: bool = False
    compression: str | None = "detect"
    properties: dict[str, str] = field(default_factory=dict)
    enclose: str = ""  # CSV: a field between two of these may hold the separator and line breaks
    escape: str = ""  # CSV: inside an enclosed field, makes the next character literal
    json_root: str = ""  # JSON: the object (or array of objects) the rows are read from, e.g. $.data
    strict_types: bool = False  # a strict INSERT reads it: a csv_schema value that does not convert fails the load
    jsonpaths: tuple[str, ...] = ()  # JSON: the columns, each a path ($.a, $.a.b, $.list[0]), named by the path

    @classmethod
    def parse(cls, function: str, properties: dict[str, str]) -> FileScanOptions:
        name = function.lower()
        if name not in EXECUTED_FUNCTIONS:
            raise tvf_error(f"Table function '{name}' is not supported: dorislite reads files on its own "
                            f"node only, through local(\"file_path\" = \"...\", \"format\" = \"...\")")
        for key in ("file_path", "format"):
            if key not in properties:
                raise tvf_error(f"Property '{key}' is required.")
        fmt = properties["format"].strip().lower()
        if fmt not in FORMATS:
            raise tvf_error(f"format:{properties['format']} is not supported.")
        json_root = properties.get("json_root", "").strip()
        if json_root and json_path_steps(json_root) is None:
            raise tvf_error(f"Invalid json_root: {json_root}")
        paths_text = (properties.get("jsonpaths") or properties.get("json_paths") or "").strip()
        jsonpaths: tuple[str, ...] = ()
        if paths_text:
            try:
                parsed = json.loads(paths_text)
            except ValueError:
                parsed = None
            if not isinstance(parsed, list) or not all(isinstance(p, str) and json_path_steps(p) for p in parsed):
                raise tvf_error(f"Invalid jsonpaths: {paths_text}")
            jsonpaths = tuple(parsed)
        compress = properties.get("compress_type", "unknown").strip().lower()
        if compress not in _COMPRESSION:
            raise tvf_error(f"compress_type:{properties['compress_type']} is not supported.")
        try:
            skip = int(properties.get("skip_lines", "0"))
        except ValueError:
            raise tvf_error(f"skip_lines should be a number: {properties['skip_lines']}") from None
        sep = _unescape(properties.get("column_separator", "\\t"))
        line = _unescape(properties.get("line_delimiter", "\\n"))
        if not sep or not line:
            raise tvf_error("column_separator and line_delimiter must not be empty")
        enclose, escape = (_unescape(properties.get(k, "")) for k in ("enclose", "escape"))
        for key, value in (("enclose", enclose), ("escape", escape)):
            if len(value) > 1:
                raise tvf_error(f"{key} must be a single character: {properties[key]}")
        if enclose and (len(sep) != 1 or line not in ("\n", "\r\n")):
            raise tvf_error("enclose needs a one-character column_separator and a \\n or \\r\\n line_delimiter")
        file_path = properties["file_path"]
        return cls(
            function=name, file_path=file_path, format=fmt, paths=expand_paths(file_path),
            column_separator=sep, line_delimiter=line,
            csv_schema=parse_csv_schema(properties["csv_schema"]) if properties.get("csv_schema") else (),
            skip_lines=max(skip, 0), trim_double_quotes=_flag(properties, "trim_double_quotes", False),
            read_json_by_line=_flag(properties, "read_json_by_line", True),
            strip_outer_array=_flag(properties, "strip_outer_array", False),
            compression=_COMPRESSION[compress], properties=dict(properties), enclose=enclose, escape=escape,
            json_root=json_root, jsonpaths=jsonpaths,
        )

    @property
    def header_lines(self) -> int:
        return _HEADER_LINES.get(self.format, 0)

    @property
    def is_csv(self) -> bool:
        return self.format in CSV_FORMATS


def options_of(node: dx.TableFunction, strict_types: bool = False) -> FileScanOptions:
    """The TVF's options (`strict_types`: read for a strict INSERT)."""
    options = FileScanOptions.parse(node.name, node.properties)
    return replace(options, strict_types=True) if strict_types else options


def expand_paths(pattern: str) -> tuple[str, ...]:
    path = os.path.expanduser(pattern)
    matches = sorted(p for p in glob.glob(path) if os.path.isfile(p))
    if not matches:
        raise tvf_error(f"get file list from backend failed. No file matches the path: {pattern}")
    return tuple(os.path.abspath(p) for p in matches)


# -- reading ------------------------------------------------------------------------------------------


def _read_bytes(path: str, compression: str | None) -> bytes:
    codec = compression
    if codec == "detect":
        codec = pa.Codec.detect(path).name if _has_known_extension(path) else None
    with pa.input_stream(path, compression=codec) as f:
        return f.read()


def _has_known_extension(path: str) -> bool:
    return path.endswith((".gz", ".bz2", ".lz4", ".zst"))


def _split_lines(data: bytes, opts: FileScanOptions) -> pa.Array:
    text = pa.array([data.decode("utf-8", errors="replace")], pa.large_string())
    lines = pc.split_pattern(text, opts.line_delimiter).flatten()
    if len(lines) and lines[len(lines) - 1].as_py() == "":
        lines = lines.slice(0, len(lines) - 1)  # the delimiter after the last line
    return lines


def _fields(lines: pa.Array, n_columns: int, opts: FileScanOptions) -> list[pa.Array]:
    """Split each line on the separator; rows with fewer fields get NULLs, extra fields are dropped
    (Doris's behaviour for csv). Vectorised over the list offsets."""
    parts = pc.split_pattern(lines, opts.column_separator)
    values = parts.flatten()
    if opts.trim_double_quotes:
        values = pc.replace_substring_regex(values, r'^"(.*)"$', r"\1")
    offsets = parts.offsets.to_numpy()
    lengths = np.diff(offsets)
    out = []
    for i in range(n_columns):
        present = lengths > i
        index = pa.array(np.where(present, offsets[:-1] + i, 0), mask=~present)
        col = pc.take(values, index).cast(pa.string()) if len(values) else pa.nulls(len(lines), pa.string())
        out.append(pc.if_else(pc.equal(col, "\\N"), None, col))  # \N is Doris's NULL in text files
    return out


def head_lines(path: str, opts: FileScanOptions, n: int) -> list[str]:
    """The first `n` lines of a file, reading only as much of it as they need."""
    codec = opts.compression
    if codec == "detect":
        codec = pa.Codec.detect(path).name if _has_known_extension(path) else None
    chunk, data = 1 << 16, b""
    with pa.input_stream(path, compression=codec) as f:
        while True:
            more = f.read(chunk)
            data += more
            text = data.decode("utf-8", errors="replace")
            if not more or text.count(opts.line_delimiter) >= n:
                break
            chunk *= 2
    return text.split(opts.line_delimiter)[:n] if text else []


def _csv_header(opts: FileScanOptions) -> list[str]:
    lines = head_lines(opts.paths[0], opts, opts.skip_lines + 1)
    first = opts.skip_lines
    if len(lines) <= first or not lines[first]:
        raise tvf_error("The first line is empty, can not parse column numbers")
    if opts.enclose:  # the first record, which may run over several lines
        records = head_records(opts.paths[0], opts, first + 1)
        return records[first] if len(records) > first else [""]
    return lines[first].split(opts.column_separator)


def head_records(path: str, opts: FileScanOptions, n: int) -> list[list[str]]:
    """The first `n` records of an enclosed CSV file (a record may span lines: read a few more lines)."""
    text = opts.line_delimiter.join(head_lines(path, opts, n + 64))
    return list(itertools.islice(csv.reader(io.StringIO(text), **_dialect(opts)), n))


def _dialect(opts: FileScanOptions) -> dict[str, Any]:
    return {"delimiter": opts.column_separator, "quotechar": opts.enclose, "escapechar": opts.escape or None,
            "doublequote": not opts.escape}


def _arrow_fields(data: bytes, skip: int, n_columns: int, opts: FileScanOptions) -> list[pa.Array]:
    """CSV parsed by Arrow's (multi-threaded) reader: with `enclose` / `escape` (enclosed separators and line
    breaks), or plain (no quoting: every character is data). A record with another number of fields is NULL-filled
    or cut, as Doris does."""
    ragged: list[str] = []

    def keep_aside(row: pacsv.InvalidRow) -> str:
        ragged.append(row.text)
        return "skip"

    quoted = bool(opts.enclose)
    names = [f"c{i}" for i in range(n_columns)]
    table = pacsv.read_csv(
        pa.BufferReader(data),
        read_options=pacsv.ReadOptions(column_names=names, skip_rows=skip),
        parse_options=pacsv.ParseOptions(delimiter=opts.column_separator, quote_char=opts.enclose or False,
                                         escape_char=(opts.escape or False) if quoted else False,
                                         double_quote=quoted and not opts.escape, newlines_in_values=quoted,
                                         ignore_empty_lines=False, invalid_row_handler=keep_aside),
        convert_options=pacsv.ConvertOptions(column_types=dict.fromkeys(names, pa.string()), null_values=["\\N"],
                                             strings_can_be_null=True, quoted_strings_can_be_null=False))
    if ragged:  # the odd records (few): padded or cut in Python, then appended
        records = ([list(r) for text in ragged for r in csv.reader(io.StringIO(text), **_dialect(opts))] if quoted
                   else [text.rstrip("\r\n").split(opts.column_separator) for text in ragged])
        extra = [[(r[i] if i < len(r) and r[i] != "\\N" else None) for r in records] for i in range(n_columns)]
        table = pa.concat_tables([table, pa.table(dict(zip(names, (pa.array(c, pa.string()) for c in extra),
                                                           strict=True)))])
    columns = [table.column(i).combine_chunks() for i in range(n_columns)]
    if opts.trim_double_quotes:
        columns = [pc.replace_substring_regex(c, r'^"(.*)"$', r"\1") for c in columns]
    return columns


def _arrow_reads(opts: FileScanOptions) -> bool:
    """Arrow's reader takes one-character separators and \\n (or \\r\\n) line ends; other plain files are split
    here."""
    return bool(opts.enclose) or (len(opts.column_separator) == 1 and opts.column_separator not in "\r\n\"" and
                                  opts.line_delimiter in ("\n", "\r\n"))


def file_schema(opts: FileScanOptions) -> pa.Schema:
    """The columns a file TVF produces (what `DESC FUNCTION` would show)."""
    if opts.is_csv:
        if opts.csv_schema:
            return pa.schema([pa.field(n, t.arrow_type()) for n, t in opts.csv_schema])
        header = _csv_header(opts)
        names = header if opts.header_lines else [f"c{i + 1}" for i in range(len(header))]
        return pa.schema([pa.field(n, pa.string()) for n in names])
    if opts.format == "parquet":
        return normalize_schema(ds.dataset(list(opts.paths[:1]), format="parquet").schema)
    schema = normalize_schema(_read_json(opts.paths[0], opts).schema)
    if not len(schema):  # Doris finds no columns in an empty JSON file (or `[]`) either
        raise tvf_error("The first line is empty, can not parse column numbers")
    return schema


_STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_$-]*)|\[(\d+)\]|\['([^']*)'\]|\[\"([^\"]*)\"\]")


def json_path_steps(path: str) -> list[str | int] | None:
    """`$.a.b[0]` -> ['a', 'b', 0]; None when it is no path of that form."""
    text = path.strip()
    if not text.startswith("$"):
        return None
    steps: list[str | int] = []
    pos = 1
    while pos < len(text):
        m = _STEP.match(text, pos)
        if m is None:
            return None
        name, index, quoted, double = m.groups()
        steps.append(int(index) if index is not None else (name or quoted or double or ""))
        pos = m.end()
    return steps


def _step(col: pa.Array, step: str | int) -> pa.Array:
    """One path step over a column (vectorised): a struct's field or a list's element; NULL where absent."""
    t = col.type
    if isinstance(step, int) and (pa.types.is_list(t) or pa.types.is_large_list(t)):
        present = pc.greater(pc.list_value_length(col), step)
        return pc.list_element(pc.if_else(present, col, pa.scalar(None, t)), step)
    if isinstance(step, str) and pa.types.is_struct(t) and t.get_field_index(step) >= 0:
        return pc.struct_field(col, [t.get_field_index(step)])
    return pa.nulls(len(col), pa.null())


def _navigate(table: pa.Table, steps: list[str | int]) -> pa.Array:
    if not steps:  # `$`: the whole row
        return pa.StructArray.from_arrays([c.combine_chunks() for c in table.columns], table.column_names) \
            if table.num_columns else pa.nulls(table.num_rows)
    first = steps[0]
    if not isinstance(first, str) or first not in table.column_names:
        return pa.nulls(table.num_rows)
    col = table.column(first).combine_chunks()
    for step in steps[1:]:
        col = _step(col, step)
    return col


def _rooted(table: pa.Table, root: str) -> pa.Table:
    """The rows under json_root: an object per row, or an array of objects flattened into rows."""
    col = _navigate(table, json_path_steps(root) or [])
    if pa.types.is_list(col.type) or pa.types.is_large_list(col.type):
        col = pc.list_flatten(col)
    if not pa.types.is_struct(col.type):
        return pa.table({})
    return pa.Table.from_struct_array(col.filter(pc.is_valid(col)))  # a row without the root has no row


def _read_json(path: str, opts: FileScanOptions) -> pa.Table:
    data = _read_bytes(path, opts.compression)
    if not data.strip():
        return pa.table({})  # Arrow and json refuse an empty file; it has no rows and no columns
    if opts.read_json_by_line and not opts.strip_outer_array:
        table = pajson.read_json(pa.BufferReader(data))
    else:
        # one JSON document (an array of objects with strip_outer_array): small files only on this path;
        # loads read these through Spark
        doc = json.loads(data)
        for step in (json_path_steps(opts.json_root) or []) if opts.json_root else []:
            doc = doc.get(step) if isinstance(doc, dict) and isinstance(step, str) else \
                doc[step] if isinstance(doc, list) and isinstance(step, int) and step < len(doc) else None
        rows = doc if isinstance(doc, list) else [doc] if isinstance(doc, dict) else []
        table = pa.Table.from_pylist(rows)
    if opts.json_root and opts.read_json_by_line and not opts.strip_outer_array:
        table = _rooted(table, opts.json_root)
    if opts.jsonpaths:
        table = pa.table({p: _navigate(table, json_path_steps(p) or []) for p in opts.jsonpaths})
    return table


def _read_csv(path: str, opts: FileScanOptions, schema: pa.Schema) -> pa.Table:
    skip = opts.skip_lines + opts.header_lines
    data = _read_bytes(path, opts.compression)
    columns = None
    if _arrow_reads(opts) and data.strip():
        try:
            columns = _arrow_fields(data, skip, len(schema), opts)
        except pa.ArrowInvalid:
            if opts.enclose:
                raise
            columns = None  # not UTF-8 (or another oddity Arrow refuses): split here, as before
    if columns is None:
        lines = _split_lines(data, opts)
        columns = _fields(lines.slice(min(skip, len(lines))), len(schema), opts)
    # csv_schema: a value that does not convert to the declared type reads as NULL, as in Doris; a strict INSERT
    # refuses it (Doris's scanner filters the row, and strict mode fails the load)
    arrays = [c if f.type == pa.string() else convert(c, f.type) for c, f in zip(columns, schema, strict=True)]
    if opts.strict_types:
        for raw, typed, f in zip(columns, arrays, schema, strict=True):
            if f.type == pa.string():
                continue
            failed = pc.and_(pc.is_valid(raw), pc.is_null(typed))
            if pc.any(failed).as_py():
                value = raw.filter(failed)[0].as_py()
                raise analysis_error(f"{STRICT_FILE_ERROR}column({f.name}) value is incorrect: '{value}'")
    return pa.Table.from_arrays(arrays, schema=schema)


def read_files(opts: FileScanOptions, columns: Sequence[str] | None = None) -> pa.Table:
    schema = file_schema(opts)
    if opts.format == "parquet":
        dataset = ds.dataset(list(opts.paths), format="parquet")  # the first file's schema, as Doris
        return normalize(dataset.to_table(columns=list(columns) if columns is not None else None))
    if opts.is_csv:
        parts = [_read_csv(p, opts, schema) for p in opts.paths]
    else:
        parts = [_conform(normalize(_read_json(p, opts)), schema) for p in opts.paths]
    table = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
    return table.select(list(columns)) if columns is not None else table


def _conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """Other files of a glob: the first file's columns, missing ones NULL, types converted."""
    arrays = []
    for f in schema:
        if f.name in table.column_names:
            col = table.column(f.name)
            arrays.append(col if col.type == f.type else convert(col.combine_chunks(), f.type))
        else:
            arrays.append(pa.nulls(table.num_rows, f.type))
    return pa.Table.from_arrays(arrays, schema=schema)


# Arrow types the planner computes on; anything else in a file is mapped onto one of them
def _normal_type(t: pa.DataType) -> pa.DataType:
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_dictionary(t):
        return _normal_type(t.value_type)
    if pa.types.is_uint8(t):
        return pa.int16()
    if pa.types.is_uint16(t):
        return pa.int32()
    if pa.types.is_uint32(t):
        return pa.int64()
    if pa.types.is_uint64(t):
        return pa.decimal128(20, 0)
    if pa.types.is_float16(t):
        return pa.float32()
    if pa.types.is_timestamp(t):
        return pa.timestamp("us")
    if pa.types.is_date64(t):
        return pa.date32()
    if pa.types.is_decimal(t) and t.precision > 38:
        return pa.float64()
    if pa.types.is_null(t):
        return pa.string()
    if pa.types.is_nested(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return pa.string()
    return t


def normalize_schema(schema: pa.Schema) -> pa.Schema:
    return pa.schema([pa.field(f.name, _normal_type(f.type)) for f in schema])


def normalize(table: pa.Table) -> pa.Table:
    arrays = []
    for col in table.columns:
        target = _normal_type(col.type)
        if target == col.type:
            arrays.append(col)
        elif pa.types.is_nested(col.type):
            arrays.append(_nested_as_json(col))
        else:
            # sub-microsecond timestamps are truncated (DATETIME(6) is the finest Doris type)
            arrays.append(pc.cast(col, target, safe=not pa.types.is_timestamp(col.type)))
    return pa.Table.from_arrays(arrays, names=table.column_names)


def _nested_as_json(col: pa.ChunkedArray) -> pa.Array:
    # nested values (Doris would read ARRAY/STRUCT) are shown as their JSON text
    return pa.array([None if v is None else json.dumps(v, default=str) for v in col.to_pylist()], pa.string())


class FileTableSource:
    """A TableSource over the files of one `local(...)` call, read with pyarrow on each scan."""

    def __init__(self, name: str, options: FileScanOptions) -> None:
        self.name = name
        self.options = options
        self.schema = file_schema(options)

    def scan(self, columns: Sequence[str], predicates: Sequence[ColumnPredicate]) -> pa.Table:
        needed = list(dict.fromkeys([*columns, *(p.column for p in predicates)]))
        table = read_files(self.options, needed)
        return apply_predicates(table, predicates).select(list(columns))


# -- binding ------------------------------------------------------------------------------------------

SOURCE_PREFIX = "__dl_tvf_"


def table_functions(expression: exp.Expression) -> list[exp.Table]:
    """The FROM items of a query that are table-valued functions."""
    return [t for t in expression.find_all(exp.Table) if isinstance(t.this, dx.TableFunction)]


def bind_table_functions(expression: exp.Expression, strict_types: bool = False
                         ) -> tuple[exp.Expression, dict[str, FileTableSource]]:
    """Replace each TVF with a table named `__dl_tvf_<n>` (aliased as written, else as the function) and
    return the sources to resolve those names to (`strict_types`: read for a strict INSERT)."""
    found = table_functions(expression)
    if not found:
        return expression, {}
    expression = expression.copy()
    sources: dict[str, FileTableSource] = {}
    for i, table in enumerate(table_functions(expression)):
        node = table.this
        name = f"{SOURCE_PREFIX}{i}"
        sources[name] = FileTableSource(node.name, options_of(node, strict_types))
        alias = table.alias or node.name
        table.replace(exp.alias_(exp.to_table(name), alias, table=True))
    return expression, sources
