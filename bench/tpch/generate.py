"""TPC-H data as Parquet, made by DuckDB's dbgen: one folder per table under bench/out/tpch-sf<SF>/.

    python -m bench.tpch.generate --sf 1 [--out bench/out/tpch-sf1]

dbgen is DuckDB's `tpch` extension, which PyPI ships as `duckdb-extension-tpch`. That build loads only into
the DuckDB it was built for (duckdb-extension-tpch 1.5.5 with duckdb 1.5.5), not into the project's pinned
duckdb 2.0.1, and there is no network for `INSTALL tpch`. So the generator keeps its own virtualenv,
bench/out/.tpch-gen-venv, made on first use (`python -m venv` + `pip install duckdb==1.5.5
duckdb-extension-tpch==1.5.5`), and runs a small script there (`_DBGEN`): `LOAD` the extension file from
the package (`duckdb_extension_tpch/extensions/v1.5.5/tpch.duckdb_extension`; the package's `__init__` is
empty), `CALL dbgen(sf = SF)`, then per table `COPY (SELECT ...) TO '<out>/<table>'` as Parquet files of
about 1,000,000 rows (row groups of 262,144; `part-<i>.parquet`).

Column names stay lowercase as dbgen makes them. Columns are written in the order of Doris's DDL
(`bench.tpch.schema`: lineitem starts with l_shipdate, orders' second column is o_orderdate) and cast to its
types (INT keys as INTEGER, DECIMAL(15,2), DATE, VARCHAR), because the runner loads them with
`INSERT INTO t SELECT * FROM local(...)`, which maps columns by position. A given SF always gives the same
rows (the COPY is multi-threaded, so their order within lineitem's files may change from run to run).
`_SUCCESS` (with the row counts) is written last: a complete data set has it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import time
import venv
from pathlib import Path

from bench.tpch.schema import TABLES, columns, duckdb_type

OUT = Path(__file__).resolve().parent.parent / "out"
GEN_VENV = OUT / ".tpch-gen-venv"
DUCKDB_VERSION = "1.5.5"  # duckdb-extension-tpch==X loads only into duckdb==X
GEN_PACKAGES = (f"duckdb=={DUCKDB_VERSION}", f"duckdb-extension-tpch=={DUCKDB_VERSION}")
ROW_GROUP_ROWS = 1 << 18
ROW_GROUPS_PER_FILE = 4

# Runs in GEN_VENV's interpreter; argv[1] is a JSON job: sf, out, database, and per table the SELECT list.
_DBGEN = r"""
import json, pathlib, sys
import duckdb, duckdb_extension_tpch

job = json.loads(sys.argv[1])
ext = (pathlib.Path(duckdb_extension_tpch.__file__).parent / "extensions" / f"v{duckdb.__version__}"
       / "tpch.duckdb_extension")
con = duckdb.connect(job["database"])
con.execute(f"LOAD '{ext}'")
con.execute(f"CALL dbgen(sf = {job['sf']})")
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
    """The generator virtualenv's interpreter, creating the venv and installing dbgen's packages if needed."""
    python = venv_dir / "bin" / "python"
    marker = venv_dir / "installed.txt"
    wanted = " ".join(GEN_PACKAGES)
    if python.exists() and marker.exists() and marker.read_text().strip() == wanted:
        return python
    print(f"creating {venv_dir} with {wanted} (dbgen; once) ...", flush=True)
    shutil.rmtree(venv_dir, ignore_errors=True)
    venv.EnvBuilder(with_pip=True).create(venv_dir)
    pip = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *GEN_PACKAGES],
                         capture_output=True, text=True)
    if pip.returncode != 0:
        raise RuntimeError(f"pip install {wanted} failed: {pip.stderr[-3000:]}")
    marker.write_text(wanted + "\n")
    return python


def select_list(table: str) -> str:
    """dbgen's columns in Doris's DDL order, cast to the types the Doris table has."""
    return ", ".join(f"CAST({name} AS {duckdb_type(t)}) AS {name}" for name, t in columns(table))


def generate(sf: float, out: Path, venv_dir: Path = GEN_VENV) -> dict[str, int]:
    """Write every TPC-H table as Parquet under `out/<table>/`; returns row counts per table."""
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    (out / "_SUCCESS").unlink(missing_ok=True)
    for table in TABLES:
        shutil.rmtree(out / table, ignore_errors=True)
    python = gen_python(venv_dir)
    database = out / ".dbgen.duckdb"  # on disk: large SFs need not fit in memory
    database.unlink(missing_ok=True)
    job = {"sf": sf, "out": str(out), "database": str(database) if sf > 1 else ":memory:",
           "row_group_rows": ROW_GROUP_ROWS, "row_groups_per_file": ROW_GROUPS_PER_FILE,
           "tables": {t: select_list(t) for t in TABLES}}
    try:
        done = subprocess.run([str(python), "-c", _DBGEN, json.dumps(job)], capture_output=True, text=True)
    finally:
        database.unlink(missing_ok=True)
        database.with_suffix(".duckdb.wal").unlink(missing_ok=True)
    if done.returncode != 0:
        raise RuntimeError(f"dbgen failed: {done.stderr[-3000:]}")
    counts = json.loads(done.stdout.strip().splitlines()[-1])
    (out / "_SUCCESS").write_text(f"sf={sf} dbgen=duckdb-extension-tpch {DUCKDB_VERSION}\n{json.dumps(counts)}\n")
    return counts


def is_generated(out: Path) -> bool:
    return (Path(out) / "_SUCCESS").exists()


def table_glob(out: Path, table: str) -> str:
    return str(Path(out).resolve() / table / "*.parquet")


def sf_label(sf: float) -> str:
    return f"{sf:g}"


def default_out(sf: float) -> Path:
    return OUT / f"tpch-sf{sf_label(sf)}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sf", type=float, default=1.0, help="scale factor (SF 1 = about 6,000,000 lineitem rows)")
    ap.add_argument("--out", type=Path, default=None, help="output folder (default bench/out/tpch-sf<SF>)")
    args = ap.parse_args()
    out = args.out or default_out(args.sf)
    t0 = time.perf_counter()
    counts = generate(args.sf, out)
    print(f"TPC-H SF {sf_label(args.sf)} -> {out} in {time.perf_counter() - t0:.1f} s")
    for name, rows in counts.items():
        print(f"  {name:10}{rows:>12,}")


if __name__ == "__main__":
    main()
