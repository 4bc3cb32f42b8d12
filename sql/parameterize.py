"""A statement's text with its plain literals taken out: the key under which statements that differ only in
those values share one plan (planner/plan_template.py).

Only decimal integers without a sign or leading zeros and single-quoted strings without escapes are taken
out; every other token is kept as written (a number with a point or an exponent, a hex or bit literal, a
string with a backslash or a doubled quote or a charset introducer, double-quoted text that ANSI_QUOTES
may make an identifier). A text with a comment, a `?` or an unterminated quote is not parameterized at all
(the first such token ends the reading: no quote is scanned for more than once). A literal's marker
says its kind and, for integers, the smallest type holding it (the binder types a literal by its value), so
two texts share a template only when the binder sees literals of the same types in the same places.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

MARK = "\x00"  # never in a statement's text (it is refused when it is): templates cannot collide

_TOKEN = re.compile(
    r"""(?P<bt>`(?:[^`]|``)*`)
    |(?P<s>(?<![\w$'])'[^'\\]*'(?!'))
    |(?P<q>'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*")
    |(?P<c>--|\#|/\*|\?|['"`])
    |(?P<w>[^\W\d][\w$]*|\$[\w$]*|\d+[^\W\d][\w$]*)
    |(?P<n>[1-9]\d*(?![\w.$])|0(?![\w.$]))
    |(?P<f>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
    """,
    re.VERBOSE,
)

# (marker, largest value): TINYINT, SMALLINT, INT, BIGINT literals
_INT_CLASSES = (("1", 2**7 - 1), ("2", 2**15 - 1), ("4", 2**31 - 1), ("8", 2**63 - 1))


@dataclass(frozen=True)
class Parameterized:
    template: str
    values: tuple[int | str, ...]  # the literals taken out, in text order


MAX_TEXT = 4096  # longer texts are not point queries; every statement's text is asked, some on the event loop


@functools.lru_cache(maxsize=256)
def parameterize(text: str) -> Parameterized | None:
    """`text` as template + literal values, or None when it has no literal to take out or cannot be read
    safely without the parser. Only a SELECT of at most MAX_TEXT characters is read."""
    if len(text) > MAX_TEXT or text.lstrip()[:6].upper() != "SELECT" or MARK in text:
        return None
    out: list[str] = []
    values: list[int | str] = []
    at = 0
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind == "c":
            return None
        if kind == "n":
            value = int(m.group())
            marker = next((c for c, top in _INT_CLASSES if value <= top), None)
            if marker is None:
                continue  # beyond BIGINT: kept as written
            out.append(text[at:m.start()] + MARK + marker)
            values.append(value)
            at = m.end()
        elif kind == "s":
            out.append(text[at:m.start()] + MARK + "s")
            values.append(m.group()[1:-1])
            at = m.end()
    if not values:
        return None
    out.append(text[at:])
    return Parameterized("".join(out), tuple(values))
