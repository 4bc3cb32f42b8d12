"""Deterministic Star Schema Benchmark data: customer, supplier, part, dates, lineorder and lineorder_flat.

    python -m bench.ssb.generate --sf 1 --out bench/out/ssb-sf1 [--seed 42] [--rows-per-file 1000000]

Follows the SSB specification (O'Neil et al.) and its dbgen for cardinalities and value domains:

* customer 30,000 x SF, supplier 2,000 x SF, part 200,000 x floor(1 + log2 SF) (linear below SF 1),
  dates 2,556 days from 1992-01-01 (dbgen's date table, which ends on 1998-12-30);
* orders 1,500,000 x SF with 1..7 lines each (about 6,000,000 x SF lineorder rows), order dates
  uniform over 1992-01-01 .. 1998-08-02 (the last order date is 151 days before the end, as in TPC-H);
* 5 regions, 25 nations (TPC-H's), cities = the nation's first 9 characters (blank padded) + a digit;
* MFGR#1..5 > categories MFGR#11..55 > brands MFGR#1101..5540 (40 per category);
* lo_quantity 1..50, lo_discount 0..10, lo_tax 0..8, lo_extendedprice = quantity x the part's retail
  price (in cents), lo_revenue = extendedprice x (100 - discount) / 100, lo_supplycost = 60 % of retail.

`lineorder_flat` is the denormalized table of Doris's SSB-flat benchmark (its column order and types:
LO_ORDERDATE is INT yyyymmdd, LO_COMMITDATE a DATE), i.e. lineorder joined with its three dimensions.

Every SSB query must return rows even at a tiny SF (the tests run SF 0.01, where a random draw would
leave Q3.4's 'UNITED KI1'/'UNITED KI5' in December 1997 empty), so a few dimension rows and the first
13 orders are pinned to values that satisfy one query each (see `_PLANTED_*`): 13 of 6 million rows at
SF 1, which moves no result measurably but makes non-empty results a guarantee instead of a likelihood.

Everything is drawn from one seeded numpy Generator per table, vectorized; same seed -> identical files.
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

DEFAULT_SEED = 42
ROWS_PER_FILE = 1_000_000
ROW_GROUP_ROWS = 1 << 18

REGIONS = ["AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"]
# TPC-H's nations in nation-key order with their region index.
NATIONS = [
    ("ALGERIA", 0), ("ARGENTINA", 1), ("BRAZIL", 1), ("CANADA", 1), ("EGYPT", 4), ("ETHIOPIA", 0),
    ("FRANCE", 3), ("GERMANY", 3), ("INDIA", 2), ("INDONESIA", 2), ("IRAN", 4), ("IRAQ", 4), ("JAPAN", 2),
    ("JORDAN", 4), ("KENYA", 0), ("MOROCCO", 0), ("MOZAMBIQUE", 0), ("PERU", 1), ("CHINA", 2),
    ("ROMANIA", 3), ("SAUDI ARABIA", 4), ("VIETNAM", 2), ("RUSSIA", 3), ("UNITED KINGDOM", 3),
    ("UNITED STATES", 1),
]
NATION_INDEX = {name: i for i, (name, _) in enumerate(NATIONS)}
SEGMENTS = ["AUTOMOBILE", "BUILDING", "FURNITURE", "MACHINERY", "HOUSEHOLD"]
PRIORITIES = ["1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECI", "5-LOW"]
SHIPMODES = ["REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"]
COLORS = (
    "almond antique aquamarine azure beige bisque black blanched blue blush brown burlywood burnished "
    "chartreuse chiffon chocolate coral cornflower cornsilk cream cyan dark deep dim dodger drab firebrick "
    "floral forest frosted gainsboro ghost goldenrod green grey honeydew hot indian ivory khaki lace "
    "lavender lawn lemon light lime linen magenta maroon medium metallic midnight mint misty moccasin "
    "navajo navy olive orange orchid pale papaya peach peru pink plum powder puff purple red rose rosy "
    "royal saddle salmon sandy seashell sienna sky slate smoke snow spring steel tan thistle tomato "
    "turquoise violet wheat white yellow"
).split()
TYPE_S1 = ["STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"]
TYPE_S2 = ["ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"]
TYPE_S3 = ["TIN", "NICKEL", "BRASS", "STEEL", "COPPER"]
CONTAINER_S1 = ["SM", "LG", "MED", "JUMBO", "WRAP"]
CONTAINER_S2 = ["CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
ADDRESS_CHARS = np.frombuffer(b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ,  ", np.uint8)

START_DATE = np.datetime64("1992-01-01")
DATE_DAYS = 2556
ORDER_DATE_DAYS = DATE_DAYS + 1 - 151  # 1992-01-01 .. 1998-08-02

# Pinned rows (1-based keys) so each of the 13 flat queries has at least one matching row.
_PLANTED_CUSTOMERS = {1: ("UNITED KINGDOM", 1), 2: ("UNITED KINGDOM", 5), 3: ("UNITED STATES", 3),
                      4: ("CHINA", 4)}
_PLANTED_SUPPLIERS = {1: ("UNITED KINGDOM", 1), 2: ("UNITED KINGDOM", 5), 3: ("UNITED STATES", 3),
                      4: ("CHINA", 4), 5: ("FRANCE", 5)}
_PLANTED_PARTS = {1: (1, 2, 1), 2: (2, 2, 21), 3: (2, 2, 39), 4: (1, 4, 1)}  # (mfgr, category, brand)
# (order date, custkey, suppkey, partkey, discount, quantity) of the first line of orders 1..13.
_PLANTED_ORDERS = [
    (19930615, 1, 1, 1, 2, 10),   # Q1.1
    (19940115, 1, 1, 1, 5, 30),   # Q1.2
    (19940209, 1, 1, 1, 6, 30),   # Q1.3 (ISO week 6 of 1994)
    (19950301, 1, 3, 1, 0, 5),    # Q2.1 MFGR#12, AMERICA
    (19950301, 1, 4, 2, 0, 5),    # Q2.2 MFGR#2221, ASIA
    (19950301, 1, 5, 3, 0, 5),    # Q2.3 MFGR#2239, EUROPE
    (19950301, 4, 4, 1, 0, 5),    # Q3.1 ASIA / ASIA
    (19960301, 3, 3, 1, 0, 5),    # Q3.2 UNITED STATES / UNITED STATES
    (19940301, 1, 2, 1, 0, 5),    # Q3.3 UNITED KI1 / UNITED KI5
    (19971215, 2, 1, 1, 0, 5),    # Q3.4 December 1997
    (19960301, 3, 3, 1, 0, 5),    # Q4.1 AMERICA / AMERICA, MFGR#1
    (19970301, 3, 3, 2, 0, 5),    # Q4.2 1997, MFGR#2
    (19980301, 1, 3, 4, 0, 5),    # Q4.3 UNITED STATES supplier, MFGR#14
]

FLAT_COLUMNS = [
    "LO_ORDERDATE", "LO_ORDERKEY", "LO_LINENUMBER", "LO_CUSTKEY", "LO_PARTKEY", "LO_SUPPKEY",
    "LO_ORDERPRIORITY", "LO_SHIPPRIORITY", "LO_QUANTITY", "LO_EXTENDEDPRICE", "LO_ORDTOTALPRICE",
    "LO_DISCOUNT", "LO_REVENUE", "LO_SUPPLYCOST", "LO_TAX", "LO_COMMITDATE", "LO_SHIPMODE",
    "C_NAME", "C_ADDRESS", "C_CITY", "C_NATION", "C_REGION", "C_PHONE", "C_MKTSEGMENT",
    "S_NAME", "S_ADDRESS", "S_CITY", "S_NATION", "S_REGION", "S_PHONE",
    "P_NAME", "P_MFGR", "P_CATEGORY", "P_BRAND", "P_COLOR", "P_TYPE", "P_SIZE", "P_CONTAINER",
]


@dataclass(frozen=True)
class Cardinalities:
    customers: int
    suppliers: int
    parts: int
    orders: int
    dates: int = DATE_DAYS


def cardinalities(sf: float) -> Cardinalities:
    """SSB table sizes at scale factor `sf` (part grows with log2 SF from SF 1 up, linearly below)."""
    parts = 200_000 * math.floor(1 + math.log2(sf)) if sf >= 1 else round(200_000 * sf)
    # Floors keep the planted keys valid at any SF.
    return Cardinalities(customers=max(10, round(30_000 * sf)), suppliers=max(10, round(2_000 * sf)),
                         parts=max(10, parts), orders=max(len(_PLANTED_ORDERS), round(1_500_000 * sf)))


# -- vectorized string helpers ---------------------------------------------------------------------


def _take(values: list[str], idx: np.ndarray) -> pa.Array:
    return pa.array(values, pa.string()).take(pa.array(idx))


def _digits(v: np.ndarray, width: int) -> pa.Array:
    return pc.utf8_lpad(pc.cast(pa.array(v), pa.string()), width, "0")


def _join(*parts: pa.Array | str) -> pa.Array:
    return pc.binary_join_element_wise(*parts, "")


def _random_text(rng: np.random.Generator, n: int, lo: int, hi: int) -> pa.Array:
    """TPC-H 'v-string': random characters, length uniform in [lo, hi], built as one buffer."""
    lengths = rng.integers(lo, hi + 1, n)
    offsets = np.zeros(n + 1, np.int32)
    np.cumsum(lengths, out=offsets[1:])
    chars = ADDRESS_CHARS[rng.integers(0, len(ADDRESS_CHARS), int(offsets[-1]))]
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(chars.tobytes()))


def _phone(rng: np.random.Generator, nation: np.ndarray) -> pa.Array:
    n = len(nation)
    return pc.binary_join_element_wise(
        _digits(nation + 10, 2), _digits(rng.integers(100, 1000, n), 3), _digits(rng.integers(100, 1000, n), 3),
        _digits(rng.integers(1000, 10000, n), 4), "-")


CITIES = [f"{name[:9]:<9}{d}" for name, _ in NATIONS for d in range(10)]


def _geography(rng: np.random.Generator, n: int, planted: dict[int, tuple[str, int]]
               ) -> tuple[np.ndarray, np.ndarray]:
    """Nation index and city digit per row (planted keys overridden)."""
    nation = rng.integers(0, len(NATIONS), n)
    digit = rng.integers(0, 10, n)
    for key, (name, d) in planted.items():
        nation[key - 1], digit[key - 1] = NATION_INDEX[name], d
    return nation, digit


def _geo_columns(prefix: str, nation: np.ndarray, digit: np.ndarray) -> dict[str, pa.Array]:
    region_of = np.array([r for _, r in NATIONS])
    return {
        f"{prefix}_city": _take(CITIES, nation * 10 + digit),
        f"{prefix}_nation": _take([name for name, _ in NATIONS], nation),
        f"{prefix}_region": _take(REGIONS, region_of[nation]),
    }


# -- dimension tables ------------------------------------------------------------------------------


def gen_customer(rng: np.random.Generator, n: int) -> pa.Table:
    keys = np.arange(1, n + 1, dtype=np.int32)
    nation, digit = _geography(rng, n, _PLANTED_CUSTOMERS)
    address = _random_text(rng, n, 10, 40)
    return pa.table({
        "c_custkey": keys,
        "c_name": _join("Customer#", _digits(keys, 9)),
        "c_address": address,
        **_geo_columns("c", nation, digit),
        "c_phone": _phone(rng, nation),
        "c_mktsegment": _take(SEGMENTS, rng.integers(0, len(SEGMENTS), n)),
    })


def gen_supplier(rng: np.random.Generator, n: int) -> pa.Table:
    keys = np.arange(1, n + 1, dtype=np.int32)
    nation, digit = _geography(rng, n, _PLANTED_SUPPLIERS)
    address = _random_text(rng, n, 10, 40)
    return pa.table({
        "s_suppkey": keys,
        "s_name": _join("Supplier#", _digits(keys, 9)),
        "s_address": address,
        **_geo_columns("s", nation, digit),
        "s_phone": _phone(rng, nation),
    })


def retail_price(partkey: np.ndarray) -> np.ndarray:
    """TPC-H's P_RETAILPRICE formula, in cents (so every money column is an exact integer)."""
    pk = partkey.astype(np.int64)
    return 90_000 + (pk // 10) % 20_001 + 100 * (pk % 1_000)


def gen_part(rng: np.random.Generator, n: int) -> pa.Table:
    keys = np.arange(1, n + 1, dtype=np.int32)
    mfgr = rng.integers(1, 6, n)
    cat = rng.integers(1, 6, n)
    brand = rng.integers(1, 41, n)
    for key, (m, c, b) in _PLANTED_PARTS.items():
        mfgr[key - 1], cat[key - 1], brand[key - 1] = m, c, b
    brand_names = [f"MFGR#{m}{c}{b:02d}" for m in range(1, 6) for c in range(1, 6) for b in range(1, 41)]
    cat_idx = (mfgr - 1) * 5 + (cat - 1)
    colors = rng.integers(0, len(COLORS), (n, 2))
    ptype = (rng.integers(0, len(TYPE_S1), n) * 25 + rng.integers(0, len(TYPE_S2), n) * 5
             + rng.integers(0, len(TYPE_S3), n))
    container = rng.integers(0, len(CONTAINER_S1), n) * 8 + rng.integers(0, len(CONTAINER_S2), n)
    return pa.table({
        "p_partkey": keys,
        "p_name": pc.binary_join_element_wise(_take(COLORS, colors[:, 0]), _take(COLORS, colors[:, 1]), " "),
        "p_mfgr": _take([f"MFGR#{m}" for m in range(1, 6)], mfgr - 1),
        "p_category": _take([f"MFGR#{m}{c}" for m in range(1, 6) for c in range(1, 6)], cat_idx),
        "p_brand": _take(brand_names, cat_idx * 40 + brand - 1),
        "p_color": _take(COLORS, rng.integers(0, len(COLORS), n)),
        "p_type": _take([f"{a} {b} {c}" for a in TYPE_S1 for b in TYPE_S2 for c in TYPE_S3], ptype),
        "p_size": rng.integers(1, 51, n).astype(np.int8),
        "p_container": _take([f"{a} {b}" for a in CONTAINER_S1 for b in CONTAINER_S2], container),
    })


def _ymd(days: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    d = START_DATE + days.astype("timedelta64[D]")
    months = d.astype("datetime64[M]")
    year = d.astype("datetime64[Y]").astype(np.int64) + 1970
    month = months.astype(np.int64) % 12 + 1
    day = (d - months).astype(np.int64) + 1
    return year, month, day


def datekey(days: np.ndarray) -> np.ndarray:
    """Days since 1992-01-01 -> INT yyyymmdd (SSB's date key, Doris's SSB-flat LO_ORDERDATE)."""
    year, month, day = _ymd(days)
    return (year * 10_000 + month * 100 + day).astype(np.int32)


def gen_dates() -> pa.Table:
    days = np.arange(DATE_DAYS)
    d = START_DATE + days.astype("timedelta64[D]")
    year, month, day = _ymd(days)
    weekday = (d.astype(np.int64) + 3) % 7  # 1970-01-01 was a Thursday; 0 = Monday
    day_in_year = (d - d.astype("datetime64[Y]")).astype(np.int64) + 1
    next_month = (d + np.timedelta64(1, "D")).astype("datetime64[M]")
    season = np.select([month == 12, (month >= 6) & (month <= 8), month <= 2, month <= 5],
                       [0, 1, 2, 3], 4)
    holiday = ((month == 1) & (day == 1)) | ((month == 7) & (day == 4)) | ((month == 12) & (day == 25)) \
        | ((month == 11) & (day == 11)) | ((month == 12) & (day == 31))
    month_abbr = [m[:3] for m in MONTHS]
    return pa.table({
        "d_datekey": datekey(days),
        "d_date": _join(_take(MONTHS, month - 1), " ", pc.cast(pa.array(day), pa.string()), ", ",
                        pc.cast(pa.array(year), pa.string())),
        "d_dayofweek": _take(WEEKDAYS, weekday),
        "d_month": _take(MONTHS, month - 1),
        "d_year": year.astype(np.int32),
        "d_yearmonthnum": (year * 100 + month).astype(np.int32),
        "d_yearmonth": _join(_take(month_abbr, month - 1), pc.cast(pa.array(year), pa.string())),
        "d_daynuminweek": ((weekday + 1) % 7 + 1).astype(np.int32),  # Sunday = 1
        "d_daynuminmonth": day.astype(np.int32),
        "d_daynuminyear": day_in_year.astype(np.int32),
        "d_monthnuminyear": month.astype(np.int32),
        "d_weeknuminyear": ((day_in_year - 1) // 7 + 1).astype(np.int32),
        "d_sellingseason": _take(["Christmas", "Summer", "Winter", "Spring", "Fall"], season),
        "d_lastdayinweekfl": (weekday == 6).astype(np.int32),
        "d_lastdayinmonthfl": (next_month != d.astype("datetime64[M]")).astype(np.int32),
        "d_holidayfl": holiday.astype(np.int32),
        "d_weekdayfl": (weekday < 5).astype(np.int32),
    })


# -- fact table ------------------------------------------------------------------------------------


def gen_lineorder(rng: np.random.Generator, card: Cardinalities) -> pa.Table:
    n_orders = card.orders
    lines = rng.integers(1, 8, n_orders)
    order_day = rng.integers(0, ORDER_DATE_DAYS, n_orders)
    custkey = rng.integers(1, card.customers + 1, n_orders)
    priority = rng.integers(0, len(PRIORITIES), n_orders)
    n = int(lines.sum())
    order_of = np.repeat(np.arange(n_orders), lines)
    first_line = np.zeros(n_orders, np.int64)
    np.cumsum(lines[:-1], out=first_line[1:])
    linenumber = np.arange(n) - first_line[order_of] + 1
    partkey = rng.integers(1, card.parts + 1, n)
    suppkey = rng.integers(1, card.suppliers + 1, n)
    quantity = rng.integers(1, 51, n)
    discount = rng.integers(0, 11, n)
    tax = rng.integers(0, 9, n)
    commit_lag = rng.integers(30, 91, n)
    shipmode = rng.integers(0, len(SHIPMODES), n)

    epoch_1992 = (START_DATE - np.datetime64("1970-01-01")).astype(np.int64)
    for i, (ymd, cust, supp, part, disc, qty) in enumerate(_PLANTED_ORDERS):
        day = np.datetime64(f"{ymd // 10000:04d}-{ymd // 100 % 100:02d}-{ymd % 100:02d}")
        order_day[i] = (day - START_DATE).astype(np.int64)
        custkey[i] = cust
        row = first_line[i]
        suppkey[row], partkey[row], discount[row], quantity[row] = supp, part, disc, qty

    # dbgen's sparse order keys: 8 keys used out of every 32.
    orderkey = (np.arange(n_orders) // 8) * 32 + np.arange(n_orders) % 8 + 1
    extendedprice = quantity * retail_price(partkey)
    revenue = extendedprice * (100 - discount) // 100
    supplycost = 6 * retail_price(partkey) // 10
    line_total = extendedprice * (100 - discount) * (100 + tax)
    ordtotal = np.add.reduceat(line_total, first_line) // 10_000
    line_day = order_day[order_of]
    return pa.table({
        "lo_orderkey": orderkey[order_of].astype(np.int32),
        "lo_linenumber": linenumber.astype(np.int8),
        "lo_custkey": custkey[order_of].astype(np.int32),
        "lo_partkey": partkey.astype(np.int32),
        "lo_suppkey": suppkey.astype(np.int32),
        "lo_orderdate": datekey(line_day),
        "lo_orderpriority": _take(PRIORITIES, priority[order_of]),
        "lo_shippriority": np.zeros(n, np.int8),
        "lo_quantity": quantity.astype(np.int8),
        "lo_extendedprice": extendedprice.astype(np.int32),
        "lo_ordtotalprice": ordtotal[order_of].astype(np.int32),
        "lo_discount": discount.astype(np.int8),
        "lo_revenue": revenue.astype(np.int32),
        "lo_supplycost": supplycost.astype(np.int32),
        "lo_tax": tax.astype(np.int8),
        "lo_commitdate": datekey(line_day + commit_lag),
        "lo_shipmode": _take(SHIPMODES, shipmode),
        # Kept for the flat table only (dropped from lineorder.parquet): the commit date as a DATE.
        "_commit_date": pa.array((epoch_1992 + line_day + commit_lag).astype(np.int32), pa.date32()),
    })


def flatten(lo: pa.Table, customer: pa.Table, supplier: pa.Table, part: pa.Table) -> pa.Table:
    """lineorder joined with its dimensions, in Doris's SSB-flat column order and types.

    Keys are dense 1..N, so each join is a positional take by key - 1."""
    c = customer.take(pc.subtract(lo["lo_custkey"], 1))
    s = supplier.take(pc.subtract(lo["lo_suppkey"], 1))
    p = part.take(pc.subtract(lo["lo_partkey"], 1))
    cols: dict[str, pa.ChunkedArray] = {}
    for name in FLAT_COLUMNS:
        low = name.lower()
        if name == "LO_COMMITDATE":
            cols[name] = lo["_commit_date"]
        elif low.startswith("lo_"):
            cols[name] = lo[low]
        else:
            src = {"c": c, "s": s, "p": p}[low[0]]
            cols[name] = src[low]
    return pa.table(cols)


def flat_schema() -> pa.Schema:
    """The Arrow schema of lineorder_flat Parquet files (matches schema.FLAT_DDL)."""
    ints = {"LO_ORDERDATE", "LO_ORDERKEY", "LO_CUSTKEY", "LO_PARTKEY", "LO_SUPPKEY", "LO_EXTENDEDPRICE",
            "LO_ORDTOTALPRICE", "LO_REVENUE", "LO_SUPPLYCOST"}
    tinyints = {"LO_LINENUMBER", "LO_SHIPPRIORITY", "LO_QUANTITY", "LO_DISCOUNT", "LO_TAX", "P_SIZE"}
    fields = []
    for name in FLAT_COLUMNS:
        t = (pa.int32() if name in ints else pa.int8() if name in tinyints
             else pa.date32() if name == "LO_COMMITDATE" else pa.string())
        fields.append(pa.field(name, t, nullable=False))
    return pa.schema(fields)


# -- files -----------------------------------------------------------------------------------------


def flat_glob(out: Path) -> str:
    return str(Path(out).resolve() / "lineorder_flat" / "*.parquet")


def _write(table: pa.Table, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".parquet.tmp")
    pq.write_table(table, tmp, row_group_size=ROW_GROUP_ROWS)
    tmp.replace(path)


def generate(sf: float, out: Path, seed: int = DEFAULT_SEED, rows_per_file: int = ROWS_PER_FILE) -> dict[str, int]:
    """Write every SSB table as Parquet under `out`; returns row counts per table.

    Layout: customer.parquet, supplier.parquet, part.parquet, dates.parquet, lineorder/part-NNNNN.parquet,
    lineorder_flat/part-NNNNN.parquet. `_SUCCESS` is written last (a complete data set has it)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "_SUCCESS").unlink(missing_ok=True)
    card = cardinalities(sf)
    # One independent stream per table: a table's content does not depend on another's size.
    rng_c, rng_s, rng_p, rng_lo = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(4))
    customer = gen_customer(rng_c, card.customers)
    supplier = gen_supplier(rng_s, card.suppliers)
    part = gen_part(rng_p, card.parts)
    dates = gen_dates()
    lo = gen_lineorder(rng_lo, card)
    for name, t in (("customer", customer), ("supplier", supplier), ("part", part), ("dates", dates)):
        _write(t, out / f"{name}.parquet")
    schema = flat_schema()
    for sub in ("lineorder", "lineorder_flat"):
        for old in (out / sub).glob("*.parquet"):
            old.unlink()
    for i, start in enumerate(range(0, lo.num_rows, rows_per_file)):
        chunk = lo.slice(start, rows_per_file)
        _write(chunk.drop_columns(["_commit_date"]), out / "lineorder" / f"part-{i:05d}.parquet")
        _write(flatten(chunk, customer, supplier, part).cast(schema), out / "lineorder_flat" / f"part-{i:05d}.parquet")
    (out / "_SUCCESS").write_text(f"sf={sf} seed={seed}\n")
    return {"customer": customer.num_rows, "supplier": supplier.num_rows, "part": part.num_rows,
            "dates": dates.num_rows, "lineorder": lo.num_rows, "lineorder_flat": lo.num_rows}


def is_generated(out: Path) -> bool:
    return (Path(out) / "_SUCCESS").exists()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sf", type=float, default=1.0, help="scale factor (SF 1 = about 6,000,000 lineorder rows)")
    ap.add_argument("--out", type=Path, default=None, help="output folder (default bench/out/ssb-sf<SF>)")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--rows-per-file", type=int, default=ROWS_PER_FILE)
    args = ap.parse_args()
    out = args.out or default_out(args.sf)
    t0 = time.perf_counter()
    counts = generate(args.sf, out, args.seed, args.rows_per_file)
    print(f"SSB SF {args.sf:g} -> {out} in {time.perf_counter() - t0:.1f} s")
    for name, rows in counts.items():
        print(f"  {name:15}{rows:>12,}")


def sf_label(sf: float) -> str:
    return f"{sf:g}"


def default_out(sf: float) -> Path:
    return Path(__file__).resolve().parent.parent / "out" / f"ssb-sf{sf_label(sf)}"


if __name__ == "__main__":
    main()
