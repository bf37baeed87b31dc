"""The package's import graph (issue 11): imports run only downward, so the graph of intra-package
imports has no circle; no import sits inside a function except heavy optional dependencies, marked
``# heavy, optional``; modules stay under about 600 lines.

Every module of ``analysis/`` is parsed with :mod:`ast` (nothing is imported). Both module-level
and function-level imports are edges of the graph, so a circle hidden by a function-level import
is found too. ``importlib.import_module`` calls are refused as well: they hide edges.
"""
from __future__ import annotations

import ast
import warnings
from pathlib import Path

import pytest

from analysis import stamps

ROOT = Path(__file__).resolve().parents[1] / "analysis"
PKG = "analysis"
MARK = "# heavy, optional"
MAX_LINES = 600
#: every module is under MAX_LINES (False would only report the long ones as warnings)
ENFORCE_MAX_LINES = True


MODULES = stamps.package_modules()  # the same walk that keys the build's products


def _type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _targets(node, mod: str, path: Path) -> list[str]:
    """Modules of the package an import statement loads (submodules where ``from X import sub``)."""
    package = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names if a.name == PKG or a.name.startswith(PKG + ".")]
        return [_known(n) for n in names]
    if node.level:
        base = package.split(".")
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if not (target == PKG or target.startswith(PKG + ".")):
        return []
    subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in MODULES]
    return subs + ([_known(target)] if len(subs) < len(node.names) else [])


def _known(name: str) -> str:
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def scan(mod: str, path: Path):
    """``(edges, function_level)``: imported modules, and unmarked imports inside functions."""
    src = path.read_text(encoding="utf-8")
    lines = src.splitlines()
    edges, inside, dynamic = set(), [], []
    where = path.relative_to(ROOT.parent) if path.is_relative_to(ROOT.parent) else path

    def visit(node, in_func: bool):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                text = "\n".join(lines[child.lineno - 1: child.end_lineno or child.lineno])
                edges.update(t for t in _targets(child, mod, path) if t != mod)
                if in_func and MARK not in text:
                    inside.append(f"{where}:{child.lineno}: {text.strip()}")
            if (isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute)
                    and child.func.attr == "import_module"):
                dynamic.append(f"{where}:{child.lineno}: importlib.import_module")
            visit(child, in_func or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(ast.parse(src, filename=str(path)), False)
    return edges, inside, dynamic


def graph() -> tuple[dict[str, set[str]], list[str], list[str]]:
    edges, inside, dynamic = {}, [], []
    for mod, path in MODULES.items():
        e, i, d = scan(mod, path)
        edges[mod] = e
        inside += i
        dynamic += d
    return edges, inside, dynamic


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), each with one circle through it."""
    index, low, stack, on, groups = {}, {}, [], set(), []
    counter = iter(range(10**9))

    def strong(v):
        index[v] = low[v] = next(counter)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                groups.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            strong(v)
    out = []
    for comp in groups:  # one concrete circle through the group's first module (breadth-first)
        start, members = comp[0], set(comp)
        prev, frontier, path = {start: None}, [start], None
        while frontier and path is None:
            nxt = []
            for v in frontier:
                for w in sorted(edges[v] & members):
                    if w == start:
                        back = [v]
                        while prev[back[-1]] is not None:
                            back.append(prev[back[-1]])
                        path = back[::-1] + [start]
                        break
                    if w not in prev:
                        prev[w] = v
                        nxt.append(w)
                if path:
                    break
            frontier = nxt
        out.append(path or comp)
    return out


EDGES, INSIDE, DYNAMIC = graph()


def test_the_scan_finds_a_circle_and_a_hidden_import(tmp_path):
    """The checker itself: a two-module circle through a function-level import is found."""
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})[0] == ["a", "b", "c", "a"]
    assert circles({"a": {"b"}, "b": set()}) == []
    f = tmp_path / "m.py"
    f.write_text("import os\n\ndef g():\n    from . import cells\n    import numpy  # heavy, optional\n")
    edges, inside, _ = scan(f"{PKG}.m", f)
    assert edges == {f"{PKG}.cells"} and len(inside) == 1 and "from . import cells" in inside[0]


def test_no_import_circle():
    found = circles(EDGES)
    assert not found, "import circles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_no_import_inside_a_function_except_heavy_optional_ones():
    assert not INSIDE, (f"{len(INSIDE)} imports inside functions (move them to the top, or mark a heavy "
                        f"optional dependency with '{MARK}'):\n" + "\n".join(INSIDE))


def test_no_dynamic_imports():
    assert not DYNAMIC, "importlib hides import edges:\n" + "\n".join(DYNAMIC)


def test_module_length():
    long = {m: n for m, p in MODULES.items() if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    msg = ", ".join(f"{m} ({n} lines)" for m, n in sorted(long.items(), key=lambda x: -x[1]))
    if ENFORCE_MAX_LINES:
        assert not long, f"modules over {MAX_LINES} lines: {msg}"
    elif long:
        warnings.warn(f"modules over {MAX_LINES} lines: {msg}", stacklevel=1)


@pytest.mark.parametrize("mod", sorted(MODULES))
def test_every_module_parses(mod):
    ast.parse(MODULES[mod].read_text(encoding="utf-8"))


# --- a cell id is parsed at the boundary only (issue 21; STYLE 3) ------------------------------
#
# The boundary: the command line (``analysis/cli.py``, every ``*/commands.py`` and
# ``collection/batch_command.py``, the command module of ``collect --batch``), ``cells.py`` itself,
# the notebooks (not scanned: they are not in the package), the audit's ``Condition`` and the validity
# battery's ``ValidityPlan``, which parse their cell ids once when they are made (``.parsed``). Below
# it a function takes the :class:`~analysis.cells.Cell` made there (``cells.expect_cell`` refuses an id
# string with a one-line TypeError): it never calls ``parse_cell`` on a value it was given (a
# parameter, or an attribute or item of one), and no cached function keys on a ``cell_id`` string.

#: modules of the boundary (every function in them may parse what it was given)
BOUNDARY_MODULES = {f"{PKG}.cli", f"{PKG}.cells", f"{PKG}.collection.batch_command"}
#: single functions of the boundary, ``module:qualified name``
BOUNDARY_FUNCTIONS = {f"{PKG}.audit.batteries:Condition.__post_init__",
                      f"{PKG}.validity.run:ValidityPlan.__post_init__"}
def _is_boundary(mod: str, qualname: str) -> bool:
    return (mod in BOUNDARY_MODULES or mod.endswith(".commands")
            or f"{mod}:{qualname}" in BOUNDARY_FUNCTIONS)


def _root_name(node) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _is_parse_cell(func) -> bool:
    return (isinstance(func, ast.Name) and func.id == "parse_cell") or (
        isinstance(func, ast.Attribute) and func.attr == "parse_cell")


def _is_cache(decorator) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    return name in ("lru_cache", "cache")


def parses_below_the_boundary(mod: str, path: Path) -> list[str]:
    """``module:function`` of each function below the boundary that parses a cell id it was given,
    or caches on a ``cell_id`` string."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[str] = []

    def visit(node, scope: list[str], params: set[str]):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                args = child.args
                names = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
                names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
                inner = scope + [getattr(child, "name", "<lambda>")]
                qual = ".".join(inner)
                if not _is_boundary(mod, qual) and any(_is_cache(d) for d in getattr(child, "decorator_list", [])) \
                        and "cell_id" in names:
                    found.append(f"{mod}:{qual} (cached on a cell_id string)")
                visit(child, inner, params | names)
            elif isinstance(child, ast.ClassDef):
                visit(child, scope + [child.name], set())
            else:
                if (isinstance(child, ast.Call) and _is_parse_cell(child.func) and child.args
                        and _root_name(child.args[0]) in params and not _is_boundary(mod, ".".join(scope))):
                    found.append(f"{mod}:{'.'.join(scope)}")
                visit(child, scope, params)

    visit(tree, [], set())
    return sorted(set(found))


PARSES = sorted({hit for mod, path in MODULES.items() for hit in parses_below_the_boundary(mod, path)})


def test_the_parse_check_finds_a_parse_of_a_given_value(tmp_path):
    """The checker itself: a parameter (or its attribute) parsed below the boundary is found; a
    literal, a Cell made here, and the boundary are not; a cache keyed on a cell_id string is found."""
    f = tmp_path / "m.py"
    f.write_text("from functools import lru_cache\n"
                 "def below(cell):\n    return parse_cell(cell)\n"
                 "def attr(cond):\n    return cells.parse_cell(cond.cell)\n"
                 "def literal():\n    return parse_cell('k12_LH_neutral_learned_zero')\n"
                 "@lru_cache\ndef cached(cell_id):\n    return 1\n"
                 "class Condition:\n    def __post_init__(self):\n        parse_cell(self.cell)\n")
    assert parses_below_the_boundary(f"{PKG}.m", f) == sorted([f"{PKG}.m:attr", f"{PKG}.m:below",
                                                                f"{PKG}.m:cached (cached on a cell_id string)",
                                                                f"{PKG}.m:Condition.__post_init__"])
    assert parses_below_the_boundary(f"{PKG}.x.commands", f) == []
    assert f"{PKG}.audit.batteries:Condition.__post_init__" in BOUNDARY_FUNCTIONS


def test_no_function_below_the_boundary_parses_a_cell_id_it_was_given():
    assert not PARSES, ("functions below the boundary parse a cell id they were given (take a Cell instead; "
                        "parse at the boundary, STYLE 3):\n" + "\n".join(PARSES))
