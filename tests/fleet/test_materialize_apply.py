"""Materializing a snapshot tree and applying a result, on real repositories and stores (no model)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from agentcli.fleet.apply import ApplyConflict, ApplyError, apply_result, undo_apply
from agentcli.fleet.materialize import MaterializeError, materialize
from agentcli.fleet.workdir import capture_workspace, collect, from_snapshot, store_path
from tests.fleet.conftest import git_fingerprint


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "data"


def _attempt(project: Path, data: Path, tmp_path: Path) -> tuple[Path, str]:
    tree, _ = capture_workspace(project, data, "race-t", "race start")
    workdir = tmp_path / "attempt" / "work"
    prepared = from_snapshot(project, tree, workdir, data)
    return workdir, prepared.base_tree


def test_materialize_writes_modes_symlinks_and_nested_folders(project: Path, data: Path, tmp_path: Path) -> None:
    (project / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (project / "run.sh").chmod(0o755)
    (project / "pkg" / "sub").mkdir(parents=True)
    (project / "pkg" / "sub" / "mod.py").write_bytes(b"x = 1\r\n")  # CRLF kept byte for byte
    os.symlink("pkg/sub/mod.py", project / "link.py")
    before = git_fingerprint(project)
    tree, _ = capture_workspace(project, data, "race-t", "race start")

    target = tmp_path / "copy"
    stats = materialize(store_path(project, data), tree, target)

    assert stats.files == 7  # calc.py README.md .gitignore notes.txt run.sh mod.py link.py
    assert (target / "run.sh").stat().st_mode & stat.S_IXUSR
    assert not (target / "calc.py").stat().st_mode & stat.S_IXUSR
    assert (target / "pkg" / "sub" / "mod.py").read_bytes() == b"x = 1\r\n"
    assert os.readlink(target / "link.py") == "pkg/sub/mod.py"
    assert (target / "README.md").read_text() == (project / "README.md").read_text()  # uncommitted edit
    assert not (target / "build").exists() and not (target / ".git").exists()  # ignored; never copied
    assert git_fingerprint(project) == before
    with pytest.raises(MaterializeError, match="not empty"):
        materialize(store_path(project, data), tree, target)
    with pytest.raises(MaterializeError, match="not in the snapshot store"):
        materialize(store_path(project, data), "0" * 40, tmp_path / "other")


def test_apply_writes_and_deletes_only_what_the_attempt_changed(project: Path, data: Path, tmp_path: Path) -> None:
    workdir, base = _attempt(project, data, tmp_path)
    (workdir / "calc.py").write_text("changed\n")
    (workdir / "notes.txt").unlink()
    (workdir / "new" / "deep").mkdir(parents=True)
    (workdir / "new" / "deep" / "file.txt").write_text("new\n")
    final = collect(workdir, data)
    (project / "README.md").write_text("the user's edit after the race began\n")  # a path the attempt left

    result = apply_result(workspace=project, data_dir=data, attempt_store=store_path(workdir, data), base_tree=base,
                          final_tree=final.final_tree, session_id="race-t", label="attempt 1")

    assert sorted(result.written) == ["calc.py", "new/deep/file.txt"] and result.deleted == ["notes.txt"]
    assert (project / "calc.py").read_text() == "changed\n" and not (project / "notes.txt").exists()
    assert (project / "README.md").read_text() == "the user's edit after the race began\n"
    assert (project / "build" / "out.bin").read_bytes() == b"ignored"

    changed, _ = undo_apply(project, data, result.undo_snapshot, "race-t")
    assert changed == 3
    assert (project / "notes.txt").read_text() == "my notes\n" and not (project / "new").exists()
    assert (project / "README.md").read_text() == "the user's edit after the race began\n"


def test_conflicts_write_nothing_unless_forced(project: Path, data: Path, tmp_path: Path) -> None:
    workdir, base = _attempt(project, data, tmp_path)
    (workdir / "calc.py").write_text("attempt\n")
    (workdir / "build.txt").write_text("attempt\n")
    (workdir / "README.md").write_text("attempt readme\n")
    final = collect(workdir, data).final_tree
    (project / "calc.py").write_text("user\n")
    (project / ".git" / "info" / "exclude").write_text("build.txt\n")
    (project / "build.txt").write_text("user's ignored file\n")
    store = store_path(workdir, data)

    with pytest.raises(ApplyConflict) as raised:
        apply_result(workspace=project, data_dir=data, attempt_store=store, base_tree=base, final_tree=final,
                     session_id="race-t", label="attempt 1")
    assert sorted(c.path for c in raised.value.conflicts) == ["build.txt", "calc.py"]
    assert (project / "calc.py").read_text() == "user\n" and (project / "README.md").read_text() != "attempt readme\n"

    forced = apply_result(workspace=project, data_dir=data, attempt_store=store, base_tree=base, final_tree=final,
                          session_id="race-t", label="attempt 1", force=True)
    assert sorted(c.path for c in forced.overwritten) == ["build.txt", "calc.py"]
    assert (project / "calc.py").read_text() == "attempt\n"
    assert (project / "README.md").read_text() == "attempt readme\n"


def test_a_symlinked_folder_leading_outside_is_refused(project: Path, data: Path, tmp_path: Path) -> None:
    workdir, base = _attempt(project, data, tmp_path)
    (workdir / "out").mkdir()
    (workdir / "out" / "x.txt").write_text("x\n")
    final = collect(workdir, data).final_tree
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, project / "out")
    with pytest.raises(ApplyError, match="outside the workspace"):
        apply_result(workspace=project, data_dir=data, attempt_store=store_path(workdir, data), base_tree=base,
                     final_tree=final, session_id="race-t", label="attempt 1", force=True)
    assert not (outside / "x.txt").exists()


def test_an_attempt_that_turns_a_file_into_a_folder_and_back_applies(project: Path, data: Path,
                                                                       tmp_path: Path) -> None:
    (project / "pkg").mkdir()
    (project / "pkg" / "mod.py").write_text("x = 1\n")
    workdir, base = _attempt(project, data, tmp_path)
    (workdir / "notes.txt").unlink()
    (workdir / "notes.txt").mkdir()
    (workdir / "notes.txt" / "today.md").write_text("a folder now\n")
    (workdir / "pkg" / "mod.py").unlink()
    (workdir / "pkg").rmdir()
    (workdir / "pkg").write_text("a file now\n")
    final = collect(workdir, data)

    result = apply_result(workspace=project, data_dir=data, attempt_store=store_path(workdir, data), base_tree=base,
                          final_tree=final.final_tree, session_id="race-t", label="attempt 1")
    assert (project / "notes.txt" / "today.md").read_text() == "a folder now\n"
    assert (project / "pkg").read_text() == "a file now\n"
    assert sorted(result.deleted) == ["notes.txt", "pkg/mod.py"]


def test_a_file_of_the_users_where_the_attempt_makes_a_folder_is_a_conflict(project: Path, data: Path,
                                                                            tmp_path: Path) -> None:
    workdir, base = _attempt(project, data, tmp_path)
    (workdir / "calc.py").write_text("attempt\n")
    (workdir / "docs").mkdir()
    (workdir / "docs" / "guide.md").write_text("guide\n")
    final = collect(workdir, data)
    (project / "docs").write_text("the user's own file, made after the race began\n")
    before = {p.name: p.read_bytes() for p in project.iterdir() if p.is_file()}

    with pytest.raises(ApplyConflict) as raised:
        apply_result(workspace=project, data_dir=data, attempt_store=store_path(workdir, data), base_tree=base,
                     final_tree=final.final_tree, session_id="race-t", label="attempt 1")
    assert [c.path for c in raised.value.conflicts] == ["docs/guide.md"]
    assert {p.name: p.read_bytes() for p in project.iterdir() if p.is_file()} == before  # nothing written
