"""Full-text MATCH predicates (`c MATCH_ANY 'a b'`, MATCH_ALL, MATCH_PHRASE, MATCH_PHRASE_PREFIX,
MATCH_REGEXP), evaluated as Doris evaluates them where no inverted index answers: the column's values and the
query text are cut into terms by the analyzer of the column's INVERTED index (`"parser"` property: none or no
index, the whole value is one term; english, runs of ASCII letters and digits; unicode / chinese / standard, runs
of letters and digits with each CJK character a term of its own; lower-cased unless `"lower_case" = "false"`),
then compared term by term. Vectorised over Arrow lists of terms."""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from planner.expressions import Evaluator, register
from planner.functions.casts import to_string
from planner.values import Value, broadcast
from sql.errors import analysis_error

_SEP = "\x01"  # marks term boundaries; no analyzer yields it inside a term
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_PATTERNS = {
    "english": r"[0-9A-Za-z]+",
    "unicode": f"[{_CJK}]|[0-9A-Za-z_\u00c0-\u024f\u0370-\u03ff\u0400-\u04ff]+",
}
PARSERS = ("none", "english", "unicode", "chinese", "standard")


def analyzer_key(properties: dict[str, str]) -> str:
    """The analyzer an INVERTED index's PROPERTIES describe, as `parser[:lower]` (the MATCH node carries it)."""
    parser = properties.get("parser", "none").lower()
    if parser == "none":
        return "none"
    lower = properties.get("lower_case", "true").lower() != "false"
    return f"{parser}:{'lower' if lower else 'keep'}"


def terms_of(values: pa.Array, analyzer: str) -> pa.ListArray:
    """Each value's terms, as a list array (a NULL value has NULL terms)."""
    parser, _, case = analyzer.partition(":")
    nulls = pc.is_null(values)
    if parser == "none":  # a NULL row holds no term (its list is empty as well as NULL)
        valid = pc.invert(nulls).to_numpy(zero_copy_only=False)
        offsets = np.zeros(len(values) + 1, dtype=np.int32)
        np.cumsum(valid, out=offsets[1:])
        return pa.ListArray.from_arrays(pa.array(offsets), values.filter(pa.array(valid)), mask=nulls)
    pattern = _PATTERNS["english" if parser == "english" else "unicode"]
    text = pc.utf8_lower(values) if case != "keep" else values
    # each match wrapped in separators, split there, and only the pieces that are whole matches kept
    marked = pc.replace_substring_regex(text, f"({pattern})", _SEP + r"\1" + _SEP)
    parts = pc.split_pattern(pc.fill_null(marked, ""), _SEP)
    flat = pc.list_flatten(parts)
    keep = pc.match_substring_regex(flat, f"^(?:{pattern})$")
    parents = pc.list_parent_indices(parts).filter(keep).to_numpy()
    offsets = np.zeros(len(values) + 1, dtype=np.int32)
    np.cumsum(np.bincount(parents, minlength=len(values)), out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), flat.filter(keep), mask=nulls)


def _query_terms(text: str, analyzer: str) -> list[str]:
    return terms_of(pa.array([text], pa.string()), analyzer)[0].as_py() or []


@register(exp.Match)
def _match(ev: Evaluator, e: exp.Match) -> Value:
    kind = str(e.args.get("kind") or "ANY").upper()
    analyzer_node = e.args.get("analyzer")
    analyzer = analyzer_node.name if analyzer_node is not None else "none"
    query = ev.eval(e.expression)
    if not isinstance(query, pa.Scalar):
        raise analysis_error(f"The right side of MATCH_{kind} must be a constant string")
    column = ev.eval(e.this)
    was_scalar = isinstance(column, pa.Scalar)
    values = broadcast(column, 1) if was_scalar else column
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    values = to_string(values)
    text = query.as_py()
    if text is None:
        out = pa.nulls(len(values), pa.bool_())
    else:
        out = _evaluate(kind, terms_of(values, analyzer), str(text), analyzer)
    return out[0] if was_scalar else out


def _evaluate(kind: str, terms: pa.ListArray, text: str, analyzer: str) -> pa.Array:
    n = len(terms)
    nulls = terms.is_null()
    if kind == "REGEXP":
        flat = terms.flatten()
        hit = pc.match_substring_regex(flat, text)
        found = _any_per_row(hit, terms, n)
        return pc.if_else(nulls, None, found)
    words = _query_terms(text, analyzer)
    if not words:  # Doris: a query without terms matches no row
        return pc.if_else(nulls, None, pa.repeat(pa.scalar(False), n))
    if kind in ("ANY", "ALL"):
        flat = terms.flatten()
        if kind == "ANY":
            found = _any_per_row(pc.is_in(flat, pa.array(words, pa.string())), terms, n)
        else:
            found = np.ones(n, dtype=bool)
            for w in dict.fromkeys(words):
                found &= _any_per_row(pc.equal(flat, w), terms, n)
        return pc.if_else(nulls, None, pa.array(found))
    if kind in ("PHRASE", "PHRASE_PREFIX"):
        joined = pc.binary_join_element_wise(_SEP, pc.binary_join(pc.fill_null(terms, pa.scalar([], terms.type)),
                                                                  _SEP), _SEP, "")
        pattern = _SEP + _SEP.join(re.escape(w) for w in words)
        pattern += f"[^{_SEP}]*{_SEP}" if kind == "PHRASE_PREFIX" else _SEP
        return pc.if_else(nulls, None, pc.match_substring_regex(joined, pattern))
    raise analysis_error(f"Unsupported MATCH_{kind}")


def _any_per_row(hit: pa.Array, terms: pa.ListArray, n: int) -> np.ndarray:
    parents = pc.list_parent_indices(terms).to_numpy()
    flags = pc.fill_null(hit, False).to_numpy(zero_copy_only=False)
    return np.bincount(parents[flags], minlength=n) > 0 if len(parents) else np.zeros(n, dtype=bool)
