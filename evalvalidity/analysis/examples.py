"""The bundled demo workspace: the write-up's three benchmarks and Cranfield, ready to check.

:func:`build_demo` ingests the files of ``data/writeup/{toy,pool8,unitsbug}`` and
``data/cranfield`` into a workspace as named, shared datasets (``toy.model``, ``toy.qrels``,
``cranfield.run_dense``, ...) and records, beside them, each example's check configuration
(:class:`Preset`, a named :class:`~evalvalidity.analysis.plan.CheckPlan`) in ``presets.json`` at the workspace's root, so that the dashboard opens on a
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

import hashlib
import json
import os
import tempfile
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from evalvalidity.analysis.plan import CheckPlan, DatasetRef, PoolDeclaration
from evalvalidity.core.types import Progress
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


@dataclass(frozen=True)
class DemoFile:
    """One bundled file and the dataset it becomes."""

    example: str  # "toy", "pool8", "unitsbug" or "cranfield"
    file: str
    kind: str
    name: str


@dataclass(frozen=True, init=False)
class Preset:
    """A named check plan: which datasets play which part, and the check's parameters.

    Built from a :class:`~evalvalidity.analysis.plan.CheckPlan` (``plan=``) or from the fields
    below, which name workspace datasets; either way it holds the plan, and the fields read it
    back.

    Attributes
    ----------
    name : str
        Identifier (``toy``, ``cranfield-hybrid``, ...).
    title, summary : str
        What the example shows, for the dashboard.
    plan : CheckPlan
        The check, every input a workspace dataset.

    Other Parameters
    ----------------
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

    Examples
    --------
    >>> p = Preset("toy", "Toy", "", run="toy.model", qrels="toy.qrels", pool_kind="corpus",
    ...            pool=200, seeds=20)
    >>> p.plan.pool.corpus_size, p.run, p.with_changes(metric="rr@5").plan.metric
    (200, 'toy.model', 'rr@5')
    >>> Preset.from_json(p.to_json()) == p
    True
    """

    name: str
    title: str
    summary: str
    plan: CheckPlan

    def __init__(
        self, name: str, title: str, summary: str, plan: CheckPlan | None = None, **fields: Any
    ) -> None:
        if plan is None:
            plan = _plan_of(**fields)
        elif fields:
            raise ParameterError(
                f"Give a Preset a plan or its fields, not both. Got {', '.join(sorted(fields))}."
            )
        if not isinstance(plan, CheckPlan):
            raise ParameterError(
                f"The 'plan' of a Preset must be a CheckPlan. Got {type(plan).__name__} instead."
            )
        for ref in plan.refs.values():
            if ref.source != "dataset":
                raise ParameterError(
                    f"A Preset's plan names workspace datasets only. Got the {ref.source} "
                    f"{ref.name!r}."
                )
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "title", title)
        object.__setattr__(self, "summary", summary)
        object.__setattr__(self, "plan", plan)

    # The plan's parts, by the names the dashboard uses.
    @property
    def run(self) -> str | None:
        """Dataset name of the model's run."""
        return self.plan.run.name if self.plan.run is not None else None

    @property
    def qrels(self) -> str:
        """Dataset name of the judgements."""
        return self.plan.qrels.name

    @property
    def pool_kind(self) -> str:
        """``corpus``, ``pools``, ``candidates`` or ``units``."""
        return self.plan.pool.kind

    @property
    def pool(self) -> str | int:
        """The corpus size, or the dataset name declaring the pool."""
        ref = self.plan.pool.ref
        if ref is None:
            assert self.plan.pool.corpus_size is not None
            return self.plan.pool.corpus_size
        return ref.name

    @property
    def analytic_unit(self) -> str:
        """``documents`` or ``chunks``."""
        return self.plan.pool.analytic_unit

    @property
    def noise_run(self) -> str | None:
        """Dataset name of the noise run."""
        return self.plan.noise_run.name if self.plan.noise_run is not None else None

    @property
    def harness(self) -> str | None:
        """Dataset name of the harness's output."""
        ref = self.plan.harness_output
        return ref.name if ref is not None else None

    @property
    def compare(self) -> tuple[str, ...]:
        """Dataset names of the runs compared with ``run``."""
        return tuple(ref.name for _, ref in self.plan.compare)

    @property
    def metric(self) -> str:
        """The metric's spelling."""
        return self.plan.metric

    @property
    def seeds(self) -> int | str:
        """Seeds of the built-in Check 1."""
        return self.plan.seeds

    @property
    def ties(self) -> str:
        """The tie policy."""
        return self.plan.ties

    def fields(self) -> dict[str, Any]:
        """The keyword fields that build this preset's plan again."""
        return {name: getattr(self, name) for name in _FIELDS}

    def with_changes(self, **changes: Any) -> Preset:
        """A copy with some fields (``run``, ``metric``, ..., or ``plan``) changed."""
        if "plan" in changes:
            plan = changes.pop("plan")
            if changes:
                raise ParameterError("Change a Preset's plan or its fields, not both.")
            return Preset(self.name, self.title, self.summary, plan)
        unknown = sorted(set(changes) - set(_FIELDS))
        if unknown:
            raise ParameterError(f"A Preset has no field {', '.join(map(repr, unknown))}.")
        merged = {**self.fields(), **changes}
        plan = _plan_of(**merged).replace(
            seed=self.plan.seed,
            thresholds=self.plan.thresholds,
            noise_components_off=self.plan.noise_components_off,
        )
        return Preset(self.name, self.title, self.summary, plan)

    def datasets(self) -> tuple[str, ...]:
        """Every dataset name the configuration uses."""
        return tuple(ref.name for ref in self.plan.refs.values())

    def to_json(self) -> dict[str, Any]:
        """The record written to ``presets.json``: name, title, summary and the plan's JSON."""
        return {
            "name": self.name,
            "title": self.title,
            "summary": self.summary,
            "plan": self.plan.to_dict(),
        }

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> Preset:
        """Inverse of :meth:`to_json` (and reads the flat records of earlier versions).

        Raises
        ------
        ParameterError
            When the record does not describe a preset.
        """
        if not isinstance(record, dict):
            raise ParameterError(f"A preset record must be an object. Got {record!r}.")
        head: dict[str, Any] = {k: record.get(k) for k in ("name", "title", "summary")}
        if not all(isinstance(v, str) for v in head.values()):
            raise ParameterError(f"Incomplete preset record {record!r}: name, title, summary.")
        if "plan" in record:
            return cls(**head, plan=CheckPlan.from_dict(record["plan"]))
        values = {k: v for k, v in record.items() if k in _FIELDS}
        values["compare"] = tuple(values.get("compare", ()))
        try:
            return cls(**head, **values)
        except TypeError as exc:
            raise ParameterError(f"Incomplete preset record {record!r}: {exc}.") from exc


_FIELDS = (
    "run",
    "qrels",
    "pool_kind",
    "pool",
    "analytic_unit",
    "noise_run",
    "harness",
    "compare",
    "metric",
    "seeds",
    "ties",
)


def _plan_of(
    *,
    run: str | None,
    qrels: str,
    pool_kind: str,
    pool: str | int,
    analytic_unit: str = "documents",
    noise_run: str | None = None,
    harness: str | None = None,
    compare: Sequence[str] = (),
    metric: str = "rr@10",
    seeds: int | str = "auto",
    ties: str = "trec_eval",
) -> CheckPlan:
    """The plan of a preset's fields: every name a workspace dataset."""
    if pool_kind not in ("corpus", "pools", "candidates", "units"):
        raise ParameterError(
            "The 'pool_kind' of a Preset must be corpus, pools, candidates or units. Got "
            f"{pool_kind!r} instead."
        )
    if pool_kind == "corpus" and (isinstance(pool, bool) or not isinstance(pool, int) or pool < 1):
        raise ParameterError(
            f"A Preset with a corpus pool needs its size as an int >= 1. Got {pool!r}."
        )
    if pool_kind != "corpus" and not isinstance(pool, str):
        raise ParameterError(
            f"A Preset with a {pool_kind} pool needs a dataset name. Got {pool!r}."
        )
    if pool_kind != "corpus" and not pool:
        raise ParameterError("Choose the dataset that declares the pool.")
    if pool_kind != "units":
        analytic_unit = "documents"
    declaration: dict[str, Any] = (
        {"corpus_size": pool}
        if pool_kind == "corpus"
        else {pool_kind: DatasetRef.dataset(str(pool)), "analytic_unit": analytic_unit}
    )
    declared = PoolDeclaration(**declaration)
    return CheckPlan(
        run=DatasetRef.dataset(run) if run is not None else None,
        run_name=run if run is not None else "run",
        compare=tuple((c, DatasetRef.dataset(c)) for c in dict.fromkeys(compare) if c != run),
        qrels=DatasetRef.dataset(qrels),
        pool=declared,
        noise_run=DatasetRef.dataset(noise_run) if noise_run is not None else None,
        harness_output=DatasetRef.dataset(harness) if harness is not None else None,
        metric=metric,
        seeds=seeds,  # type: ignore[arg-type]
        ties=ties,  # type: ignore[arg-type]
    )


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
    """The repository's ``data`` folder next to the package (editable installs), or None.

    Examples
    --------
    >>> root = data_root()
    >>> root is None or (root / "writeup" / "toy" / "qrels.txt").is_file()
    True
    """
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

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as root:
    ...     empty = load_presets(root)
    ...     _ = save_presets(root, [p for p in PRESETS if p.name == "toy"])
    ...     empty, [p.name for p in load_presets(root)]
    ([], ['toy'])
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

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as root:
    ...     save_presets(root, PRESETS[:1]).name
    'presets.json'
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
    """True when the workspace records presets and holds every dataset they name.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as root:
    ...     before = is_built(root)
    ...     _ = build_demo(root, include=("toy",))
    ...     before, is_built(root)
    (False, True)
    """
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

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as root:
    ...     first = [info.name for info in build_demo(root, include=("toy",))]
    ...     again = build_demo(root, include=("toy",))
    ...     first, again
    (['toy.model', 'toy.noise', 'toy.qrels'], [])
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
