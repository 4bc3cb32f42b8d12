"""Planner tests' shared fixture: `ctx`, a QueryContext over test_select's fact / dim tables."""

from __future__ import annotations

from tests.planner.test_select import ctx  # noqa: F401 - a fixture, found by name
