"""Name resolution: which FROM item a column name refers to, with MySQL's error texts."""

from __future__ import annotations

from dataclasses import dataclass, field

from sql.errors import SqlError, analysis_error


def unknown_column(name: str, where: str = "table list") -> SqlError:
    return analysis_error(f"Unknown column '{name}' in '{where}'", 1054, "42S22")


@dataclass
class ScopeColumn:
    qualifier: str | None  # the FROM item's alias (or table name)
    name: str  # the column's own spelling
    id: str  # internal id in the plan
    db: str | None = None
    hidden: bool = False  # merged by USING: not seen by `*` or unqualified names
    analyzer: str | None = None  # an INVERTED index's analyzer on the column (planner.functions.match)


@dataclass
class Scope:
    columns: list[ScopeColumn] = field(default_factory=list)

    def qualifiers(self) -> list[str]:
        seen: list[str] = []
        for c in self.columns:
            if c.qualifier is not None and c.qualifier not in seen:
                seen.append(c.qualifier)
        return seen

    def find(self, name: str, table: str | None = None, db: str | None = None) -> list[ScopeColumn]:
        low = name.lower()
        out = []
        for c in self.columns:
            if c.name.lower() != low:
                continue
            if table is not None:
                if c.qualifier is None or c.qualifier.lower() != table.lower():
                    continue
                if db is not None and c.db is not None and c.db.lower() != db.lower():
                    continue
            elif c.hidden:
                continue
            out.append(c)
        return out

    def resolve(self, name: str, table: str | None = None, db: str | None = None) -> ScopeColumn | None:
        found = self.find(name, table, db)
        if len(found) > 1:
            raise analysis_error(f"Column '{name}' in field list is ambiguous", 1052, "23000")
        return found[0] if found else None

    def star(self, table: str | None = None) -> list[ScopeColumn]:
        if table is None:
            return [c for c in self.columns if not c.hidden]
        cols = [c for c in self.columns if c.qualifier is not None and c.qualifier.lower() == table.lower()]
        if not cols:
            raise analysis_error(f"Unknown table '{table}'", 1051, "42S02")
        return cols

    def merged(self, other: Scope) -> Scope:
        return Scope(self.columns + other.columns)
