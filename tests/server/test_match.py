"""Full-text MATCH_ANY / MATCH_ALL / MATCH_PHRASE / MATCH_PHRASE_PREFIX / MATCH_REGEXP over columns with an
INVERTED index (issue 13: the index was accepted, MATCH failed): terms cut by the index's parser, on both
executors, labels and EXPLAIN as Doris prints them; the index's properties checked as Doris checks them."""

from __future__ import annotations

import pytest

from tests.server.test_schema_change import PROPS, error, rows


@pytest.fixture
def logs(cur):
    cur.execute("CREATE TABLE logs (id INT, msg VARCHAR(200), tag VARCHAR(20), "
                "INDEX i_msg (msg) USING INVERTED PROPERTIES('parser' = 'english') COMMENT 'm', "
                "INDEX i_tag (tag) USING INVERTED) "
                f"DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 2 {PROPS}")
    cur.execute("INSERT INTO logs VALUES (1, 'The Quick brown fox', 'a b'), (2, 'lazy dog jumps', 'a'), "
                "(3, 'quick-dog: brown!', NULL), (4, NULL, 'b')")
    return cur


@pytest.mark.parametrize("predicate, ids", [
    ("msg MATCH_ANY 'quick dog'", [1, 2, 3]),
    ("msg MATCH_ALL 'dog QUICK'", [3]),
    ("msg MATCH_PHRASE 'quick brown'", [1]),
    ("msg MATCH_PHRASE 'brown quick'", []),
    ("msg MATCH_PHRASE_PREFIX 'quick bro'", [1]),
    ("msg MATCH_REGEXP '^ju'", [2]),
    ("msg MATCH_ANY ''", []),
    ("tag MATCH_ANY 'a b'", [1]),  # no parser: the whole value is the one term
    ("tag MATCH_ANY 'a'", [2]),
    ("NOT msg MATCH_ANY 'fox'", [2, 3]),
])
def test_match_kinds(logs, predicate: str, ids: list[int]) -> None:
    assert rows(logs, f"SELECT id FROM logs WHERE {predicate} ORDER BY id") == [(i,) for i in ids]
    # the same under a join (the DuckDB executor)
    assert rows(logs, f"SELECT l.id FROM logs l JOIN logs r ON l.id = r.id WHERE "
                f"{predicate.replace('msg', 'l.msg').replace('tag', 'l.tag')} ORDER BY 1") \
        == [(i,) for i in ids]


def test_labels_nulls_and_explain(logs) -> None:
    logs.execute("SELECT id, msg MATCH_ANY 'fox' FROM logs ORDER BY id")
    assert logs.description[1][0] == "(msg MATCH_ANY 'fox')"
    assert logs.fetchall() == ((1, 1), (2, 0), (3, 0), (4, None))
    logs.execute("EXPLAIN SELECT id FROM logs WHERE msg MATCH_PHRASE 'quick brown'")
    assert "(msg[#1] MATCH_PHRASE 'quick brown')" in "\n".join(r[0] for r in logs.fetchall()).replace("`", "")


def test_unicode_parser_cuts_cjk_characters(cur) -> None:
    cur.execute("CREATE TABLE cn (id INT, t STRING, INDEX i (t) USING INVERTED PROPERTIES('parser' = 'unicode')) "
                f"DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1 {PROPS}")
    cur.execute("INSERT INTO cn VALUES (1, '我来到北京清华大学'), (2, 'hello World 你好')")
    assert rows(cur, "SELECT id FROM cn WHERE t MATCH_PHRASE '北京'") == [(1,)]
    assert rows(cur, "SELECT id FROM cn WHERE t MATCH_PHRASE '京北'") == []
    assert rows(cur, "SELECT id FROM cn WHERE t MATCH_ALL 'world HELLO'") == [(2,)]


def test_index_properties_checked(cur) -> None:
    base = "CREATE TABLE bad (id INT, s VARCHAR(10), v INT{}) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1 " \
        + PROPS
    assert error(cur, base.format(", INDEX i (s) USING INVERTED PROPERTIES('parser' = 'klingon')")) == \
        "errCode = 2, detailMessage = INVERTED index parser: klingon is invalid for column: s of type VARCHAR(10)"
    assert error(cur, base.format(", INDEX i (v) USING INVERTED PROPERTIES('parser' = 'english')")) == \
        "errCode = 2, detailMessage = INVERTED index with parser: english is not supported for column: v of type INT"
    assert "parser_mode" in error(cur, base.format(
        ", INDEX i (s) USING INVERTED PROPERTIES('parser' = 'chinese', 'parser_mode' = 'medium')"))
    assert "single column" in error(cur, base.format(", INDEX i (s, v) USING INVERTED"))
    assert "AGG_KEYS" in error(cur, "CREATE TABLE agg (k INT, s VARCHAR(10) REPLACE, INDEX i (s) USING INVERTED) "
                                    f"AGGREGATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 {PROPS}")
