"""Literal text checked and normalised against a Doris column type (partition bounds, DEFAULT values).

Doris prints bounds in a canonical form per type ('2020-1-1' on a DATE column is '2020-01-01'); every
comparison between bounds goes through `sort_key`, so the planner and SHOW agree on the order.
"""

from __future__ import annotations

import re
from datetime import datetime
from decimal import Decimal, InvalidOperation

from sql.errors import analysis_error
from sql.types import DorisType
from storage.catalog import partition_items

_INT_BITS = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64, "LARGEINT": 128}

# the smallest value of each partitionable type: the lower bound of the first LESS THAN partition
TYPE_MIN = {
    "DATE": "0000-01-01",
    "DATETIME": "0000-01-01 00:00:00",
    **{name: str(-(1 << (bits - 1))) for name, bits in _INT_BITS.items()},
}

_DATE_RE = re.compile(
    r"^\s*(\d{1,4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2})(?::(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,6}))?)?)?)?\s*$"
)
_COMPACT_DATE_RE = re.compile(r"^\s*(\d{4})(\d{2})(\d{2})(?:(\d{2})(\d{2})(\d{2}))?\s*$")


def internal_type_name(t: DorisType) -> str:
    """The storage type names Doris prints inside partition key strings (DATEV2, DATETIMEV2, INT ...)."""
    return partition_items.internal_type_name(str(t))


def normalize(text: str, t: DorisType) -> str:
    """Canonical text of `text` as a value of type `t`; raises Doris's analysis error when invalid."""
    if t.is_integer:
        return _normalize_int(text, t)
    if t.is_date:
        return _normalize_datetime(text, t)
    if t.name == "BOOLEAN":
        lowered = text.strip().lower()
        if lowered in ("true", "1"):
            return "true"
        if lowered in ("false", "0"):
            return "false"
        raise analysis_error(f"Invalid BOOLEAN literal: {text}")
    if t.name == "DECIMAL":
        try:
            value = Decimal(text.strip())
        except InvalidOperation:
            raise analysis_error(f"Invalid decimal value: {text}") from None
        int_digits = len(str(abs(int(value)))) if abs(value) >= 1 else 0
        if int_digits > (t.precision or 9) - (t.scale or 0):
            raise analysis_error(f"Invalid decimal value: {text}, out of range for {t}")
        return text.strip()
    if t.is_float:
        try:
            float(text)
        except ValueError:
            raise analysis_error(f"Invalid floating-point literal: {text}") from None
        return text.strip()
    if t.name in ("CHAR", "VARCHAR") and t.length is not None and len(text.encode()) > t.length:
        raise analysis_error(f"String literal is too long for {t}: {text}")
    return text


def _normalize_int(text: str, t: DorisType) -> str:
    try:
        value = int(text.strip())
    except ValueError:
        raise analysis_error(f"Invalid number format: {text}") from None
    bits = _INT_BITS[t.name]
    if not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
        raise analysis_error(f"Number out of range[{text}]. type: {t.name}")
    return str(value)


def parse_datetime(text: str) -> datetime | None:
    m = _DATE_RE.match(text) or _COMPACT_DATE_RE.match(text)
    if not m:
        return None
    parts = [int(p) if p else 0 for p in m.groups()[:6]]
    frac = m.groups()[6] if len(m.groups()) > 6 and m.groups()[6] else ""
    try:
        if parts[0] == 0:  # Python dates start at year 1; year 0 only appears as the type minimum
            if (parts[1], parts[2]) != (1, 1) or any(parts[3:]):
                return None
            return datetime.min
        return datetime(*parts, microsecond=int(frac.ljust(6, "0")) if frac else 0)  # type: ignore[misc]
    except ValueError:
        return None


def _normalize_datetime(text: str, t: DorisType) -> str:
    value = parse_datetime(text)
    if value is None:
        raise analysis_error(f"date literal [{text}] is invalid")
    year = 0 if value == datetime.min and text.strip().startswith("0") else value.year
    day = f"{year:04d}-{value.month:02d}-{value.day:02d}"
    if t.name == "DATE":
        return day
    out = f"{day} {value.hour:02d}:{value.minute:02d}:{value.second:02d}"
    if t.precision:
        out += "." + f"{value.microsecond:06d}"[: t.precision]
    return out


def to_datetime(text: str) -> datetime:
    """A normalised DATE/DATETIME bound as a datetime (year 0 maps to datetime.min)."""
    value = parse_datetime(text)
    assert value is not None, text
    return value


def format_datetime(value: datetime, t: DorisType) -> str:
    day = f"{value.year:04d}-{value.month:02d}-{value.day:02d}"
    return day if t.name == "DATE" else f"{day} {value.hour:02d}:{value.minute:02d}:{value.second:02d}"


def sort_key(values: tuple[str | None, ...], types: tuple[DorisType, ...]) -> tuple:
    """Order of partition keys (the catalog's rule): None (MAXVALUE) sorts after every value of its column."""
    return partition_items.key_order(values, tuple(str(t) for t in types))
