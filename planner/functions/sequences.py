"""sequence_match / sequence_count: Doris's event-chain aggregates (ClickHouse's sequenceMatch / sequenceCount).

A pattern is a chain of `(?N)` (an event meeting condition N), `.` (any one event), `.*` (any events) and
`(?t op secs)` (the seconds since the previous matched event, op one of >=, >, <, <=, ==). A group's events are
its rows with at least one condition true (rows with a NULL argument are skipped), in timestamp order.

The matchers follow Doris's BE (aggregate_function_sequence_match.h) step for step: sequence_match without a
time condition runs the pattern's automaton (here Shift-And over the active states as one integer's bits),
with one runs the backtracking matcher, which sequence_count calls again after each chain it finds. A group
where a condition the pattern names never holds answers 0 without matching. The per-group loops run over that
group's events only; everything per row is numpy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sql.errors import analysis_error

MAX_EVENTS = 32
MAX_ITERATIONS = 1_000_000  # Doris's sequence_match_max_iterations: a search stopped there does not match

EVENT, ANY, STAR = "event", "any", "star"
_TOKEN = re.compile(r"\(\?(?:t(<=|==|>=|<|>)([0-9]+)|([0-9]+))\)|\.\*|\.")


@dataclass(frozen=True)
class SequencePattern:
    """A parsed pattern: its actions after Doris's implicit leading `.*`, and the conditions it names."""

    actions: tuple[tuple[str, int], ...]  # (kind, value): EVENT's condition index, a time op's seconds
    has_time: bool
    conditions: int  # bit i: the pattern names condition i + 1


def parse_pattern(text: str, conditions: int, call_sql: str) -> SequencePattern:
    """The pattern of a call with `conditions` condition arguments; a malformed one is Doris's FE error."""
    actions: list[tuple[str, int]] = [(STAR, 0)]
    named, has_time, pos = 0, False, 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise analysis_error(f"The format of pattern params is wrong: {call_sql}")
        pos = m.end()
        op, secs, event = m.groups()
        if event is not None:
            number = int(event)
            if not 1 <= number <= conditions:
                raise analysis_error(f"Event number {number} is out of range, valid range is [1, {conditions}]")
            actions.append((EVENT, number - 1))
            named |= 1 << (number - 1)
        elif op is not None:
            if actions[-1][0] not in (EVENT, ANY, STAR):  # Doris's BE stops reading the pattern there
                raise analysis_error(f"The format of pattern params is wrong: {call_sql}: a time condition "
                                     "must follow an event")
            actions.append((op, int(secs)))
            has_time = True
        else:
            actions.append((STAR, 0) if m.group(0) == ".*" else (ANY, 0))
    return SequencePattern(tuple(actions), has_time, named)


# -- per-row preparation (numpy) ---------------------------------------------------------------------------


def event_masks(conditions: list[pa.Array], rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(each listed row's condition bits, whether none of its conditions is NULL)."""
    bits = np.zeros(len(rows), np.int64)
    valid = np.ones(len(rows), bool)
    taken = pa.array(rows, pa.int64())
    for i, column in enumerate(conditions):
        picked = column.take(taken)
        if pa.types.is_null(picked.type):
            valid[:] = False
            continue
        valid &= pc.is_valid(picked).to_numpy(zero_copy_only=False)
        true = pc.fill_null(picked, False).to_numpy(zero_copy_only=False).astype(bool)
        bits |= true.astype(np.int64) << i
    return bits, valid


def timestamps(column: pa.Array, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(order key, whole seconds, valid) of each listed row's DATE / DATETIME: Doris compares the seconds
    (datetime_diff_in_seconds ignores fractions) and orders by the whole value."""
    picked = column.take(pa.array(rows, pa.int64()))
    valid = pc.is_valid(picked).to_numpy(zero_copy_only=False)
    if pa.types.is_date(picked.type):
        days = pc.fill_null(pc.cast(picked, pa.date32()).cast(pa.int32()), 0).to_numpy(zero_copy_only=False)
        key = days.astype(np.int64)
        return key, key * 86400, valid
    unit = picked.type.unit
    key = pc.fill_null(picked.cast(pa.int64()), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    per_second = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}[unit]
    return key, np.floor_divide(key, per_second), valid


# -- the matchers, over one group's events (bits, seconds) in time order ----------------------------------


def _automaton(pattern: SequencePattern) -> tuple[list[tuple[str, int]], int]:
    """The automaton's transitions and the states with a `.*` self-loop (bit s: state s)."""
    steps, loops, state = [], 0, 0
    for kind, value in pattern.actions:
        if kind == STAR:
            loops |= 1 << state
        elif kind in (EVENT, ANY):
            steps.append((kind, value))
            state += 1
    return steps, loops


def accepting_masks(pattern: SequencePattern, bits: np.ndarray) -> np.ndarray:
    """Per event, the automaton states whose transition it takes (bit s: state s -> s + 1)."""
    steps, _ = _automaton(pattern)
    accept = np.zeros(len(bits), np.int64)
    for state, (kind, value) in enumerate(steps):
        takes = np.ones(len(bits), bool) if kind == ANY else ((bits >> value) & 1).astype(bool)
        accept |= takes.astype(np.int64) << state
    return accept


def dfa_match(pattern: SequencePattern, accept: list[int]) -> bool:
    """Doris's dfa_match: the states active after each event; matched once the last state is reached."""
    steps, loops = _automaton(pattern)
    final = 1 << len(steps)
    active = 1
    for a in accept:
        if active & final or not active:
            break
        active = ((active & a) << 1) | (active & loops)
    return bool(active & final)


_SKIPPED_AT_END = (STAR, "<=", "<")  # actions an exhausted event list still meets (and >= 0)


def _time_holds(op: str, diff: int, secs: int) -> bool:
    if op == "<=":
        return diff <= secs
    if op == "<":
        return diff < secs
    if op == ">=":
        return diff >= secs
    if op == ">":
        return diff > secs
    return diff == secs


def backtracking_match(actions: tuple[tuple[str, int], ...], bits: list[int], secs: list[int], pos: int,
                       end: int) -> tuple[bool, int]:
    """Doris's backtracking_match from event `pos`: (matched, the event the next search starts at)."""
    n = len(actions)
    a, begin, base = 0, pos, pos
    stack: list[tuple[int, int, int]] = []

    def backtrack() -> bool:
        nonlocal a, pos, base
        while stack:
            a, at, base = stack.pop()
            pos = at + 1
            if pos != end:
                return True
        return False

    steps = 0
    while a < n and pos < end:
        kind, value = actions[a]
        if kind == EVENT:
            if bits[pos] >> value & 1:
                base = pos
                a += 1
                pos += 1
            elif not backtrack():
                break
        elif kind == ANY:
            base = pos
            a += 1
            pos += 1
        elif kind == STAR:
            stack.append((a, pos, base))
            base = pos
            a += 1
        elif _time_holds(kind, secs[pos] - secs[base], value):
            stack.append((a, pos, base))
            base = pos
            a += 1
        elif kind in ("<=", "<"):
            if not backtrack():
                break
        else:  # >=, >, ==: a later event may be far enough
            pos += 1
            if pos == end and not backtrack():
                break
        steps += 1
        if steps > MAX_ITERATIONS:
            return False, pos
    while a < n and (actions[a][0] in _SKIPPED_AT_END or actions[a] == (">=", 0)):  # empty tail matches
        a += 1
    if pos == begin:
        pos += 1
    return a == n, pos


def count_chains(pattern: SequencePattern, bits: list[int], secs: list[int]) -> int:
    """sequence_count: matches again from where the previous chain ended."""
    count, pos = 0, 0
    while pos < len(bits):
        matched, pos = backtracking_match(pattern.actions, bits, secs, pos, len(bits))
        if not matched:
            break
        count += 1
    return count


def sequence_results(pattern: SequencePattern, counting: bool, parent: np.ndarray, groups: int,
                     order_key: np.ndarray, seconds: np.ndarray, bits: np.ndarray, valid: np.ndarray
                     ) -> pa.Array:
    """sequence_match (BOOLEAN) / sequence_count (BIGINT) of each group from its listed rows; NULL for a group
    without a row whose arguments are all non-NULL (Doris skips such rows and has no state then)."""
    has_rows = np.bincount(parent[valid], minlength=groups) > 0 if len(parent) else np.zeros(groups, bool)
    events = valid & (bits != 0)  # Doris keeps only rows meeting some condition
    parent, order_key, seconds, bits = parent[events], order_key[events], seconds[events], bits[events]
    order = np.lexsort((order_key, parent))  # stable: equal times keep the input order
    parent, seconds, bits = parent[order], seconds[order], bits[order]
    met = np.zeros(groups, np.int64)
    if len(parent):
        starts = np.flatnonzero(np.r_[True, parent[1:] != parent[:-1]])
        met[parent[starts]] = np.bitwise_or.reduceat(bits, starts)
    out = np.zeros(groups, np.int64)
    candidates = np.flatnonzero((met & pattern.conditions) == pattern.conditions) if pattern.conditions else []
    if len(candidates):
        bounds = np.searchsorted(parent, np.stack([candidates, candidates + 1]))
        accept = accepting_masks(pattern, bits) if not (counting or pattern.has_time) else None
        for g, lo, hi in zip(candidates.tolist(), bounds[0].tolist(), bounds[1].tolist(), strict=True):
            if counting:
                out[g] = count_chains(pattern, bits[lo:hi].tolist(), seconds[lo:hi].tolist())
            elif accept is not None:
                out[g] = dfa_match(pattern, accept[lo:hi].tolist())
            else:
                out[g] = backtracking_match(pattern.actions, bits[lo:hi].tolist(), seconds[lo:hi].tolist(), 0,
                                            hi - lo)[0]
    result = pa.array(out, pa.int64(), mask=~has_rows)
    return result if counting else pc.cast(result, pa.bool_())
