"""Safe parsing of equation strings into sympy expressions, under a whitelist, never `eval`'d.

The string is read by Python's `ast` parser (syntax only, nothing runs), every node is checked against a
whitelist (numbers, the problem's symbols, + − × ÷ ** and `^` as power, a fixed set of functions), and the
sympy expression is built node by node. Attribute access (`x.__class__`), dunder names (`__import__`),
lambdas, subscripts, keywords, strings and unknown names are refused with :class:`UnsafeExpressionError` or
:class:`ExpressionError` naming the offending piece.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence

import sympy

from stages.core.errors import PipelineError

FUNCTIONS: dict[str, Callable[..., sympy.Expr]] = {
    "sin": sympy.sin,
    "cos": sympy.cos,
    "tan": sympy.tan,
    "exp": sympy.exp,
    "log": sympy.log,
    "sqrt": sympy.sqrt,
    "abs": sympy.Abs,
    "Abs": sympy.Abs,
    "tanh": sympy.tanh,
    "sinh": sympy.sinh,
    "cosh": sympy.cosh,
    "arcsin": sympy.asin,
    "asin": sympy.asin,
    "arccos": sympy.acos,
    "acos": sympy.acos,
    "arctan": sympy.atan,
    "atan": sympy.atan,
}
"""Functions an expression may call (numpy-style aliases included)."""
CONSTANTS: dict[str, sympy.Expr] = {"pi": sympy.pi, "E": sympy.E}
MAX_LENGTH = 5_000
"""Longest expression string accepted (a guard against pathological inputs)."""


class ExpressionError(PipelineError):
    """An expression string cannot be read (syntax, unknown name, unsupported construct)."""


class UnsafeExpressionError(ExpressionError):
    """An expression string holds a construct that is refused outright (attribute access, dunder names,
    lambdas, imports): it is never evaluated."""


_BINARY = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Pow: lambda a, b: a**b,
}
_REFUSED = {
    ast.Attribute: "attribute access",
    ast.Lambda: "a lambda",
    ast.Subscript: "subscripting",
    ast.Starred: "star arguments",
    ast.NamedExpr: "an assignment expression",
    ast.ListComp: "a comprehension",
    ast.GeneratorExp: "a comprehension",
    ast.DictComp: "a comprehension",
    ast.SetComp: "a comprehension",
    ast.Await: "await",
}


def _refuse_unsafe(tree: ast.AST, text: str) -> None:
    for node in ast.walk(tree):
        for kind, what in _REFUSED.items():
            if isinstance(node, kind):
                raise UnsafeExpressionError(f"expression {text!r}: {what} is refused")
        if isinstance(node, ast.Name) and node.id.startswith("_"):
            raise UnsafeExpressionError(f"expression {text!r}: the name {node.id!r} is refused")


class _Builder:
    """Builds a sympy expression from a checked `ast` tree."""

    def __init__(self, symbols: dict[str, sympy.Symbol], text: str) -> None:
        self.symbols = symbols
        self.text = text

    def build(self, node: ast.AST) -> sympy.Expr:
        if isinstance(node, ast.Expression):
            return self.build(node.body)
        if isinstance(node, ast.Constant):
            return self._number(node.value)
        if isinstance(node, ast.Name):
            return self._name(node.id)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            return _BINARY[type(node.op)](self.build(node.left), self.build(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            value = self.build(node.operand)
            return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.Call):
            return self._call(node)
        raise ExpressionError(f"expression {self.text!r}: unsupported construct {type(node).__name__}")

    def _number(self, value: object) -> sympy.Expr:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ExpressionError(f"expression {self.text!r}: only numbers may be literals, got {value!r}")
        return sympy.Integer(value) if isinstance(value, int) else sympy.Float(value)

    def _name(self, name: str) -> sympy.Expr:
        if name in self.symbols:
            return self.symbols[name]
        if name in CONSTANTS:
            return CONSTANTS[name]
        known = ", ".join(sorted(self.symbols)) or "none"
        raise ExpressionError(f"expression {self.text!r}: unknown name {name!r} (symbols: {known})")

    def _call(self, node: ast.Call) -> sympy.Expr:
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            name = node.func.id if isinstance(node.func, ast.Name) else type(node.func).__name__
            raise ExpressionError(
                f"expression {self.text!r}: function {name!r} is not allowed "
                f"(allowed: {', '.join(sorted(FUNCTIONS))})"
            )
        if node.keywords or len(node.args) != 1:
            raise ExpressionError(f"expression {self.text!r}: {node.func.id}() takes one positional argument")
        return FUNCTIONS[node.func.id](self.build(node.args[0]))


def parse_expression(text: str, symbols: Sequence[str] | dict[str, sympy.Symbol]) -> sympy.Expr:
    """Parse `text` (Python/numpy syntax; `^` is a power) into a sympy expression over `symbols`.

    Only the names in `symbols`, `pi`, `E` and the functions of :data:`FUNCTIONS` are allowed. Raises
    :class:`UnsafeExpressionError` for attribute access, dunder names, lambdas and the like, and
    :class:`ExpressionError` for anything else it cannot read. Nothing in `text` is executed.
    """
    if not isinstance(text, str) or not text.strip():
        raise ExpressionError("expression: an empty string")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"expression: longer than {MAX_LENGTH} characters")
    if "__" in text or "import" in text.split():
        raise UnsafeExpressionError(f"expression {text!r}: dunder names and imports are refused")
    try:
        tree = ast.parse(text.strip().replace("^", "**"), mode="eval")  # `^` is a power, as in sympy
    except SyntaxError as error:
        raise ExpressionError(f"expression {text!r}: not a valid expression ({error.msg})") from None
    _refuse_unsafe(tree, text)
    table = (
        symbols if isinstance(symbols, dict) else {name: sympy.Symbol(name, real=True) for name in symbols}
    )
    return sympy.sympify(_Builder(dict(table), text).build(tree))


def symbol_table(names: Sequence[str]) -> dict[str, sympy.Symbol]:
    """Real sympy symbols by name (the convention of every problem in this package)."""
    return {name: sympy.Symbol(name, real=True) for name in names}
