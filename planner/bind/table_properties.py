"""CREATE TABLE PROPERTIES: validated, normalised, defaults materialised in SHOW CREATE TABLE order.

Each known key has one entry in `_ORDER` (where it prints) and optionally a validator; a key nobody
consumes is rejected the way Doris does (`Unknown properties: {k=v}`).
"""

from __future__ import annotations

from collections.abc import Callable

from planner.bind.values import normalize
from sql.errors import analysis_error
from sql.types import DorisType, parse_type
from storage.catalog.model import KEYS_AGG, KEYS_UNIQUE, Column
from storage.catalog.table_versions import MAX_RETENTION_SECONDS, RETENTION_PROPERTY, parse_retention
from storage.segment.page import CODECS

BLOOM_FILTER_FPP_MIN, BLOOM_FILTER_FPP_MAX = 0.0001, 0.05

# (key, default or None when printed only if given); dynamic_partition.* keys go after is_being_synced
_HEAD = (
    ("replication_allocation", "tag.location.default: 3"),
    ("min_load_replica_num", "-1"),
    ("bloom_filter_columns", None),
    ("bloom_filter_fpp", None),
    ("colocate_with", None),
    ("is_being_synced", "false"),
)
_TAIL = (
    ("storage_medium", "hdd"),
    ("storage_format", "V2"),
    ("inverted_index_storage_format", "V1"),
    ("compression", None),
    ("estimate_partition_size", None),
    ("enable_unique_key_merge_on_write", None),  # filled for UNIQUE tables
    ("light_schema_change", "true"),
    ("function_column.sequence_col", None),
    ("function_column.sequence_type", None),
    ("disable_auto_compaction", "false"),
    ("enable_single_replica_compaction", "false"),
    ("store_row_column", None),
    ("compaction_policy", None),
    ("time_series_compaction_goal_size_mbytes", None),
    ("time_series_compaction_file_count_threshold", None),
    ("time_series_compaction_time_threshold_seconds", None),
    ("storage_cooldown_time", None),
    ("storage_policy", None),
    ("skip_write_index_on_load", None),
    ("row_store_columns", None),
    ("row_store_page_size", None),
    ("enable_mow_light_delete", None),
    ("enable_duplicate_without_keys_by_default", None),
    ("file_cache_ttl_seconds", None),
    ("group_commit_interval_ms", "10000"),
    ("group_commit_data_bytes", "134217728"),
    (RETENTION_PROPERTY, None),  # dorislite's: time travel (planner/time_travel.py)
)
_KNOWN = {k for k, _ in _HEAD + _TAIL} | {"replication_num", "in_memory"}  # in_memory: false accepted, not kept


def _bool_validator(key: str) -> Callable[[str], str]:
    def check(value: str) -> str:
        lowered = value.strip().lower()
        if lowered not in ("true", "false"):
            raise analysis_error(f"{key} must be `true` or `false`")
        return lowered

    return check


def _int_validator(key: str, minimum: int) -> Callable[[str], str]:
    def check(value: str) -> str:
        try:
            number = int(value.strip())
        except ValueError:
            raise analysis_error(f"Invalid {key} format: {value}") from None
        if number < minimum:
            raise analysis_error(f"{key} must be greater than or equal to {minimum}")
        return str(number)

    return check


def _choice(key: str, choices: tuple[str, ...], out: Callable[[str], str]) -> Callable[[str], str]:
    def check(value: str) -> str:
        if value.strip().upper() not in choices:
            raise analysis_error(f"Invalid {key}: {value}")
        return out(value.strip())

    return check


def _compression(value: str) -> str:
    """PropertyAnalyzer.analyzeCompressionType; the segment pages use it (storage.segment.page.CODECS)."""
    if value.strip().upper() not in CODECS:
        raise analysis_error(f"unknown compression type: {value}")
    return value.strip().upper()


def _retention(value: str) -> str:
    """time_travel_retention: a duration up to a year ("7d", "12h", "30m", "3600s", "3600"; "0" or "off": none)."""
    seconds = parse_retention(value)
    if seconds is None:
        raise analysis_error(f"Invalid {RETENTION_PROPERTY}: {value}; use a duration such as 7d, 12h, 30m or 3600s "
                             "(0 turns time travel off)")
    if seconds > MAX_RETENTION_SECONDS:
        raise analysis_error(f"{RETENTION_PROPERTY} {value} is longer than the most it keeps: 366d")
    return "0" if seconds == 0 else value.strip().lower()


def _compaction_policy(value: str) -> str:
    if value not in ("time_series", "size_based"):
        raise analysis_error("compaction_policy must be time_series or size_based")
    return value


_VALIDATORS: dict[str, Callable[[str], str]] = {
    "min_load_replica_num": _int_validator("min_load_replica_num", -1),
    "is_being_synced": _bool_validator("is_being_synced"),
    "storage_medium": _choice("storage_medium", ("HDD", "SSD"), str.lower),
    "storage_format": _choice("storage_format", ("V2", "DEFAULT"), lambda _: "V2"),
    "inverted_index_storage_format": _choice("inverted_index_storage_format", ("V1", "V2", "DEFAULT"),
                                             lambda s: "V1" if s.upper() == "DEFAULT" else s.upper()),
    "enable_unique_key_merge_on_write": _bool_validator("enable_unique_key_merge_on_write"),
    "light_schema_change": _bool_validator("light_schema_change"),
    "disable_auto_compaction": _bool_validator("disable_auto_compaction"),
    "enable_single_replica_compaction": _bool_validator("enable_single_replica_compaction"),
    "store_row_column": _bool_validator("store_row_column"),
    "compaction_policy": _compaction_policy,
    "compression": _compression,
    "skip_write_index_on_load": _bool_validator("skip_write_index_on_load"),
    "enable_mow_light_delete": _bool_validator("enable_mow_light_delete"),
    "enable_duplicate_without_keys_by_default": _bool_validator("enable_duplicate_without_keys_by_default"),
    "row_store_page_size": _int_validator("row_store_page_size", 1),
    "file_cache_ttl_seconds": _int_validator("file_cache_ttl_seconds", 0),
    "time_series_compaction_goal_size_mbytes": _int_validator("time_series_compaction_goal_size_mbytes", 10),
    "time_series_compaction_file_count_threshold": _int_validator("time_series_compaction_file_count_threshold",
                                                                  10),
    "time_series_compaction_time_threshold_seconds": _int_validator(
        "time_series_compaction_time_threshold_seconds", 60),
    "group_commit_interval_ms": _int_validator("group_commit_interval_ms", 0),
    "group_commit_data_bytes": _int_validator("group_commit_data_bytes", 0),
    RETENTION_PROPERTY: _retention,
}


# plain properties ALTER TABLE t SET ("k" = "v") changes (the bloom filter and dynamic partition ones have their
# own binders)
ALTERABLE_PROPERTIES = frozenset({"disable_auto_compaction", "group_commit_interval_ms", "group_commit_data_bytes",
                                  RETENTION_PROPERTY})


def bind_alter_properties(current: tuple[tuple[str, str], ...],
                          given: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """The table's properties with the ALTERABLE_PROPERTIES in `given` validated as CREATE TABLE validates
    them and replaced in place (SHOW CREATE TABLE keeps its order)."""
    changed = {k.lower(): _VALIDATORS[k.lower()](v) for k, v in given}
    out = [(k, changed.pop(k, v)) for k, v in current]
    return (*out, *changed.items())


def replication_allocation(props: dict[str, str]) -> str:
    """`replication_num = N` becomes `tag.location.default: N` (Doris keeps only the allocation)."""
    if "replication_allocation" in props:
        text = props.pop("replication_allocation")
        props.pop("replication_num", None)
        parts = [p.strip() for p in text.split(",") if p.strip()]
        out = []
        for part in parts:
            tag, _, num = part.partition(":")
            if not tag.strip().startswith("tag.location.") or not num.strip().isdigit():
                raise analysis_error(f"Invalid replication allocation property: {text}")
            if tag.strip() != "tag.location.default":  # the one backend carries only the default tag
                location = tag.strip().removeprefix("tag.location.")
                raise analysis_error(
                    "Failed to find enough backend, please check the replication num,replication tag and storage "
                    "medium and avail capacity of backends or maybe all be on decommission or maintained or in "
                    f"blacklist.\nCreate failed replications:\nreplication tag: {{\"location\" : \"{location}\"}}, "
                    f"replication num: {int(num)}, storage medium: HDD")
            out.append(f"{tag.strip()}: {int(num)}")
        return ", ".join(out)
    num = props.pop("replication_num", "3")
    try:
        n = int(num)
    except ValueError:
        raise analysis_error(f"Invalid replication number: {num}") from None
    if n <= 0:
        raise analysis_error("Replication num should larger than 0")
    return f"tag.location.default: {n}"


# per-partition PROPERTIES (PARTITION p VALUES ... ("k" = "v"), ADD / MODIFY PARTITION), in SHOW order
PARTITION_PROPERTY_KEYS = ("replication_allocation", "storage_medium", "storage_cooldown_time", "storage_policy",
                           "in_memory", "mutable")


def bind_partition_properties(given: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """A partition's own properties, validated as the table's are (Doris's SinglePartitionDesc / DataProperty):
    `replication_num` becomes `replication_allocation`; `in_memory` = true is refused; keys Doris would not
    consume are ignored, as Doris ignores them."""
    props = {k.lower(): v for k, v in given}
    out: dict[str, str] = {}
    if "replication_num" in props or "replication_allocation" in props:
        out["replication_allocation"] = replication_allocation(props)
    if "storage_medium" in props:
        out["storage_medium"] = _VALIDATORS["storage_medium"](props["storage_medium"]).upper()
    if "storage_cooldown_time" in props:
        out["storage_cooldown_time"] = _cooldown_time(props["storage_cooldown_time"])
    if "storage_policy" in props:
        out["storage_policy"] = props["storage_policy"].strip()
    for key in ("in_memory", "mutable"):
        if key in props:
            out[key] = _bool_validator(key)(props[key])
    if out.get("in_memory") == "true":
        raise analysis_error("Not support set 'in_memory'='true' now!")
    return tuple((k, out[k]) for k in PARTITION_PROPERTY_KEYS if k in out)


def _cooldown_time(value: str) -> str:
    return normalize(value, parse_type("DATETIME"))


def bloom_filter_columns(value: str, columns: list[Column], types: dict[str, DorisType], keys_type: str) -> str:
    names = [c.strip() for c in value.split(",") if c.strip()]
    by_name = {c.name.lower(): c for c in columns}
    out, seen = [], set()
    for name in names:
        column = by_name.get(name.lower())
        if column is None:
            raise analysis_error(f"Bloom filter column does not exist in table. invalid column: {name}")
        t = types[column.name.lower()]
        if t.name in ("TINYINT", "FLOAT", "DOUBLE", "BOOLEAN"):
            raise analysis_error(f"{t.name} is not supported in bloom filter index. invalid column: {name}")
        if keys_type == KEYS_AGG and not column.is_key:
            raise analysis_error(
                "Bloom filter index should only be used in columns of UNIQUE_KEYS/DUP_KEYS table or key "
                f"columns of AGG_KEYS table. invalid column: {name}"
            )
        if column.name.lower() in seen:
            raise analysis_error(f"Reduplicated bloom filter column: {name}")
        seen.add(column.name.lower())
        out.append(column.name)
    return ", ".join(out)


def bloom_filter_fpp(value: str) -> str:
    try:
        fpp = float(value)
    except ValueError:
        raise analysis_error("Bloom filter fpp is not Double") from None
    if not BLOOM_FILTER_FPP_MIN <= fpp <= BLOOM_FILTER_FPP_MAX:
        raise analysis_error("Bloom filter fpp should in [1.0E-4, 0.05]")
    return value


def bind_properties(
    given: tuple[tuple[str, str], ...],
    keys_type: str,
    columns: list[Column],
    types: dict[str, DorisType],
    auto_bucket: bool,
) -> tuple[tuple[str, str], ...]:
    props = dict(given)
    unknown = {k: v for k, v in props.items() if k not in _KNOWN and not k.startswith("dynamic_partition.")}
    if unknown:
        raise analysis_error("Unknown properties: {" + ", ".join(f"{k}={v}" for k, v in unknown.items()) + "}")
    if "enable_unique_key_merge_on_write" in props and keys_type != KEYS_UNIQUE:
        raise analysis_error("enable_unique_key_merge_on_write property only support unique key table")
    if props.get("store_row_column", "").lower() == "true" and keys_type == KEYS_AGG:
        raise analysis_error("Aggregate table can't support row column now")
    for key in ("function_column.sequence_col", "function_column.sequence_type"):
        if key in props and keys_type != KEYS_UNIQUE:
            raise analysis_error("Sequence column only support UNIQUE_KEYS")
    if props.get("in_memory", "false").lower() not in ("false", "true"):
        raise analysis_error("Invalid boolean value: " + props["in_memory"])
    if props.get("in_memory", "false").lower() == "true":  # Doris 2.1 deprecated it: false is all it takes
        raise analysis_error("Not support set 'in_memory'='true' now!")
    if "estimate_partition_size" in props and not auto_bucket:
        raise analysis_error("estimate_partition_size should only be used with BUCKETS AUTO")

    out: dict[str, str] = {"replication_allocation": replication_allocation(props)}
    if "bloom_filter_columns" in props:
        props["bloom_filter_columns"] = bloom_filter_columns(
            props["bloom_filter_columns"], columns, types, keys_type
        )
    if "bloom_filter_fpp" in props:
        props["bloom_filter_fpp"] = bloom_filter_fpp(props["bloom_filter_fpp"])
    if keys_type == KEYS_UNIQUE:
        props.setdefault("enable_unique_key_merge_on_write", "true")  # default for new tables since 2.1
    if props.get("compression", "").strip().upper() == "LZ4F":
        del props["compression"]  # Doris's default codec: SHOW CREATE TABLE does not print it

    def emit(entries: tuple[tuple[str, str | None], ...]) -> None:
        for key, default in entries:
            if key == "replication_allocation":
                continue
            value = props.get(key, default)
            if value is not None:
                check = _VALIDATORS.get(key)
                out[key] = check(value) if check else value

    emit(_HEAD)
    for key, value in props.items():  # stored as given; validated by the dynamic-partition issue
        if key.startswith("dynamic_partition."):
            out[key] = value
    emit(_TAIL)
    return tuple(out.items())
