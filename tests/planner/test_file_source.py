"""planner.loads.files units: option parsing with Doris's defaults, csv splitting semantics, globs."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from planner.loads.files import FileScanOptions, file_schema, read_files
from sql.errors import SqlError


def opts(path: Path | str, fmt: str = "csv", **props: str) -> FileScanOptions:
    return FileScanOptions.parse("local", {"file_path": str(path), "format": fmt, **props})


def test_defaults_and_escapes(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("1\t2\n")
    o = opts(tmp_path / "a.csv")
    assert (o.column_separator, o.line_delimiter, o.read_json_by_line) == ("\t", "\n", True)
    assert opts(tmp_path / "a.csv", column_separator="\\x01").column_separator == "\x01"


def test_csv_ragged_rows_null_marker_and_multichar_separator(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("1||a||extra\n2\n\\N||b\n")
    table = read_files(opts(tmp_path / "a.csv", column_separator="||"))
    assert table.to_pydict() == {"c1": ["1", "2", None], "c2": ["a", None, "b"], "c3": ["extra", None, None]}


def test_csv_schema_types_and_bad_values(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("1,2020-01-02,1.25\nx,bad,2\n")
    o = opts(tmp_path / "a.csv", column_separator=",", csv_schema="k:int;d:date;m:decimal(5,2)")
    assert file_schema(o) == pa.schema([("k", pa.int32()), ("d", pa.date32()), ("m", pa.decimal128(5, 2))])
    got = read_files(o).to_pylist()
    assert got[1] == {"k": None, "d": None, "m": pa.scalar(2, pa.decimal128(5, 2)).as_py()}


def test_glob_reads_every_file_in_name_order(tmp_path: Path) -> None:
    for i in (2, 1):
        (tmp_path / f"part-{i}.csv").write_text(f"{i}\n")
    assert read_files(opts(tmp_path / "part-*.csv")).column("c1").to_pylist() == ["1", "2"]


@pytest.mark.parametrize("props, message", [
    ({"format": "orc2"}, "format:orc2 is not supported."),
    ({"skip_lines": "x"}, "skip_lines should be a number"),
    ({"json_root": "data.a"}, "Invalid json_root"),
    ({"jsonpaths": "[\"$.a\", 3]"}, "Invalid jsonpaths"),
    ({"enclose": "ab"}, "single character"),
])
def test_bad_options(tmp_path: Path, props: dict, message: str) -> None:
    (tmp_path / "a.csv").write_text("1\n")
    with pytest.raises(SqlError, match=message.replace(".", r"\.")):
        FileScanOptions.parse("local", {"file_path": str(tmp_path / "a.csv"), "format": "csv", **props})


def test_empty_first_line(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("\n1\n")
    with pytest.raises(SqlError, match="The first line is empty"):
        file_schema(opts(tmp_path / "a.csv"))
