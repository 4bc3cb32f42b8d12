"""DuckDB's TPC data generators for the TPC-H and TPC-DS kits: dbgen (`tpch` extension) and dsdgen (`tpcds`
extension), run in their own virtualenv, each table written as Parquet in the column order and types of a
Doris DDL.

The extensions come from PyPI as `duckdb-extension-tpch` / `duckdb-extension-tpcds`. Such a build loads only
into the DuckDB it was built for (1.5.5 here), not into the project's pinned duckdb 2.0.1, and there is no
network for `INSTALL tpch`. So the generators share one virtualenv, bench/out/.duckdb-gen-venv, made on first
use (`python -m venv` + `pip install duckdb==1.5.5 duckdb-extension-tpch==1.5.5 duckdb-extension-tpcds==1.5.5`),
and run a small script there (`_GENERATE`): `LOAD` the extension file from its package
(`duckdb_extension_<name>/extensions/v1.5.5/<name>.duckdb_extension`; the packages' `__init__` is empty),
`CALL dbgen(sf = SF)` or `CALL dsdgen(sf = SF)`, then per table `COPY (SELECT ...) TO '<out>/<table>'` as Parquet
files of about 1,000,000 rows (row groups of 262,144; `part-<i>.parquet`).

The SELECT list puts the columns in the order of the Doris DDL and casts them to its types (`select_list`),
because the runners load with `INSERT INTO t SELECT * FROM local(...)`, which maps columns by position.
`_SUCCESS` (with the row counts) is written last: a complete data set has it.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import time
import venv
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
GEN_VENV = OUT / ".duckdb-gen-venv"
DUCKDB_VERSION = "1.5.5"  # duckdb-extension-tpch==X and duckdb-extension-tpcds==X load only into duckdb==X
GEN_PACKAGES = (f"duckdb=={DUCKDB_VERSION}", f"duckdb-extension-tpch=={DUCKDB_VERSION}",
                f"duckdb-extension-tpcds=={DUCKDB_VERSION}")
ROW_GROUP_ROWS = 1 << 18
ROW_GROUPS_PER_FILE = 4

# Runs in GEN_VENV's interpreter; argv[1] is a JSON job: extension, call, out, database, per table the SELECT list.
_GENERATE = r"""
import importlib, json, pathlib, sys
import duckdb

job = json.loads(sys.argv[1])
package = importlib.import_module("duckdb_extension_" + job["extension"])
ext = (pathlib.Path(package.__file__).parent / "extensions" / f"v{duckdb.__version__}"
       / f"{job['extension']}.duckdb_extension")
con = duckdb.connect(job["database"])
con.execute(f"LOAD '{ext}'")
con.execute(job["call"])
counts = {}
for table, select in job["tables"].items():
    target = pathlib.Path(job["out"]) / table
    con.execute(f"COPY (SELECT {select} FROM {table}) TO '{target}' (FORMAT parquet, "
                f"ROW_GROUP_SIZE {job['row_group_rows']}, ROW_GROUPS_PER_FILE {job['row_groups_per_file']}, "
                "FILENAME_PATTERN 'part-{i}')")
    counts[table] = con.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
print(json.dumps(counts))
"""


def gen_python(venv_dir: Path = GEN_VENV) -> Path:
    """The generator virtualenv's interpreter, creating the venv and installing the packages if needed."""
    python = venv_dir / "bin" / "python"
    marker = venv_dir / "installed.txt"
    wanted = " ".join(GEN_PACKAGES)
    if python.exists() and marker.exists() and marker.read_text().strip() == wanted:
        return python
    print(f"creating {venv_dir} with {wanted} (dbgen / dsdgen; once) ...", flush=True)
    shutil.rmtree(venv_dir, ignore_errors=True)
    venv.EnvBuilder(with_pip=True).create(venv_dir)
    pip = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *GEN_PACKAGES],
                         capture_output=True, text=True)
    if pip.returncode != 0:
        raise RuntimeError(f"pip install {wanted} failed: {pip.stderr[-3000:]}")
    marker.write_text(wanted + "\n")
    return python


def generate(extension: str, sf: float, tables: Mapping[str, str], out: Path,
             venv_dir: Path = GEN_VENV) -> dict[str, int]:
    """Run `CALL dbgen` (extension "tpch") or `CALL dsdgen` ("tpcds") at `sf` and write each of `tables`
    (name -> SELECT list over the generated table) as Parquet under `out/<table>/`; returns row counts."""
    call = {"tpch": "dbgen", "tpcds": "dsdgen"}[extension]
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    (out / "_SUCCESS").unlink(missing_ok=True)
    for table in tables:
        shutil.rmtree(out / table, ignore_errors=True)
    python = gen_python(venv_dir)
    database = out / f".{call}.duckdb"  # on disk: large SFs need not fit in memory
    database.unlink(missing_ok=True)
    job = {"extension": extension, "call": f"CALL {call}(sf = {sf})", "out": str(out),
           "database": str(database) if sf > 1 else ":memory:",
           "row_group_rows": ROW_GROUP_ROWS, "row_groups_per_file": ROW_GROUPS_PER_FILE, "tables": dict(tables)}
    try:
        done = subprocess.run([str(python), "-c", _GENERATE, json.dumps(job)], capture_output=True, text=True)
    finally:
        database.unlink(missing_ok=True)
        database.with_suffix(".duckdb.wal").unlink(missing_ok=True)
    if done.returncode != 0:
        raise RuntimeError(f"{call} failed: {done.stderr[-3000:]}")
    counts = json.loads(done.stdout.strip().splitlines()[-1])
    (out / "_SUCCESS").write_text(f"sf={sf} {call}=duckdb-extension-{extension} {DUCKDB_VERSION}\n"
                                  f"{json.dumps(counts)}\n")
    return counts


def is_generated(out: Path) -> bool:
    return (Path(out) / "_SUCCESS").exists()


def table_glob(out: Path, table: str) -> str:
    return str(Path(out).resolve() / table / "*.parquet")


def sf_label(sf: float) -> str:
    return f"{sf:g}"


def default_out(kit: str, sf: float) -> Path:
    """bench/out/<kit>-sf<SF>, e.g. bench/out/tpch-sf0.1."""
    return OUT / f"{kit}-sf{sf_label(sf)}"


def print_counts(what: str, sf: float, out: Path, seconds: float, counts: Mapping[str, int]) -> None:
    print(f"{what} SF {sf_label(sf)} -> {out} in {seconds:.1f} s")
    for name, rows in counts.items():
        print(f"  {name:24}{rows:>12,}")


# ---- Doris DDL columns -> DuckDB types (what the generator casts to) ----

_COLUMN = re.compile(r"^\s*`?(\w+)`?\s+(\w+(?:\(\s*\d+(?:\s*,\s*\d+)?\s*\))?)", re.MULTILINE)
_NOT_COLUMNS = {"duplicate", "unique", "aggregate", "distributed", "properties", "comment", "partition", "engine",
                "primary", "key", "index"}


def ddl_columns(ddl: str) -> list[tuple[str, str]]:
    """(name, Doris type) of a `CREATE TABLE` text's columns in order, e.g. ("l_quantity", "decimal(15, 2)"):
    the lines between the first `(` and the closing `)` before ENGINE / DUPLICATE KEY / ... ."""
    body = ddl.split("(", 1)[1]
    end = re.search(r"^\s*\)\s*(?:ENGINE|DUPLICATE|UNIQUE|AGGREGATE|COMMENT|DISTRIBUTED)\b", body,
                    re.IGNORECASE | re.MULTILINE)
    body = body[: end.start()] if end else body
    return [(m.group(1), m.group(2)) for m in _COLUMN.finditer(body) if m.group(1).lower() not in _NOT_COLUMNS]


def duckdb_type(doris_type: str) -> str:
    """The DuckDB / Parquet type the generator writes for a Doris column type."""
    t = doris_type.lower().replace(" ", "")
    if t.startswith("decimal"):
        return t.upper()
    if t.startswith(("varchar", "char", "string")):
        return "VARCHAR"
    if t.startswith("bigint"):
        return "BIGINT"
    if t.startswith("int"):  # int, int(11), integer
        return "INTEGER"
    if t == "date":
        return "DATE"
    if t == "datetime":
        return "TIMESTAMP"
    raise ValueError(f"no DuckDB type for {doris_type!r}")


def select_list(columns: Iterable[tuple[str, str]], sources: Mapping[str, str] | None = None) -> str:
    """The generated table's columns in the DDL's order under the DDL's names (`sources` maps a DDL name to the
    generator's where they differ), cast to the types the Doris table has."""
    return ", ".join(f"CAST({(sources or {}).get(name, name)} AS {duckdb_type(t)}) AS {name}" for name, t in columns)


def main(what: str, generate_fn: Callable[[float, Path], Mapping[str, int]], out_fn: Callable[[float], Path],
         description: str, sf_help: str) -> None:
    """A generator module's command line: --sf, --out; prints the row counts."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--sf", type=float, default=1.0, help=sf_help)
    ap.add_argument("--out", type=Path, default=None, help=f"output folder (default {out_fn(1.0).parent}/...-sf<SF>)")
    args = ap.parse_args()
    out = args.out or out_fn(args.sf)
    t0 = time.perf_counter()
    counts = generate_fn(args.sf, out)
    print_counts(what, args.sf, out, time.perf_counter() - t0, counts)
