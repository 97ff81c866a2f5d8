"""The special functions the statistics use: scipy's compiled ufuncs, without scipy.special's import.

Importing :mod:`scipy.special` runs its array-API layer, which clones numpy's whole namespace
and so imports numpy.f2py, numpy.testing, numpy.ma and unittest: 0.15 to 0.3 s of one core on
every ``check``, more than all the checks' own modules. The functions used here are compiled
ufuncs of ``scipy.special._ufuncs``: ``scipy.special.ndtri`` *is*
``scipy.special._ufuncs.ndtri``, and so on (``digamma`` is the ufunc ``psi``). This module loads
``_ufuncs`` on its own, so the values are those of the very same code.

An extension module's package is imported before it, so ``_ufuncs`` is loaded under a bare
stand-in for ``scipy.special`` (its folder as the search path, nothing run), which is taken out
of :data:`sys.modules` at once; a later ``import scipy.special`` then runs the real package,
which finds ``_ufuncs`` already loaded and uses it. The stand-in is in place only while the
interpreter's import lock is held, marked as being imported, so no other thread sees it (an
import of ``scipy.special`` elsewhere waits for the lock, then runs the real package). Where
scipy is already imported, or lays its files out otherwise, or the stand-in fails, this is
``from scipy.special import _ufuncs``: the same functions. :func:`compiled_file` finds such a
compiled module's file (the statistics' root finder is loaded the same way).

Examples
--------
>>> round(float(ndtri(0.975)), 6), round(float(stdtrit(4, 0.975)), 6)
(1.959964, 2.776445)
>>> float(digamma(1.0)) == -0.5772156649015329
True
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import sys
from types import ModuleType
from typing import cast

__all__ = ["compiled_file", "digamma", "nct_sf", "nctdtr", "ndtr", "ndtri", "stdtr", "stdtrit"]

#: The ufuncs taken from ``scipy.special._ufuncs`` (``psi`` is ``scipy.special.digamma``).
NAMES = ("ndtr", "ndtri", "stdtr", "stdtrit", "nctdtr", "psi", "_nct_sf")


def _usable(module: ModuleType) -> bool:
    return all(hasattr(module, name) for name in NAMES)


def compiled_file(package: str, name: str) -> str | None:
    """The file of scipy's compiled module ``scipy.<package>.<name>``, or None if it has none.

    None where scipy lays its files out otherwise: the callers then import the package.

    >>> compiled_file("special", "_ufuncs") is not None, compiled_file("special", "nothing")
    (True, None)
    """
    import scipy

    folder = os.path.join(os.path.dirname(scipy.__file__), package)
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = os.path.join(folder, name + suffix)
        if os.path.exists(path):
            return path
    return None


def _on_its_own() -> ModuleType | None:
    """``scipy.special._ufuncs`` loaded under a stand-in package, or None where that fails."""
    import _imp

    path = compiled_file("special", "_ufuncs")
    if path is None:
        return None
    folder = os.path.dirname(path)
    _imp.acquire_lock()
    try:
        if "scipy.special" in sys.modules or "scipy.special._ufuncs" in sys.modules:
            return None  # imported meanwhile (or being imported): the ordinary import
        spec = importlib.machinery.ModuleSpec("scipy.special", None, is_package=True)
        spec.submodule_search_locations = [folder]
        stand_in = importlib.util.module_from_spec(spec)
        spec._initializing = True  # type: ignore[attr-defined]  # other threads wait, see above
        sys.modules["scipy.special"] = stand_in
        try:
            return importlib.import_module("scipy.special._ufuncs")
        except ImportError:
            return None
        finally:
            if sys.modules.get("scipy.special") is stand_in:
                del sys.modules["scipy.special"]
    finally:
        _imp.release_lock()


def load() -> ModuleType:
    """The module of scipy's compiled special functions, loaded as cheaply as scipy allows."""
    loaded = sys.modules.get("scipy.special._ufuncs")
    if loaded is not None and _usable(loaded):
        return loaded
    if "scipy.special" not in sys.modules:
        module = _on_its_own()
        if module is not None and _usable(module):
            return module
    from scipy.special import _ufuncs

    return cast(ModuleType, _ufuncs)


_ufuncs = load()
ndtr = _ufuncs.ndtr
ndtri = _ufuncs.ndtri
stdtr = _ufuncs.stdtr
stdtrit = _ufuncs.stdtrit
nctdtr = _ufuncs.nctdtr
digamma = _ufuncs.psi
#: The noncentral t's survival function (``scipy.stats.nct.sf`` is this ufunc, clipped).
nct_sf = _ufuncs._nct_sf
