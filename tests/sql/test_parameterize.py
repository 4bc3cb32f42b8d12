"""Statement texts without their plain literals (sql/parameterize.py): what is taken out, what is kept as
written, and that a template with its values gives back exactly the text."""

from __future__ import annotations

import random

import pytest

from sql.parameterize import MARK, parameterize


def rebuild(template: str, values: tuple) -> str:
    parts = template.split(MARK)
    out = [parts[0]]
    for part, value in zip(parts[1:], values, strict=True):
        out.append((f"'{value}'" if part[0] == "s" else str(value)) + part[1:])
    return "".join(out)


@pytest.mark.parametrize(("text", "values"), [
    ("SELECT k FROM t WHERE k = 5", (5,)),
    ("  select k from t where k = 5", (5,)),
    ("SELECT * FROM t1 WHERE a = 12.5 AND b = 7 AND c = 'x'", (7, "x")),
    ("SELECT x'41', 'a''b', 'c\\d', 007, 1e5, .5, 5., 0x1F, b'01', N'n', 3 FROM t", (3,)),
    ("SELECT `a 5`, t2.c3, $5, @v6 FROM t WHERE s = 'ab?c' AND 6 = 6", ("ab?c", 6, 6)),
    ("SELECT 0, 127, 128, 32768, 2147483648, 9223372036854775807, 9223372036854775808",
     (0, 127, 128, 32768, 2147483648, 9223372036854775807)),
    ("SELECT '', 'é ü', 1abc, \"5\" FROM t", ("", "é ü")),
])
def test_literals_taken_out(text: str, values: tuple) -> None:
    p = parameterize(text)
    assert p is not None and p.values == values
    assert rebuild(p.template, p.values) == text


def test_integer_markers_carry_the_type_the_binder_gives() -> None:
    markers = [template(f"SELECT {n}")[-1] for n in (5, 300, 70000, 3000000000)]
    assert markers == ["1", "2", "4", "8"]
    assert template("SELECT 5") != template("SELECT '5'")


def template(text: str) -> str:
    p = parameterize(text)
    assert p is not None, text
    return p.template


@pytest.mark.parametrize("text", [
    "SELECT 1 -- five", "SELECT 1 # five", "SELECT /* 5 */ 1", "SELECT ? FROM t", "SELECT a FROM t",
    "SELECT 'a\\'b'", f"SELECT '{MARK}', 1", "SELECT 99999999999999999999",
    "SELECT k FROM t WHERE s = 'abc AND k = 1", "SELECT `k FROM t WHERE k = 1", "SELECT 1, 'a\\'b",
    "INSERT INTO t VALUES (1, 'a')", "UPDATE t SET v = 1 WHERE k = 2", "SELECT k FROM t WHERE k = 1 OR " * 200 + "1",
])
def test_not_parameterized(text: str) -> None:
    assert parameterize(text) is None


def test_distinct_texts_never_share_a_template_and_values() -> None:
    rng = random.Random(5)
    pieces = ["SELECT", " ", "k", "=", "5", "'5'", "'a b'", ",", "12", "1.5", "x'41'", "`c 1`", "t1", ".", "(", ")",
              "-", "0", "07", "''", "\"q\""]
    seen: dict[tuple, str] = {}
    for _ in range(3000):
        text = "SELECT " + "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 9)))
        p = parameterize(text)
        if p is None:
            continue
        assert rebuild(p.template, p.values) == text
        assert seen.setdefault((p.template, p.values), text) == text
