"""The core must stay importable without the heavy layers (house style: dependencies point one way)."""

import subprocess
import sys

import pytest

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
