"""SELECT ... INTO OUTFILE "file:///dir/prefix_" and EXPORT's files: the result written as CSV (Doris's text of
each value, `\\N` for NULL), CSV with names / types, Parquet or ORC, split at max_file_size, named
`<prefix><query id>_<n>.<ext>`; answered with Doris's FileNumber / TotalRows / FileSize / URL row.

Writing to the server's disk is off unless fe.conf enable_outfile_to_local = true (Doris's switch), and emptying
the target folder first (delete_existing_files) unless enable_delete_existing_files = true."""

from __future__ import annotations

import glob
import json
import os
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

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


def _header(schema: pa.Schema, spec: OutfileSpec) -> bytes:
    lines = []
    if _FORMATS[spec.format] >= 1:
        lines.append(spec.column_separator.join(schema.names))
    if _FORMATS[spec.format] >= 2:
        lines.append(spec.column_separator.join(doris_type_name(f.type).split("(")[0] for f in schema))
    return "".join(line + spec.line_delimiter for line in lines).encode()


class _Files:
    """The files of one outfile task, `<stem><n>.<ext>`, written as the rows arrive (a task never holds its whole
    result): a new file starts once the current one passes max_file_size (a CSV row is never split)."""

    def __init__(self, spec: OutfileSpec, stem: str, schema: pa.Schema) -> None:
        self.spec, self.stem, self.schema = spec, stem, schema
        self.paths: list[Path] = []
        self.rows = 0
        self._offset = 0  # CSV: bytes of rows written so far, which decides a row's file
        self._group = -1
        self._csv: BinaryIO | None = None
        self._columnar: pq.ParquetWriter | orc.ORCWriter | None = None
        self._columnar_bytes = 0

    @property
    def _is_csv(self) -> bool:
        return _FORMATS[self.spec.format] >= 0

    def _next(self) -> Path:
        self._close_current()
        path = self.spec.directory / f"{self.stem}{len(self.paths)}.{'csv' if self._is_csv else self.spec.format}"
        self.paths.append(path)
        if self._is_csv:
            self._csv = path.open("wb")
            self._csv.write(_header(self.schema, self.spec))
        elif self.spec.format == "parquet":
            plain = self.spec.compression in ("plain", "none")
            self._columnar = pq.ParquetWriter(path, self.schema, compression=None if plain else self.spec.compression)
        else:
            self._columnar = orc.ORCWriter(str(path))
        self._columnar_bytes = 0
        return path

    def write(self, table: pa.Table) -> None:
        if table.num_rows == 0:
            return
        self.rows += table.num_rows
        if not self._is_csv:
            if self._columnar is None or self._columnar_bytes >= self.spec.max_file_bytes:
                self._next()
            assert self._columnar is not None
            self._columnar.write(table)
            self._columnar_bytes += table.nbytes
            return
        rows = _csv_rows(table, self.spec)
        lengths = pc.binary_length(rows).to_numpy(zero_copy_only=False).astype(np.int64)
        starts = self._offset + np.cumsum(lengths) - lengths
        groups = starts // self.spec.max_file_bytes
        self._offset += int(lengths.sum())
        edges = [0, *(np.flatnonzero(np.diff(groups)) + 1).tolist(), len(rows)]
        data = rows.buffers()[2]
        offsets = np.frombuffer(rows.buffers()[1], dtype=np.int64, count=len(rows) + 1, offset=rows.offset * 8)
        for lo, hi in zip(edges[:-1], edges[1:], strict=True):
            if int(groups[lo]) != self._group:
                self._group = int(groups[lo])
                self._next()
            assert self._csv is not None
            self._csv.write(memoryview(data)[int(offsets[lo]):int(offsets[hi])])

    def _close_current(self) -> None:
        if self._csv is not None:
            self._csv.close()
            self._csv = None
        if self._columnar is not None:
            self._columnar.close()
            self._columnar = None

    def close(self) -> list[Path]:
        if not self.paths:  # an empty result still leaves one file (CSV: its header)
            self._next()
        self._close_current()
        return self.paths


def prepare_directory(spec: OutfileSpec) -> None:
    """Before any file is written (OUTFILE, or an EXPORT's tasks): the folder exists, emptied when
    delete_existing_files asks."""
    spec.directory.mkdir(parents=True, exist_ok=True)
    if spec.delete_existing_files:
        for entry in spec.directory.iterdir():
            if entry.is_file():
                entry.unlink()


def mark_success(spec: OutfileSpec) -> None:
    """After every file is written: the success file, when asked for."""
    if spec.success_file_name:
        (spec.directory / spec.success_file_name).touch()


def _stem(spec: OutfileSpec, qid: str | None = None) -> str:
    """`<prefix><query id>_`: Doris prints the id as two 16-digit halves."""
    qid = qid or uuid.uuid4().hex
    return f"{spec.prefix}{qid[:16]}-{qid[16:]}_"


def _result_row(files: _Files, host: str) -> list[str]:
    size = sum(os.path.getsize(p) for p in files.paths)
    return [str(len(files.paths)), str(files.rows), str(size), f"file:///{host}{files.spec.directory}/{files.stem}"]


def write_outfile(table: pa.Table, spec: OutfileSpec, host: str) -> list[list[str]]:
    """Write the files; Doris's one result row."""
    prepare_directory(spec)
    files = _Files(spec, _stem(spec), table.schema)
    files.write(table)
    files.close()
    mark_success(spec)
    return [_result_row(files, host)]


@dataclass(frozen=True)
class ExportTask:
    """One Spark task of an EXPORT (run in an executor with its rows, storage.spark.arrow_tasks): writes its own
    files as OUTFILE does, the values cast to `schema` (the result's types in-process) so the text is the same.
    Its files are named by the export and the task, so a retried attempt rewrites the failed one's."""

    spec: OutfileSpec
    schema: pa.Schema
    host: str
    export_id: str  # 32 hex digits

    def __call__(self, batches: Iterator[pa.RecordBatch], partition: int) -> str:
        stem = _stem(self.spec, uuid.uuid5(uuid.UUID(self.export_id), str(partition)).hex)
        for stale in self.spec.directory.glob(f"{glob.escape(stem)}*"):
            stale.unlink()
        files = _Files(self.spec, stem, self.schema)
        for batch in batches:
            columns = [c.cast(f.type) if c.type != f.type else c for c, f in zip(batch.columns, self.schema,
                                                                                 strict=True)]
            files.write(pa.Table.from_arrays(columns, schema=self.schema))
        files.close()
        return json.dumps(_result_row(files, self.host))
