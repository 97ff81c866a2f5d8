"""Imports point one way: errors <- core <- io <- analysis <- report <- cli <- app.

Every import of every module of ``evalvalidity/`` and ``app/`` is read from its source (module
level, inside functions, under ``TYPE_CHECKING``, and ``importlib.import_module`` calls with a
constant name), so that an import hidden in a function cannot pull a heavy layer into a light one.
Each layer may also use only its own third-party libraries (and those of the layers below):

=========  =====  =============================  ==========================================
layer      rank   package                        third-party libraries it adds
=========  =====  =============================  ==========================================
errors     0      evalvalidity/errors.py         none
core       1      evalvalidity/core/             numpy, scipy
io         2      evalvalidity/io/               pyarrow, duckdb
analysis   3      evalvalidity/analysis/         none
report     4      evalvalidity/report/           pandas, altair, vl_convert
cli        5      evalvalidity/cli/, __main__,   none
                  testing
app        6      app/                           streamlit
=========  =====  =============================  ==========================================

``evalvalidity/__init__.py`` is the lazy facade: it may name any layer, but only under
``TYPE_CHECKING`` (or inside a function); at import time it imports nothing but ``__future__``
and ``typing``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import ROOT

LAYERS = {"errors": 0, "core": 1, "io": 2, "analysis": 3, "report": 4, "cli": 5, "app": 6}
NAMES = {rank: name for name, rank in LAYERS.items()}
#: The third-party libraries each layer adds to those of the layers below it.
ADDS: dict[int, frozenset[str]] = {
    0: frozenset(),
    1: frozenset({"numpy", "scipy"}),
    2: frozenset({"pyarrow", "duckdb"}),
    3: frozenset(),
    4: frozenset({"pandas", "altair", "vl_convert"}),
    5: frozenset(),
    6: frozenset({"streamlit"}),
}
FACADE = "evalvalidity"
#: What the facade may import at import time.
FACADE_MAY_IMPORT = frozenset({"__future__", "typing"})


def allowed_libraries(rank: int) -> frozenset[str]:
    """The third-party libraries a layer may import: its own and those of every layer below."""
    return frozenset().union(*(ADDS[r] for r in range(rank + 1)))


def module_name(path: Path) -> str:
    """``evalvalidity/io/ingest/_read.py`` -> ``evalvalidity.io.ingest._read``."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> int | None:
    """The layer of a module of ours (None for the facade itself; KeyError for an unknown one).

    >>> layer_of("evalvalidity.io.ingest._read"), layer_of("app.views.health")
    (2, 6)
    """
    parts = module.split(".")
    if parts[0] == "app":
        return LAYERS["app"]
    if parts[0] != "evalvalidity":
        raise KeyError(module)
    if len(parts) == 1:
        return None
    if parts[1] in ("__main__", "testing"):  # the command line and the pytest helper
        return LAYERS["cli"]
    return LAYERS[parts[1]]


@dataclass(frozen=True)
class Import:
    """One import found in a source file."""

    line: int
    module: str  # absolute dotted name
    names: tuple[str, ...]  # for ``from module import a, b``; empty otherwise
    type_checking: bool  # under ``if TYPE_CHECKING:``
    at_import_time: bool  # not inside a function


def _constant_prefix(node: ast.expr) -> str | None:
    """The module a constant (or f-string with a constant package prefix) names."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values:
        first = node.values[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str) and "." in first.value:
            return first.value.rsplit(".", 1)[0]  # f"pkg.sub.{name}" imports under pkg.sub
    return None


def find_imports(source: str, module: str, is_package: bool) -> list[Import]:
    """Every import statement and constant ``importlib.import_module`` call in ``source``.

    >>> code = (
    ...     "import numpy\\n"
    ...     "from typing import TYPE_CHECKING\\n"
    ...     "if TYPE_CHECKING:\\n"
    ...     "    from .b import c\\n"
    ...     "def f():\\n"
    ...     "    importlib.import_module('duckdb')\\n"
    ... )
    >>> [(i.line, i.module, i.type_checking, i.at_import_time) for i in find_imports(code, "p.a", False)]
    [(1, 'numpy', False, True), (2, 'typing', False, True), (4, 'p.b', True, True), (6, 'duckdb', False, False)]
    """
    package = module if is_package else module.rpartition(".")[0]
    found: list[Import] = []

    def visit(node: ast.AST, type_checking: bool, in_function: bool) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append(Import(node.lineno, alias.name, (), type_checking, not in_function))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = str(node.module)
            names = tuple(alias.name for alias in node.names)
            found.append(Import(node.lineno, target, names, type_checking, not in_function))
        elif isinstance(node, ast.Call):
            called = ast.unparse(node.func)
            if called in ("importlib.import_module", "import_module", "__import__") and node.args:
                target = _constant_prefix(node.args[0])
                if target is not None:
                    found.append(Import(node.lineno, target, (), type_checking, not in_function))
        if isinstance(node, ast.If) and ast.unparse(node.test) in (
            "TYPE_CHECKING",
            "typing.TYPE_CHECKING",
        ):
            for child in node.body:
                visit(child, True, in_function)
            for child in node.orelse:
                visit(child, type_checking, in_function)
            return
        function = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        for child in ast.iter_child_nodes(node):
            visit(child, type_checking, in_function or function)

    visit(ast.parse(source), False, False)
    return found


def _facade_sources() -> dict[str, str]:
    """The facade's table of lazy names -> their modules, read from its source."""
    tree = ast.parse((ROOT / "evalvalidity" / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.AnnAssign | ast.Assign):
            targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
            if any(isinstance(t, ast.Name) and t.id == "_SOURCES" for t in targets):
                assert node.value is not None
                value = ast.literal_eval(node.value)
                assert isinstance(value, dict)
                return value
    raise AssertionError("evalvalidity/__init__.py has no _SOURCES table")


def targets_of(imp: Import) -> list[str]:
    """The modules of ours an import really loads (``from evalvalidity import x`` resolved)."""
    if imp.module != FACADE or not imp.names:
        return [imp.module]
    sources = _facade_sources()
    resolved = []
    for name in imp.names:
        if name in sources:
            resolved.append(sources[name])
        elif (ROOT / "evalvalidity" / name).is_dir() or (
            ROOT / "evalvalidity" / f"{name}.py"
        ).is_file():
            resolved.append(f"{FACADE}.{name}")
        else:  # a plain attribute of the facade (__version__): loads nothing
            resolved.append(FACADE)
    return resolved


def sources() -> list[Path]:
    files = sorted([*(ROOT / "evalvalidity").rglob("*.py"), *(ROOT / "app").rglob("*.py")])
    return [f for f in files if "_app" not in f.relative_to(ROOT).parts]


def violations() -> list[str]:
    problems: list[str] = []
    stdlib = sys.stdlib_module_names
    for path in sources():
        module = module_name(path)
        where = path.relative_to(ROOT)
        rank = layer_of(module)
        for imp in find_imports(
            path.read_text(encoding="utf-8"), module, path.name == "__init__.py"
        ):
            top = imp.module.split(".")[0]
            if rank is None:  # the facade
                if imp.at_import_time and not imp.type_checking and top not in FACADE_MAY_IMPORT:
                    problems.append(
                        f"{where}:{imp.line}: the facade imports {imp.module} at import time"
                        " (only under TYPE_CHECKING or inside a function)"
                    )
                continue
            if top in ("evalvalidity", "app"):
                for target in targets_of(imp):
                    target_rank = layer_of(target)
                    if target_rank is not None and target_rank > rank:
                        problems.append(
                            f"{where}:{imp.line}: {module} ({NAMES[rank]}) imports {target}"
                            f" ({NAMES[target_rank]}), a layer above it"
                        )
            elif top not in stdlib and top not in allowed_libraries(rank):
                problems.append(
                    f"{where}:{imp.line}: {module} ({NAMES[rank]}) imports {imp.module}, which the"
                    f" {NAMES[rank]} layer may not use (allowed: "
                    f"{', '.join(sorted(allowed_libraries(rank))) or 'the standard library only'})"
                )
    return problems


def test_every_module_belongs_to_a_layer():
    for path in sources():
        module = module_name(path)
        if module != FACADE:
            assert layer_of(module) in NAMES, module


def test_no_import_points_up_a_layer_or_uses_a_library_the_layer_may_not():
    problems = violations()
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    ("module", "code", "expected"),
    [
        (
            "evalvalidity.core.x",
            "def f():\n    from evalvalidity.io import workspace\n",
            "imports evalvalidity.io (io), a layer above it",
        ),
        (
            "evalvalidity.core.x",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pyarrow\n",
            "imports pyarrow, which the core layer may not use",
        ),
        (
            "evalvalidity.io.x",
            "import importlib\nimportlib.import_module('evalvalidity.report.charts')\n",
            "imports evalvalidity.report.charts (report), a layer above it",
        ),
        (
            "evalvalidity.report.x",
            "from ..cli import main\n",
            "imports evalvalidity.cli (cli), a layer above it",
        ),
        (
            "evalvalidity.core.x",
            "from evalvalidity import Workspace\n",
            "imports evalvalidity.io.workspace (io), a layer above it",
        ),
        (
            "evalvalidity.analysis.x",
            "import pandas as pd\n",
            "imports pandas, which the analysis layer may not use",
        ),
        (
            "evalvalidity",
            "from evalvalidity.errors import ParameterError\n",
            "the facade imports evalvalidity.errors at import time",
        ),
    ],
)
def test_the_checker_finds_a_planted_violation(tmp_path, monkeypatch, module, code, expected):
    """The scan is not vacuous: each kind of violation, planted in a copy, is named with its line."""
    root = tmp_path / "repo"
    for folder in ("evalvalidity", "app"):
        for path in (ROOT / folder).rglob("*.py"):
            target = root / path.relative_to(ROOT)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    parts = module.split(".")
    planted = root.joinpath(*parts).with_suffix(".py") if len(parts) > 1 else None
    if planted is None:
        planted = root / "evalvalidity" / "__init__.py"
        code = planted.read_text(encoding="utf-8") + code
    planted.parent.mkdir(parents=True, exist_ok=True)
    planted.write_text(code, encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", root)
    found = [p for p in violations() if p.startswith(str(planted.relative_to(root)))]
    assert len(found) == 1, found
    line = len(code.splitlines())
    assert found[0].startswith(f"{planted.relative_to(root)}:{line}: "), found[0]
    assert expected in found[0]


CORE = [
    "evalvalidity",
    "evalvalidity.core.metrics",
    "evalvalidity.core.floors",
    "evalvalidity.core.dedup",
    "evalvalidity.core.kernels",
    "evalvalidity.core.stats",
    "evalvalidity.core.embed",
    "evalvalidity.analysis.live",
]


@pytest.mark.parametrize("module", CORE)
def test_core_imports_no_duckdb_streamlit_altair_pandas(module):
    code = (
        "import importlib, sys\n"
        f"importlib.import_module({module!r})\n"
        "bad = sorted(m for m in ('duckdb', 'streamlit', 'altair', 'pandas', 'pyarrow')"
        " if m in sys.modules)\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
