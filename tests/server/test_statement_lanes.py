"""Which statements wait for their turn in the short lane (server/protocol/admission.py): a SELECT whose kept plan
runs in a few milliseconds, and an INSERT ... VALUES that joins a group commit."""

from __future__ import annotations

from types import SimpleNamespace

from planner.loads.request import LoadOptions
from planner.plan_cache import PlanCache
from server.session import Session
from server.variables import GlobalVariables, SessionVariables


def session(group_commit: str) -> Session:
    s = Session.__new__(Session)  # the lane needs only the variables and the plan cache
    s.vars = SessionVariables(GlobalVariables())
    s.vars.set("group_commit", group_commit)
    s.ctx = SimpleNamespace(plans=PlanCache(lambda: 0))
    s.database, s._key_memo, s.load_options = "db", None, LoadOptions()
    return s


def test_group_commit_inserts_are_short_others_are_not() -> None:
    grouped, alone = session("async_mode"), session("off_mode")
    assert grouped.short("INSERT INTO t VALUES (1, 2), (3, 4)")
    assert grouped.short("  insert into t (a) values (1)")
    assert session("sync_mode").short("INSERT INTO t VALUES (1)")
    assert not alone.short("INSERT INTO t VALUES (1)")  # its own transaction: segments, publish, fsync
    assert not grouped.short("INSERT INTO t SELECT * FROM s")  # not grouped
    assert not grouped.short("SELECT sum(v) FROM t")  # no plan kept: unknown cost
