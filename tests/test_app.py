"""The dashboard, one AppTest per page (uploads included), the demo workspace, ``evalvalidity app``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from streamlit.testing.v1 import AppTest

from evalvalidity.analysis import examples as demo
from evalvalidity.cli import app as cli_app
from evalvalidity.cli import main
from evalvalidity.errors import ParameterError
from evalvalidity.io.workspace import Workspace

APP = ROOT / "app" / "main.py"
TIMEOUT = 60  # DuckDB work takes longer than AppTest's default 3 s


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("demo-workspace")
    demo.build_demo(root, include=("toy", "pool8", "unitsbug"))
    return root


@pytest.fixture
def app_on(monkeypatch):
    """AppTests (separate browser sessions) on a given workspace."""
    monkeypatch.setenv("STREAMLIT_BROWSER_GATHER_USAGE_STATS", "false")

    def start(root: Path) -> AppTest:
        monkeypatch.setenv("EVALVALIDITY_WORKSPACE", str(root))
        return AppTest.from_file(str(APP), default_timeout=TIMEOUT)

    return start


def _chart_titles(at: AppTest) -> list[str]:
    return [json.loads(chart.proto.spec)["title"]["text"] for chart in at.get("vega_lite_chart")]


def _texts(elements) -> str:
    """The elements' text, without the backslashes that escape data in Markdown."""
    return "\n".join(str(e.value) for e in elements).replace("\\", "")


# ------------------------------------------------------------------------------ Health


def test_health_opens_on_a_ready_example_and_switches_examples(app_on, demo_root):
    at = app_on(demo_root).run()
    assert not at.exception
    assert at.selectbox(key="cfg_example").value == "Healthy toy benchmark"
    assert "Verdict: HEALTHY" in at.success[0].value
    titles = _chart_titles(at)
    assert "Check 1: measured random score / exact floor" in titles
    assert "Check 2: noise run / exact floor" in titles
    assert "Headroom: floor, ceiling and the model on one axis" in titles

    at.selectbox(key="cfg_example").select("A pool of 8: honest and worthless").run()
    assert not at.exception
    assert at.selectbox(key="cfg_pool_pools").value == "pool8.pools"
    assert "Verdict: BROKEN" in at.error[0].value
    assert "A random ranker scores 81 % of a perfect one" in _texts(at.markdown)


def test_health_changing_k_answers_from_the_cache(app_on, demo_root, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    import streamlit as st

    from app import state  # the module the app's pages import: the same object in this process

    st.cache_data.clear()
    calls = []
    real = state.check_benchmark

    def counting(*args, **kwargs):
        calls.append(args[0].metric)
        return real(*args, **kwargs)

    monkeypatch.setattr(state, "check_benchmark", counting)
    at = app_on(demo_root).run()
    at.number_input(key="cfg_k").set_value(5).run()
    at.button(key="run_check").click().run()
    assert "rr@5" in at.success[0].value
    at.number_input(key="cfg_k").set_value(10).run()
    at.button(key="run_check").click().run()
    assert "rr@10" in at.success[0].value
    assert calls == ["rr@10", "rr@5"]  # the second rr@10 came from the cache


def test_health_applies_a_relevance_threshold(app_on, demo_root):
    at = app_on(demo_root).run()
    at.number_input(key="cfg_rel").set_value(2).run()
    at.button(key="run_check").click().run()
    assert not at.exception
    # Every toy judgement has grade 1: at grade >= 2 no query has gold.
    assert "**Verdict: WARNING** — rr@10[rel>=2], 20 queries" in _texts(at.warning)
    assert "20 queries have no gold item in the pool" in _texts(at.markdown)


def test_health_shows_library_errors_as_messages(app_on, demo_root):
    at = app_on(demo_root).run()
    at.radio(key="cfg_pool_kind").set_value("units").run()
    at.selectbox(key="cfg_pool_units").select("unitsbug.units").run()
    at.button(key="run_check").click().run()
    assert not at.exception
    assert (
        "None of the 200 ids ranked in the run 'toy.model' is a chunk of the units map "
        "'unitsbug.units'" in _texts(at.error)
    )
    # The settings are right above the error: no link to the page one is on.
    assert "Change the configuration on the Health page" not in [
        link.proto.label for link in at.get("page_link")
    ]
    at.switch_page("views/queries.py").run()
    assert not at.exception
    assert "unitsbug.units" in _texts(at.error)
    assert "Change the configuration on the Health page" in [
        link.proto.label for link in at.get("page_link")
    ]


# --------------------------------------------------------------------------- Workspace

RUN_WITH_A_BAD_LINE = b"q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 1.5\nq2 Q0 d3 1 1.0 bm25\n"


def test_workspace_upload_lists_rejected_rows_before_anything_lands(app_on, tmp_path):
    root = tmp_path / "ws"
    at = app_on(root).switch_page("views/workspace.py").run()
    assert not at.exception
    assert "No datasets yet" in _texts(at.info)
    at.get("file_uploader")[0].set_value([("bm25.trec", RUN_WITH_A_BAD_LINE, "text/plain")])
    at.run()
    assert not at.exception
    assert "Detected **run** in **trec** format · 2 good rows" in _texts(at.markdown)
    assert [e.value for e in at.error] == []
    assert "1 row was rejected. Nothing is stored until you accept dropping it" in _texts(
        at.warning
    )
    rejected = at.dataframe[0].value
    assert rejected["line"].tolist() == [2]
    assert "expected 6 fields" in rejected["reason"][0]
    add = next(b for b in at.button if b.label == "Add to workspace")
    assert add.disabled
    assert Workspace(root).list(all_owners=True) == []  # nothing landed

    next(
        c for c in at.checkbox if c.label == "Drop the 1 rejected row and keep the 2 good ones"
    ).check().run()
    next(b for b in at.button if b.label == "Add to workspace").click().run()
    assert not at.exception
    assert "Added bm25 (run)." in _texts(at.success)
    stored = Workspace(root).list(all_owners=True)
    assert [(d.name, d.n_rows, d.n_rejected) for d in stored] == [("bm25", 2, 1)]
    assert stored[0].owner is not None
    table = next(d for d in at.dataframe if "visibility" in d.value.columns).value
    assert table["visibility"].tolist() == ["private to this session"]

    other = app_on(root).switch_page("views/workspace.py").run()
    assert "No datasets yet" in _texts(other.info)  # private to the first session

    at.button(key="share").click().run()
    assert "bm25 is now shared." in _texts(at.success)
    other.run()
    assert "No datasets yet" not in _texts(other.info)


def test_workspace_rename_and_delete(app_on, tmp_path):
    root = tmp_path / "ws"
    Workspace(root).add(b"q1 0 d1 1\n", display_name="qrels.txt")
    at = app_on(root).switch_page("views/workspace.py").run()
    at.text_input(key="rename_to").input("judgements").run()
    at.button(key="rename").click().run()
    assert not at.exception
    assert [d.name for d in Workspace(root).list()] == ["judgements"]
    at.selectbox(key="manage_name").select("judgements").run()
    at.text_input(key="rename_to").input("bad/name").run()
    at.button(key="rename").click().run()
    assert "Invalid dataset name 'bad/name'" in _texts(at.error)
    at.checkbox(key="delete_sure").check().run()
    at.button(key="delete").click().run()
    assert "Deleted judgements." in _texts(at.success)
    assert Workspace(root).list() == []


def test_workspace_shows_a_file_it_cannot_read(app_on, tmp_path):
    at = app_on(tmp_path / "ws").switch_page("views/workspace.py").run()
    at.get("file_uploader")[0].set_value([("empty.trec", b"\n\n", "text/plain")])
    at.run()
    assert not at.exception
    assert "empty.trec" in _texts(at.error)


def test_workspace_adds_the_demo(app_on, tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(demo, "build_demo", lambda ws, progress=None: calls.append(ws.path))
    root = tmp_path / "ws"
    at = app_on(root).switch_page("views/workspace.py").run()
    at.button(key="add_demo").click().run()
    assert not at.exception
    assert calls == [root]


# ----------------------------------------------------------------------------- Queries


def test_queries_filters_and_drills_down(app_on, demo_root):
    at = app_on(demo_root).run()
    at.selectbox(key="cfg_example").select("A pool of 8: honest and worthless").run()
    at.switch_page("views/queries.py").run()
    assert not at.exception
    assert "20 of 20 queries" in _texts(at.caption)
    at.multiselect(key="q_flags").select("pool_smaller_than_k").run()
    assert "20 of 20 queries" in _texts(at.caption)
    at.slider(key="q_gold").set_value((6, 6)).run()
    table = next(d for d in at.dataframe if "floor_share" in d.value.columns).value
    assert set(table["gold"]) == {6}
    assert f"{len(table)} of 20 queries" in _texts(at.caption)
    qid = at.selectbox(key="q_qid").value
    assert qid == table["qid"].iloc[0]
    formulas = [e.value for e in at.latex]
    assert any("binom" in f for f in formulas)
    floor = float(table["floor"].iloc[0])
    assert any(f"= {floor:.6g}" in f for f in formulas)
    ranking = next(
        d for d in at.dataframe if "gold" in d.value.columns and "position" in d.value.columns
    ).value
    assert ranking["position"].tolist() == list(range(1, len(ranking) + 1))
    assert (ranking["gold"] == "★ gold").sum() == 6
    assert "Multi-gold queries and the floor" in _chart_titles(at)


# ------------------------------------------------------------------------- Diagnostics


def test_diagnostics_shows_inferred_n_and_the_units_bug(app_on, demo_root):
    at = app_on(demo_root).run()
    at.selectbox(key="cfg_example").select("The units bug: chunks counted, files scored").run()
    at.switch_page("views/diagnostics.py").run()
    assert not at.exception
    titles = _chart_titles(at)
    assert "Inferred pool size N" in titles
    assert "Check 1: the measured distribution against the exact one" in titles
    assert "Your harness counts documents (≈ 218), not chunks (1,052)" in _texts(at.warning)
    assert at.metric[0].label == "Inferred N"


# ----------------------------------------------------------------------------- Compare


def test_compare_tells_two_runs_apart(app_on, demo_root):
    at = app_on(demo_root).run()
    at.switch_page("views/compare.py").run()
    assert "Choose at least one more run" in _texts(at.info)
    at.multiselect(key="c_runs").select("toy.noise").run()
    assert not at.exception
    assert "Can the benchmark tell the runs apart?" in _chart_titles(at)
    assert "The benchmark tells toy.model and toy.noise apart" in _texts(at.success)
    pairs = next(d for d in at.dataframe if "pair" in d.value.columns).value
    assert pairs["pair"].tolist() == ["toy.model − toy.noise"]
    assert bool(pairs["significant"].iloc[0])


def test_compare_shows_the_leaderboard_of_every_run(app_on, demo_root):
    at = app_on(demo_root).run()
    at.switch_page("views/compare.py").run()
    at.multiselect(key="c_runs").select("toy.noise").run()
    assert not at.exception
    board = next(d.value for d in at.dataframe if "chance-adjusted" in d.value.columns)
    assert board["run"].tolist() == ["toy.model", "toy.noise"]
    assert {
        "mean",
        "95 % low",
        "95 % high",
        "rank interval",
        "floor",
        "chance-adjusted",
        "wins / ties / losses vs toy.model",
        "separated from next",
    } <= set(board.columns)
    assert board["wins / ties / losses vs toy.model"].iloc[0] == "0 / 20 / 0"
    assert (board["mean"] >= board["95 % low"]).all() and (
        board["mean"] <= board["95 % high"]
    ).all()
    pairs = next(d.value for d in at.dataframe if "p (randomization)" in d.value.columns)
    assert list(pairs.columns[2:4]) == ["p (randomization)", "p (Holm)"]
    assert pairs["runs"].tolist() == ["toy.model − toy.noise"]
    caption = " ".join(c.value for c in at.caption)
    assert "smallest attainable p is" in caption and "Holm-corrected over 1 pairs" in caption
    assert "Smallest detectable difference" in caption


# ------------------------------------------------------------------------------ Report


def test_report_offers_every_download(app_on, demo_root):
    at = app_on(demo_root).run()
    at.switch_page("views/report.py").run()
    assert not at.exception
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels[:4] == [
        "Download the HTML report",
        "check.json",
        "summary.md",
        "Everything (zip)",
    ]
    charts_offered = labels[4:]
    assert len(charts_offered) >= 14 and set(charts_offered) == {"PNG", "SVG"}
    assert at.text_input(key="r_title").value.startswith("Benchmark health: toy.model")
    assert "### ✅ Benchmark health: **healthy**" in at.code[0].value


def test_seven_thousand_queries_render_on_every_page(app_on, tmp_path):
    n = 7000
    # Each query has its own gold documents: one document gold for every query would be a hub
    # that the query-independent check rightly flags.
    qrels = "".join(f"q{i} 0 d{i}-{j} 1\n" for i in range(n) for j in range(1 + i % 3))
    run = "".join(
        f"q{i} Q0 {f'd{i}-0' if j == 0 else f'x{i}-{j}'} {j + 1} {10 - j} r\n"
        for i in range(n)
        for j in range(10)
    )
    ws = Workspace(tmp_path / "ws")
    ws.add(qrels.encode(), name="big.qrels", kind="qrels")
    ws.add(run.encode(), name="big.run", kind="run")
    demo.save_presets(
        ws,
        [
            demo.Preset(
                "big",
                "7,000 queries",
                "",
                run="big.run",
                qrels="big.qrels",
                pool_kind="corpus",
                pool=5000,
                seeds=2,
            )
        ],
    )
    at = app_on(tmp_path / "ws").run()
    assert not at.exception
    assert "7,000 queries" in at.success[0].value
    for page in ("queries", "diagnostics", "report"):
        at.switch_page(f"views/{page}.py").run()
        assert not at.exception, page
        assert at.get("vega_lite_chart") or page == "report", page
    at.switch_page("views/queries.py").run()
    table = next(d for d in at.dataframe if "floor_share" in d.value.columns).value
    assert len(table) == n


def test_pages_without_a_benchmark_point_to_the_workspace(app_on, tmp_path):
    at = app_on(tmp_path / "empty").run()
    assert "The workspace holds no judgements yet" in _texts(at.info)
    for page in ("queries", "diagnostics", "compare", "report"):
        at.switch_page(f"views/{page}.py").run()
        assert not at.exception
        assert "No benchmark is configured yet" in _texts(at.info), page


# -------------------------------------------------------------------- demo and the CLI


def test_build_demo_is_idempotent_and_records_presets(tmp_path):
    added = demo.build_demo(tmp_path, include=("pool8",))
    assert [d.name for d in added] == ["pool8.model", "pool8.noise", "pool8.qrels", "pool8.pools"]
    assert [p.name for p in demo.load_presets(tmp_path)] == ["pool8"]
    assert demo.is_built(tmp_path)
    assert demo.build_demo(tmp_path, include=("pool8",)) == []


def test_build_demo_refuses_a_name_taken_by_other_content(tmp_path):
    Workspace(tmp_path).add(b"q1 0 d1 1\n", name="toy.qrels", kind="qrels")
    with pytest.raises(
        ParameterError, match="already holds a dataset named 'toy.qrels' with other content"
    ):
        demo.build_demo(tmp_path, include=("toy",))


def test_build_demo_generates_the_writeup_without_the_data_folder(tmp_path):
    demo.build_demo(tmp_path / "ws", data_dir=tmp_path / "nowhere", include=("toy",))
    assert [d.name for d in Workspace(tmp_path / "ws").list()] == [
        "toy.model",
        "toy.noise",
        "toy.qrels",
    ]


def test_demo_rejects_unknown_examples_and_broken_presets(tmp_path):
    with pytest.raises(ParameterError, match="Unknown demo example 'msmarco'"):
        demo.build_demo(tmp_path, include=("msmarco",))
    with pytest.raises(ParameterError, match="needs its size as an int >= 1"):
        demo.Preset("x", "x", "x", run=None, qrels="q", pool_kind="corpus", pool="200")
    (tmp_path / "presets.json").write_text("{not json")
    with pytest.raises(ParameterError, match="Cannot read the presets"):
        demo.load_presets(tmp_path)


def test_app_command_finds_the_app_and_builds_the_demo_first(tmp_path, monkeypatch):
    root, script = cli_app.locate_app()
    assert script == APP and root == ROOT
    assert (root / ".streamlit" / "config.toml").is_file()
    built, served = [], []
    monkeypatch.setattr(demo, "build_demo", lambda ws: built.append(ws) or [])
    monkeypatch.setattr(
        cli_app.subprocess, "call", lambda cmd, cwd, env: served.append((cmd, cwd, env)) or 0
    )
    assert main(["app", "--workspace", str(tmp_path / "ws"), "--port", "8599"]) == 0
    assert built == [(tmp_path / "ws").resolve()]
    cmd, cwd, env = served[0]
    assert cmd[1:5] == ["-m", "streamlit", "run", str(APP)]
    assert cmd[cmd.index("--server.port") + 1] == "8599"
    assert cwd == ROOT
    assert env["EVALVALIDITY_WORKSPACE"] == str((tmp_path / "ws").resolve())


def test_app_command_rejects_a_bad_port(capsys):
    assert main(["app", "--port", "70000", "--no-demo"]) == 2
    assert "--port must be between 1 and 65535" in capsys.readouterr().err


def test_streamlit_config_allows_a_gigabyte_and_watches_no_files():
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] >= 1024
    assert config["server"]["fileWatcherType"] == "none"
    assert config["server"]["headless"] is True
    assert config["browser"]["gatherUsageStats"] is False
    assert config["theme"]["primaryColor"]


DASHBOARD_ELSEWHERE = """
import sys
from streamlit.testing.v1 import AppTest
at = AppTest.from_file(sys.argv[1], default_timeout=60).run()
assert not at.exception, at.exception
print(sys.modules["app"].__file__)
print(at.title[0].value)
"""


def test_the_dashboard_imports_its_own_package_from_any_working_directory(tmp_path):
    """``app`` is a package: main.py makes the pages find this copy of it, wherever it runs from."""
    only_the_library = tmp_path / "path"
    only_the_library.mkdir()
    (only_the_library / "evalvalidity").symlink_to(ROOT / "evalvalidity")
    env = {
        **os.environ,
        "PYTHONPATH": str(only_the_library),  # evalvalidity, but not the repository's root
        "EVALVALIDITY_WORKSPACE": str(tmp_path / "ws"),
        "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
    }
    done = subprocess.run(
        [sys.executable, "-c", DASHBOARD_ELSEWHERE, str(APP)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    package, title = done.stdout.splitlines()[-2:]
    assert package == str(ROOT / "app" / "__init__.py")
    assert title == "Benchmark health"


# ------------------------------------------------------------------- the plan and its verdict


def _plain(elements) -> str:
    """The elements' text without Markdown's escapes and bold marks."""
    return _texts(elements).replace("**", "")


def test_an_example_loads_its_whole_plan_into_the_selectors(app_on, demo_root):
    at = app_on(demo_root).run()
    at.selectbox(key="cfg_example").select("The units bug: chunks counted, files scored").run()
    assert not at.exception
    assert at.selectbox(key="cfg_run").value == "unitsbug.model"
    assert at.selectbox(key="cfg_qrels").value == "unitsbug.qrels"
    assert at.selectbox(key="cfg_harness").value == "unitsbug.harness"
    assert at.radio(key="cfg_pool_kind").value == "units"
    assert at.selectbox(key="cfg_pool_units").value == "unitsbug.units"
    assert at.radio(key="cfg_unit").value == "chunks"
    at.number_input(key="cfg_k").set_value(5).run()
    assert "Stale — checked before the settings changed" in _plain(at.markdown)
    at.button(key="run_check").click().run()
    checked = _plain(at.markdown)
    assert "Checked: run unitsbug.model · qrels unitsbug.qrels · units unitsbug.units" in checked
    assert "metric rr@5" in checked
    assert "Verdict: BROKEN" in at.error[0].value
    assert "Stale" not in checked


def test_settings_do_not_rerun_the_check_until_run_check(app_on, demo_root, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    import streamlit as st

    from app import state

    st.cache_data.clear()
    calls = []
    real = state.check_benchmark
    monkeypatch.setattr(
        state, "check_benchmark", lambda *a, **k: calls.append(a[0].metric) or real(*a, **k)
    )
    at = app_on(demo_root).run()
    at.number_input(key="cfg_k").set_value(5).run()
    at.selectbox(key="cfg_ties").select("average").run()
    assert calls == ["rr@10"]
    assert "Verdict: HEALTHY" in at.success[0].value
    assert "metric rr@10" in _plain(at.markdown)


def test_run_check_checks_a_setting_changed_just_before_the_click(app_on, demo_root):
    # The browser sends the new k and the click together when the click lands before the
    # page has redrawn for the new k: the check is of k as shown, not as last drawn.
    at = app_on(demo_root).run()
    at.number_input(key="cfg_k").set_value(7).run()
    at.number_input(key="cfg_k").set_value(3)
    at.button(key="run_check").click().run()
    assert not at.exception
    assert "Verdict: HEALTHY** — rr@3, 20 queries" in at.success[0].value
    checked = _plain(at.markdown)
    assert "metric rr@3" in checked
    assert "Stale" not in checked
    assert not at.warning  # no "the settings above changed"


def test_new_benchmark_starts_from_nothing(app_on, demo_root):
    at = app_on(demo_root).run()
    at.button(key="new_benchmark").click().run()
    assert not at.exception
    assert at.selectbox(key="cfg_qrels").value is None
    assert at.selectbox(key="cfg_run").value == "— none —"
    assert at.selectbox(key="cfg_noise").value == "— none —"
    assert at.multiselect(key="cfg_compare").value == []
    assert "Choose the judgements (qrels)." in _texts(at.warning)
    assert not at.success  # no verdict of a plan nobody chose
    at.selectbox(key="cfg_qrels").select("toy.qrels").run()
    at.button(key="run_check").click().run()
    checked = _plain(at.markdown)
    assert "Checked: run — · qrels toy.qrels · corpus of 1,000" in checked
    assert "no comparison run" in checked


def test_the_comparison_run_of_an_example_is_shown_and_can_be_removed(app_on, demo_root):
    at = app_on(demo_root).run()
    at.multiselect(key="cfg_compare").select("toy.noise").run()
    at.button(key="run_check").click().run()
    assert "compared with toy.noise" in _plain(at.markdown)
    at.multiselect(key="cfg_compare").unselect("toy.noise").run()
    at.button(key="run_check").click().run()
    assert "no comparison run" in _plain(at.markdown)


def test_private_uploads_survive_a_reload_through_the_owner_token(app_on, tmp_path):
    root = tmp_path / "ws"
    at = app_on(root).switch_page("views/workspace.py").run()
    token = at.query_params["owner"]
    token = token[0] if isinstance(token, list) else token
    assert len(token) == 32 and int(token, 16) >= 0
    at.get("file_uploader")[0].set_value([("mine.trec", b"q1 Q0 d1 1 2.5 x\n", "text/plain")])
    at.run()
    next(b for b in at.button if b.label == "Add to workspace").click().run()
    assert "Added mine (run)." in _texts(at.success)

    reloaded = app_on(root)
    reloaded.query_params["owner"] = token
    reloaded.switch_page("views/workspace.py").run()
    table = next(d for d in reloaded.dataframe if "visibility" in d.value.columns).value
    assert table["name"].tolist() == ["mine"]
    assert table["visibility"].tolist() == ["private to this session"]

    stranger = app_on(root)
    stranger.query_params["owner"] = "not-a-token"
    stranger.switch_page("views/workspace.py").run()
    assert "No datasets yet" in _texts(stranger.info)
    fresh = stranger.query_params["owner"]
    assert (fresh[0] if isinstance(fresh, list) else fresh) != token


def test_an_unreadable_upload_shows_an_escaped_excerpt_in_ui_words(app_on, tmp_path):
    at = app_on(tmp_path / "ws").switch_page("views/workspace.py").run()
    binary = b"\x00\x01\x02PK" + bytes(range(256)) * 4
    at.get("file_uploader")[0].set_value([("blob.bin", binary, "application/octet-stream")])
    at.run()
    assert not at.exception
    shown = _texts(at.error) + _texts(at.markdown) + _texts(at.caption)
    assert "--kind" not in shown and "kind=" not in shown and "drop_bad_rows" not in shown
    assert "\x00" not in shown  # no raw NUL byte reaches the page


def test_queries_sorts_in_header_words_and_numeric_ids_as_numbers(app_on, tmp_path):
    qrels = "".join(f"{q} 0 d{q} 1\n" for q in (1, 2, 10, 9, 100))
    ws = Workspace(tmp_path / "ws")
    ws.add(qrels.encode(), name="num.qrels", kind="qrels")
    demo.save_presets(
        ws,
        [
            demo.Preset(
                "num",
                "Numbers",
                "",
                run=None,
                qrels="num.qrels",
                pool_kind="corpus",
                pool=50,
                seeds=2,
            )
        ],
    )
    at = app_on(tmp_path / "ws").run()
    at.switch_page("views/queries.py").run()
    assert not at.exception
    sort = at.selectbox(key="q_sort")
    assert "share of the floor" in sort.options and "query" in sort.options
    assert "floor_share" not in sort.options
    sort.select("query").run()
    at.toggle(key="q_desc").set_value(False).run()
    table = next(d for d in at.dataframe if "floor_share" in d.value.columns).value
    assert table["qid"].tolist() == ["1", "2", "9", "10", "100"]
    shown = _texts(at.markdown) + _texts(at.caption) + _texts(at.get("metric"))
    assert "None" not in shown and "Infinity" not in shown


# --------------------------------------------------- the floor's formula is the one computed


def _floor_formula(at: AppTest) -> tuple[str, str, float]:
    """The Queries page's formula and numbers of the selected query, and its floor."""
    table = next(d for d in at.dataframe if "floor_share" in d.value.columns).value
    qid = at.selectbox(key="q_qid").value
    floor = float(table[table["qid"].astype(str) == qid]["floor"].iloc[0])
    formula, numbers = (str(e.value).strip("$\n") for e in at.latex[:2])
    return formula, numbers, floor


def test_queries_shows_the_plain_floor_formula_for_a_uniform_order(app_on, demo_root):
    at = app_on(demo_root).run()  # the toy benchmark: a corpus of 200
    at.switch_page("views/queries.py").run()
    assert not at.exception
    table = next(d for d in at.dataframe if "floor_share" in d.value.columns).value
    at.selectbox(key="q_qid").select(str(table[table["gold"] == 1]["qid"].iloc[0])).run()
    formula, numbers, floor = _floor_formula(at)
    assert formula == r"E[\mathrm{RR}] = \frac{H_K}{N}"
    assert numbers.startswith(r"\frac{H_{10}}{200}") and numbers.endswith(f"= {floor:.6g}")
    assert "a uniformly random order of the pool" in _texts(at.markdown)


def test_queries_shows_the_deduplicated_floor_formula_for_a_units_map(app_on, demo_root):
    at = app_on(demo_root).run()
    at.selectbox(key="cfg_example").select("The units bug, fixed").run()
    at.switch_page("views/queries.py").run()
    assert not at.exception
    formula, numbers, floor = _floor_formula(at)
    # The exponential race over chunk counts, not H_K/N over the documents.
    assert r"\int_0^1" in formula and r"d\big(x^{C_G}\big)" in formula
    assert "H_K" not in formula
    assert numbers.startswith("C_G = ") and numbers.endswith(f"E = {floor:.6g}")
    chunks = next(d for d in at.dataframe if "chunks" in d.value.columns).value
    gold = chunks[chunks["grade"] >= 1]
    assert numbers.startswith(f"C_G = {int(gold['chunks'].sum()):,},")
    assert "deduplicated to documents" in _texts(at.markdown)


def test_queries_shows_graded_ndcg_with_the_gains_used(app_on, tmp_path):
    ws = Workspace(tmp_path / "ws")
    # One query, two gold items of grades 1 and 3 in a corpus of 20: docs/math.md's example.
    ws.add(b"g1 0 a 1\ng1 0 b 3\n", name="graded.qrels", kind="qrels")
    ws.add(b"g1 Q0 b 1 2.0 r\ng1 Q0 c 2 1.0 r\n", name="graded.run", kind="run")
    demo.save_presets(
        ws,
        [
            demo.Preset(
                "graded",
                "Graded",
                "",
                run="graded.run",
                qrels="graded.qrels",
                pool_kind="corpus",
                pool=20,
                metric="ndcg@10",
                seeds=2,
            )
        ],
    )
    at = app_on(tmp_path / "ws").run()
    at.switch_page("views/queries.py").run()
    assert not at.exception
    formula, numbers, floor = _floor_formula(at)
    assert round(floor, 4) == 0.2503  # linear gains: (3 + 1)/20 · 4.5436 / (3 + 1/log2 3)
    assert r"\sum_j (g_j)" in formula
    assert numbers == r"\frac{3 + 1}{20} \cdot 4.5436 \Big/ 3.6309 = " + f"{floor:.6g}"
    assert "Gains used: the grades 3, 1 of the gold items in the pool" in _texts(at.caption)
    assert "grade 1" not in numbers


# ----------------------------------------------- no "None", "nan" or "Infinity" on screen

PAGES = (
    "health",
    "workspace",
    "queries",
    "diagnostics",
    "compare",
    "live",
    "report",
    "suite",
    "history",
    "nulls",
)
#: What a missing or undefined number turns into when it is printed as it is.
_LEAKED = re.compile(r"\b(?:None|nan|NaN|inf|Infinity)\b")
#: Proto fields that are data or identifiers, not text a person reads.
_NOT_TEXT = {"spec", "data", "datasets", "id", "formId", "key", "arrowData"}


def _strings(value: object, path: str = ""):
    if isinstance(value, dict):
        for key, item in value.items():
            if key not in _NOT_TEXT:
                yield from _strings(item, f"{path}.{key}")
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item, path)
    elif isinstance(value, str):
        yield path, value


def _leaks(at: AppTest) -> list[str]:
    """Every text of every element (labels, options, help, values, table cells) that shows a
    missing or undefined value as a word."""
    import pandas as pd
    from google.protobuf.json_format import MessageToDict

    found = []
    stack = [at.main, at.sidebar]
    while stack:
        node = stack.pop()
        children = getattr(node, "children", None)
        if children:
            stack.extend(children.values())
            continue
        proto = getattr(node, "proto", None)
        if proto is None:
            continue
        kind = type(node).__name__
        found += [
            f"{kind}{p}: {s[:120]!r}"
            for p, s in _strings(MessageToDict(proto))
            if _LEAKED.search(s)
        ]
        value = getattr(node, "value", None) if kind == "Dataframe" else None
        if isinstance(value, pd.DataFrame):
            shown = value.astype(object).where(value.notna(), "None").astype(str)
            found += [
                f"{kind} column {c!r}"
                for c in shown.columns
                if shown[c].str.contains(_LEAKED).any()
            ]
    return found


def _sweep(at: AppTest) -> dict[str, list[str]]:
    leaks = {}
    for page in PAGES:
        at.switch_page(f"views/{page}.py").run()
        assert not at.exception, (page, at.exception)
        if found := _leaks(at):
            leaks[page] = found
    return leaks


def test_no_page_shows_none_nan_or_infinity_on_the_demo(app_on, demo_root):
    at = app_on(demo_root).run()
    assert _sweep(at) == {}
    at.switch_page("views/health.py").run()
    at.selectbox(key="cfg_example").select("The units bug: chunks counted, files scored").run()
    assert _sweep(at) == {}


def test_no_page_shows_none_nan_or_infinity_on_five_queries(app_on, tmp_path):
    ws = Workspace(tmp_path / "ws")
    # Five queries: one with no gold in the run's top ten, one not ranked at all, grades 1-2.
    qrels = "".join(f"q{i} 0 d{i} {1 + i % 2}\n" for i in range(1, 6))
    run = "".join(
        f"q{i} Q0 {f'd{i}' if (i != 2 and j == i) else f'x{i}-{j}'} {j} {20 - j} r\n"
        for i in range(1, 5)
        for j in range(1, 12)
    )
    ws.add(qrels.encode(), name="five.qrels", kind="qrels")
    ws.add(run.encode(), name="five.run", kind="run")
    demo.save_presets(
        ws,
        [
            demo.Preset(
                "five",
                "Five queries",
                "",
                run="five.run",
                qrels="five.qrels",
                pool_kind="corpus",
                pool=50,
                seeds=2,
            )
        ],
    )
    at = app_on(tmp_path / "ws").run()
    verdicts = _texts(at.success) + _texts(at.warning) + _texts(at.error)
    assert "rr@10, 5 queries" in verdicts
    assert _sweep(at) == {}
