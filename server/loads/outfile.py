"""SELECT ... INTO OUTFILE "file:///dir/prefix_" and EXPORT's files: the result written as CSV (Doris's text of
each value, `\\N` for NULL), CSV with names / types, Parquet or ORC, split at max_file_size, named
`<prefix><query id>_<n>.<ext>`; answered with Doris's FileNumber / TotalRows / FileSize / URL row.

Writing to the server's disk is off unless fe.conf enable_outfile_to_local = true (Doris's switch), and emptying
the target folder first (delete_existing_files) unless enable_delete_existing_files = true."""

from __future__ import annotations

import os
import re
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as orc
import pyarrow.parquet as pq

from server.config import Config
from server.protocol.resultset import text_values, wire_columns
from sql.errors import analysis_error
from sql.types import doris_type_name

RESULT_COLUMNS = ("FileNumber", "TotalRows", "FileSize", "URL")
_FORMATS = {"csv": 0, "csv_with_names": 1, "csv_with_names_and_types": 2, "parquet": -1, "orc": -1}
PROPERTY_KEYS = frozenset({"column_separator", "line_delimiter", "max_file_size", "success_file_name",
                           "delete_existing_files", "compress_type", "schema", "with_bom"})
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?B?)?\s*$", re.I)
_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "M": 1 << 20, "MB": 1 << 20, "G": 1 << 30, "GB": 1 << 30,
          "T": 1 << 40, "TB": 1 << 40}
MIN_FILE_BYTES, MAX_FILE_BYTES = 5 << 20, 2 << 30


@dataclass(frozen=True)
class OutfileSpec:
    directory: Path
    prefix: str
    format: str
    column_separator: str = "\t"
    line_delimiter: str = "\n"
    max_file_bytes: int = 1 << 30
    success_file_name: str = ""
    delete_existing_files: bool = False
    compression: str = "snappy"


def _unescape(text: str) -> str:
    return text.encode("latin-1", "backslashreplace").decode("unicode_escape") if "\\" in text else text


def file_bytes(text: str) -> int:
    m = _SIZE.match(text)
    if m is None:
        raise analysis_error(f"Invalid max_file_size: {text}")
    return int(float(m.group(1)) * _UNITS[(m.group(2) or "").upper()])


def outfile_spec(path: str, fmt: str, properties: tuple[tuple[str, str], ...], config: Config) -> OutfileSpec:
    """The checked request; Doris's messages for what it refuses."""
    if not path.lower().startswith("file://"):
        raise analysis_error(f"dorislite writes files to its own disk only (file:///path/prefix_): {path}")
    if not config.get_bool("enable_outfile_to_local", False):
        raise analysis_error("Exporting results to local disk is not allowed. To enable this feature, you need to "
                             "add `enable_outfile_to_local=true` in fe.conf and restart FE")
    if fmt not in _FORMATS:
        raise analysis_error(f"format:{fmt} is not supported.")
    props = dict(properties)
    unknown = sorted(k for k in props if k not in PROPERTY_KEYS)
    if unknown:
        raise analysis_error(f"Unknown properties: {unknown}")
    local = path[len("file://"):]
    if not local.startswith("/"):
        raise analysis_error(f"The path of OUTFILE must be absolute: {path}")
    directory, prefix = (Path(local), "") if local.endswith("/") else (Path(local).parent, Path(local).name)
    size = file_bytes(props.get("max_file_size", "1GB"))
    if not MIN_FILE_BYTES <= size <= MAX_FILE_BYTES:
        raise analysis_error(f"max file size should between 5MB and 2GB. Given: {props['max_file_size']}")
    delete = props.get("delete_existing_files", "false").strip().lower() == "true"
    if delete and not config.get_bool("enable_delete_existing_files", False):
        raise analysis_error("Deleting existing files is not allowed. To enable this feature, you need to add "
                             "`enable_delete_existing_files=true` in fe.conf")
    sep, line = _unescape(props.get("column_separator", "\t")), _unescape(props.get("line_delimiter", "\n"))
    if not sep or not line:
        raise analysis_error("column_separator and line_delimiter must not be empty")
    return OutfileSpec(directory, prefix, fmt, sep, line, size, props.get("success_file_name", ""), delete,
                       props.get("compress_type", "snappy").lower())


def _csv_rows(table: pa.Table, spec: OutfileSpec) -> pa.Array:
    """Every row as its text line (delimiter included), as the text protocol would show the values."""
    columns = wire_columns(table.schema, table=table)
    texts = [pc.fill_null(text_values(table.column(i).combine_chunks(), c).cast(pa.large_string()), "\\N")
             for i, c in enumerate(columns)]  # large: a result's text may pass 2 GB
    if not texts:
        return pa.array([spec.line_delimiter] * table.num_rows, pa.large_string())
    sep = pa.scalar(spec.column_separator, pa.large_string())
    joined = pc.binary_join_element_wise(*texts, sep) if len(texts) > 1 else texts[0]
    return pc.binary_join_element_wise(joined, pa.scalar("", pa.large_string()),
                                       pa.scalar(spec.line_delimiter, pa.large_string()))


def _header(table: pa.Table, spec: OutfileSpec) -> bytes:
    lines = []
    if _FORMATS[spec.format] >= 1:
        lines.append(spec.column_separator.join(table.column_names))
    if _FORMATS[spec.format] >= 2:
        lines.append(spec.column_separator.join(doris_type_name(f.type).split("(")[0] for f in table.schema))
    return "".join(line + spec.line_delimiter for line in lines).encode()


def _write_csv(table: pa.Table, spec: OutfileSpec, stem: str) -> list[Path]:
    rows = _csv_rows(table, spec)
    lengths = pc.binary_length(rows).to_numpy(zero_copy_only=False).astype(np.int64) if len(rows) else \
        np.zeros(0, np.int64)
    starts = np.cumsum(lengths) - lengths
    groups = starts // spec.max_file_bytes  # a row is never split; a file may end a little past the limit
    bounds = np.flatnonzero(np.diff(groups)) + 1 if len(groups) else np.zeros(0, np.int64)
    edges = [0, *bounds.tolist(), len(rows)]
    data = rows.buffers()[2]
    offsets = np.frombuffer(rows.buffers()[1], dtype=np.int64, count=len(rows) + 1, offset=rows.offset * 8) \
        if len(rows) else np.zeros(1, np.int64)
    header = _header(table, spec)
    paths = []
    for n, (lo, hi) in enumerate(zip(edges[:-1], edges[1:], strict=True)):
        path = spec.directory / f"{stem}{n}.csv"
        with path.open("wb") as f:
            f.write(header)
            if hi > lo:
                f.write(memoryview(data)[int(offsets[lo]):int(offsets[hi])])
        paths.append(path)
    return paths


def _write_columnar(table: pa.Table, spec: OutfileSpec, stem: str) -> list[Path]:
    per_row = max(1.0, table.nbytes / max(1, table.num_rows))
    rows_per_file = max(1, int(spec.max_file_bytes / per_row))
    paths = []
    for n, start in enumerate(range(0, max(table.num_rows, 1), rows_per_file)):
        part = table.slice(start, rows_per_file)
        path = spec.directory / f"{stem}{n}.{spec.format}"
        if spec.format == "parquet":
            pq.write_table(part, path, compression=None if spec.compression in ("plain", "none") else
                           spec.compression)
        else:
            orc.write_table(part, str(path))
        paths.append(path)
    return paths


def write_outfile(table: pa.Table, spec: OutfileSpec, host: str) -> list[list[str]]:
    """Write the files; Doris's one result row."""
    spec.directory.mkdir(parents=True, exist_ok=True)
    if spec.delete_existing_files:
        for entry in spec.directory.iterdir():
            if entry.is_file():
                entry.unlink()
    qid = uuid.uuid4().hex
    stem = f"{spec.prefix}{qid[:16]}-{qid[16:]}_"
    paths = _write_csv(table, spec, stem) if _FORMATS[spec.format] >= 0 else _write_columnar(table, spec, stem)
    if spec.success_file_name:
        (spec.directory / spec.success_file_name).touch()
    size = sum(os.path.getsize(p) for p in paths)
    return [[str(len(paths)), str(table.num_rows), str(size), f"file:///{host}{spec.directory}/{stem}"]]
