"""The write-up's three benchmarks, generated deterministically.

The public write-up this product grows from tells three stories; each is rebuilt here as the
files a team would export, so that the checks, the tests and the demo workspace share them:

``toy``
    A clean corpus of 200 items and 20 queries (1 or 2 gold items each), a model run that
    ranks gold near the top, and a uniformly random noise run. Healthy.
``pool8``
    The same kind of queries, but each ranked within a candidate pool of only 8 items of which
    5 or 6 are gold: a random ranker scores about 80 % of a perfect one. The data is honest
    (Check 1 passes) and the benchmark is worthless (no headroom).
``unitsbug``
    1,052 chunks over 218 files, 28 queries (7 with 2–3 gold files, gold drawn size-biased:
    each query was written from a sampled chunk). The team's harness ranks chunks and
    deduplicates them to files by first occurrence; its per-query output on random scores is
    included (``harness.csv``, 500 seeds). Compared with an analytic over 1,052 chunks it shows
    a ratio of about 5–6×; with the units map declared it matches.

Everything is drawn from ``numpy.random.default_rng(seed)``; the same seed writes byte-identical
files. ``python -m evalvalidity.analysis.scenarios OUT_DIR`` writes all three.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["SCENARIOS", "Scenario", "write_all", "write_scenario"]


@dataclass(frozen=True)
class Scenario:
    """A generated benchmark: its name, what it shows and how to check it from the CLI."""

    name: str
    title: str
    summary: str
    check_args: tuple[str, ...]


SCENARIOS: dict[str, Scenario] = {
    "toy": Scenario(
        "toy",
        "Healthy toy benchmark",
        "200 items, 20 queries, a model run and a noise run: healthy.",
        (
            "--run",
            "model.trec",
            "--qrels",
            "qrels.txt",
            "--noise-run",
            "noise.trec",
            "--pool-size",
            "200",
            "--seeds",
            "20",
        ),
    ),
    "pool8": Scenario(
        "pool8",
        "A pool of 8: honest and worthless",
        "Each query ranked within 8 candidates, 5–6 of them gold: Check 1 passes, "
        "and a random ranker scores ~80 % of a perfect one.",
        (
            "--run",
            "model.trec",
            "--qrels",
            "qrels.txt",
            "--noise-run",
            "noise.trec",
            "--pools",
            "pools.tsv",
        ),
    ),
    "unitsbug": Scenario(
        "unitsbug",
        "The units bug: chunks counted, files scored",
        "1,052 chunks over 218 files, 28 queries; the harness deduplicates chunks to files.",
        (
            "--run",
            "model.trec",
            "--qrels",
            "qrels.txt",
            "--units",
            "units.tsv",
            "--harness-output",
            "harness.csv",
        ),
    ),
}


def _write_trec_run(
    path: Path, qids: list[str], rankings: list[list[str]], scores: list[np.ndarray], tag: str
) -> None:
    lines: list[str] = []
    for qid, docs, sc in zip(qids, rankings, scores, strict=True):
        lines.extend(
            f"{qid} Q0 {doc} {rank} {value:.6f} {tag}"
            for rank, (doc, value) in enumerate(zip(docs, sc, strict=True), start=1)
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _write_qrels(path: Path, gold: dict[str, list[str]]) -> None:
    lines = [f"{qid} 0 {doc} 1" for qid, docs in gold.items() for doc in docs]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _model_scores(
    rng: np.random.Generator, n: int, gold_mask: np.ndarray, separation: float
) -> np.ndarray:
    """Draw a decent model's scores: gold items shifted by ``separation`` standard deviations."""
    return rng.normal(size=n) + separation * gold_mask


def _ranked(items: np.ndarray, scores: np.ndarray, depth: int) -> tuple[list[str], np.ndarray]:
    order = np.argsort(-scores, kind="stable")[:depth]
    return [str(items[i]) for i in order], scores[order]


def _toy(out: Path, rng: np.random.Generator) -> None:
    items = np.array([f"d{i:03d}" for i in range(200)])
    qids = [f"q{j:02d}" for j in range(1, 21)]
    gold = {
        q: [str(x) for x in rng.choice(items, size=int(rng.integers(1, 3)), replace=False)]
        for q in qids
    }
    model_docs, model_scores, noise_docs, noise_scores = [], [], [], []
    for q in qids:
        mask = np.isin(items, gold[q]).astype(float)
        d, s = _ranked(items, _model_scores(rng, len(items), mask, 3.0), 100)
        model_docs.append(d)
        model_scores.append(s)
        d, s = _ranked(items, rng.random(len(items)), 100)
        noise_docs.append(d)
        noise_scores.append(s)
    _write_qrels(out / "qrels.txt", gold)
    _write_trec_run(out / "model.trec", qids, model_docs, model_scores, "model")
    _write_trec_run(out / "noise.trec", qids, noise_docs, noise_scores, "noise")


def _pool8(out: Path, rng: np.random.Generator) -> None:
    qids = [f"q{j:02d}" for j in range(1, 21)]
    gold: dict[str, list[str]] = {}
    model_docs, model_scores, noise_docs, noise_scores = [], [], [], []
    for q in qids:
        items = np.array([f"{q}-c{i}" for i in range(8)])
        g = 5 if rng.random() < 0.7 else 6
        gold[q] = [str(x) for x in rng.choice(items, size=g, replace=False)]
        mask = np.isin(items, gold[q]).astype(float)
        d, s = _ranked(items, _model_scores(rng, 8, mask, 1.0), 8)
        model_docs.append(d)
        model_scores.append(s)
        d, s = _ranked(items, rng.random(8), 8)
        noise_docs.append(d)
        noise_scores.append(s)
    _write_qrels(out / "qrels.txt", gold)
    (out / "pools.tsv").write_text(
        "qid\tpool_size\n" + "".join(f"{q}\t8\n" for q in qids), encoding="utf-8"
    )
    _write_trec_run(out / "model.trec", qids, model_docs, model_scores, "model")
    _write_trec_run(out / "noise.trec", qids, noise_docs, noise_scores, "noise")


def _harness_rr_at_k(
    chunk_doc: np.ndarray, chunk_scores: np.ndarray, gold_docs: set[int], k: int
) -> float:
    """Score like the team's own harness: rank chunks, keep each file's first, MRR@k."""
    order = np.argsort(-chunk_scores, kind="stable")
    _, first = np.unique(chunk_doc[order], return_index=True)
    files_in_order = chunk_doc[order][np.sort(first)]
    for position, doc in enumerate(files_in_order[:k], start=1):
        if int(doc) in gold_docs:
            return 1.0 / position
    return 0.0


def _unitsbug(out: Path, rng: np.random.Generator) -> None:
    n_files, n_chunks = 218, 1052
    # Every file has at least one chunk; the rest fall on files uniformly (multinomial counts).
    counts = 1 + rng.multinomial(n_chunks - n_files, np.full(n_files, 1.0 / n_files))
    chunk_doc = np.repeat(np.arange(n_files), counts)
    chunk_ids = np.array(
        [f"src/file{d:03d}.py#{j}" for d, c in enumerate(counts) for j in range(c)]
    )
    qids = [f"q{j:02d}" for j in range(1, 29)]
    n_gold = [1] * 21 + [2, 2, 2, 3, 3, 2, 3]
    gold_files: dict[str, list[int]] = {}
    for q, g in zip(qids, n_gold, strict=True):
        chosen: list[int] = []
        while len(chosen) < g:  # size-biased: a query is written from a sampled chunk
            doc = int(chunk_doc[rng.integers(n_chunks)])
            if doc not in chosen:
                chosen.append(doc)
        gold_files[q] = chosen
    (out / "units.tsv").write_text(
        "chunk_id\tdoc_id\n"
        + "".join(f"{c}\tsrc/file{d:03d}.py\n" for c, d in zip(chunk_ids, chunk_doc, strict=True)),
        encoding="utf-8",
    )
    _write_qrels(
        out / "qrels.txt", {q: [f"src/file{d:03d}.py" for d in g] for q, g in gold_files.items()}
    )
    model_docs, model_scores = [], []
    for q in qids:
        mask = np.isin(chunk_doc, gold_files[q]).astype(float)
        d, s = _ranked(
            chunk_ids, _model_scores(rng, n_chunks, mask * rng.random(n_chunks), 2.4), 100
        )
        model_docs.append(d)
        model_scores.append(s)
    _write_trec_run(out / "model.trec", qids, model_docs, model_scores, "model")
    rows = ["seed,qid,value"]
    for seed in range(500):
        for q in qids:
            value = _harness_rr_at_k(chunk_doc, rng.random(n_chunks), set(gold_files[q]), 10)
            rows.append(f"{seed},{q},{value:.6f}")
    (out / "harness.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")


_WRITERS: dict[str, Callable[[Path, np.random.Generator], None]] = {
    "toy": _toy,
    "pool8": _pool8,
    "unitsbug": _unitsbug,
}


def write_scenario(name: str, out_dir: str | Path, *, seed: int = 20261130) -> Path:
    """Write one scenario's files into ``out_dir/name`` and return that folder.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     folder = write_scenario("toy", tmp)
    ...     print(folder.name, sorted(p.name for p in folder.iterdir()))
    toy ['model.trec', 'noise.trec', 'qrels.txt']
    """
    if name not in _WRITERS:
        from evalvalidity.errors import ParameterError

        raise ParameterError(f"Unknown scenario {name!r}; expected one of {', '.join(_WRITERS)}.")
    folder = Path(out_dir) / name
    folder.mkdir(parents=True, exist_ok=True)
    _WRITERS[name](folder, np.random.default_rng([seed, list(_WRITERS).index(name)]))
    return folder


def write_all(out_dir: str | Path, *, seed: int = 20261130) -> list[Path]:
    """Write every scenario under ``out_dir``.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     print([p.name for p in write_all(tmp)])
    ['toy', 'pool8', 'unitsbug']
    """
    return [write_scenario(name, out_dir, seed=seed) for name in _WRITERS]


if __name__ == "__main__":  # pragma: no cover
    target = sys.argv[1] if len(sys.argv) > 1 else "data/writeup"
    for folder in write_all(target):
        print(folder)
