"""Doris column types: parsing the type text, and mapping to Arrow and to MySQL wire column types.

One place owns these mappings; storage keeps type text opaque, the planner and server ask here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum

import pyarrow as pa
from sqlglot import exp

from sql.errors import analysis_error


class MysqlType(IntEnum):
    DECIMAL = 0x00
    TINY = 0x01
    SHORT = 0x02
    LONG = 0x03
    FLOAT = 0x04
    DOUBLE = 0x05
    NULL = 0x06
    TIMESTAMP = 0x07
    LONGLONG = 0x08
    INT24 = 0x09
    DATE = 0x0A
    TIME = 0x0B
    DATETIME = 0x0C
    YEAR = 0x0D
    VARCHAR = 0x0F
    BIT = 0x10
    NEWDECIMAL = 0xF6
    BLOB = 0xFC
    VAR_STRING = 0xFD
    STRING = 0xFE


# Column definition flags (protocol::ColumnDefinition41)
NOT_NULL_FLAG = 1
PRI_KEY_FLAG = 2
UNSIGNED_FLAG = 32
BINARY_FLAG = 128
NUM_FLAG = 32768

CHARSET_UTF8MB4 = 33  # utf8_general_ci id Doris sends; text columns
CHARSET_BINARY = 63  # numbers, dates

# Arrow has no int128: LARGEINT lives in decimal128(38, 0), whose 16 bytes hold every int128 (storage/int128.py)
LARGEINT_ARROW = pa.decimal128(38, 0)
LARGEINT_MAX = (1 << 127) - 1  # Doris's range is [-LARGEINT_MAX, LARGEINT_MAX]
VARCHAR_DEFAULT_LEN = 65533
STRING_MAX_LEN = 2147483643


@dataclass(frozen=True)
class DorisType:
    """A parsed Doris type. `name` is the canonical upper-case base name (INT, DECIMAL, VARCHAR ...)."""

    name: str
    precision: int | None = None  # DECIMAL precision, DATETIME fractional digits
    scale: int | None = None  # DECIMAL scale
    length: int | None = None  # CHAR / VARCHAR length

    # -- text -------------------------------------------------------------------------------------
    def __str__(self) -> str:
        """DESC's spelling: INT, DECIMAL(10, 2), VARCHAR(20), DATETIME(3), DATE."""
        if self.name == "DECIMAL":
            return f"DECIMAL({self.precision}, {self.scale})"
        if self.name in ("CHAR", "VARCHAR"):
            return f"{self.name}({self.length})"
        if self.name == "DATETIME":
            return f"DATETIME({self.precision})" if self.precision else "DATETIME"
        return self.name

    def sql(self) -> str:
        """SHOW CREATE TABLE's spelling (lower case, as Doris 2.1 prints it)."""
        if self.name == "DECIMAL":
            return f"decimal({self.precision},{self.scale})"
        if self.name in ("CHAR", "VARCHAR"):
            return f"{self.name.lower()}({self.length})"
        if self.name == "DATETIME":
            return f"datetime({self.precision})" if self.precision else "datetime"
        if self.name == "STRING":
            return "text"
        return self.name.lower()

    def internal(self) -> str:
        """DESC ALL's InternalType: the storage type."""
        if self.name == "DECIMAL":
            return f"DECIMALV3({self.precision}, {self.scale})"
        if self.name == "DATE":
            return "DATEV2"
        if self.name == "DATETIME":
            return f"DATETIMEV2({self.precision or 0})"
        return str(self)

    # -- classification ---------------------------------------------------------------------------
    @property
    def is_integer(self) -> bool:
        return self.name in ("TINYINT", "SMALLINT", "INT", "BIGINT", "LARGEINT")

    @property
    def is_float(self) -> bool:
        return self.name in ("FLOAT", "DOUBLE")

    @property
    def is_string(self) -> bool:
        return self.name in ("CHAR", "VARCHAR", "STRING")

    @property
    def is_date(self) -> bool:
        return self.name in ("DATE", "DATETIME")

    @property
    def storage_size(self) -> int:
        """Bytes a value takes in the short-key prefix accounting (doris-reference §1.2, §8.1)."""
        return _STORAGE_SIZE.get(self.name, 0) if not self.is_string else (self.length or 0)

    # -- arrow / mysql ----------------------------------------------------------------------------
    def arrow_type(self) -> pa.DataType:
        if self.name == "DECIMAL":
            return pa.decimal128(self.precision or 9, self.scale or 0)
        if self.name == "DATETIME":
            # the unit carries the declared fractional digits to the wire (DATETIME prints no fraction)
            p = self.precision or 0
            return pa.timestamp("s" if p == 0 else "ms" if p <= 3 else "us")
        return _ARROW[self.name]


_STORAGE_SIZE = {
    "BOOLEAN": 1, "TINYINT": 1, "SMALLINT": 2, "INT": 4, "BIGINT": 8, "LARGEINT": 16,
    "FLOAT": 4, "DOUBLE": 8, "DECIMAL": 16, "DATE": 4, "DATETIME": 8,
}

_ARROW: dict[str, pa.DataType] = {
    "BOOLEAN": pa.bool_(),
    "TINYINT": pa.int8(),
    "SMALLINT": pa.int16(),
    "INT": pa.int32(),
    "BIGINT": pa.int64(),
    "LARGEINT": LARGEINT_ARROW,
    "FLOAT": pa.float32(),
    "DOUBLE": pa.float64(),
    "DATE": pa.date32(),
    "CHAR": pa.string(),
    "VARCHAR": pa.string(),
    "STRING": pa.string(),
}

_ALIASES = {
    "BOOL": "BOOLEAN", "INTEGER": "INT", "INT4": "INT", "INT8": "BIGINT", "INT2": "SMALLINT",
    "DATEV2": "DATE", "DATETIMEV2": "DATETIME", "DECIMALV3": "DECIMAL", "DECIMALV2": "DECIMAL",
    "TEXT": "STRING", "NUMERIC": "DECIMAL", "REAL": "DOUBLE", "TIMESTAMP": "DATETIME",
}

_TYPE_RE = re.compile(r"^\s*([A-Za-z0-9_]+)\s*(?:\(\s*([^)]*)\))?\s*$")


def parse_type(text: str) -> DorisType:
    """Parse a Doris type as written in DDL or stored in the catalog ('decimal(10,2)', 'VARCHAR(20)')."""
    m = _TYPE_RE.match(text)
    if not m:
        raise analysis_error(f"Unsupported data type: {text}")
    name = _ALIASES.get(m.group(1).upper(), m.group(1).upper())
    args = [a.strip() for a in m.group(2).split(",")] if m.group(2) else []
    try:
        nums = [int(a) for a in args if a != "*"]
    except ValueError:
        raise analysis_error(f"Unsupported data type: {text}") from None
    if name == "DECIMAL":
        if m.group(1).upper() == "DECIMALV2" and not nums:
            nums = [27, 9]
        p = nums[0] if nums else 9
        s = nums[1] if len(nums) > 1 else 0
        if not 1 <= p <= 38:
            raise analysis_error(f"Precision of decimal must between 1 and 38. Precision was set to: {p}.")
        if not 0 <= s <= p:
            raise analysis_error(f"Scale of decimal must between 0 and precision. Scale was set to: {s}.")
        return DorisType("DECIMAL", precision=p, scale=s)
    if name == "DATETIME":
        p = nums[0] if nums else 0
        if not 0 <= p <= 6:
            raise analysis_error(f"Scale of Datetime/Time must between 0 and 6. Scale was set to: {p}")
        return DorisType("DATETIME", precision=p)
    # a length of 0 reads as no length (Doris 2.1, #38427): CHAR(0) is CHAR(1), VARCHAR(0) is VARCHAR(65533)
    if name == "CHAR":
        n = nums[0] if nums and nums[0] != 0 else 1
        if not 1 <= n <= 255:
            raise analysis_error(f"Char size must between 1 and 255. Size was set to: {n}.")
        return DorisType("CHAR", length=n)
    if name == "VARCHAR":
        n = nums[0] if nums and nums[0] != 0 else VARCHAR_DEFAULT_LEN
        if not 1 <= n <= VARCHAR_DEFAULT_LEN:
            raise analysis_error(f"Varchar size must between 1 and 65533. Size was set to: {n}.")
        return DorisType("VARCHAR", length=n)
    if name == "STRING":
        return DorisType("STRING", length=STRING_MAX_LEN)
    if name in _ARROW:
        return DorisType(name)
    raise analysis_error(f"Unsupported data type: {text}")


def mysql_column(arrow_type: pa.DataType) -> tuple[MysqlType, int, int, int, int]:
    """Wire column definition for a result column: (type, length, decimals, flags, charset)."""
    t = arrow_type
    if pa.types.is_boolean(t):
        return MysqlType.TINY, 1, 0, NUM_FLAG, CHARSET_BINARY
    if pa.types.is_int8(t):
        return MysqlType.TINY, 4, 0, NUM_FLAG, CHARSET_BINARY
    if pa.types.is_int16(t):
        return MysqlType.SHORT, 6, 0, NUM_FLAG, CHARSET_BINARY
    if pa.types.is_int32(t):
        return MysqlType.LONG, 11, 0, NUM_FLAG, CHARSET_BINARY
    if pa.types.is_int64(t) or pa.types.is_uint64(t) or pa.types.is_uint32(t):
        return MysqlType.LONGLONG, 20, 0, NUM_FLAG, CHARSET_BINARY
    if pa.types.is_unsigned_integer(t):
        return MysqlType.LONG, 11, 0, NUM_FLAG | UNSIGNED_FLAG, CHARSET_BINARY
    if pa.types.is_float32(t):
        return MysqlType.FLOAT, 12, 31, NUM_FLAG, CHARSET_BINARY
    if pa.types.is_floating(t):
        return MysqlType.DOUBLE, 22, 31, NUM_FLAG, CHARSET_BINARY
    if pa.types.is_decimal(t):
        # length counts digits, sign and point, as MySQL does
        return MysqlType.NEWDECIMAL, t.precision + 2, t.scale, NUM_FLAG, CHARSET_BINARY
    if pa.types.is_date(t):
        return MysqlType.DATE, 10, 0, BINARY_FLAG, CHARSET_BINARY
    if pa.types.is_timestamp(t):
        digits = {"s": 0, "ms": 3, "us": 6, "ns": 6}[t.unit]
        return MysqlType.DATETIME, 19 + (digits + 1 if digits else 0), digits, BINARY_FLAG, CHARSET_BINARY
    if pa.types.is_null(t):
        return MysqlType.NULL, 0, 0, 0, CHARSET_BINARY
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return MysqlType.BLOB, 65535, 0, BINARY_FLAG, CHARSET_BINARY
    # strings and anything else are sent as text
    return MysqlType.VAR_STRING, 65533 * 4, 0, 0, CHARSET_UTF8MB4


# sqlglot DataType names -> Doris base names (the dialect's tokenizer folds LARGEINT, DATEV2, ... into these)
_SQLGLOT_NAMES = {
    "BOOLEAN": "BOOLEAN", "TINYINT": "TINYINT", "SMALLINT": "SMALLINT", "INT": "INT", "BIGINT": "BIGINT",
    "INT128": "LARGEINT", "FLOAT": "FLOAT", "DOUBLE": "DOUBLE", "DECIMAL": "DECIMAL", "DATE": "DATE",
    "DATETIME": "DATETIME", "TIMESTAMP": "DATETIME", "TIMESTAMPTZ": "DATETIME", "CHAR": "CHAR",
    "VARCHAR": "VARCHAR", "TEXT": "STRING",
}


def type_from_sqlglot(data_type: exp.DataType) -> DorisType:
    """A DorisType from a parsed sqlglot DataType (column definitions, CAST targets)."""
    name = _SQLGLOT_NAMES.get(data_type.this.name)
    if name is None:
        raise analysis_error(f"Unsupported data type: {data_type.sql('doris')}")
    args = [p.name for p in data_type.expressions]
    return parse_type(f"{name}({', '.join(args)})" if args else name)


_DORIS_NAMES = {pa.int8(): "TINYINT", pa.int16(): "SMALLINT", pa.int32(): "INT", pa.int64(): "BIGINT",
                pa.float32(): "FLOAT", pa.float64(): "DOUBLE", pa.bool_(): "BOOLEAN", pa.date32(): "DATE",
                pa.string(): "VARCHAR(65533)", pa.large_string(): "VARCHAR(65533)", pa.null(): "NULL_TYPE"}


def doris_type_name(t: pa.DataType) -> str:
    """The Doris type of a query's result column (DESC of a view, the columns of CREATE TABLE AS SELECT):
    strings are VARCHAR(65533) as Doris makes them (use_max_length_of_varchar_in_ctas), a DATETIME keeps the
    fractional digits its unit carries."""
    if pa.types.is_decimal(t):
        return f"DECIMAL({t.precision}, {t.scale})"
    if pa.types.is_timestamp(t):
        return {"s": "DATETIME", "ms": "DATETIME(3)"}.get(t.unit, "DATETIME(6)")
    return _DORIS_NAMES.get(t, str(t).upper())
