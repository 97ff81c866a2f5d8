"""The workspace: persistence, atomic ingests, concurrency, names and the CLI."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import BAD, CRANFIELD, ROOT, run_text, wait_for

from evalvalidity.cli import main
from evalvalidity.errors import ParameterError
from evalvalidity.io.ingest import RejectedRowsError, load
from evalvalidity.io.workspace import Workspace, default_path, validate_name


def snapshot(root: Path) -> tuple[list[str], list[str], list[str]]:
    return (
        sorted(p.name for p in (root / "data").iterdir()),
        sorted(p.name for p in (root / "tmp").iterdir()),
        [d.name for d in Workspace(root).list(all_owners=True)],
    )


def test_add_list_get_rename_delete(tmp_path):
    ws = Workspace(tmp_path)
    run = ws.add(CRANFIELD / "run_bm25.trec")
    qrels = ws.add((CRANFIELD / "qrels.txt").read_bytes(), display_name="C:\\exports\\qrels.txt")
    assert (run.name, run.kind, run.n_rows, run.format) == ("run_bm25", "run", 22500, "trec")
    assert (qrels.name, qrels.source_name) == ("qrels", "C:\\exports\\qrels.txt")
    again = ws.add(CRANFIELD / "run_bm25.trec")
    assert again.name == "run_bm25-2"
    assert again.sha256 == run.sha256 and len(run.sha256) == 64
    assert [d.name for d in ws.list()] == ["qrels", "run_bm25", "run_bm25-2"]
    dataset = ws.get("run_bm25")
    assert dataset.info == run
    assert dataset.table.num_rows == 22500
    assert dataset.table.column("docid")[0].as_py() == "184#0"
    ws.rename("run_bm25-2", "bm25 copy")
    with pytest.raises(ParameterError, match="A dataset named 'qrels' already exists"):
        ws.rename("bm25 copy", "qrels")
    ws.delete("bm25 copy")
    with pytest.raises(ParameterError, match="No dataset named 'bm25 copy'"):
        ws.table("bm25 copy")
    # a fresh object (a restart) sees the same datasets, and no stray files remain
    assert snapshot(tmp_path) == (
        sorted([f"{run.id}.parquet", f"{qrels.id}.parquet"]),
        [],
        ["qrels", "run_bm25"],
    )


def test_names_are_validated_and_never_paths(tmp_path):
    ws = Workspace(tmp_path)
    for bad in ["../x", "a/b", "a\\b", "", ".hidden", " x", "x" * 101]:
        with pytest.raises(ParameterError, match="Invalid dataset name"):
            validate_name(bad)
    with pytest.raises(ParameterError, match="Invalid dataset name"):
        ws.add(b"1400\n", name="../../etc/passwd")
    info = ws.add(b"1400\n", display_name="../../evil name.txt")
    assert info.name == "evil-name"
    assert (tmp_path / "data" / f"{info.id}.parquet").is_file()
    with pytest.raises(ParameterError, match="already exists"):
        ws.add(b"1400\n", name="evil-name")


def test_owner_keeps_datasets_private(tmp_path):
    ws = Workspace(tmp_path)
    ws.add(b"q1 0 d1 1\n", name="shared")
    ws.add(b"q1 0 d1 1\n", name="mine", owner="session-a")
    ws.add(b"q1 0 d1 1\n", name="theirs", owner="session-b")
    assert [d.name for d in ws.list()] == ["shared"]
    assert [d.name for d in ws.list("session-a")] == ["mine", "shared"]
    assert [d.name for d in ws.list(all_owners=True)] == ["mine", "shared", "theirs"]
    ws.set_owner("mine", None, owner="session-a")
    assert [d.name for d in ws.list()] == ["mine", "shared"]


def test_failed_add_leaves_the_workspace_as_it_was(tmp_path):
    ws = Workspace(tmp_path)
    ws.add(CRANFIELD / "qrels.txt")
    before = snapshot(tmp_path)
    manifest = (tmp_path / "manifest.json").read_bytes()
    with pytest.raises(RejectedRowsError):
        ws.add(BAD / "wrong_field_count.trec")
    assert snapshot(tmp_path) == before
    assert (tmp_path / "manifest.json").read_bytes() == manifest
    info = ws.add(BAD / "wrong_field_count.trec", drop_bad_rows=True)
    assert (info.n_rows, info.n_rejected) == (19, 1)
    assert info.rejected == ((17, "expected 6 fields (qid Q0 docid rank score tag), got 5"),)


def test_streaming_path_gives_the_same_dataset(tmp_path, monkeypatch):
    from evalvalidity.io.ingest import _read

    data = run_text(20, 50) + b"1 Q0 D1_3 99 0.5 x\n"  # one duplicate, dropped
    ws = Workspace(tmp_path)
    in_memory = ws.add(data, name="memory", drop_bad_rows=True)
    monkeypatch.setattr(_read, "STREAM_THRESHOLD_BYTES", 0)
    streamed = ws.add(data, name="streamed", drop_bad_rows=True)
    assert ws.table("memory").equals(ws.table("streamed"))
    assert (
        (in_memory.n_rows, in_memory.n_rejected)
        == (streamed.n_rows, streamed.n_rejected)
        == (1000, 1)
    )


KILLER = """
import os, sys, time
from evalvalidity.io.ingest import _read
from evalvalidity.io.workspace import Workspace
root, path, phase, stream = sys.argv[1:5]
if stream == "stream":
    _read.STREAM_THRESHOLD_BYTES = 0
def progress(fraction, what):
    if what == phase:
        open(os.path.join(root, "..", "reached"), "w").close()
        time.sleep(60)
Workspace(root).add(path, progress=progress)
"""


@pytest.mark.parametrize("stream", ["memory", "stream"])
@pytest.mark.parametrize("phase", ["reading", "checking for duplicates", "done"])
def test_sigkill_half_way_leaves_no_half_dataset(tmp_path, phase, stream):
    root = tmp_path / "ws"
    ws = Workspace(root)
    kept = ws.add(CRANFIELD / "qrels.txt")
    big = tmp_path / "big.trec"
    big.write_bytes(run_text(300, 100))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-c", KILLER, str(root), str(big), phase, stream], env=env
    )
    marker = tmp_path / "reached"
    wait_for(marker.exists, child, "the ingest reached the kill point", interval=0.02)
    assert any((root / "tmp").iterdir())  # the ingest is in flight
    child.send_signal(signal.SIGKILL)
    assert child.wait() == -signal.SIGKILL
    reopened = Workspace(root)  # cleans up
    assert [d.name for d in reopened.list(all_owners=True)] == ["qrels"]
    assert reopened.table("qrels").num_rows == 1612
    assert reopened.info("qrels") == kept
    assert sorted(p.name for p in (root / "data").iterdir()) == [f"{kept.id}.parquet"]
    assert list((root / "tmp").iterdir()) == []


CONCURRENT = """
import sys, time
from pathlib import Path
from evalvalidity.io.workspace import Workspace
root, path, name, start = sys.argv[1:5]
while not Path(start).exists():
    time.sleep(0.005)
Workspace(root).add(path, name=name)
"""


def test_two_processes_ingest_at_once(tmp_path):
    root = tmp_path / "ws"
    Workspace(root)
    files = []
    for i in range(2):
        path = tmp_path / f"run{i}.trec"
        path.write_bytes(run_text(50, 100, tag=f"t{i}"))
        files.append(path)
    start = tmp_path / "start"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CONCURRENT, str(root), str(f), f"run{i}", str(start)], env=env
        )
        for i, f in enumerate(files)
    ]
    time.sleep(0.5)  # both are waiting at the start line
    start.touch()
    assert [c.wait(timeout=120) for c in children] == [0, 0]
    ws = Workspace(root)
    assert [d.name for d in ws.list()] == ["run0", "run1"]
    assert all(ws.table(n).num_rows == 5000 for n in ("run0", "run1"))
    assert snapshot(root)[1] == []


def test_threads_add_and_read_at_once(tmp_path):
    ws = Workspace(tmp_path)
    ws.add(CRANFIELD / "qrels.txt")
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            ws.add(run_text(10, 20, tag=f"t{i}"), name=f"run{i}", owner=f"s{i}")
            for _ in range(3):
                assert ws.table("qrels").num_rows == 1612
                assert ws.table(f"run{i}", owner=f"s{i}").num_rows == 200
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert [d.name for d in ws.list(all_owners=True)] == ["qrels", "run0", "run1", "run2", "run3"]


def test_load_resolves_files_and_dataset_names(tmp_path):
    ws = Workspace(tmp_path)
    ws.add(CRANFIELD / "qrels.txt", name="cranfield-qrels")
    assert load(CRANFIELD / "qrels.txt", "qrels").num_rows == 1612
    assert load("cranfield-qrels", "qrels", workspace=ws).num_rows == 1612
    assert load("cranfield-qrels", "qrels", workspace=tmp_path).num_rows == 1612
    with pytest.raises(
        ParameterError, match="The dataset 'cranfield-qrels' holds qrels, not a run."
    ):
        load("cranfield-qrels", "run", workspace=ws)
    with pytest.raises(ParameterError, match="'nope' is neither a file nor a dataset"):
        load("nope", "run", workspace=ws)


def test_default_path(monkeypatch, tmp_path):
    monkeypatch.setenv("EVALVALIDITY_WORKSPACE", str(tmp_path))
    assert default_path() == tmp_path
    monkeypatch.delenv("EVALVALIDITY_WORKSPACE")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_path() == tmp_path / ".local" / "share" / "evalvalidity" / "workspace"


def test_cli_ingest_and_datasets(tmp_path, capsys):
    ws = str(tmp_path)
    assert (
        main(["ingest", str(CRANFIELD / "chunks.tsv"), "--workspace", ws, "--name", "units"]) == 0
    )
    assert capsys.readouterr().out == "added 'units' (units, tsv): 6,181 rows, 0 dropped\n"
    assert (
        main(["ingest", str(BAD / "qrels_given_as_run.txt"), "--kind", "run", "--workspace", ws])
        == 2
    )
    err = capsys.readouterr().err
    assert err.endswith(
        "qrels_given_as_run.txt: this looks like TREC qrels (4 fields: qid iter docid rel), not a run\n"
    )
    assert main(["ingest", str(BAD / "nan_score.trec"), "--workspace", ws, "--drop-bad-rows"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == [
        "added 'nan_score' (run, trec): 4 rows, 1 dropped",
        "  dropped line 4: expected a finite score, found 'NaN'",
        "  note: dropped 1 bad row",
    ]
    assert main(["datasets", "--workspace", ws, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [d["name"] for d in listed] == ["nan_score", "units"]
    assert main(["datasets", "show", "units", "--workspace", ws, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_rows"] == 6181
    assert main(["datasets", "rename", "units", "chunks", "--workspace", ws]) == 0
    assert capsys.readouterr().out == "renamed 'units' to 'chunks'\n"
    assert main(["datasets", "delete", "nan_score", "--workspace", ws]) == 0
    capsys.readouterr()
    assert main(["datasets", "list", "--workspace", ws]) == 0
    assert capsys.readouterr().out.startswith("chunks ")
    assert main(["datasets", "show", "nope", "--workspace", ws]) == 2
    assert "No dataset named 'nope'" in capsys.readouterr().err


def test_cli_datasets_options_before_and_after_the_action(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("EVALVALIDITY_WORKSPACE", str(tmp_path / "default"))
    ws = str(tmp_path / "ws")
    assert main(["ingest", str(CRANFIELD / "qrels.txt"), "--workspace", ws]) == 0
    capsys.readouterr()
    for argv in (
        ["datasets", "--workspace", ws, "--json", "list"],
        ["datasets", "list", "--workspace", ws, "--json"],
        ["datasets", "--workspace", ws, "list", "--json"],
    ):
        assert main(argv) == 0
        assert [d["name"] for d in json.loads(capsys.readouterr().out)] == ["qrels"]
    assert main(["datasets", "list"]) == 0
    assert capsys.readouterr().out.startswith("no datasets in ")


def test_private_names_never_leak_to_another_owner(tmp_path):
    ws = Workspace(tmp_path)
    mine = ws.add(b"q1 0 d1 1\n", display_name="x.trec", owner="alice")
    assert mine.name == "x"
    # bob's upload of x.trec is his "x", not "x-2": nothing says that alice has an "x"
    theirs = ws.add(b"q1 0 d2 1\n", display_name="x.trec", owner="bob")
    assert theirs.name == "x"
    assert ws.add(b"q1 0 d3 1\n", name="x", owner="carol").owner == "carol"
    assert ws.find("x", owner="alice") == mine
    assert ws.find("x", owner="bob") == theirs
    assert ws.find("x") is None
    for call in (
        lambda: ws.info("x"),
        lambda: ws.table("x", owner="dave"),
        lambda: ws.rename("x", "y", owner="dave"),
        lambda: ws.delete("x"),
        lambda: ws.set_owner("x", None, owner="dave"),
    ):
        with pytest.raises(ParameterError) as info:
            call()
        assert str(info.value) == f"No dataset named 'x' in the workspace {tmp_path}."
    # renames and shares clash only with names the owner sees
    ws.rename("x", "y", owner="alice")
    assert ws.add(b"q1 0 d1 1\n", name="y", owner="bob").name == "y"
    # a shared "x" coexists; each owner's private one still wins for that owner
    shared = ws.add(b"q1 0 d4 1\n", display_name="x.trec")
    assert (shared.name, shared.owner) == ("x", None)
    assert ws.find("x", owner="dave") == shared
    assert ws.find("x", owner="bob") == theirs
    assert [(d.name, d.owner) for d in ws.list("bob")] == [("x", "bob"), ("y", "bob")]
    assert [(d.name, d.owner) for d in ws.list("alice")] == [("x", None), ("y", "alice")]
    with pytest.raises(ParameterError, match="A dataset named 'x' already exists"):
        ws.set_owner("x", None, owner="bob")  # the shared "x" is public knowledge
    with pytest.raises(ParameterError, match="A dataset named 'x' already exists"):
        ws.add(b"q1 0 d1 1\n", name="x", owner="alice")  # alice sees the shared one
    assert ws.add(b"q1 0 d1 1\n", display_name="x.trec", owner="alice").name == "x-2"
    ws.delete("x", owner="bob")
    assert ws.find("x", owner="bob") == shared
    assert ws.table("y", owner="bob").column("docid").to_pylist() == ["d1"]
    assert sorted((d.name, d.owner or "") for d in ws.list(all_owners=True)) == [
        ("x", ""),
        ("x", "carol"),
        ("x-2", "alice"),
        ("y", "alice"),
        ("y", "bob"),
    ]


def test_cli_names_resolve_for_an_owner(tmp_path, capsys):
    from evalvalidity.cli import main

    ws = str(tmp_path)
    Workspace(tmp_path).add(b"q1 0 d1 1\n", name="mine", owner="alice")
    assert main(["datasets", "show", "mine", "--workspace", ws]) == 2
    assert capsys.readouterr().err == (
        f"evalvalidity datasets: error: No dataset named 'mine' in the workspace {ws}.\n"
    )
    assert main(["datasets", "show", "mine", "--owner", "alice", "--workspace", ws, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["owner"] == "alice"
    assert main(["datasets", "rename", "mine", "ours", "--owner", "alice", "--workspace", ws]) == 0
    assert main(["datasets", "delete", "ours", "--owner", "alice", "--workspace", ws]) == 0
    assert capsys.readouterr().out == "renamed 'mine' to 'ours'\ndeleted 'ours'\n"
    assert Workspace(tmp_path).list(all_owners=True) == []


def test_a_version_1_manifest_is_migrated_transparently(tmp_path):
    ws = Workspace(tmp_path)
    shared = ws.add(b"q1 0 d1 1\n", name="shared")
    private = ws.add(b"q1 0 d2 1\n", name="mine", owner="alice")
    manifest = tmp_path / "manifest.json"
    assert json.loads(manifest.read_text())["version"] == 2
    # the layout of version 1: one namespace, keyed by name
    legacy = {"version": 1, "datasets": {i.name: i.to_json() for i in (private, shared)}}
    manifest.write_text(json.dumps(legacy))
    reopened = Workspace(tmp_path)
    assert reopened.list("alice") == [private, shared]
    assert reopened.find("mine") is None
    assert reopened.table("mine", owner="alice").column("docid").to_pylist() == ["d2"]
    reopened.rename("shared", "common")
    record = json.loads(manifest.read_text())
    assert record["version"] == 2
    assert [(d["owner"], d["name"]) for d in record["datasets"]] == [
        (None, "common"),
        ("alice", "mine"),
    ]
    assert Workspace(tmp_path).info("mine", owner="alice") == private
