"""``evalvalidity live``: the live noise test (Check 2) on texts, from the command line."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from evalvalidity.cli._common import progress_printer

__all__ = ["register", "run"]

_GATES = {"broken": ("broken",), "warning": ("broken", "warning"), "never": ()}


def register(subparsers: Any) -> None:
    """Add the ``live`` subcommand."""
    parser = subparsers.add_parser(
        "live",
        help="live noise test: embed and retrieve the texts with real vectors and with noise",
        description="Check 2, live: embed the corpus and the queries, retrieve by exact cosine, "
        "then retrieve again with every vector replaced by noise of the same norms, and check "
        "both like `check` does (the model vs the noise run). Exit 0 when the verdict passes "
        "the gate, 1 when it fails it, 2 on bad usage or input.",
    )
    parser.add_argument(
        "--corpus",
        required=True,
        metavar="FILE",
        help="documents: JSONL {_id, title, text} (BEIR) or id<TAB>text lines",
    )
    parser.add_argument(
        "--queries", required=True, metavar="FILE", help="queries, in the same layouts"
    )
    parser.add_argument("--qrels", required=True, metavar="FILE", help="the judgements")
    parser.add_argument(
        "--embedder",
        default="hashing",
        metavar="NAME",
        help="hashing (numpy, the default), wordllama (pip install 'evalvalidity[live]'), "
        "sentence-transformers:MODEL (a model you have locally) or module:function (your own "
        "embed(texts) -> array)",
    )
    parser.add_argument(
        "--units",
        metavar="FILE",
        help="chunk_id -> doc_id map, when the corpus is chunks and the judgements name documents",
    )
    parser.add_argument("--metric", default="mrr@10", help="the metric (default mrr@10)")
    parser.add_argument("--k", type=int, default=100, help="items retrieved per query (100)")
    parser.add_argument(
        "--seeds", default="auto", metavar="auto|S", help="seeds of Check 1 (default auto)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the noise (default 0)")
    parser.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    parser.add_argument(
        "--fail-on",
        choices=tuple(_GATES),
        default="broken",
        help="verdicts that fail the gate: broken (default), warning or never",
    )
    parser.add_argument("--output", "-o", metavar="FILE", help="also write the output to FILE")
    parser.set_defaults(func=run)


def _seeds(value: str) -> int | str:
    from evalvalidity.errors import ParameterError

    if value == "auto":
        return value
    try:
        seeds = int(value)
    except ValueError:
        raise ParameterError(f"--seeds must be 'auto' or a whole number. Got {value!r}.") from None
    if seeds < 1:
        raise ParameterError(f"--seeds must be at least 1. Got {seeds}.")
    return seeds


def run(args: argparse.Namespace) -> int:
    """Embed, retrieve with real and noise vectors, check, print, and gate on the verdict."""
    from evalvalidity.analysis.live import noise_test, read_texts
    from evalvalidity.core.embed import load_embedder
    from evalvalidity.io.ingest import read_qrels, read_units
    from evalvalidity.report import records as report

    seeds = _seeds(args.seeds)
    progress = progress_printer(args.format == "text")
    if progress is None:  # not a terminal: each step once, one line each, on stderr
        said: set[str] = set()

        def progress(fraction: float, message: str) -> None:
            del fraction
            if message not in said:
                said.add(message)
                print(f"evalvalidity live: {message}", file=sys.stderr, flush=True)

    corpus = read_texts(args.corpus, "the corpus")
    queries = read_texts(args.queries, "the queries")
    qrels = read_qrels(args.qrels)
    units = read_units(args.units) if args.units else None
    progress(0.0, f"Loading the {args.embedder} embedder")
    embed = load_embedder(args.embedder)
    result = noise_test(
        embed,
        corpus,
        queries,
        qrels,
        metric=args.metric,
        k=args.k,
        units=units,
        seed=args.seed,
        seeds=seeds,
        progress=progress,
    )
    if args.format == "json":
        import json

        record = report.to_dict(result)
        record["embedder"] = args.embedder
        text = json.dumps(record, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    elif args.format == "markdown":
        text = f"Embedder: `{args.embedder}`\n\n" + report.to_markdown(result)
    else:
        text = f"embedder: {args.embedder}\n" + report.to_text(result)
    if args.output:
        from evalvalidity.cli._common import write_output_file

        write_output_file(args.output, text)
    sys.stdout.write(text)
    return 1 if result.verdict in _GATES[args.fail_on] else 0
