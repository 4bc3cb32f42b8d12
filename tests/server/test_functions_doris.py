"""Doris's functions through the server: the examples of the Doris 2.1 SQL manual (and its regression tests)
as (SQL, expected) pairs, over constants (the evaluator folds them) and over a table (the evaluator per
batch, or inside DuckDB), plus the errors a wrong call gives."""

from __future__ import annotations

import datetime as dt
import decimal
import hashlib

import pymysql
import pytest

DDL = "DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ('replication_num' = '1')"

D = dt.date
T = dt.datetime
DEC = decimal.Decimal

CONSTANTS = [
    # time
    ("timediff('2019-07-11 16:59:30', '2019-07-11 16:59:21')", "00:00:09"),
    ("timediff('2019-07-11 16:59:21', '2019-07-12 16:59:30')", "-24:00:09"),
    ("sec_to_time(59538)", "16:32:18"),
    ("time_to_sec('16:32:18')", 59538),
    ("time_to_sec('2025-01-01 16:32:18')", 59538),
    ("convert_tz('2019-08-01 13:21:03', 'Asia/Shanghai', 'America/Los_Angeles')", T(2019, 7, 31, 22, 21, 3)),
    ("convert_tz('2019-08-01 13:21:03', '+08:00', 'America/Los_Angeles')", T(2019, 7, 31, 22, 21, 3)),
    ("convert_tz('2019-08-01 13:21:03', 'Asia/Shanghai', 'Nowhere/Land')", None),
    ("years_add('2010-11-30 23:59:59', 2)", T(2012, 11, 30, 23, 59, 59)),
    ("months_add('2020-01-31 02:02:02', 1)", T(2020, 2, 29, 2, 2, 2)),
    ("months_sub('2020-03-31 02:02:02', 1)", T(2020, 2, 29, 2, 2, 2)),
    ("weeks_add('2020-02-02 02:02:02', 1)", T(2020, 2, 9, 2, 2, 2)),
    ("days_add(CAST('2020-02-02' AS DATE), 1)", D(2020, 2, 3)),
    ("days_sub('2020-02-02 02:02:02', 1)", T(2020, 2, 1, 2, 2, 2)),
    ("hours_add('2020-02-02 02:02:02', 1)", T(2020, 2, 2, 3, 2, 2)),
    ("minutes_sub('2020-02-02 02:02:02', 1)", T(2020, 2, 2, 2, 1, 2)),
    ("seconds_add('2020-02-02 02:02:02', 1)", T(2020, 2, 2, 2, 2, 3)),
    ("year_floor('2023-07-13 22:28:18', 5)", T(2020, 1, 1)),
    ("year_floor('2023-07-13 22:28:18', '2020-03-15')", T(2023, 3, 15)),
    ("month_ceil('2023-07-13 22:28:18', 5)", T(2023, 10, 1)),
    ("month_floor('2023-07-13 22:28:18', 5)", T(2023, 5, 1)),
    ("day_ceil('2023-07-13 22:28:18', 5)", T(2023, 7, 17)),
    ("hour_ceil('2023-07-13 22:28:18', 5)", T(2023, 7, 14, 2)),
    ("second_floor('2023-07-13 22:28:18', 5)", T(2023, 7, 13, 22, 28, 15)),
    ("minute_ceil('2023-07-13 22:28:18')", T(2023, 7, 13, 22, 29)),
    ("day_floor('2023-07-13 22:28:18', 0)", None),
    ("years_diff('2020-12-25', '2019-10-25')", 1),
    ("months_diff('2020-12-25', '2020-10-25')", 2),
    ("weeks_diff('2020-12-25', '2020-10-25')", 8),
    ("days_diff('2020-12-25 22:00:00', '2020-12-24 22:00:00')", 1),
    ("days_diff('2020-12-25 22:00:00', '2020-12-24 22:00:01')", 0),
    ("hours_diff('2020-12-25 22:00:00', '2020-12-25 21:00:00')", 1),
    ("minutes_diff('2020-12-25 22:00:00', '2020-12-25 21:00:00')", 60),
    ("seconds_diff('2020-12-25 22:00:00', '2020-12-25 21:00:00')", 3600),
    ("timestampdiff(MONTH, '2003-02-01', '2003-05-01')", 3),
    ("timestampdiff(YEAR, '2002-05-01', '2001-01-01')", -1),
    ("timestampdiff(MONTH, '2024-01-31', '2024-02-29')", 0),
    ("to_monday('2022-09-10')", D(2022, 9, 5)),
    ("last_day('2000-02-03')", D(2000, 2, 29)),
    ("makedate(2021, 1)", D(2021, 1, 1)),
    ("makedate(2021, 100)", D(2021, 4, 10)),
    ("makedate(2021, 400)", D(2022, 2, 4)),
    ("from_days(730669)", D(2000, 7, 3)),
    ("to_days('2007-10-07')", 733321),
    ("dayname('2007-02-03 00:00:00')", "Saturday"),
    ("monthname('2008-02-03 00:00:00')", "February"),
    ("quarter('2025-01-16')", 1),
    ("weekofyear('2008-02-20 00:00:00')", 8),
    ("yearweek('2021-1-1')", 202052),
    ("yearweek('2020-7-1')", 202026),
    ("yearweek('2008-12-31', 1)", 200901),
    ("week('2020-1-1')", 0),
    ("week('2008-02-20', 1)", 8),
    ("from_unixtime(1196440219, 'yyyyMMdd') = date_format(from_unixtime(1196440219), '%Y%m%d')", 1),
    ("from_unixtime(0, 'yyyy-MM-dd HH:mm:ss') = from_unixtime(0)", 1),
    ("date_format('2020-01-02 03:04:05', 'yyyy-MM-dd')", "2020-01-02"),
    ("unix_timestamp('2007-11-30 10:30-19', '%Y-%m-%d %H:%i-%s') = unix_timestamp('2007-11-30 10:30:19')", 1),
    ("CAST('12:10:10' AS TIME)", "12:10:10"),
    # strings
    ("find_in_set('b', 'a,b,c')", 2),
    ("find_in_set('d', 'a,b,c')", 0),
    ("find_in_set(NULL, 'a,b,c')", None),
    ("money_format(17014116)", "17,014,116.00"),
    ("money_format(1123.456)", "1,123.46"),
    ("money_format(1123.4)", "1,123.40"),
    ("money_format(-1234567.005)", "-1,234,567.01"),
    ("mask('abc123XYZ')", "xxxnnnXXX"),
    ("mask('abc123XYZ', '*', '#', '$')", "###$$$***"),
    ("mask_first_n('1234-5678-8765-4321', 4)", "nnnn-5678-8765-4321"),
    ("mask_last_n('1234-5678-8765-4321', 4)", "1234-5678-8765-nnnn"),
    ("md5('abc')", "900150983cd24fb0d6963f7d28e17f72"),
    ("sha1('abc')", "a9993e364706816aba3e25717850c26c9cd0d89d"),
    ("sha('abc')", "a9993e364706816aba3e25717850c26c9cd0d89d"),
    ("sha2('abc', 256)", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    ("sha2('abc', 224)", "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7"),
    ("murmur_hash3_32('hello')", 1321743225),
    ("murmur_hash3_32('hello', 'world')", 984713481),
    ("murmur_hash3_32(NULL)", None),
    ("murmur_hash3_64('hello')", -3215607508166160593),
    ("murmur_hash3_64('hello', 'world')", 3583109472027628045),
    ("crc32('abc')", 891568578),
    ("split_part('hello world', ' ', 1)", "hello"),
    ("split_part('abc##123###xyz', '##', 0)", None),
    ("split_part('abc##123###xyz', '##', 3)", "#xyz"),
    ("split_part('abc##123###xyz', '##', 5)", None),
    ("split_part('abc##123###xyz', '##', -1)", "xyz"),
    ("split_part('abc##123###xyz', '##', -2)", "123#"),
    ("substring_index('hello world', ' ', 1)", "hello"),
    ("substring_index('hello world', ' ', -1)", "world"),
    ("substring_index('www.mysql.com', '.', -2)", "mysql.com"),
    ("substring_index('hello world', ' ', 0)", ""),
    ("instr('foobar', 'bar')", 4),
    ("locate('bar', 'foobarbar', 5)", 7),
    ("rpad('123', 5, '')", ""),
    ("rpad('123', 2, '')", "12"),
    ("lpad('hi', 5, 'xy')", "xyxhi"),
    ("lpad('hi', -1, 'xy')", None),
    ("strleft('Hello doris', 5)", "Hello"),
    ("strright('Hello doris', 5)", "doris"),
    ("starts_with('hello world', 'hello')", 1),
    ("starts_with('hello world', 'world')", 0),
    ("ends_with('Hello doris', 'doris')", 1),
    ("char_length('abc')", 3),
    ("character_length('abc')", 3),
    ("hex('abc')", "616263"),
    ("hex(255)", "FF"),
    ("hex(-1)", "FFFFFFFFFFFFFFFF"),
    ("unhex('616263')", "abc"),
    ("unhex('@')", ""),
    ("to_base64('1')", "MQ=="),
    ("from_base64('MQ==')", "1"),
    ("from_base64('!!')", None),
    ("url_encode('Doris Q&A')", "Doris+Q%26A"),
    ("url_decode('https%3A%2F%2Fdoris.apache.org%2Fzh-CN%2Fdocs')", "https://doris.apache.org/zh-CN/docs"),
    ("parse_url('https://doris.apache.org/', 'HOST')", "doris.apache.org"),
    ("parse_url('https://doris.apache.org:8030/a/b?k1=v1&k2=v2#ref', 'QUERY', 'k2')", "v2"),
    ("parse_url('https://doris.apache.org:8030/a/b?k1=v1&k2=v2#ref', 'PATH')", "/a/b"),
    ("regexp_extract('AbCdE', '([[:lower:]]+)C([[:lower:]]+)', 1)", "b"),
    ("regexp_extract('AbCdE', '([[:lower:]]+)C([[:lower:]]+)', 2)", "d"),
    ("regexp_extract('AbCdE', '([[:lower:]]+)C([[:lower:]]+)', 3)", ""),
    ("regexp_extract_all('x=a3&x=18abc&x=2&y=3&x=4&x=17bcd', 'x=([0-9]+)([a-z]+)')", "['18','17']"),
    ("regexp_replace('a b c', ' ', '-')", "a-b-c"),
    ("regexp_replace('2022-03-02', '(\\\\d+)-(\\\\d+)-(\\\\d+)', '\\\\3/\\\\2/\\\\1')", "02/03/2022"),
    ("regexp_replace_one('a b c', ' ', '-')", "a-b c"),
    ("append_trailing_char_if_absent('a', 'c')", "ac"),
    ("append_trailing_char_if_absent('ac', 'c')", "ac"),
    ("elt(1, 'aaa', 'bbb')", "aaa"),
    ("elt(2, 'aaa', 'bbb')", "bbb"),
    ("elt(0, 'aaa', 'bbb')", None),
    ("elt(3, 'aaa', 'bbb')", None),
    ("field(2, 3, 2, 1)", 2),
    ("field('b', 'a', 'b')", 2),
    ("field('z', 'a', 'b')", 0),
    ("null_or_empty('')", 1),
    ("null_or_empty(NULL)", 1),
    ("null_or_empty('a')", 0),
    ("not_null_or_empty('')", 0),
    ("not_null_or_empty('a')", 1),
    ("initcap('hello hello.,HELLO123HELlo')", "Hello Hello.,Hello123hello"),
    ("translate('abcd', 'a', 'z')", "zbcd"),
    ("translate('abcd', 'ac', 'z')", "zbd"),
    # math
    ("bin(10)", "1010"),
    ("conv(15, 10, 2)", "1111"),
    ("conv('ff', 16, 10)", "255"),
    ("conv(230, 10, 16)", "E6"),
    ("e()", 2.718281828459045),
    ("degrees(pi())", 180.0),
    ("radians(180)", 3.141592653589793),
    ("sign(-3)", -1),
    ("truncate(123.456, 2)", DEC("123.45")),
    ("pmod(13, 5)", 3),
    ("pmod(-13, 5)", 2),
    ("pmod(13, 0)", None),
    ("positive(-10)", -10),
    ("negative(10)", -10),
    ("log2(8)", 3.0),
    ("log10(100)", 2.0),
    ("log(2, 8)", 3.0),
    ("cbrt(27)", 3.0),
    # conditionals
    ("nvl(NULL, 1)", 1),
    ("nullif(1, 1)", None),
    ("ifnull(CAST('2023-01-01' AS DATE), 0)", 20230101),
]


def one(cur, sql: str) -> object:
    cur.execute(sql)
    return cur.fetchall()[0][0]


@pytest.mark.parametrize(("expr", "expected"), CONSTANTS, ids=[c[0][:60] for c in CONSTANTS])
def test_constant(cur, expr: str, expected: object) -> None:
    assert one(cur, f"SELECT {expr}") == expected


@pytest.fixture
def fn_table(cur) -> None:
    cur.execute("DROP TABLE IF EXISTS fn_t")
    cur.execute(f"CREATE TABLE fn_t (k INT, s VARCHAR(20), d DATE, ts DATETIME, v DECIMAL(10, 9)) {DDL}")
    cur.execute("INSERT INTO fn_t VALUES (1, 'hello', '2020-01-31', '2023-07-13 22:28:18', 1.111111), "
                "(2, 'Ab,c', '2019-12-01', '2019-12-01 23:59:59', -2), (3, NULL, NULL, NULL, NULL)")


COLUMNS = [
    ("days_add(d, 1)", [D(2020, 2, 1), D(2019, 12, 2), None]),
    ("months_add(d, 1)", [D(2020, 2, 29), D(2020, 1, 1), None]),
    ("hours_add(d, 1)", [T(2020, 1, 31, 1), T(2019, 12, 1, 1), None]),
    ("second_floor(ts, 5)", [T(2023, 7, 13, 22, 28, 15), T(2019, 12, 1, 23, 59, 55), None]),
    ("month_floor(d)", [D(2020, 1, 1), D(2019, 12, 1), None]),
    ("days_diff(ts, d)", [1259, 0, None]),
    ("to_monday(d)", [D(2020, 1, 27), D(2019, 11, 25), None]),
    ("timediff(ts, d)", ["838:59:59", "23:59:59", None]),
    ("yearweek(d)", [202004, 201948, None]),
    ("find_in_set('c', s)", [0, 2, None]),
    ("split_part(s, ',', 2)", [None, "c", None]),
    ("mask(s)", ["xxxxx", "Xx,x", None]),
    ("initcap(s)", ["Hello", "Ab,C", None]),
    ("md5(s)", [hashlib.md5(b"hello").hexdigest(), hashlib.md5(b"Ab,c").hexdigest(), None]),
    ("hex(s)", ["68656C6C6F", "41622C63", None]),
    ("starts_with(s, 'he')", [1, 0, None]),
    ("null_or_empty(s)", [0, 0, 1]),
    ("least(100.00001, v)", [DEC("1.111111000"), DEC("-2.000000000"), None]),
    ("greatest(100.00001, v)", [DEC("100.000010000"), DEC("100.000010000"), None]),
    ("ifnull(d, 0)", [20200131, 20191201, 0]),
    ("negative(k)", [-1, -2, -3]),
    ("pmod(k - 2, 2)", [1, 0, 1]),
]


@pytest.mark.parametrize(("expr", "expected"), COLUMNS, ids=[c[0] for c in COLUMNS])
def test_over_a_table(cur, fn_table, expr: str, expected: list) -> None:
    cur.execute(f"SELECT {expr} FROM fn_t ORDER BY k")
    assert [r[0] for r in cur.fetchall()] == expected
    # the same expression where DuckDB runs the plan (a join above the scans): the evaluator runs inside it
    cur.execute(f"SELECT {expr} FROM fn_t "
                "JOIN (SELECT k AS k2 FROM fn_t) b ON k = b.k2 ORDER BY k")
    assert [r[0] for r in cur.fetchall()] == expected


ERRORS = [
    ("SELECT sha2('abc', 1)", "sha2 functions only support digest length"),
    ("SELECT years_add('2020-01-01')", "years_add"),
    ("SELECT to_monday()", "to_monday"),
    ("SELECT regexp_extract('a', '([a-', 1)", "Invalid regex expression"),
    ("SELECT regexp_replace('a', '([a-', 'b')", "Invalid regex expression"),
    ("SELECT parse_url('https://x.org', 'NOPE')", "parse_url"),
    ("SELECT no_such_function(1)", "Can not found function"),
    ("SELECT year_floor('2023-07-13', 1.5)", "period"),
]


@pytest.mark.parametrize(("sql", "message"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(cur, sql: str, message: str) -> None:
    with pytest.raises(pymysql.err.OperationalError, match=message) as err:
        cur.execute(sql)
    assert "Traceback" not in str(err.value)


@pytest.fixture
def agg_table(cur) -> None:
    cur.execute("DROP TABLE IF EXISTS fn_a")
    cur.execute(f"CREATE TABLE fn_a (k INT, g INT, x INT, y DOUBLE, s VARCHAR(10)) {DDL}")
    cur.execute("INSERT INTO fn_a VALUES (1, 1, 3, 1.0, 'a'), (2, 1, 5, 2.0, 'b'), (3, 1, 6, 4.5, 'c'), "
                "(4, 2, 8, NULL, 'd'), (5, 2, NULL, 7.0, 'e'), (6, 3, NULL, NULL, 'f')")


AGGREGATES = [
    ("group_bit_and(x)", [0, 8, None]),
    ("group_bit_or(x)", [7, 8, None]),
    ("group_bit_xor(x)", [0, 8, None]),
    ("covar(x, y)", [pytest.approx(5 / 3), None, None]),
    ("covar_pop(x, y)", [pytest.approx(5 / 3), None, None]),
    ("covar_samp(x, y)", [pytest.approx(2.5), None, None]),
    ("corr(x, y)", [pytest.approx(0.9078412990032038), None, None]),
    ("max_by(s, x)", ["c", "d", None]),
    ("min_by(s, x)", ["a", "d", None]),
    ("percentile(x, 0.5)", [5.0, 8.0, None]),
]


@pytest.mark.parametrize(("expr", "expected"), AGGREGATES, ids=[a[0] for a in AGGREGATES])
def test_aggregates(cur, agg_table, expr: str, expected: list) -> None:
    cur.execute(f"SELECT {expr} FROM fn_a GROUP BY g ORDER BY g")
    assert [r[0] for r in cur.fetchall()] == expected
    # above a join DuckDB runs the plan; the aggregate it lacks runs on the Arrow operators
    cur.execute(f"SELECT {expr} FROM fn_a JOIN (SELECT k AS k2 FROM fn_a) b ON k = b.k2 GROUP BY g ORDER BY g")
    assert [r[0] for r in cur.fetchall()] == expected


def test_aggregates_without_group_by(cur, agg_table) -> None:
    cur.execute("SELECT percentile(x, 0.55), group_bit_or(x), group_concat(s, '|') FROM fn_a WHERE k < 4")
    p, bits, text = cur.fetchall()[0]
    assert (p, bits, sorted(text.split("|"))) == (pytest.approx(5.1), 7, ["a", "b", "c"])
    cur.execute("SELECT percentile(x, 0.5), count(*) FROM fn_a WHERE k > 100")
    assert cur.fetchall()[0] == (None, 0)
    with pytest.raises(pymysql.err.OperationalError, match=r"percentile level must be in \[0, 1\]"):
        cur.execute("SELECT percentile(x, 2) FROM fn_a")
