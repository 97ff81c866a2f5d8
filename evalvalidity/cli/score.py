"""``evalvalidity score``: trec_eval-compatible per-query scores, with floors beside them."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from evalvalidity.cli._common import (
    add_pool_arguments,
    add_workspace_argument,
    check_line_field,
    escape_text,
    load_table,
    pool_from_args,
    run_display_name,
)
from evalvalidity.core.metrics import parse_metrics
from evalvalidity.errors import ParameterError

__all__ = ["register", "run"]

_DEFAULT_METRICS = ("rr@10", "ndcg@10", "r@100", "ap")


def register(subparsers: Any) -> None:
    """Add the ``score`` subcommand."""
    parser = subparsers.add_parser(
        "score",
        help="score runs per query with trec_eval semantics (and show each metric's floor)",
        description="Score one or more runs against judgements, with trec_eval semantics by "
        "default (rank column ignored; score descending, then docid descending). With a pool "
        "declared, each metric's exact noise floor is shown beside its score.",
    )
    parser.add_argument(
        "--run",
        action="append",
        required=True,
        metavar="FILE",
        help="a run (file or workspace dataset); repeat for several",
    )
    parser.add_argument("--qrels", required=True, metavar="FILE", help="the judgements")
    parser.add_argument(
        "--metric",
        "-m",
        action="append",
        metavar="M",
        help="metric(s), e.g. mrr@10 or 'p@5,ndcg@10'; repeatable (default: "
        + ", ".join(_DEFAULT_METRICS)
        + ")",
    )
    parser.add_argument(
        "--per-query", "-q", action="store_true", help="print per-query values as well as means"
    )
    parser.add_argument(
        "--ties",
        choices=("trec_eval", "given", "average"),
        default="trec_eval",
        help="tie policy (default trec_eval)",
    )
    parser.add_argument(
        "--skip-unranked",
        action="store_true",
        help="leave out judged queries the run does not rank (trec_eval's "
        "default) instead of scoring them 0",
    )
    parser.add_argument("--format", choices=("text", "json", "trec"), default="text")
    add_pool_arguments(parser, required=False)
    add_workspace_argument(parser)
    # run() imports the readers and the scorer, then ends main()'s import window
    parser.set_defaults(func=run, ends_import_window=True)


def _floors(pool: Any, qrels: Any, metrics: tuple[Any, ...]) -> dict[str, float]:
    """Mean exact floor per metric over the judged queries."""
    from evalvalidity.analysis.pools import benchmark_floor

    return {m.name: float(np.mean(benchmark_floor(qrels, pool, m).expected)) for m in metrics}


def _run_source(spec: str, args: argparse.Namespace, scratch: Path) -> tuple[Any, str | None]:
    """The run to score and the memory limit to score it under (None: in memory).

    A run file whose text is past ``STREAM_THRESHOLD_BYTES`` (1 GiB, about 28 million lines)
    is not held in memory: it is checked and written in row groups to a Parquet file in
    ``scratch``, as the workspace stores it, and scored from there by DuckDB under the readers'
    memory limit, spilling past it. In memory a line costs about 100 bytes (its strings as
    Arrow, the ranking's columns), so 70 million lines would need 7 GB.
    """
    from evalvalidity.io.ingest import _read

    if os.path.isfile(spec):
        from evalvalidity.io.ingest._source import Source

        source = Source(spec)
        if _read.estimated_text_bytes(source) > _read.STREAM_THRESHOLD_BYTES:
            import pyarrow.dataset as pads

            from evalvalidity.io._database import DEFAULT_MEMORY_LIMIT

            path = scratch / "run.parquet"
            _read.ingest_to_parquet(
                source,
                path,
                kind="run",
                fmt=None,
                drop_bad_rows=False,
                progress=None,
                spill_directory=scratch / "spill",
            )
            from evalvalidity.io._verified import mark_unique_pairs

            dataset = pads.dataset(os.fspath(path), format="parquet")
            # The reader refused any repeated (qid, docid) and wrote the file where nothing
            # else writes: the scorer need not sort 70 million hashes again to find none.
            mark_unique_pairs(dataset)
            return dataset, DEFAULT_MEMORY_LIMIT
    return load_table(spec, "run", args), None


def run(args: argparse.Namespace) -> int:
    """Score the runs and print them."""
    from evalvalidity.cli import end_import_window
    from evalvalidity.io.ingest import _load  # noqa: F401  (the readers, which load_table uses)
    from evalvalidity.io.scoring import score_run

    end_import_window()

    metrics = parse_metrics(args.metric or list(_DEFAULT_METRICS))
    if args.format == "trec" and len(args.run) > 1:
        raise ParameterError("--format trec prints one run; give a single --run.")
    qrels = load_table(args.qrels, "qrels", args)
    pool = pool_from_args(args, required=False)
    units = pool.units if pool is not None and pool.kind == "units" else None
    unranked = "skip" if args.skip_unranked else "zero"
    results = []
    for spec in args.run:
        with tempfile.TemporaryDirectory(prefix="evalvalidity-score-") as scratch:
            table, memory_limit = _run_source(spec, args, Path(scratch))
            results.append(
                (
                    run_display_name(spec),
                    score_run(
                        table,
                        qrels,
                        metrics,
                        units=units,
                        ties=args.ties,
                        unranked=unranked,
                        run_name=run_display_name(spec),
                        qrels_name=run_display_name(args.qrels),
                        memory_limit=memory_limit,
                    ),
                )
            )
    floors = _floors(pool, qrels, metrics) if pool is not None else None
    out = sys.stdout
    if args.format == "trec":
        _, result = results[0]
        if args.per_query:  # refuse before the first line is written
            for qid in result.qids.tolist():
                check_line_field(str(qid), "query id", "--format trec")
        for metric in metrics:
            label = metric.report_name
            if args.per_query:
                for qid, value in zip(
                    result.qids.tolist(), result.values[metric.name].tolist(), strict=True
                ):
                    out.write(f"{label:<22}\t{qid}\t{value:.4f}\n")
            out.write(f"{label:<22}\tall\t{result.means[metric.name]:.4f}\n")
        return 0
    if args.format == "json":
        record = {
            "metrics": [m.name for m in metrics],
            "ties": args.ties,
            "unranked": unranked,
            "floors": floors,
            "runs": [
                {
                    "run": name,
                    "n_queries": result.n_queries,
                    "means": dict(result.means),
                    "unranked_queries": list(result.unranked_qids),
                    "unjudged_queries": list(result.unjudged_qids),
                    **(
                        {
                            "per_query": {
                                m.name: dict(
                                    zip(
                                        result.qids.tolist(),
                                        result.values[m.name].tolist(),
                                        strict=True,
                                    )
                                )
                                for m in metrics
                            }
                        }
                        if args.per_query
                        else {}
                    ),
                }
                for name, result in results
            ],
        }
        import json  # only this format needs it

        out.write(json.dumps(record, indent=2) + "\n")
        return 0
    results = [(escape_text(name), result) for name, result in results]
    width = max(12, *(len(name) for name, _ in results))
    header = f"{'run':<{width}}  {'metric':<14} {'score':>8}"
    if floors is not None:
        header += f" {'floor':>10} {'score/floor':>12}"
    out.write(header + "\n")
    for name, result in results:
        for metric in metrics:
            mean = result.means[metric.name]
            line = f"{name:<{width}}  {metric.name:<14} {mean:>8.4f}"
            if floors is not None:
                floor = floors[metric.name]
                ratio = f"{mean / floor:>11.1f}×" if floor > 0 else f"{'–':>12}"
                line += f" {floor:>10.4g} {ratio}"
            out.write(line + "\n")
        if args.per_query:
            for i, qid in enumerate(result.qids.tolist()):
                values = "  ".join(f"{m.name}={result.values[m.name][i]:.4f}" for m in metrics)
                out.write(f"    {escape_text(qid)}  {values}\n")
        notes = []
        if result.unranked_qids:
            verb = "left out" if unranked == "skip" else "scored 0"
            notes.append(f"{len(result.unranked_qids):,} judged queries have no ranking ({verb})")
        if result.unjudged_qids:
            notes.append(
                f"{len(result.unjudged_qids):,} ranked queries have no judgements (ignored)"
            )
        for note in notes:
            out.write(f"{'':<{width}}  note: {note}\n")
    return 0
