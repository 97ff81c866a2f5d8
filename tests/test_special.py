"""``evalvalidity.core._special``: scipy's compiled special functions, loaded on their own.

Each case runs in a fresh interpreter, where what has been imported is known.
"""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import ROOT

NAMES = {
    "ndtr": "ndtr",
    "ndtri": "ndtri",
    "stdtr": "stdtr",
    "stdtrit": "stdtrit",
    "nctdtr": "nctdtr",
    "digamma": "digamma",
}


def _run(code: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


SAME = (
    "import scipy.special as sp\n"
    f"names = {NAMES!r}\n"
    "assert all(getattr(sp, b) is getattr(s, a) for a, b in names.items())\n"
    "assert sp._ufuncs._nct_sf is s.nct_sf and sp._ufuncs is s._ufuncs\n"
    "from scipy import stats\n"  # the real package works once the stand-in is gone
    "assert abs(stats.t.ppf(0.975, 4) - s.stdtrit(4, 0.975)) == 0\n"
    "print('same')\n"
)


def test_the_functions_load_without_the_package_and_are_scipy_specials_own():
    out = _run(
        "import sys\n"
        "from evalvalidity.core import _special as s\n"
        "print(sorted(m for m in ('scipy.special', 'scipy._lib._array_api', 'numpy.f2py')"
        " if m in sys.modules))\n" + SAME
    )
    assert out.splitlines() == ["[]", "same"]


def test_an_imported_scipy_special_is_used_as_it_is():
    out = _run("import scipy.special\nfrom evalvalidity.core import _special as s\n" + SAME)
    assert out == "same"


def test_where_scipy_lays_its_files_out_otherwise_the_package_is_imported(tmp_path):
    out = _run(
        "import scipy, sys\n"
        f"scipy.__file__ = {str(tmp_path / '__init__.py')!r}\n"  # no special/_ufuncs there
        "from evalvalidity.core import _special as s\n"
        "print('scipy.special' in sys.modules)\n" + SAME
    )
    assert out.splitlines() == ["True", "same"]


def test_another_threads_import_of_scipy_special_gets_the_real_package():
    # One thread imports scipy.stats (which imports scipy.special) while this one loads the
    # functions: whichever comes first, the other thread never sees the stand-in.
    out = _run(
        "import threading\n"
        "errors = []\n"
        "def other():\n"
        "    try:\n"
        "        from scipy import stats\n"
        "        assert stats.norm.ppf(0.5) == 0.0\n"
        "    except BaseException as error:\n"
        "        errors.append(error)\n"
        "thread = threading.Thread(target=other)\n"
        "thread.start()\n"
        "from evalvalidity.core import _special as s\n"
        "thread.join()\n"
        "assert not errors, errors\n" + SAME
    )
    assert out == "same"
