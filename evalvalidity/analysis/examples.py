"""The bundled demo workspace: the write-up's three benchmarks and Cranfield, ready to check.

:func:`build_demo` ingests the files of ``data/writeup/{toy,pool8,unitsbug}`` and
``data/cranfield`` into a workspace as named, shared datasets (``toy.model``, ``toy.qrels``,
``cranfield.run_dense``, ...) and records, beside them, each example's check configuration
(:class:`Preset`) in ``presets.json`` at the workspace's root, so that the dashboard opens on a
ready example. Dataset names use a dot between the example and the file: workspace names are
never paths, so they hold no ``/``.

When the package is installed without the repository's ``data/`` folder, the write-up's
benchmarks are generated again (:mod:`evalvalidity.analysis.scenarios` is deterministic) and Cranfield,
which cannot be generated, is left out.

Examples
--------
>>> import tempfile
>>> with tempfile.TemporaryDirectory() as root:
...     added = build_demo(root, include=("toy",))
...     [info.name for info in added], [p.name for p in load_presets(root)]
(['toy.model', 'toy.noise', 'toy.qrels'], ['toy'])
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from evalvalidity.errors import ParameterError
from evalvalidity.io.workspace import DatasetInfo, Workspace

__all__ = [
    "DEMO_FILES",
    "PRESETS",
    "PRESETS_FILE",
    "DemoFile",
    "Preset",
    "build_demo",
    "data_root",
    "is_built",
    "load_presets",
    "save_presets",
]

#: The file in a workspace's root that records the check configurations.
PRESETS_FILE: Final = "presets.json"

Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class DemoFile:
    """One bundled file and the dataset it becomes."""

    example: str  # "toy", "pool8", "unitsbug" or "cranfield"
    file: str
    kind: str
    name: str


@dataclass(frozen=True)
class Preset:
    """A check configuration: which datasets play which part, and the check's parameters.

    Attributes
    ----------
    name : str
        Identifier (``toy``, ``cranfield-hybrid``, ...).
    title, summary : str
        What the example shows, for the dashboard.
    run, qrels : str
        Dataset names of the model's run and of the judgements.
    pool_kind : str
        ``corpus``, ``pools``, ``candidates`` or ``units``.
    pool : str or int
        The corpus size (``corpus``) or the dataset name of the pool sizes, candidate lists or
        units map.
    analytic_unit : str
        With a units map: ``documents`` or ``chunks`` (the units bug's analytic).
    noise_run, harness : str or None
        Dataset names of the noise run (Check 2) and of the harness's output (Check 1).
    compare : tuple of str
        More runs to compare with ``run``.
    metric : str
        Canonical metric spelling, e.g. ``rr@10``.
    seeds : int or "auto"
        Seeds of the built-in Check 1.
    ties : str
        The scorer's tie policy: ``trec_eval``, ``given`` or ``average``.
    """

    name: str
    title: str
    summary: str
    run: str | None
    qrels: str
    pool_kind: str
    pool: str | int
    analytic_unit: str = "documents"
    noise_run: str | None = None
    harness: str | None = None
    compare: tuple[str, ...] = ()
    metric: str = "rr@10"
    seeds: int | str = "auto"
    ties: str = "trec_eval"

    def __post_init__(self) -> None:
        if self.pool_kind not in ("corpus", "pools", "candidates", "units"):
            raise ParameterError(
                "The 'pool_kind' of a Preset must be corpus, pools, candidates or units. Got "
                f"{self.pool_kind!r} instead."
            )
        if self.pool_kind == "corpus" and (
            isinstance(self.pool, bool) or not isinstance(self.pool, int) or self.pool < 1
        ):
            raise ParameterError(
                f"A Preset with a corpus pool needs its size as an int >= 1. Got {self.pool!r}."
            )
        if self.pool_kind != "corpus" and not isinstance(self.pool, str):
            raise ParameterError(
                f"A Preset with a {self.pool_kind} pool needs a dataset name. Got {self.pool!r}."
            )

    def datasets(self) -> tuple[str, ...]:
        """Every dataset name the configuration uses."""
        names = [self.run, self.qrels, self.noise_run, self.harness, *self.compare]
        if self.pool_kind != "corpus":
            names.append(str(self.pool))
        return tuple(n for n in names if n is not None)

    def to_json(self) -> dict[str, Any]:
        """The record written to ``presets.json``."""
        record = dataclasses.asdict(self)
        record["compare"] = list(self.compare)
        return record

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> Preset:
        """Inverse of :meth:`to_json`.

        Raises
        ------
        ParameterError
            When the record does not describe a preset.
        """
        if not isinstance(record, dict):
            raise ParameterError(f"A preset record must be an object. Got {record!r}.")
        fields = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in record.items() if k in fields}
        values["compare"] = tuple(values.get("compare", ()))
        try:
            return cls(**values)
        except TypeError as exc:
            raise ParameterError(f"Incomplete preset record {record!r}: {exc}.") from exc


def _files(example: str, pairs: Iterable[tuple[str, str]]) -> tuple[DemoFile, ...]:
    out = []
    for file, kind in pairs:
        stem = file.split(".", 1)[0]
        out.append(DemoFile(example, file, kind, f"{example}.{stem}"))
    return tuple(out)


#: Every bundled file, in the order they are added.
DEMO_FILES: Final[tuple[DemoFile, ...]] = (
    *_files("toy", (("model.trec", "run"), ("noise.trec", "run"), ("qrels.txt", "qrels"))),
    *_files(
        "pool8",
        (
            ("model.trec", "run"),
            ("noise.trec", "run"),
            ("qrels.txt", "qrels"),
            ("pools.tsv", "pools"),
        ),
    ),
    *_files(
        "unitsbug",
        (
            ("model.trec", "run"),
            ("qrels.txt", "qrels"),
            ("units.tsv", "units"),
            ("harness.csv", "harness"),
        ),
    ),
    *_files(
        "cranfield",
        (
            ("qrels.txt", "qrels"),
            ("chunks.tsv", "units"),
            ("run_dense.trec", "run"),
            ("run_bm25.trec", "run"),
            ("run_noise.trec", "run"),
            ("run_hybrid_noise.trec", "run"),
        ),
    ),
)

#: The examples' check configurations, the first being the one the dashboard opens on.
PRESETS: Final[tuple[Preset, ...]] = (
    Preset(
        "cranfield",
        "Cranfield: dense retrieval against its noise run",
        "1,400 abstracts chunked into 6,181 pieces, 225 queries, MiniLM embeddings; the "
        "noise run replaces every vector with noise. Healthy.",
        run="cranfield.run_dense",
        qrels="cranfield.qrels",
        pool_kind="units",
        pool="cranfield.chunks",
        noise_run="cranfield.run_noise",
        compare=("cranfield.run_bm25",),
    ),
    Preset(
        "cranfield-hybrid",
        "Cranfield: the hybrid trap",
        "The same, but the noise run is a hybrid pipeline with BM25 left on: BM25 carries "
        "the score, and the leak is flagged.",
        run="cranfield.run_dense",
        qrels="cranfield.qrels",
        pool_kind="units",
        pool="cranfield.chunks",
        noise_run="cranfield.run_hybrid_noise",
    ),
    Preset(
        "toy",
        "Healthy toy benchmark",
        "200 items, 20 queries, a model run and a noise run: healthy.",
        run="toy.model",
        qrels="toy.qrels",
        pool_kind="corpus",
        pool=200,
        noise_run="toy.noise",
        seeds=20,
    ),
    Preset(
        "pool8",
        "A pool of 8: honest and worthless",
        "Each query ranked within 8 candidates, 5–6 of them gold: Check 1 passes, and a "
        "random ranker scores about 80 % of a perfect one.",
        run="pool8.model",
        qrels="pool8.qrels",
        pool_kind="pools",
        pool="pool8.pools",
        noise_run="pool8.noise",
    ),
    Preset(
        "unitsbug",
        "The units bug: chunks counted, files scored",
        "1,052 chunks over 218 files; the harness deduplicates chunks to files but the "
        "analytic counts chunks: Check 1 fails, and inferred N points at the files.",
        run="unitsbug.model",
        qrels="unitsbug.qrels",
        pool_kind="units",
        pool="unitsbug.units",
        analytic_unit="chunks",
        harness="unitsbug.harness",
    ),
    Preset(
        "unitsbug-fixed",
        "The units bug, fixed",
        "The same harness output against the analytic that deduplicates too: Check 1 passes.",
        run="unitsbug.model",
        qrels="unitsbug.qrels",
        pool_kind="units",
        pool="unitsbug.units",
        harness="unitsbug.harness",
    ),
)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 22):
            digest.update(chunk)
    return digest.hexdigest()


def data_root() -> Path | None:
    """The repository's ``data`` folder next to the package (editable installs), or None."""
    import evalvalidity

    candidate = Path(evalvalidity.__file__).resolve().parent.parent / "data"
    return candidate if (candidate / "writeup").is_dir() else None


def _presets_path(workspace: Workspace) -> Path:
    return workspace.path / PRESETS_FILE


def load_presets(workspace: Workspace | str | os.PathLike[str]) -> list[Preset]:
    """The check configurations recorded in a workspace (empty when none is).

    Raises
    ------
    ParameterError
        When ``presets.json`` exists but cannot be read.
    """
    ws = workspace if isinstance(workspace, Workspace) else Workspace(workspace)
    path = _presets_path(ws)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    try:
        records = json.loads(text)["presets"]
    except (ValueError, KeyError, TypeError) as exc:
        raise ParameterError(f"Cannot read the presets {os.fspath(path)!r}: {exc}.") from exc
    if not isinstance(records, list):
        raise ParameterError(f"Cannot read the presets {os.fspath(path)!r}: not a list.")
    return [Preset.from_json(r) for r in records]


def save_presets(workspace: Workspace | str | os.PathLike[str], presets: Sequence[Preset]) -> Path:
    """Record check configurations in a workspace, replacing the file atomically.

    Returns
    -------
    pathlib.Path
        The file written.
    """
    ws = workspace if isinstance(workspace, Workspace) else Workspace(workspace)
    path = _presets_path(ws)
    temporary = ws.path / "tmp" / f"presets.{uuid.uuid4().hex}.json"
    temporary.write_text(
        json.dumps({"presets": [p.to_json() for p in presets]}, indent=1), encoding="utf-8"
    )
    os.replace(temporary, path)
    return path


def is_built(workspace: Workspace | str | os.PathLike[str]) -> bool:
    """True when the workspace records presets and holds every dataset they name."""
    ws = workspace if isinstance(workspace, Workspace) else Workspace(workspace)
    presets = load_presets(ws)
    if not presets:
        return False
    names = {d.name for d in ws.list(all_owners=True)}
    return all(set(p.datasets()) <= names for p in presets)


def build_demo(
    workspace: Workspace | str | os.PathLike[str],
    *,
    data_dir: str | os.PathLike[str] | None = None,
    include: Sequence[str] | None = None,
    progress: Progress | None = None,
) -> list[DatasetInfo]:
    """Add the demo datasets to a workspace and record the examples' check configurations.

    Idempotent: a dataset that already exists with the same content is kept as it is.

    Parameters
    ----------
    workspace : Workspace or path
        Where to add the datasets (created if missing).
    data_dir : path, optional
        A folder holding ``writeup/{toy,pool8,unitsbug}`` and ``cranfield``; default
        :func:`data_root`, else the write-up's benchmarks are generated and Cranfield skipped.
    include : sequence of str, optional
        Only these examples (``toy``, ``pool8``, ``unitsbug``, ``cranfield``); default all.
    progress : callable, optional
        Called with (fraction done, message).

    Returns
    -------
    list of DatasetInfo
        The datasets added (not those that were already there).

    Raises
    ------
    ParameterError
        When a demo name is taken by a dataset with other content, or ``include`` names an
        unknown example.
    """
    ws = workspace if isinstance(workspace, Workspace) else Workspace(workspace)
    examples = ("toy", "pool8", "unitsbug", "cranfield")
    chosen = tuple(include) if include is not None else examples
    unknown = [e for e in chosen if e not in examples]
    if unknown:
        raise ParameterError(
            f"Unknown demo example {unknown[0]!r}; expected some of {', '.join(examples)}."
        )
    root = Path(data_dir) if data_dir is not None else data_root()
    with tempfile.TemporaryDirectory(prefix="evalvalidity-demo-") as scratch:
        if root is None or not (root / "writeup").is_dir():
            from evalvalidity.analysis.scenarios import write_all

            write_all(Path(scratch) / "writeup")
            root = Path(scratch)
        folders = {e: root / "writeup" / e for e in ("toy", "pool8", "unitsbug")}
        folders["cranfield"] = root / "cranfield"
        files = [
            f for f in DEMO_FILES if f.example in chosen and (folders[f.example] / f.file).is_file()
        ]
        added: list[DatasetInfo] = []
        existing = {d.name: d for d in ws.list(all_owners=True)}
        for i, demo_file in enumerate(files):
            if progress is not None:
                progress(i / max(len(files), 1), f"adding {demo_file.name}")
            path = folders[demo_file.example] / demo_file.file
            if demo_file.name in existing:
                if existing[demo_file.name].sha256 != _sha256(path):
                    raise ParameterError(
                        f"The workspace {ws.path} already holds a dataset named "
                        f"{demo_file.name!r} with other content; rename or delete it first."
                    )
                continue
            added.append(
                ws.add(path, kind=demo_file.kind, name=demo_file.name, display_name=demo_file.file)
            )
    names = {d.name for d in ws.list(all_owners=True)}
    kept = [p for p in load_presets(ws) if p.name not in {q.name for q in PRESETS}]
    available = [p for p in PRESETS if set(p.datasets()) <= names]
    save_presets(ws, [*available, *kept])
    if progress is not None:
        progress(1.0, "done")
    return added
