"""Doris's bounds on the size of one expression: `expr_depth_limit` (3000) and `expr_children_limit` (10000).

Doris refuses an expression tree deeper or wider (more leaves) than these before analysing it, with
`Exceeded the maximum depth of an expression tree (3000).` / `... maximum children ... (10000).` The same
bounds apply here, measured as Doris builds its trees: `a + b + c` is left-deep (one level per operand),
a chain of AND or OR is one n-ary node, parentheses add nothing. A long literal IN list read as a ValueList
counts as one leaf (Doris counts each literal; the server plans such a list in constant time).

`check_text` finds a long flat run (`1 + 1 + ...`, `k = 1 OR k = 2 ...`) with regular expressions before
the parser sees it, so a 100,000-term expression is refused in milliseconds rather than parsed for seconds;
`check_tree` measures the parsed tree exactly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlglot import exp

from sql import expressions as dx
from sql.errors import SqlError, analysis_error


@dataclass(frozen=True)
class ExprLimits:
    depth: int = 3000
    children: int = 10000

    def depth_error(self) -> SqlError:
        return analysis_error(f"Exceeded the maximum depth of an expression tree ({self.depth}).")

    def children_error(self) -> SqlError:
        return analysis_error(f"Exceeded the maximum children of an expression tree ({self.children}).")


DEFAULT_LIMITS = ExprLimits()

# strings, quoted identifiers and comments, which the run search must not read into
_OPAQUE = re.compile(r"'(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.|\"\")*\"|`[^`]*`|--[^\n]*|#[^\n]*|/\*.*?\*/", re.DOTALL)
_ATOM = r"(?:[-+]\s*)?(?:\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+|[A-Za-z_][\w$]*(?:\.[A-Za-z_][\w$]*)*|\?|@@?[\w.]+)"
_OP = r"(?:\|\||<=>|<>|!=|>=|<=|[-+*/%&|^=<>]|\b(?:AND|OR|XOR|DIV|MOD)\b)"
_RUN = re.compile(rf"{_ATOM}(?:\s*{_OP}\s*{_ATOM})+", re.IGNORECASE)
_OPERAND = re.compile(r"\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+|[A-Za-z_][\w$]*(?:\.[A-Za-z_][\w$]*)*|\?|@@?[\w.]+")
_WORD_OPS = re.compile(r"\b(?:AND|OR|XOR|DIV|MOD)\b", re.IGNORECASE)
_NOT_ADDITIVE = re.compile(r"[*/%&|^=<>!]|\b(?:AND|OR|XOR|DIV|MOD)\b", re.IGNORECASE)


def check_text(text: str, limits: ExprLimits = DEFAULT_LIMITS) -> None:
    """Refuse a statement holding a flat run of operands joined by binary operators that is deeper or wider
    than Doris allows. Every operand of such a run is a leaf of one expression, so the run's length is a
    lower bound of that expression's width (and, for a chain of + and -, its depth)."""
    shortest = 2 * min(limits.depth, limits.children)  # an operand and an operator per term at least
    if len(text) < shortest:
        return
    masked = _OPAQUE.sub(lambda m: "0" if m.group(0)[0] in "'\"`" else " ", text)
    for run in _RUN.finditer(masked):
        if run.end() - run.start() < shortest:
            continue
        text_of_run = run.group(0)
        operands = len(_OPERAND.findall(text_of_run)) - len(_WORD_OPS.findall(text_of_run))
        if operands > limits.depth and not _NOT_ADDITIVE.search(text_of_run):
            raise limits.depth_error()  # `a + b - c ...`: left-deep, one level per operand
        if operands > limits.children:
            raise limits.children_error()


def _is_expression(node: exp.Expr) -> bool:
    return isinstance(node, (exp.Condition, exp.Interval, exp.Tuple, dx.ValueList))


def check_tree(root: exp.Expr, limits: ExprLimits = DEFAULT_LIMITS) -> None:
    """Measure every expression of a parsed statement as Doris would build it; raise at the first node
    (bottom up) past a limit. Iterative: the parser's trees of long chains are as deep as they are long."""
    nodes = list(root.walk(bfs=False))
    depth: dict[int, int] = {}
    width: dict[int, int] = {}
    for node in reversed(nodes):  # children before their parents
        if not _is_expression(node):
            continue
        children = [c for c in node.iter_expressions() if id(c) in depth]
        if not children:
            depth[id(node)] = width[id(node)] = 1
            continue
        grows = not isinstance(node, exp.Paren) and not (
            isinstance(node, exp.Connector) and type(node.parent) is type(node))  # one n-ary AND / OR
        d = max(depth[id(c)] for c in children) + grows
        w = sum(width[id(c)] for c in children)
        if d > limits.depth:
            raise limits.depth_error()
        if w > limits.children:
            raise limits.children_error()
        depth[id(node)] = d
        width[id(node)] = w
