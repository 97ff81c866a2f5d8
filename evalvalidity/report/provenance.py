"""Where a report's numbers come from: each dataset of the check, by role, with its content hash.

:func:`dataset_provenance` lists, for every dataset a check's plan names (the run, the
judgements, the pool, the noise run, the harness output, each run compared, the texts): its
name, its file name, the SHA-256 of its content and its number of rows. A file is hashed as it
is on disk now (or the plan's hash is taken when the plan pins one); a workspace dataset
gives the hash and rows of its manifest; an in-memory table is hashed through its Arrow IPC
stream (the hash of the table's data, not of any file).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

    from evalvalidity.analysis.plan import CheckInputs
    from evalvalidity.analysis.results import CheckResult

__all__ = ["DatasetProvenance", "dataset_provenance", "table_sha256"]


@dataclass(frozen=True)
class DatasetProvenance:
    """One dataset of a check.

    Attributes
    ----------
    role : str
        ``run``, ``qrels``, ``pool``, ``noise_run``, ``harness_output``, ``compare:<name>``, ...
    source : {"file", "dataset", "table"}
    name : str
        The file path, the workspace dataset's name or the in-memory table's label.
    file_name : str or None
        The file's name (a dataset's original upload name); None for a table.
    sha256 : str or None
        Of the file's bytes, the dataset's original bytes or the table's Arrow IPC stream;
        None when unknown (a file gone, a table not given).
    rows : int or None
        Rows read; None when unknown.
    """

    role: str
    source: str
    name: str
    file_name: str | None
    sha256: str | None
    rows: int | None


def table_sha256(table: pa.Table) -> str:
    """SHA-256 of a table's Arrow IPC stream: its schema and data.

    Examples
    --------
    >>> import pyarrow as pa
    >>> one = table_sha256(pa.table({"qid": ["1"], "docid": ["a"], "rel": [1]}))
    >>> len(one), one == table_sha256(pa.table({"qid": ["1"], "docid": ["a"], "rel": [1]}))
    (64, True)
    """
    import pyarrow as pa

    digest = hashlib.sha256()
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    digest.update(sink.getvalue().to_pybytes())
    return digest.hexdigest()


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 22):
            digest.update(chunk)
    return digest.hexdigest()


def _input_table(inputs: CheckInputs | None, role: str) -> pa.Table | None:
    if inputs is None:
        return None
    if role.startswith("compare:"):
        return inputs.compare.get(role.split(":", 1)[1])
    if role == "pool":
        pool = inputs.pool
        return (
            pool.pools
            if pool.pools is not None
            else (pool.candidates if pool.candidates is not None else pool.units)
        )
    table: pa.Table | None = getattr(inputs, role, None)
    return table


def dataset_provenance(
    result: CheckResult,
    inputs: CheckInputs | None = None,
    *,
    workspace: Any = None,
    owner: str | None = None,
) -> tuple[DatasetProvenance, ...]:
    """Every dataset of ``result``'s plan, in the plan's order of roles.

    Parameters
    ----------
    result : CheckResult
        A check; one without a plan has no datasets to list.
    inputs : CheckInputs, optional
        The tables the check ran on: their rows, and the hash of in-memory tables.
    workspace : Workspace, optional
        Where the plan's workspace datasets are described (their upload name, hash and rows).
    owner : str, optional
        Whose datasets those are in ``workspace``.

    Returns
    -------
    tuple of DatasetProvenance

    Examples
    --------
    >>> import pyarrow as pa
    >>> from evalvalidity.analysis.check import PoolSpec, check_tables
    >>> from evalvalidity.analysis.plan import CheckInputs
    >>> qrels = pa.table({"qid": ["1", "2"], "docid": ["a", "b"], "rel": [1, 1]})
    >>> run = pa.table({"qid": ["1", "2"], "docid": ["a", "c"], "score": [1.0, 1.0]})
    >>> result = check_tables(run, qrels, pool=PoolSpec(corpus_size=20), seeds=4)
    >>> inputs = CheckInputs(qrels=qrels, pool=PoolSpec(corpus_size=20), run=run)
    >>> [(d.role, d.source, d.rows, len(d.sha256)) for d in dataset_provenance(result, inputs)]
    [('run', 'table', 2, 64), ('qrels', 'table', 2, 64)]
    >>> [d.sha256 for d in dataset_provenance(result)]
    [None, None]
    """
    plan = result.plan
    if plan is None:
        return ()
    out: list[DatasetProvenance] = []
    for role, ref in plan.refs.items():
        table = _input_table(inputs, role)
        rows = table.num_rows if table is not None else None
        sha = ref.sha256
        file_name: str | None = None
        if ref.source == "file":
            path = Path(ref.name)
            file_name = path.name
            if sha is None and path.is_file():
                sha = _file_sha256(path)
        elif ref.source == "dataset":
            info = workspace.find(ref.name, owner=owner) if workspace is not None else None
            if info is not None:
                file_name, sha = info.source_name, sha or info.sha256
                rows = info.n_rows if rows is None else rows
        elif table is not None:
            sha = table_sha256(table)
        out.append(DatasetProvenance(role, ref.source, ref.name, file_name, sha, rows))
    return tuple(out)
