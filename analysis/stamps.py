"""Content keys of the build's steps (issue 21: each number made once).

A step of ``make paper`` (a notebook, the claims check, the report) is *current* when the key of
what it is made from equals the key recorded when it last ran, and every file it wrote is still
there with the recorded SHA-256. The build reruns only the steps that are not current.

A notebook's key hashes its jupytext source, every module of the package it imports (followed
through the package's own imports, function-level ones included, so the set is never smaller
than what runs), the tracked inputs (``data/`` without ``data/derived/``: the input registry pins
every downloaded file by SHA-256, the claims registry, the cue lists, the price table), the
package's non-Python files (templates, resources), the pins (``environment.yml``,
``constraints.txt``), the Python
version, the parameters it runs with, and the environment variables that choose the BLAS kernel
and its threads (:data:`KEY_ENVIRONMENT`), so a run under another kernel is never skipped.

Only the standard library is used: deciding that nothing has to run takes well under a second.
Stamps live in the git-ignored ``.cache/build/`` of the checkout.
"""
from __future__ import annotations

import ast
import hashlib
import json
import os
import sys
from functools import lru_cache
from pathlib import Path

from . import paths

PACKAGE = "analysis"
#: the git-ignored folder of the build's stamps (one JSON file per step)
STAMPS = paths.ROOT / ".cache" / "build"
#: environment variables that can change a computed number (BLAS kernel and thread counts, issue 21)
KEY_ENVIRONMENT = ("OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


@lru_cache(maxsize=None)
def package_modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    root = paths.ROOT / PACKAGE
    out = {}
    for p in sorted(root.rglob("*.py")):
        parts = list(p.relative_to(paths.ROOT).with_suffix("").parts)
        if any(x.startswith(".") or x == "__pycache__" for x in parts):
            continue
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def _known(name: str, modules: dict[str, Path]) -> str | None:
    while name not in modules and "." in name:
        name = name.rsplit(".", 1)[0]
    return name if name in modules else None


def imported_modules(source: str, module: str | None = None, is_package: bool = False) -> set[str]:
    """Package modules that the Python ``source`` imports anywhere (module level or in functions).

    ``module`` is the source's own dotted name (``None`` for a script such as a notebook, which
    can only import absolutely).

    >>> sorted(imported_modules("from analysis import cells, claims\\nimport os"))
    ['analysis.cells', 'analysis.claims']
    >>> sorted(imported_modules("from ..cells import Cell", "analysis.battery.cells"))
    ['analysis.cells']
    """
    modules = package_modules()
    package = (module if is_package else module.rsplit(".", 1)[0]) if module else ""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(filter(None, (_known(a.name, modules) for a in node.names
                                       if a.name.split(".")[0] == PACKAGE)))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != PACKAGE:
                continue
            subs = {f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in modules}
            found.update(subs)
            if len(subs) < len(node.names) and _known(target, modules):
                found.add(_known(target, modules))
    return found


@lru_cache(maxsize=None)
def _module_imports(module: str) -> frozenset[str]:
    path = package_modules()[module]
    return frozenset(imported_modules(path.read_text(encoding="utf-8"), module, path.name == "__init__.py"))


def closure(start: set[str]) -> set[str]:
    """Every package module loaded when ``start`` is imported: their imports, followed, and the
    packages above each (importing ``analysis.battery.cells`` runs ``analysis/battery/__init__.py``)."""
    seen: set[str] = set()
    todo = list(start)
    while todo:
        mod = todo.pop()
        if mod in seen:
            continue
        seen.add(mod)
        todo.extend(_module_imports(mod))
        parts = mod.split(".")
        todo.extend(".".join(parts[:i]) for i in range(1, len(parts)))
    return seen


@lru_cache(maxsize=None)
def file_digest(path: Path) -> str:
    """SHA-256 of one file's bytes (cached for the process: the build hashes each file once)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


#: beside the claims check: the :func:`package_fingerprint` it is current for (``analysis.claims.check_is_current``)
CLAIMS_FINGERPRINT = paths.DERIVED / "claims_check.inputs.sha256"


def package_fingerprint() -> str:
    """SHA-256 over the package's sources and the two registries (the same on every machine): what
    ``data/derived/claims_check.inputs.sha256`` holds when the claims check is current."""
    h = hashlib.sha256()
    package = paths.ROOT / PACKAGE
    files = sorted(package.rglob("*.py")) + [paths.CLAIMS_REGISTRY, paths.INPUT_REGISTRY]
    for f in files:
        h.update(f.relative_to(paths.ROOT).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def tracked_inputs() -> list[Path]:
    """Files every step may read besides the package's Python: ``data/`` without ``data/derived/``,
    the package's non-Python files, and the pins."""
    data = [p for p in sorted(paths.DATA.rglob("*")) if p.is_file() and paths.DERIVED not in p.parents]
    package = [p for p in sorted((paths.ROOT / PACKAGE).rglob("*")) if p.is_file() and p.suffix not in (".py", ".pyc")
               and "__pycache__" not in p.parts]
    pins = [p for p in (paths.ROOT / "environment.yml", paths.ROOT / "constraints.txt") if p.is_file()]
    return data + package + pins


def _rel(path: Path) -> str:
    path = Path(path).resolve()
    return path.relative_to(paths.ROOT).as_posix() if path.is_relative_to(paths.ROOT) else path.as_posix()


def key_of(files: list[Path], settings: dict | None = None) -> str:
    """SHA-256 over ``files`` (their paths and contents), ``settings`` (JSON), the Python version and
    :data:`KEY_ENVIRONMENT`."""
    h = hashlib.sha256()
    for f in sorted(set(map(Path, files)), key=_rel):
        h.update(_rel(f).encode() + b"\0" + file_digest(f).encode() + b"\0")
    env = {v: os.environ.get(v) for v in KEY_ENVIRONMENT}
    extra = {"settings": settings or {}, "environment": env, "python": sys.version}
    h.update(json.dumps(extra, sort_keys=True, default=str).encode())
    return h.hexdigest()


def code_files(modules: set[str]) -> list[Path]:
    """The files of ``modules`` and of everything they import."""
    table = package_modules()
    return [table[m] for m in sorted(closure(modules))]


def notebook_key(source: Path, parameters: dict) -> str:
    """The key of one notebook run: its source, the package code it imports, the tracked inputs,
    and ``parameters`` (the values it runs with, ``output_dir`` excluded)."""
    text = Path(source).read_text(encoding="utf-8")
    files = [Path(source), *code_files(imported_modules(text)), *tracked_inputs()]
    return key_of(files, {"notebook": Path(source).stem, "parameters": parameters})


def module_key(modules: set[str], extra_files: list[Path] = (), settings: dict | None = None) -> str:
    """The key of a step run by package code: ``modules`` (followed), the tracked inputs, ``extra_files``."""
    return key_of([*code_files(modules), *tracked_inputs(), *extra_files], settings)


def notebook_parameters(source: Path) -> dict[str, object]:
    """Names and defaults of the ``parameters`` cell of a py:percent source (defaults that are not
    literals are given as their source text)."""
    text = Path(source).read_text(encoding="utf-8")
    marker = '# %% tags=["parameters"]'
    if marker not in text:
        return {}
    cell = text.split(marker, 1)[1].split("\n# %%", 1)[0]
    params = {}
    for node in ast.parse(cell).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                params[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                params[node.targets[0].id] = ast.get_source_segment(cell, node.value)
    return params


#: the parameter every notebook has (where it writes); not part of a run's key
OUTPUT_DIR = "output_dir"


def run_parameters(source: Path, overrides: dict | None = None) -> dict[str, object]:
    """The parameters a notebook runs with: its defaults, ``overrides`` (``-p``) applied, ``output_dir`` left out."""
    params = {**notebook_parameters(source), **(overrides or {})}
    params.pop(OUTPUT_DIR, None)
    return params


def run_key(source: Path, overrides: dict | None = None) -> str:
    """:func:`notebook_key` of ``source`` run with ``overrides`` (none: its defaults, as ``make paper`` runs it)."""
    return notebook_key(source, run_parameters(source, overrides))


# -- stamps ------------------------------------------------------------------------------------
def stamp_path(step: str) -> Path:
    return STAMPS / f"{step}.json"


def read_stamp(step: str) -> dict:
    """The recorded ``{"key": ..., "outputs": {path: sha256}}`` of ``step`` (``{}`` when none or unreadable)."""
    try:
        stamp = json.loads(stamp_path(step).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return stamp if isinstance(stamp, dict) else {}


def is_current(step: str, key: str) -> bool:
    """True when ``step`` last ran with ``key`` and each file it wrote is there, unchanged."""
    stamp = read_stamp(step)
    if stamp.get("key") != key or not isinstance(stamp.get("outputs"), dict):
        return False
    for rel, digest in stamp["outputs"].items():
        path = paths.ROOT / rel
        if not path.is_file() or hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            return False
    return True


def record(step: str, key: str, outputs: list[Path]) -> None:
    """Record that ``step`` ran with ``key`` and wrote ``outputs`` (written atomically)."""
    STAMPS.mkdir(parents=True, exist_ok=True)
    table = {_rel(p): hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in sorted(outputs, key=_rel)
             if Path(p).is_file()}
    tmp = stamp_path(step).with_suffix(".part")
    tmp.write_text(json.dumps({"key": key, "outputs": table}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, stamp_path(step))


def forget(step: str) -> None:
    """Drop the stamp of ``step`` (it reruns next time)."""
    stamp_path(step).unlink(missing_ok=True)


def written_since(folders: list[Path], since_ns: int) -> list[Path]:
    """Files under ``folders`` modified at or after ``since_ns`` (what a step that started then wrote;
    with steps side by side this may include a neighbour's files, which only makes reruns likelier)."""
    out = []
    for folder in folders:
        if folder.is_dir():
            out += [p for p in folder.rglob("*") if p.is_file() and p.stat().st_mtime_ns >= since_ns]
    return sorted(out)
