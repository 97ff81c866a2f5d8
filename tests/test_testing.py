"""The pytest helper, the GitHub Action's steps, and what each command imports."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pyarrow as pa
import pytest
from conftest import CRANFIELD, ROOT, TOY, WRITEUP

from evalvalidity.errors import InputDataError, ParameterError
from evalvalidity.io.ingest import read_qrels, read_run
from evalvalidity.io.scoring import score_run
from evalvalidity.testing import assert_benchmark_healthy

POOL8 = WRITEUP / "pool8"

# --------------------------------------------------------------------------- the helper


def test_toy_benchmark_passes_and_returns_the_check():
    result = assert_benchmark_healthy(
        TOY / "model.trec",
        TOY / "qrels.txt",
        pool_size=200,
        noise_run=TOY / "noise.trec",
        seeds=20,
    )
    assert result.verdict == "healthy"
    assert result.n_queries == 20
    assert result.noise is not None and not result.noise.leak


def test_pool_of_eight_fails_with_the_reasons_in_the_message():
    with pytest.raises(AssertionError) as caught:
        assert_benchmark_healthy(
            POOL8 / "model.trec", POOL8 / "qrels.txt", pools=POOL8 / "pools.tsv"
        )
    message = str(caught.value)
    assert message.startswith(
        "The benchmark fails the gate (fail_on='broken'): its verdict is BROKEN."
    )
    assert "A random ranker scores 81 % of a perfect one" in message
    assert "floor/ceiling 0.808" in message


def test_fail_on_never_reports_and_warning_is_stricter():
    result = assert_benchmark_healthy(
        read_run(POOL8 / "model.trec"),
        read_qrels(POOL8 / "qrels.txt"),
        pools=POOL8 / "pools.tsv",
        fail_on="never",
    )
    assert result.verdict == "broken"
    noise_as_model = dict(
        run=CRANFIELD / "run_noise.trec",
        qrels=CRANFIELD / "qrels.txt",
        units=CRANFIELD / "chunks.tsv",
    )
    assert assert_benchmark_healthy(**noise_as_model).verdict == "warning"
    with pytest.raises(AssertionError, match="its verdict is WARNING"):
        assert_benchmark_healthy(**noise_as_model, fail_on="warning")


def test_cranfield_bm25_passes_and_a_hybrid_noise_run_is_a_leak():
    inputs = dict(
        run=CRANFIELD / "run_bm25.trec",
        qrels=CRANFIELD / "qrels.txt",
        units=CRANFIELD / "chunks.tsv",
    )
    assert assert_benchmark_healthy(**inputs).verdict == "healthy"
    with pytest.raises(AssertionError, match=r"(?s)BROKEN.*The noise run scores 0\.2669"):
        assert_benchmark_healthy(**inputs, noise_run=CRANFIELD / "run_hybrid_noise.trec")


def test_a_saved_plan_is_checked_as_the_command_line_checks_it(tmp_path):
    plan = tmp_path / "plan.json"
    subprocess.run(
        [sys.executable, "-m", "evalvalidity", "check", "--run", str(POOL8 / "model.trec"),
         "--qrels", str(POOL8 / "qrels.txt"), "--pools", str(POOL8 / "pools.tsv"),
         "--save-plan", str(plan)],
        check=False, capture_output=True, env=_env(),
    )  # fmt: skip
    assert plan.is_file()
    with pytest.raises(AssertionError, match="its verdict is BROKEN"):
        assert_benchmark_healthy(plan=plan)
    assert assert_benchmark_healthy(plan=str(plan), fail_on="never").verdict == "broken"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"qrels": TOY / "qrels.txt"},
            "assert_benchmark_healthy needs exactly one of 'pool_size', 'pools', 'candidates'"
            " or 'units' (or a 'plan'). Got none instead.",
        ),
        (
            {"qrels": TOY / "qrels.txt", "pool_size": 200, "pools": POOL8 / "pools.tsv"},
            "assert_benchmark_healthy needs exactly one of 'pool_size', 'pools', 'candidates'"
            " or 'units' (or a 'plan'). Got 'pool_size' and 'pools' instead.",
        ),
        (
            {"qrels": TOY / "qrels.txt", "pool_size": 0},
            "The 'pool_size' parameter of assert_benchmark_healthy must be an int >= 1. Got 0"
            " instead.",
        ),
        (
            {"qrels": TOY / "qrels.txt", "pool_size": 200, "fail_on": "sometimes"},
            "The 'fail_on' parameter of assert_benchmark_healthy must be one of 'broken',"
            " 'warning', 'never'. Got 'sometimes' instead.",
        ),
        ({"pool_size": 200}, "assert_benchmark_healthy needs 'qrels' (or a 'plan')."),
        (
            {"plan": "p.json", "qrels": TOY / "qrels.txt"},
            "assert_benchmark_healthy takes a 'plan' or the inputs, not both; got 'plan' and"
            " 'qrels'.",
        ),
        (
            {"plan": 3},
            "The 'plan' parameter of assert_benchmark_healthy must be a CheckPlan or the path"
            " of a saved plan (JSON). Got int instead.",
        ),
        (
            {"qrels": 3, "pool_size": 200},
            "The 'qrels' parameter of assert_benchmark_healthy must be a pyarrow Table, a file"
            " path or a dataset name. Got int instead.",
        ),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ParameterError) as caught:
        assert_benchmark_healthy(**kwargs)
    assert str(caught.value) == message


# --------------------------------------------------------------------------- the action


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), **extra)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _action_steps() -> list[dict]:
    yaml = pytest.importorskip("yaml")
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    return action["runs"]["steps"]


def _run_step(step: dict, inputs: dict[str, str], tmp_path) -> tuple[int, str, dict[str, str]]:
    """Run one composite step's shell as the runner would: ``bash -e``, its env, the files."""
    defaults = {
        name: spec.get("default", "")
        for name, spec in __import__("yaml")
        .safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))["inputs"]
        .items()
    }
    values = {**defaults, **inputs}

    def expand(text: str) -> str:
        text = re.sub(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", lambda m: values[m.group(1)], text)
        return text.replace("${{ github.action_path }}", str(ROOT))

    summary, output, path = (tmp_path / n for n in ("summary.md", "output.txt", "path.txt"))
    env = _env(
        GITHUB_STEP_SUMMARY=str(summary),
        GITHUB_OUTPUT=str(output),
        GITHUB_PATH=str(path),
        RUNNER_TEMP=str(tmp_path),
        PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"],
        **{k: expand(v) for k, v in step.get("env", {}).items()},
    )
    assert step["shell"] == "bash"
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
        env=env,
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    outputs = dict(
        line.split("=", 1) for line in output.read_text().splitlines() if "=" in line
    ) if output.exists() else {}  # fmt: skip
    return done.returncode, summary.read_text() if summary.exists() else "", outputs


def test_action_check_step_writes_the_summary_and_fails_a_broken_benchmark(tmp_path):
    step = next(s for s in _action_steps() if s.get("id") == "check")
    code, summary, outputs = _run_step(
        step,
        {
            "run": str(POOL8 / "model.trec"),
            "qrels": str(POOL8 / "qrels.txt"),
            "pools": str(POOL8 / "pools.tsv"),
        },
        tmp_path,
    )
    assert code == 1
    assert summary.startswith("### ❌ Benchmark health: **broken** (rr@10, 20 queries)")
    assert outputs["verdict"] == "broken"
    assert outputs["report"] == str(tmp_path / "evalvalidity-check.md")


def test_action_check_step_passes_a_healthy_benchmark_with_extra_args(tmp_path):
    step = next(s for s in _action_steps() if s.get("id") == "check")
    code, summary, outputs = _run_step(
        step,
        {
            "run": str(TOY / "model.trec"),
            "qrels": str(TOY / "qrels.txt"),
            "pool-size": "200",
            "metric": "mrr@10",
            "args": "--seeds 20 --seed 3",
        },
        tmp_path,
    )
    assert (code, outputs["verdict"]) == (0, "healthy"), summary
    assert "**healthy**" in summary.splitlines()[0]


def test_action_check_step_reports_bad_input_in_the_summary(tmp_path):
    step = next(s for s in _action_steps() if s.get("id") == "check")
    code, summary, outputs = _run_step(
        step, {"qrels": str(TOY / "qrels.txt"), "pool-size": "0"}, tmp_path
    )
    assert code == 2
    assert summary == ("### ⚠️ evalvalidity check could not run (exit 2): see the step's log\n")
    assert outputs == {}


def test_action_inputs_reach_the_shell_only_through_the_environment():
    for step in _action_steps():
        assert "${{" not in step["run"], step["name"]


# --------------------------------------------------------------------------- speed guards


def _imported_by(*argv: str) -> set[str]:
    code = (
        "import sys, io, contextlib\n"
        "from evalvalidity.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main({list(argv)!r})\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=_env(), capture_output=True, text=True, check=True
    )
    return set(done.stdout.split())


def test_score_imports_neither_pandas_nor_parquet_nor_scipy():
    modules = _imported_by(
        "score", "--run", str(TOY / "model.trec"), "--qrels", str(TOY / "qrels.txt")
    )
    assert {"pyarrow", "numpy"} <= modules
    # a toy run is read and scored without DuckDB
    assert not modules & {"duckdb", "pandas", "pyarrow.parquet", "pyarrow.dataset", "scipy"}
    assert not {
        m for m in modules if m.startswith(("evalvalidity.analysis.", "evalvalidity.report"))
    }


def test_floor_imports_neither_duckdb_nor_pyarrow():
    modules = _imported_by("floor", "rr@10", "--pool-size", "100", "--gold", "1")
    assert "numpy" in modules
    assert not modules & {"duckdb", "pyarrow", "pandas"}


def test_a_read_run_is_trusted_only_as_the_very_table_the_reader_returned():
    run = read_run(TOY / "model.trec")
    qrels = read_qrels(TOY / "qrels.txt")
    assert score_run(run, qrels, "rr@10").means["rr@10"] == pytest.approx(0.8667, abs=1e-4)
    with pytest.raises(InputDataError, match="ranks the document .* twice"):
        score_run(pa.concat_tables([run, run]), qrels, "rr@10")
