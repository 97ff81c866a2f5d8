"""Benchmark: reading a line of one long run of digits takes time linear in its length.

Format detection once backtracked quadratically on ``[0-9]+\\.?[0-9]*`` (64 KB of digits took a
minute). This reads ``b"9" * n + b"x\\n"`` for doubling ``n`` and prints the median time of each
length and its ratio to the previous one: about 2 is linear, about 4 quadratic. The unit test
(tests/test_fuzz.py) checks only the message; the timing lives here, where a busy machine cannot
make a test fail.

Usage::

    .venv/bin/python bench/digits.py                 # 25,000 to 800,000 digits, 3 repeats
    .venv/bin/python bench/digits.py --repeats 5
"""

from __future__ import annotations

import argparse
import statistics
import time

from evalvalidity.errors import EvalValidityError
from evalvalidity.io.ingest import read


def seconds(n: int, repeats: int) -> float:
    """Median wall time of reading ``n`` digits and an ``x`` (a refused file)."""
    data = b"9" * n + b"x\n"
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        try:
            read(data, display_name="digits.input")
        except EvalValidityError:
            pass
        else:
            raise SystemExit("a line of digits and an x was accepted: the benchmark is stale")
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    previous = None
    print(f"{'digits':>10}  {'seconds':>8}  ratio")
    for n in (25_000, 50_000, 100_000, 200_000, 400_000, 800_000):
        took = seconds(n, args.repeats)
        ratio = f"{took / previous:5.2f}" if previous else "    -"
        print(f"{n:>10,}  {took:8.4f}  {ratio}")
        previous = took


if __name__ == "__main__":
    main()
