"""Benchmark: where a whole ``evalvalidity check`` process holds its memory, phase by phase.

Runs ``evalvalidity check`` in this process on one of bench/memory.py's benchmarks (Q queries of
5 ranked items and one gold item each, a pool of 1,000 items) with each phase wrapped: before a
phase the kernel's peak-RSS counter is reset (``/proc/self/clear_refs``, Linux), after it the
phase's own peak (``VmHWM``) and the resident memory it leaves (``VmRSS``) are printed. A phase's
peak above the level it started from is what it builds and frees; what it leaves above that
level is what it hands on. The phases are the functions ``check_benchmark`` calls, and the
other nulls' parts inside it (each part resets the counter, so the line of ``other_nulls``
itself shows the peak after its last part; the nulls' peak is the largest of their parts).

Usage::

    .venv/bin/python bench/phases.py --queries 1000000
"""

from __future__ import annotations

import argparse
import functools
import importlib
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from memory import OUT, POOL, generate  # noqa: E402  (the same benchmarks bench/memory.py times)

#: Where the phases are printed (the check's own output goes to /dev/null).
REPORT = sys.stdout

#: (module, function) of every phase, in the order ``check`` runs them.
PHASES = [
    ("evalvalidity.analysis.check", "load_inputs"),
    ("evalvalidity.analysis.check", "check_consistency"),
    ("evalvalidity.analysis.check", "build_benchmark"),
    ("evalvalidity.analysis.check", "compute_floor"),
    ("evalvalidity.analysis.check", "score_run"),
    ("evalvalidity.analysis.check", "aligned"),
    ("evalvalidity.analysis.check", "builtin_check1"),
    ("evalvalidity.analysis.check", "infer_pool_size"),
    ("evalvalidity.analysis.check", "headroom"),
    ("evalvalidity.analysis.check", "triage"),
    ("evalvalidity.analysis.check", "power"),
    ("evalvalidity.analysis.nulls", "code_tables"),
    ("evalvalidity.analysis.nulls", "query_independent"),
    ("evalvalidity.analysis.nulls", "judgement_holes"),
    ("evalvalidity.analysis.nulls", "tie_sensitivity"),
    ("evalvalidity.analysis.nulls", "self_hits"),
    ("evalvalidity.analysis.check", "other_nulls"),
    ("evalvalidity.analysis.check", "verdict"),
]


def status() -> dict[str, int]:
    """VmHWM and VmRSS of this process, in MiB."""
    found = {}
    with open("/proc/self/status") as handle:
        for line in handle:
            key, _, value = line.partition(":")
            if key in ("VmHWM", "VmRSS"):
                found[key] = int(value.split()[0]) // 1024
    return found


def reset_peak() -> None:
    """Start the kernel's peak-RSS counter afresh (Linux >= 4.0)."""
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")


def wrapped(name: str, function: Callable[..., Any], start: float) -> Callable[..., Any]:
    @functools.wraps(function)
    def phase(*args: Any, **kwargs: Any) -> Any:
        before = status()["VmRSS"]
        reset_peak()
        began = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            after = status()
            print(
                f"{time.perf_counter() - start:8.1f} {name:<22} {before:>10,} {after['VmHWM']:>9,}"
                f" {after['VmRSS']:>10,} {time.perf_counter() - began:>8.1f}",
                file=REPORT,
                flush=True,
            )
            reset_peak()

    return phase


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=1_000_000)
    args = parser.parse_args()
    run, qrels = generate(args.queries, OUT)
    start = time.perf_counter()
    for module_name, function_name in PHASES:
        module = importlib.import_module(module_name)
        setattr(
            module, function_name, wrapped(function_name, getattr(module, function_name), start)
        )
    import evalvalidity.cli as cli

    print(f"evalvalidity check on {args.queries:,} queries (MiB; s)")
    print(f"{'at s':>8} {'phase':<22} {'RSS before':>10} {'peak':>9} {'RSS after':>10} {'s':>8}")
    with tempfile.TemporaryDirectory() as workspace, open("/dev/null", "w") as sink:
        stdout, sys.stdout = sys.stdout, sink
        try:
            code = cli.main(
                [
                    "check", "--run", str(run), "--qrels", str(qrels), "--pool-size", str(POOL),
                    "--format", "json", "--workspace", workspace,
                ]
            )  # fmt: skip
        finally:
            sys.stdout = stdout
    print(f"exit {code}; RSS at the end {status()['VmRSS']:,} MiB")


if __name__ == "__main__":
    main()
