"""The same inputs and seed give the same bytes: a JSON report, a read table, a dataset file.

Checked within one process and across processes whose ``PYTHONHASHSEED`` differs (set and dict
order of strings changes with it), on the three write-up benchmarks (a corpus, per-query pools
with a noise run, a units map with harness output) and one of hostile IDs.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT

#: Prints, for each case, the SHA-256 of ``report.to_json`` and of the read tables, as JSON.
CHILD = """
import hashlib, json, sys
from pathlib import Path
import pyarrow as pa
from evalvalidity.report import records as report
from evalvalidity.analysis.check import PoolSpec, check_tables
from evalvalidity.io.ingest import read, read_harness, read_pools, read_qrels, read_run, read_units

root, seed = Path(sys.argv[1]), int(sys.argv[2])
w = root / "data" / "writeup"
def digest(text):
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()
def table_digest(table):
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return digest(sink.getvalue().to_pybytes())
out = {}
cases = {
    "toy": lambda: check_tables(read_run(w / "toy/model.trec"), read_qrels(w / "toy/qrels.txt"),
        pool=PoolSpec(corpus_size=200), noise_run=read_run(w / "toy/noise.trec"), seeds=20,
        seed=seed),
    "pool8": lambda: check_tables(read_run(w / "pool8/model.trec"),
        read_qrels(w / "pool8/qrels.txt"), pool=PoolSpec(pools=read_pools(w / "pool8/pools.tsv")),
        noise_run=read_run(w / "pool8/noise.trec"), seeds=20, seed=seed),
    "unitsbug": lambda: check_tables(read_run(w / "unitsbug/model.trec"),
        read_qrels(w / "unitsbug/qrels.txt"),
        pool=PoolSpec(units=read_units(w / "unitsbug/units.tsv")),
        harness_output=read_harness(w / "unitsbug/harness.csv"), seed=seed),
}
for name, make in cases.items():
    out[name] = digest(report.to_json(make()))
kinds = {"model.trec": "run", "noise.trec": "run", "qrels.txt": "qrels", "pools.tsv": "pools",
         "units.tsv": "units", "harness.csv": "harness"}
for path in sorted(w.rglob("*")):
    if path.is_file():
        out[str(path.relative_to(w))] = table_digest(read(path, kind=kinds[path.name]).table)
print(json.dumps(out, sort_keys=True))
"""


def digests(seed: int, hash_seeds: tuple[str, ...]) -> list[dict[str, str]]:
    """The child's digests from one process per hash seed, run side by side."""
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, str(ROOT), str(seed)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": h},
        )
        for h in hash_seeds
    ]
    out = []
    for child in children:
        stdout, stderr = child.communicate(timeout=300)
        assert child.returncode == 0, stderr[-3000:]
        out.append(json.loads(stdout))
    return out


def test_reports_and_tables_are_byte_identical_across_processes():
    first, second = digests(0, ("1", "2"))
    assert first == second
    assert len(first) == 3 + 11  # three reports, eleven files


def test_the_seed_matters():
    from evalvalidity.analysis.check import PoolSpec, check_tables
    from evalvalidity.io.ingest import read_qrels, read_run
    from evalvalidity.report import records as report

    toy = ROOT / "data" / "writeup" / "toy"
    run, qrels = read_run(toy / "model.trec"), read_qrels(toy / "qrels.txt")
    texts = [
        report.to_json(
            check_tables(run, qrels, pool=PoolSpec(corpus_size=200), seeds=20, seed=seed)
        )
        for seed in (0, 0, 1)
    ]
    assert texts[0] == texts[1] != texts[2]


def test_the_same_check_twice_in_one_process_gives_the_same_json():
    from test_injection import hostile_benchmark

    from evalvalidity.analysis.check import check_tables
    from evalvalidity.report import records as report

    texts = []
    for _ in range(2):
        run, noise, qrels, pool = hostile_benchmark()
        result = check_tables(run, qrels, pool=pool, noise_run=noise, seeds=10, seed=5)
        texts.append(report.to_json(result))
        texts.append(report.to_markdown(result) + report.to_text(result))
    assert texts[0] == texts[2] and texts[1] == texts[3]


@pytest.mark.parametrize("stream", [False, True], ids=["in-memory", "streamed"])
def test_a_dataset_file_is_the_same_bytes_every_time(tmp_path, monkeypatch, stream):
    from evalvalidity.io.ingest import _read
    from evalvalidity.io.workspace import Workspace

    if stream:
        monkeypatch.setattr(_read, "STREAM_THRESHOLD_BYTES", 0)
    source = ROOT / "data" / "writeup" / "pool8" / "model.trec"
    files = []
    for i in range(2):
        ws = Workspace(tmp_path / f"ws{i}")
        info = ws.add(source)
        files.append((tmp_path / f"ws{i}" / "data" / f"{info.id}.parquet").read_bytes())
    assert hashlib.sha256(files[0]).digest() == hashlib.sha256(files[1]).digest()


def test_a_graded_metric_of_a_large_run_gives_the_same_bits_every_time():
    # nDCG of a run scored through DuckDB's SQL (past the small-run path: Cranfield's dense
    # run, chunks deduplicated to documents): the hits come back as DuckDB's threads finish,
    # and a sum in their order differed in its last bit from one check to the next
    from conftest import CRANFIELD

    from evalvalidity.analysis.check import PoolSpec, check_tables
    from evalvalidity.io.ingest import read_qrels, read_run, read_units
    from evalvalidity.report import records as report

    run, qrels = read_run(CRANFIELD / "run_dense.trec"), read_qrels(CRANFIELD / "qrels.txt")
    pool = PoolSpec(units=read_units(CRANFIELD / "chunks.tsv"))
    texts = {
        report.to_json(check_tables(run, qrels, pool=pool, metric="ndcg@10", seeds=5, seed=3))
        for _ in range(4)
    }
    assert len(texts) == 1
