"""Benchmark of the snapshot store against baselines doing the same work, in paired runs.

    python bench/snapshots.py                                # 1,000 and 10,000 files
    python bench/snapshots.py --sizes 1000 10000 50000 100000 --repeat 5
    python bench/snapshots.py --split-ab     # also: the split walk against the one-thread walk

The split walk runs only while the 1-minute load average leaves a CPU free (see
`agentcli/snapshots/splitwalk.py`); the load average at start is printed, and `--split-ab` shows
whether it ran (a ratio near 1.00 means both sides walked on one thread).

For each size a tree is generated, committed in a real git repository and packed (`git gc`).
Each row pairs one run of ours with one run of its baseline on the same workspace state, the
order alternating; the ratio printed is the median of the per-pair ratios (with their range), so
a machine loaded by other work slows both sides of a pair alike. The baselines:

- git, with the store's own design: a bare shadow repository borrowing the user's objects
  (alternates), its index seeded from a copy of the user's, filters off. Full captures run
  `git add -A && git write-tree`; hinted captures get the same paths ours gets
  (`git add -A -- PATHS && git write-tree`), which for `bash` ours learns from its watcher.
- raw pygit2 for restores: diff the current tree with the target and write only the paths that
  differ (blob bytes, modes, deletions), with none of the store's checks, undo capture, atomic
  renames or layout record. The target of each restore is a turn's start (it records its layout).

Each row prints the baseline's command. No test asserts any of these times.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentcli.snapshots import Snapshot, SnapshotStore, splitwalk
from agentcli.snapshots.gc import dir_size

GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}
WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma".split()
GIT_CAPTURE = "git --git-dir=SHADOW --work-tree=WS add -A && git write-tree  (SHADOW: alternates + copy of .git/index)"
GIT_HINTED = "git --git-dir=SHADOW --work-tree=WS add -A -- PATHS && git write-tree"
RAW_RESTORE = "pygit2: repo.diff(current, target); write each differing blob, chmod, unlink"
ONE_THREAD = "the same capture with the walk on one thread (splitwalk.MIN_ENTRIES raised), as before the split"


def run(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    """Runs a command, failing loudly."""
    proc = subprocess.run(args, cwd=cwd, env=env or GIT_ENV, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


def generate_tree(root: Path, files: int, seed: int = 1) -> list[str]:
    """Writes `files` source-like text files in nested directories; returns their paths."""
    rng = random.Random(seed)
    paths: list[str] = []
    for i in range(files):
        d = i // 40
        rel = f"pkg{d // 100:03d}/mod{d % 100:02d}/file{i:06d}.py"
        body = "".join(
            f"def f{j}():  # {' '.join(rng.choices(WORDS, k=rng.randint(2, 8)))}\n    return {j}\n"
            for j in range(rng.randint(5, 80) // 2)
        )
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body)
        paths.append(rel)
    (root / ".gitignore").write_text("*.log\n__pycache__/\nbuild/\n")
    return paths


@dataclass
class GitShadow:
    """The git CLI's shadow repository and index for the same workspace, designed like ours."""

    workspace: Path
    gitdir: Path

    @classmethod
    def create(cls, workspace: Path, where: Path) -> GitShadow:
        gitdir = where / "git-shadow.git"
        shutil.rmtree(gitdir, ignore_errors=True)
        run("git", "init", "-q", "--bare", str(gitdir))
        (gitdir / "info").mkdir(exist_ok=True)
        (gitdir / "info" / "attributes").write_text("* -text -filter -ident -working-tree-encoding\n")
        (gitdir / "objects" / "info" / "alternates").write_text(str(workspace / ".git" / "objects") + "\n")
        shutil.copy2(workspace / ".git" / "index", gitdir / "index")
        return cls(workspace=workspace, gitdir=gitdir)

    def git(self, *args: str) -> str:
        env = {**GIT_ENV, "GIT_INDEX_FILE": str(self.gitdir / "index")}
        return run("git", "--git-dir", str(self.gitdir), "--work-tree", str(self.workspace), *args, env=env)

    def capture(self, paths: list[str] | None = None) -> str:
        self.git("add", "-A", *(["--", *paths] if paths is not None else []))
        return self.git("write-tree").strip()


def raw_restore(repo: pygit2.Repository, workspace: Path, current: str, target: str) -> None:
    """The least a restore can do: write the paths that differ, nothing else."""
    diff: pygit2.Diff = repo.diff(repo[current], repo[target])  # type: ignore[call-overload]
    for delta in diff.deltas:
        if delta.status == pygit2.enums.DeltaStatus.DELETED:
            (workspace / delta.old_file.path).unlink()
            continue
        path = workspace / delta.new_file.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(repo[delta.new_file.id].data)  # type: ignore[attr-defined]
        path.chmod(0o755 if delta.new_file.mode == pygit2.enums.FileMode.BLOB_EXECUTABLE else 0o644)


def timed(fn: Callable[[], object]) -> float:
    """Milliseconds one call takes."""
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


@dataclass
class Row:
    """One line of the results: paired runs of ours and a baseline."""

    label: str
    baseline: str
    goal: str = ""
    ours: list[float] = field(default_factory=list)
    base: list[float] = field(default_factory=list)

    def pair(self, i: int, ours: Callable[[], object], base: Callable[[], object]) -> None:
        """One paired run; who goes first alternates, so neither always finds a warm cache."""
        if i % 2:
            self.base.append(timed(base))
            self.ours.append(timed(ours))
        else:
            self.ours.append(timed(ours))
            self.base.append(timed(base))

    def line(self) -> str:
        ratios = sorted(o / b for o, b in zip(self.ours, self.base, strict=True))
        ours, base = statistics.median(self.ours), statistics.median(self.base)
        spread = f"{ratios[0]:.2f}-{ratios[-1]:.2f}"
        return (
            f"  {self.label:<44}{ours:9.1f}{base:9.1f}{statistics.median(ratios):7.2f}  {spread:<10} "
            f"{self.goal}"
        )


class Mutator:
    """Changes k files of the workspace, differently every time."""

    def __init__(self, workspace: Path, paths: list[str]) -> None:
        self.workspace = workspace
        self.paths = paths
        self.counter = 0

    def change(self, k: int) -> list[str]:
        chosen = [self.paths[(self.counter * 7919 + i * 104729) % len(self.paths)] for i in range(k)]
        self.counter += 1
        for rel in chosen:
            with open(self.workspace / rel, "a") as fh:
                fh.write(f"# change {self.counter}\n")
        return chosen

    def touch_all(self) -> None:
        """Every file gets a new mtime, same content (a formatter, a branch switch and back)."""
        stamp = time.time()
        for rel in self.paths:
            os.utime(self.workspace / rel, (stamp, stamp))


def setup(files: int, base: Path) -> tuple[Path, list[str], float]:
    """Generates, commits and packs a tree of `files` files."""
    ws = base / "ws"
    ws.mkdir(parents=True)
    started = time.perf_counter()
    paths = generate_tree(ws, files)
    run("git", "init", "-q", "-b", "main", cwd=ws)
    run("git", "config", "gc.auto", "0", cwd=ws)  # no background gc racing the explicit one
    run("git", "add", "-A", cwd=ws)
    run("git", "commit", "-q", "-m", "generated", cwd=ws)
    run("git", "gc", "-q", cwd=ws)
    run("git", "status", "--porcelain", cwd=ws)  # refresh the user's stat cache, as any user's would be
    return ws, paths, time.perf_counter() - started


def bench_size(files: int, repeat: int, workdir: Path, touch_all: bool, split_ab: bool) -> list[str]:
    """Runs every measurement for one tree size; returns the report lines."""
    base = workdir / f"n{files}"
    shutil.rmtree(base, ignore_errors=True)
    ws, paths, setup_s = setup(files, base)
    rows: list[Row] = []

    # Both sides create their shadow repository inside the timed call, as a first capture does.
    first = Row("first capture (clean, committed)", "git init --bare SHADOW; copy .git/index; " + GIT_CAPTURE, "<= 1.0")
    store_size = 0
    for i in range(repeat):
        data = base / f"data{i}"
        fresh = SnapshotStore(ws, data)
        first.pair(
            i,
            lambda s=fresh: s.capture(session_id="bench", reason="start"),
            lambda: GitShadow.create(ws, base).capture(),
        )
        fresh.close()
        store_size = fresh.size_bytes()
        shutil.rmtree(data)
    rows.append(first)

    # From here on one store (watching, as in a session) and one git shadow, both warm.
    store = SnapshotStore(ws, base / "data", watch=True)
    store.capture(session_id="bench", reason="start")
    shadow = GitShadow.create(ws, base)
    shadow.capture()
    mutate = Mutator(ws, paths)

    def ours_full() -> object:
        return store.capture(session_id="bench", reason="walk")

    for k in (0, 1, 100):
        row = Row(f"capture walking the tree, {k} changed", GIT_CAPTURE, "<= 1.0")
        for i in range(repeat * 2 if k < 100 else repeat):
            mutate.change(k)
            row.pair(i, ours_full, shadow.capture)
        rows.append(row)
    if split_ab:
        # What splitting the walk over threads gains, paired against the one-thread walk.
        row = Row("walk, 1 changed: split over threads / one thread", ONE_THREAD)
        default_min = splitwalk.MIN_ENTRIES

        def one_thread() -> object:
            splitwalk.MIN_ENTRIES = 2**62
            try:
                return ours_full()
            finally:
                splitwalk.MIN_ENTRIES = default_min

        sides: list[tuple[Callable[[], object], list[float]]] = [(ours_full, row.ours), (one_thread, row.base)]
        for i in range(repeat * 2):
            for capture, times in sides if i % 2 == 0 else sides[::-1]:
                mutate.change(1)  # untimed: each side captures one fresh change
                times.append(timed(capture))
        rows.append(row)
    if touch_all:
        row = Row("capture after every file touched, same content", GIT_CAPTURE, "<= 1.0")
        for i in range(max(2, repeat // 2)):
            mutate.touch_all()
            row.pair(i, ours_full, shadow.capture)
        rows.append(row)

    hinted = Row("write_file, 1 changed (path hint)", GIT_HINTED, "<= 1.0")
    for i in range(repeat * 2):
        changed = mutate.change(1)
        hinted.pair(
            i,
            lambda c=changed: store.capture(session_id="bench", reason="edit_file", paths_hint=c),
            lambda c=changed: shadow.capture(c),
        )
    rows.append(hinted)
    for k in (1, 100):
        goal = "<= 1.0; <= 50 ms at 100k" if k == 1 else "<= 1.0"
        row = Row(f"bash, {k} changed (watcher's hints)", GIT_HINTED + " (same paths)", goal)
        assert store.watching, "the watcher is not running: hinted rows would walk"
        for i in range(repeat * 2):
            changed = mutate.change(k)
            row.pair(
                i,
                lambda: store.capture(session_id="bench", reason="bash", watched=True),
                lambda c=changed: shadow.capture(c),
            )
        rows.append(row)

    repo = pygit2.Repository(str(store.path))
    for k in (1, 10, 100):
        row = Row(f"restore, {k} changed files", RAW_RESTORE, "<= 1.0")
        for i in range(repeat):
            # The target records its layout, as a turn's start does: restoring it is mode- and
            # folder-exact (the raw baseline is neither).
            target = store.capture(session_id="bench", reason="target", watched=True, record_layout=True)
            target_snap = target.snapshot or store.timeline("bench")[-1]

            def ours_block(k: int = k, row: Row = row, target_snap: Snapshot = target_snap) -> None:
                # The agent changed k files and its capture ran (untimed); then the user restores.
                mutate.change(k)
                store.capture(session_id="bench", reason="changed", watched=True)
                row.ours.append(timed(lambda: store.restore(target_snap, session_id="bench")))

            def raw_block(k: int = k, row: Row = row, target_snap: Snapshot = target_snap) -> None:
                mutate.change(k)
                current = store.capture(session_id="bench", reason="changed", watched=True).tree
                row.base.append(timed(lambda: raw_restore(repo, ws, current, target_snap.tree)))

            for block in (raw_block, ours_block) if i % 2 else (ours_block, raw_block):
                block()
        rows.append(row)

    a = store.capture(session_id="bench", reason="diff a")
    a_snap = a.snapshot or store.timeline("bench")[-1]
    git_a = shadow.capture()
    mutate.change(100)
    b_snap = store.capture(session_id="bench", reason="diff b").snapshot
    git_b = shadow.capture()
    diff_row = Row("diff two snapshots (100 files)", "git --git-dir=SHADOW diff --find-renames A B")
    for i in range(repeat):
        diff_row.pair(
            i, lambda: store.diff(a_snap, b_snap), lambda: shadow.git("diff", "--find-renames", git_a, git_b)
        )
    rows.append(diff_row)
    store.close()

    lines = [
        f"N = {files:,} files (generated, committed and packed in {setup_s:.0f} s); medians of paired runs, ms",
        f"  {'operation':<44}{'ours':>9}{'base':>9}{'ratio':>7}  {'range':<10} goal",
    ]
    lines += [row.line() for row in rows]
    git_size = dir_size(ws / ".git")
    lines.append(
        f"  store after a first capture, closed: {store_size / 1024:,.0f} KiB = "
        f"{100 * store_size / git_size:.1f}% of the repository's .git ({git_size / 1024 / 1024:,.1f} MiB)"
    )
    lines.append("  baselines:")
    for row in rows:
        lines.append(f"    {row.label}: {row.baseline}")
    return lines


def main() -> None:
    """Parses arguments and prints the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--repeat", type=int, default=5, help="paired runs per measurement")
    parser.add_argument("--no-touch-all", action="store_true", help="skip the every-file-touched row (slow at 100k)")
    parser.add_argument(
        "--split-ab", action="store_true", help="also pair the split walk against the one-thread walk"
    )
    parser.add_argument("--workdir", type=Path, default=None, help="where to generate trees (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the generated trees")
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="agentcli-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"git {run('git', '--version').split()[-1]}, pygit2 {pygit2.__version__}, python {sys.version.split()[0]}")
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    try:
        for size in args.sizes:
            for line in bench_size(size, args.repeat, workdir, touch_all=not args.no_touch_all, split_ab=args.split_ab):
                print(line, flush=True)
            print(flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
