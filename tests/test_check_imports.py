"""What ``evalvalidity check`` imports: pandas (about half a second of CPU) is not needed.

pyarrow imports pandas whenever it converts a numpy or Python object (``pa.array``,
``pa.scalar``, a Python number or str handed to a compute function, ``Array.to_numpy``);
the check's analysis goes through ``evalvalidity.io._arrow`` instead.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT, WRITEUP

TOY = WRITEUP / "toy"


def _modules(*argv: str) -> set[str]:
    code = (
        "import contextlib, io, sys\n"
        "from evalvalidity.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main({list(argv)!r})\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return set(done.stdout.split())


@pytest.fixture(scope="module")
def large_pool_run(tmp_path_factory):
    """300 queries x 50 items, one gold item each: Check 1 samples by importance."""
    folder = tmp_path_factory.mktemp("run")
    rng = np.random.default_rng(7)
    run_lines, qrels_lines = [], []
    for q in range(300):
        gold = int(rng.integers(0, 80))
        qrels_lines.append(f"q{q} 0 d{gold} 1\n")
        for rank, doc in enumerate(rng.permutation(80)[:50]):
            run_lines.append(f"q{q} Q0 d{doc} {rank + 1} {50 - rank}.5 m\n")
    run, qrels = folder / "run.trec", folder / "qrels.txt"
    run.write_text("".join(run_lines))
    qrels.write_text("".join(qrels_lines))
    return run, qrels


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_toy_check_does_not_import_pandas(fmt):
    modules = _modules(
        "check",
        "--run",
        str(TOY / "model.trec"),
        "--qrels",
        str(TOY / "qrels.txt"),
        "--pool-size",
        "200",
        "--fail-on",
        "never",
        "--format",
        fmt,
    )
    assert "evalvalidity.analysis.check1" in modules  # the check ran
    assert "pandas" not in modules


@pytest.fixture(scope="module")
def large_pool_modules(large_pool_run):
    """What a check at a large pool (Check 1 by importance, the other nulls) imported."""
    run, qrels = large_pool_run
    return _modules(
        "check",
        "--run",
        str(run),
        "--qrels",
        str(qrels),
        "--pool-size",
        "8841823",
        "--fail-on",
        "never",
    )


def test_a_check_at_a_large_pool_does_not_import_pandas(large_pool_modules):
    modules = large_pool_modules
    assert "evalvalidity.analysis.nulls" in modules
    assert "pandas" not in modules


def test_a_check_loads_scipys_special_functions_without_their_array_api_layer(large_pool_modules):
    """scipy.special's package runs an array-API layer that imports numpy.f2py and unittest."""
    modules = large_pool_modules
    assert "scipy.special._ufuncs" in modules  # the statistics ran on scipy's own functions
    assert "scipy.special" not in modules
    assert not {"scipy._lib._array_api", "numpy.f2py", "numpy.testing", "unittest"} & modules
    # nor what only some floors and intervals need
    assert not {"numpy.polynomial", "statistics"} & modules
