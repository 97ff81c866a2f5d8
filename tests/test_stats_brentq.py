"""The smallest detectable difference finds brentq's root without importing scipy.optimize.

scipy.optimize's import costs a check 0.4 to 0.7 s of CPU; its root finder is loaded on its
own. The roots must be the very ones ``scipy.optimize.brentq`` finds (every number of a check's
record stays the same), which a fresh interpreter compares after importing it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import ROOT

CODE = """
import json, math, sys
from evalvalidity.core import stats
cases = [(0.04, 100, 0.05, 0.8), (0.3, 6980, 0.05, 0.8), (1e-4, 2, 0.01, 0.99),
         (2.5, 50_000, 0.1, 0.5), (0.09, 37, 0.05, 0.9)]
ours = [stats.min_detectable_difference(v, n, alpha=a, power=p) for v, n, a, p in cases]
loaded = "scipy.optimize" in sys.modules
from scipy import optimize
theirs = []
for v, n, a, p in cases:
    shortfall = lambda e: float(stats._paired_t_power(e, n, a)) - p
    high = 2.0 * ((float(stats.special.ndtri(1 - a / 2)) + float(stats.special.ndtri(p)))
                  / math.sqrt(n)) + 1.0
    while shortfall(high) < 0.0:
        high *= 2.0
    theirs.append(float(optimize.brentq(shortfall, 0.0, high, xtol=1e-14, rtol=1e-12))
                  * math.sqrt(v))
print(json.dumps({"loaded": loaded, "ours": ours, "theirs": theirs}))
"""


def test_the_roots_are_brentqs_and_scipy_optimize_is_not_imported():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", CODE], env=env, capture_output=True, text=True, check=True
    )
    found = json.loads(done.stdout)
    assert found["loaded"] is False
    assert found["ours"] == found["theirs"]  # exactly: the same code found them
    assert all(value > 0 for value in found["ours"])
