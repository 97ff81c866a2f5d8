"""The public surface: ``import evalvalidity as ev`` names, loaded lazily; the exception tree."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import subprocess
import sys

import pytest
from conftest import ROOT

import evalvalidity
from evalvalidity import errors

PUBLIC = {
    "CheckPlan": "evalvalidity.analysis.plan",
    "EvalValidityError": "evalvalidity.errors",
    "EvalValidityWarning": "evalvalidity.errors",
    "FileFormatError": "evalvalidity.errors",
    "InputDataError": "evalvalidity.errors",
    "Metric": "evalvalidity.core.metrics",
    "ParameterError": "evalvalidity.errors",
    "RejectedRowsError": "evalvalidity.io.ingest",
    "StorageError": "evalvalidity.errors",
    "Workspace": "evalvalidity.io.workspace",
    "check_benchmark": "evalvalidity.analysis.check",
    "noise_floor": "evalvalidity.core.floors",
    "parse_metric": "evalvalidity.core.metrics",
    "read_qrels": "evalvalidity.io.ingest",
    "read_run": "evalvalidity.io.ingest",
    "score_run": "evalvalidity.io.scoring",
}
HEAVY = ("numpy", "scipy", "pyarrow", "duckdb", "pandas", "altair", "streamlit")


def _loaded_after(code: str) -> list[str]:
    """The heavy libraries (and evalvalidity modules) a fresh interpreter holds after ``code``."""
    probe = (
        f"{code}\nimport sys\n"
        f"print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}"
        " or m.startswith('evalvalidity'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return done.stdout.split()


def test_importing_the_package_loads_no_library_and_no_layer():
    assert _loaded_after("import evalvalidity") == ["evalvalidity"]


def test_an_error_name_loads_only_the_errors_module():
    loaded = _loaded_after("import evalvalidity as ev\nev.ParameterError")
    assert loaded == ["evalvalidity", "evalvalidity.errors"]


def test_a_core_name_loads_numpy_and_scipy_but_no_storage_library():
    loaded = _loaded_after("import evalvalidity as ev\nev.noise_floor")
    heavy = {m.split(".")[0] for m in loaded if not m.startswith("evalvalidity")}
    assert heavy == {"numpy", "scipy"}
    assert not any(m.startswith(("evalvalidity.io", "evalvalidity.analysis")) for m in loaded)


def test_the_public_names_are_exactly_the_documented_ones():
    assert sorted(evalvalidity.__all__) == sorted(["__version__", *PUBLIC])
    assert dir(evalvalidity) == evalvalidity.__all__


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_each_public_name_is_the_object_of_its_module(name):
    module = importlib.import_module(PUBLIC[name])
    assert getattr(evalvalidity, name) is getattr(module, name)
    assert name in vars(evalvalidity)  # kept after the first use


def test_an_unknown_name_raises_attribute_error():
    with pytest.raises(AttributeError, match="^module 'evalvalidity' has no attribute 'nope'$"):
        evalvalidity.nope  # noqa: B018


def test_type_checkers_see_the_same_names_from_the_same_modules():
    """The TYPE_CHECKING imports of the facade mirror its lazy table, name for name."""
    tree = ast.parse((ROOT / "evalvalidity" / "__init__.py").read_text(encoding="utf-8"))
    seen: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom), ast.unparse(statement)
                for alias in statement.names:
                    seen[alias.asname or alias.name] = str(statement.module)
    assert seen == PUBLIC


# ------------------------------------------------------------------------------ errors


def _drawn_tree() -> dict[str, str | None]:
    """Each class drawn in errors.py's docstring and its drawn parent (None for a root)."""
    assert errors.__doc__ is not None
    parents: dict[str, str | None] = {}
    stack: list[tuple[int, str]] = []
    for line in errors.__doc__.splitlines():
        match = re.match(r"^    ((?:[│ ]   )*)([├└]── )?([A-Z]\w*(?:Error|Warning))\b", line)
        if match is None:
            continue
        depth = len(match.group(1)) // 4 + (1 if match.group(2) else 0)
        name = match.group(3)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parents[name] = stack[-1][1] if stack else None
        stack.append((depth, name))
    return parents


def _package_exceptions() -> dict[str, type[BaseException]]:
    """Every public exception or warning class defined anywhere in evalvalidity."""
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(evalvalidity.__path__, "evalvalidity."):
        if info.name == "evalvalidity.__main__":
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, BaseException)
                and value.__module__ == info.name
                and not value.__name__.startswith("_")
            ):
                found[value.__name__] = value
    return found


def test_every_exception_class_is_drawn_in_the_tree_under_its_parent():
    drawn = _drawn_tree()
    classes = _package_exceptions()
    assert {"EvalValidityError", "StorageError", "RejectedRowsError"} <= set(classes)
    assert sorted(drawn) == sorted(classes)
    for name, cls in classes.items():
        ours = [
            base.__name__ for base in cls.__bases__ if base.__module__.startswith("evalvalidity")
        ]
        assert drawn[name] == (ours[0] if ours else None), name


def test_every_error_derives_from_the_base_and_the_warning_from_user_warning():
    for name, cls in _package_exceptions().items():
        if issubclass(cls, Warning):
            assert issubclass(cls, UserWarning), name
        else:
            assert issubclass(cls, errors.EvalValidityError), name


def test_storage_error_is_one_class_wherever_it_is_imported_from():
    from evalvalidity.io import atomic

    assert atomic.StorageError is errors.StorageError
    assert issubclass(errors.StorageError, OSError)
