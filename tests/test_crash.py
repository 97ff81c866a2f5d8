"""Crash safety: SIGKILL at any instant, and a full disk, never lose or half-write anything.

- The workspace: a child process adds, renames and deletes datasets in a loop and is killed
  with SIGKILL at random instants (``tests/test_workspace.py`` kills it at chosen phases of an
  ingest); every time the workspace reopens with every earlier dataset intact and nothing left
  behind.
- Report export: a child writes ``report.to_json`` through :func:`evalvalidity.io.atomic.atomic_write`
  and is killed while writing, syncing or renaming; the report is always one whole version.
- A full disk: a 2 MiB tmpfs (``mount -t tmpfs``, root only; skipped, saying why, elsewhere).
  An ingest, a rename and a report write each fail with a message saying the disk is full,
  and leave every byte as it was.
"""

from __future__ import annotations

import errno
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, TOY, run_text, wait_for

from evalvalidity.errors import EvalValidityError
from evalvalidity.io.atomic import StorageError, atomic_write, remove_stale_temporaries
from evalvalidity.io.ingest import _read
from evalvalidity.io.workspace import Workspace

ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def assert_consistent(root: Path) -> Workspace:
    """Reopen: every listed dataset is readable, nothing unreferenced or temporary is left."""
    ws = Workspace(root)
    listed = ws.list(all_owners=True)
    for info in listed:
        assert ws.table(info.name, owner=info.owner).num_rows == info.n_rows
    assert sorted(p.name for p in (root / "data").iterdir()) == sorted(
        f"{info.id}.parquet" for info in listed
    )
    assert list((root / "tmp").iterdir()) == []
    return ws


# -- SIGKILL at random instants ----------------------------------------------------------------
CHURN = """
import itertools, sys
from pathlib import Path
from evalvalidity.io.workspace import Workspace
root, path, ready, attempt = sys.argv[1:5]
ws = Workspace(root)
Path(ready).touch()
for i in itertools.count():
    info = ws.add(path, name=f"run-{attempt}-{i}", owner="churn")
    ws.rename(info.name, f"renamed-{attempt}-{i}", owner="churn")
    ws.set_owner(f"renamed-{attempt}-{i}", None, owner="churn")
    if i == 0:
        ws.add(path, name=f"set-{attempt}-0")
    if i % 2:
        ws.delete(f"renamed-{attempt}-{i}")
"""


def test_sigkill_at_random_instants_of_add_rename_delete(tmp_path):
    root = tmp_path / "ws"
    ws = Workspace(root)
    kept = ws.add(TOY / "qrels.txt", name="kept")
    kept_table = ws.table("kept")
    source = tmp_path / "run.trec"
    source.write_bytes(run_text(100, 100))
    rng = random.Random(20240611)
    n_kills = 3
    for attempt in range(n_kills):
        ready = tmp_path / f"ready-{attempt}"
        child = subprocess.Popen(
            [sys.executable, "-c", CHURN, str(root), str(source), str(ready), str(attempt)],
            env=ENV,
        )
        wait_for(ready.exists, child, "its loop")
        if attempt == n_kills - 1:
            # On a busy machine the first add can outlast the random delay: the last child is
            # let finish one whole iteration, so the check below sees work done, however slow.
            wait_for(
                lambda: Workspace(root).find(f"set-{attempt}-0") is not None,  # noqa: B023
                child,
                "its first iteration",
            )
        time.sleep(rng.uniform(0.05, 1.0))
        child.send_signal(signal.SIGKILL)
        assert child.wait() == -signal.SIGKILL
        reopened = assert_consistent(root)
        assert reopened.info("kept") == kept
        assert reopened.table("kept").equals(kept_table)
    names = [d.name for d in Workspace(root).list(all_owners=True)]
    assert "kept" in names and len(names) > 1  # the children did get work done


# -- report export ------------------------------------------------------------------------------
EXPORT = """
import os, sys, time
from pathlib import Path
from evalvalidity.io import atomic as _atomic
from evalvalidity.report import records as report
from evalvalidity.analysis.check import PoolSpec, check_tables
from evalvalidity.io.ingest import read_qrels, read_run
target, ready, pause = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
toy = Path(sys.argv[4])
versions = []
for seed in (0, 1):
    result = check_tables(read_run(toy / "model.trec"), read_qrels(toy / "qrels.txt"),
                             pool=PoolSpec(corpus_size=200), seeds=10, seed=seed)
    # a long report, so that a kill lands inside the write
    versions.append(report.to_json(result) + " " * (4 << 20) + "\\n")
(target.parent / "versions.json").write_text(__import__("json").dumps(versions))
if pause:
    # stop inside the second write (fsync: file then folder, per write), so that the kill
    # lands exactly there with a first version in place
    real = getattr(os, pause)
    calls = [0]
    def hook(*args):
        calls[0] += 1
        if calls[0] == {"fsync": 3, "replace": 2}[pause]:
            ready.touch()
            time.sleep(60)
        return real(*args)
    setattr(os, pause, hook)
else:
    ready.touch()
i = 0
while True:
    _atomic.atomic_write(target, versions[i % 2])
    i += 1
"""


@pytest.mark.parametrize("pause", ["", "fsync", "replace"])
def test_sigkill_during_a_report_export_leaves_a_whole_report(tmp_path, pause):
    """Killed at a random instant of a write loop, or exactly inside the second write."""
    target = tmp_path / "check.json"
    ready = tmp_path / "ready"
    child = subprocess.Popen(
        [sys.executable, "-c", EXPORT, str(target), str(ready), pause, str(TOY)], env=ENV
    )
    wait_for(ready.exists, child, "writing", interval=0.005)
    if not pause:
        # Killed at a random instant after the first write is whole, so that there is always a
        # version to find: on a busy machine the random delay could end before the first write.
        wait_for(target.exists, child, "the first whole write", interval=0.005)
        time.sleep(random.Random(7).uniform(0.2, 0.6))
    child.send_signal(signal.SIGKILL)
    assert child.wait() == -signal.SIGKILL
    versions = json.loads((tmp_path / "versions.json").read_text())
    text = target.read_text(encoding="utf-8")
    if pause:  # the first write is whole; the second one never shows
        assert text == versions[0]
        assert len(list(tmp_path.glob(".check.json.*.tmp"))) == 1
    else:
        assert text in versions  # one whole version, never a mix or a prefix
        assert len(list(tmp_path.glob(".check.json.*.tmp"))) <= 1  # at most the killed write's
    assert json.loads(text)["verdict"] in ("healthy", "warning", "broken")
    # the killed writes' temporaries are hidden and cleared once stale
    leftovers = [p.name for p in tmp_path.glob(".check.json.*.tmp")]
    assert remove_stale_temporaries(tmp_path, older_than=0) == len(leftovers)
    assert not list(tmp_path.glob(".*.tmp"))


# -- a full disk -----------------------------------------------------------------------------
@pytest.fixture
def small_disk(tmp_path):
    """A 2 MiB tmpfs, mounted for the test and unmounted after it."""
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    if os.geteuid() != 0:
        pytest.skip("a full disk needs a tmpfs mount, which needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"mount -t tmpfs is not permitted here: {done.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def fill(folder: Path) -> Path:
    """Fill the disk under ``folder`` to the last byte."""
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC, exc  # full, not failing for another reason
    finally:
        os.close(fd)
    return filler


@pytest.mark.parametrize("stream", [False, True], ids=["in-memory", "streamed"])
def test_disk_full_during_an_ingest_loses_nothing(small_disk, tmp_path, monkeypatch, stream):
    root = small_disk / "ws"
    ws = Workspace(root)
    kept = ws.add(TOY / "qrels.txt", name="kept")
    big = tmp_path / "big.trec"  # on the big disk; its Parquet would not fit the small one
    rng = random.Random(3)
    big.write_text(
        "".join(
            f"q{rng.randrange(10**6)} Q0 d{rng.randrange(10**9)} 1 {rng.random()!r} t\n"
            for _ in range(200_000)
        )
    )
    before = tree(root)
    if stream:
        monkeypatch.setattr(_read, "STREAM_THRESHOLD_BYTES", 0)
    with pytest.raises(StorageError) as info:
        ws.add(big)
    assert str(info.value) == (
        f"Cannot add {str(big)!r} to the workspace {root}: the disk is full (No space left on"
        " device)."
    )
    assert isinstance(info.value, EvalValidityError)
    assert tree(root) == before
    reopened = assert_consistent(root)
    assert reopened.info("kept") == kept
    assert reopened.table("kept").num_rows == kept.n_rows
    assert reopened.add(b"1400\n", name="small").n_rows == 1  # room enough for a small one


def test_disk_full_during_rename_delete_and_report_keeps_the_old_versions(small_disk):
    root = small_disk / "ws"
    ws = Workspace(root)
    ws.add(TOY / "qrels.txt", name="kept")
    report_path = small_disk / "check.json"
    atomic_write(report_path, '{"verdict": "healthy"}\n')
    filler = fill(small_disk)
    before = tree(root)
    for action, call in (
        ("rename 'kept'", lambda: ws.rename("kept", "renamed")),
        ("delete 'kept'", lambda: ws.delete("kept")),
    ):
        with pytest.raises(StorageError) as info:
            call()
        assert str(info.value) == (
            f"Cannot {action} in the workspace {root}: the disk is full (No space left on device)."
        )
        assert tree(root) == before
    with pytest.raises(StorageError) as info:
        atomic_write(report_path, '{"verdict": "broken"}\n' + " " * 100_000)
    assert str(info.value) == (
        f"Cannot write {report_path}: the disk is full (No space left on device)."
    )
    assert report_path.read_text() == '{"verdict": "healthy"}\n'
    assert not list(small_disk.glob(".*.tmp"))
    filler.unlink()
    assert [d.name for d in assert_consistent(root).list()] == ["kept"]
    ws.rename("kept", "renamed")
    assert [d.name for d in Workspace(root).list()] == ["renamed"]


def test_delete_frees_space_on_a_nearly_full_disk(small_disk, capsys):
    from evalvalidity.cli import main

    root = small_disk / "ws"
    ws = Workspace(root)
    for i in range(64):
        ws.add(b"q1 0 d1 1\n", name=f"qrels-{i}", display_name=f"qrels-{i}.txt")
    big = ws.add(run_text(100, 100), name="big")
    manifest_size = (root / "manifest.json").stat().st_size
    reserve = small_disk / "reserve"
    reserve.write_bytes(b"\0" * 8192)
    fill(small_disk)
    reserve.unlink()  # 8 KiB free: room for a line, not for a new manifest
    assert manifest_size > 3 * 8192
    with pytest.raises(StorageError, match="the disk is full"):
        ws.rename("big", "renamed")  # a rename needs a whole new manifest
    assert main(["datasets", "delete", "big", "--workspace", str(root)]) == 0
    assert capsys.readouterr().out == "deleted 'big'\n"
    reopened = assert_consistent(root)
    assert reopened.find("big") is None
    assert len(reopened.list()) == 64
    assert not (root / "data" / f"{big.id}.parquet").exists()
    assert not (root / "manifest.deleted").exists()  # the freed space held the new manifest
    assert (root / "manifest.json").stat().st_size < manifest_size


def test_a_delete_killed_anywhere_is_all_or_nothing(tmp_path):
    ws = Workspace(tmp_path)
    ws.add(b"q1 0 d1 1\n", name="kept")
    gone = ws.add(b"q1 0 d2 1\n", name="gone")
    # killed after the line was written, before the file was removed: the delete stands
    with (tmp_path / "manifest.deleted").open("a") as handle:
        handle.write(f"\n{gone.id}\n")
    assert [d.name for d in ws.list()] == ["kept"]
    assert [d.name for d in assert_consistent(tmp_path).list()] == ["kept"]  # file collected
    # a torn line (killed inside the write) deletes nothing, and the next one still counts
    with (tmp_path / "manifest.deleted").open("a") as handle:
        handle.write(gone.id[:7])
    assert [d.name for d in Workspace(tmp_path).list()] == ["kept"]
    ws.add(b"q1 0 d3 1\n", name="new")  # any change writes the manifest without "gone"
    assert not (tmp_path / "manifest.deleted").exists()
    assert [
        d["name"] for d in json.loads((tmp_path / "manifest.json").read_text())["datasets"]
    ] == [
        "kept",
        "new",
    ]


# -- concurrent sessions, damaged files ----------------------------------------------------------
def test_concurrent_sessions_with_failing_uploads_lose_nothing(tmp_path):
    import threading

    ws = Workspace(tmp_path)
    kept = ws.add(TOY / "qrels.txt", name="kept")
    good = run_text(20, 20)
    bad = good + b"1 Q0 D1_1 99 0.5 x\n"  # a duplicate: refused
    errors: list[str] = []
    failures = [0]

    def session(i: int) -> None:
        for j in range(4):
            try:
                ws.add(bad if j % 2 else good, name=f"s{i}-{j}", owner=f"session-{i}")
            except EvalValidityError:
                failures[0] += 1
            except BaseException as exc:  # reported below
                errors.append(repr(exc))

    threads = [threading.Thread(target=session, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert failures[0] == 8
    reopened = assert_consistent(tmp_path)
    assert sorted(d.name for d in reopened.list(all_owners=True)) == sorted(
        ["kept", *(f"s{i}-{j}" for i in range(4) for j in (0, 2))]
    )
    assert reopened.info("kept") == kept


def test_a_damaged_dataset_file_is_reported_not_a_crash(tmp_path):
    ws = Workspace(tmp_path)
    info = ws.add(TOY / "qrels.txt", name="kept")
    data = tmp_path / "data" / f"{info.id}.parquet"
    data.write_bytes(data.read_bytes()[:100])
    with pytest.raises(StorageError) as raised:
        ws.get("kept")
    assert str(raised.value).startswith(f"The dataset 'kept' cannot be read from {data}: ")


# -- every file and stream the command line writes -------------------------------------------
def cli(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "evalvalidity", *args],
        capture_output=True,
        text=True,
        env=ENV,
        check=False,
        **kwargs,
    )


CHECK = ("check", "--run", str(TOY / "model.trec"), "--qrels", str(TOY / "qrels.txt"))
CHECK_ARGS = (*CHECK, "--pool-size", "1400", "--seeds", "2")


def assert_one_line_error(done: subprocess.CompletedProcess, command: str, message: str) -> None:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr == f"evalvalidity {command}: error: {message}\n"


@pytest.mark.parametrize(
    ("where", "message"),
    [
        (
            "missing/check.json",
            "Cannot write {tmp}/missing/check.json: the folder {tmp}/missing does not exist.",
        ),
        (".", "Cannot write {tmp}/.: it is a folder; give a file name."),
        (
            "file/check.json",
            "Cannot write {tmp}/file/check.json: the folder {tmp}/file is not a folder.",
        ),
    ],
    ids=["missing-folder", "folder-as-file", "file-as-folder"],
)
def test_check_output_to_a_bad_path_exits_2_in_one_line(tmp_path, where, message):
    (tmp_path / "file").write_text("kept\n")
    done = cli(*CHECK_ARGS, "--output", f"{tmp_path}/{where}")
    assert_one_line_error(done, "check", message.format(tmp=tmp_path))
    assert (tmp_path / "file").read_text() == "kept\n"


def test_check_output_on_a_full_disk_keeps_the_old_file(small_disk):
    output = small_disk / "check.json"
    output.write_text('{"verdict": "healthy"}\n')
    fill(small_disk)
    done = cli(*CHECK_ARGS, "--format", "json", "--output", str(output))
    assert_one_line_error(
        done, "check", f"Cannot write {output}: the disk is full (No space left on device)."
    )
    assert output.read_text() == '{"verdict": "healthy"}\n'
    assert not list(small_disk.glob(".*.tmp"))


@pytest.mark.parametrize(
    "command",
    [
        CHECK_ARGS,
        ("score", "--run", str(TOY / "model.trec"), "--qrels", str(TOY / "qrels.txt"), "-q"),
        ("floor", "ap", "-N", "100", "-G", "3"),
        ("datasets", "list"),
    ],
    ids=lambda c: c[0],
)
@pytest.mark.parametrize("stdout", ["/dev/full", "closed"])
def test_a_full_or_closed_standard_output_exits_2_in_one_line(tmp_path, command, stdout):
    env = {**ENV, "EVALVALIDITY_WORKSPACE": str(tmp_path / "ws")}
    argv = [sys.executable, "-m", "evalvalidity", *command]
    if stdout == "closed":
        done = subprocess.run(
            ["sh", "-c", '"$@" >&-', "sh", *argv], capture_output=True, text=True, env=env
        )
        message = "Cannot write to standard output: it is closed."
    else:
        with open("/dev/full", "w") as full:
            done = subprocess.run(argv, stdout=full, stderr=subprocess.PIPE, text=True, env=env)
        message = "Cannot write the output: the disk is full (No space left on device)."
    assert_one_line_error(done, command[0], message)


def _report_args(out: Path, run: Path = TOY / "model.trec") -> tuple[str, ...]:
    return (
        "report",
        "--run",
        str(run),
        "--qrels",
        str(TOY / "qrels.txt"),
        "--pool-size",
        "1400",
        "--seeds",
        "2",
        "--out",
        str(out),
    )


def test_a_second_report_replaces_the_first_whole(tmp_path):
    out = tmp_path / "report"
    assert cli(*_report_args(out)).returncode == 0
    (out / "charts" / "stale_chart.svg").write_text("<svg/>")  # a chart only the first had
    assert cli(*_report_args(out, TOY / "noise.trec")).returncode == 0
    assert not (out / "charts" / "stale_chart.svg").exists()
    assert json.loads((out / "check.json").read_text())["run"] == "noise.trec"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]  # no staging folder left


def test_a_report_never_replaces_a_folder_of_other_files(tmp_path):
    (tmp_path / "notes.txt").write_text("mine\n")
    done = cli(*_report_args(tmp_path))
    assert_one_line_error(
        done,
        "report",
        f"The report folder '{tmp_path}' holds files that are not a report's ('notes.txt'); "
        "give a new folder, an empty one or an earlier report's.",
    )
    assert tree(tmp_path) == {"notes.txt": b"mine\n"}


def test_a_report_on_a_full_disk_leaves_the_old_report_whole(small_disk):
    out = small_disk / "report"
    assert cli(*_report_args(out)).returncode == 0
    before = tree(out)
    fill(small_disk)
    done = cli(*_report_args(out, TOY / "noise.trec"))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith(f"evalvalidity report: error: Cannot write the report {out}")
    assert done.stderr.endswith(": the disk is full (No space left on device).\n")
    assert tree(out) == before
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler", "report"]
