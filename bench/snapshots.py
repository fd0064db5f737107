"""Benchmark of the snapshot store against baselines doing the same work, in paired runs.

    python bench/snapshots.py                                # 1,000 and 10,000 files
    python bench/snapshots.py --sizes 1000 10000 50000 100000 --repeat 5
    python bench/snapshots.py --only restore --profile      # restore rows, and where ours spends them
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
  differ (blob bytes, modes, deletions), with none of the store's checks, undo point, atomic
  renames or layout record. The target of each restore is a turn's start (it records its layout).
  Both sides are handed the current tree: the raw side from the capture before it, ours because
  its watcher vouches that nothing changed since that capture. Two more rows per restore size
  split the gap: against raw writing each file under a temporary name and renaming it (what
  "never half-written" costs on this filesystem), and the CPU time of ours and raw alone.
- libgit2's own restore, like with like: `git_checkout_tree(target)` with `GIT_CHECKOUT_FORCE` and
  the current tree as its baseline, on a repository whose index is in step with the workspace
  (the workspace as its workdir, the store's objects as alternates). It writes only the files
  that differ and updates its index (no undo point, no path checks, no timeline, no layout).

Each row prints the baseline's command. No test asserts any of these times.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pygit2
from pygit2 import C, ffi
from pygit2.callbacks import git_checkout_options

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentcli.snapshots import Snapshot, SnapshotStore, splitwalk
from agentcli.snapshots.gc import dir_size

FORCE = pygit2.enums.CheckoutStrategy.FORCE

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
RAW_ATOMIC = RAW_RESTORE.replace("write each", "write (temporary name, fchmod, rename) each")
PYGIT2_CHECKOUT = (
    "pygit2/libgit2: git_checkout_tree(repo, target, {strategy=GIT_CHECKOUT_FORCE, baseline=current tree})  "
    "(pygit2's checkout_tree with the baseline it does not expose set through its cffi; repo: a bare repository "
    "given the workspace as workdir, alternates to the store's objects, an index in step with the workspace; "
    "libgit2 writes what differs, updates and writes the index)"
)
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


def raw_restore(repo: pygit2.Repository, workspace: Path, current: str, target: str, *, atomic: bool = False) -> None:
    """The least a restore can do: write the paths that differ, nothing else.

    With `atomic`, each file is written under a temporary name and renamed into place, as ours
    does so that no file is ever half-written: the pair of rows shows that guarantee's share.
    """
    diff: pygit2.Diff = repo.diff(repo[current], repo[target])  # type: ignore[call-overload]
    for delta in diff.deltas:
        if delta.status == pygit2.enums.DeltaStatus.DELETED:
            (workspace / delta.old_file.path).unlink()
            continue
        path = workspace / delta.new_file.path
        path.parent.mkdir(parents=True, exist_ok=True)
        data = repo[delta.new_file.id].data  # type: ignore[attr-defined]
        mode = 0o755 if delta.new_file.mode == pygit2.enums.FileMode.BLOB_EXECUTABLE else 0o644
        if atomic:
            tmp = path.with_name(f".{path.name}.tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            os.write(fd, data)
            os.fchmod(fd, mode)
            os.close(fd)
            os.replace(tmp, path)
        else:
            path.write_bytes(data)
            path.chmod(mode)


def checkout(repo: pygit2.Repository, current: str, target: str) -> None:
    """libgit2's restore of `target` over a workspace holding `current` (see `PYGIT2_CHECKOUT`).

    Without a baseline libgit2 compares the target with HEAD (none here) and then hashes every
    file: 120 ms at 1k files whatever changed. With the current tree as baseline it visits only
    what differs, as ours does when handed the current tree.
    """
    # Both objects stay referenced for the call: their C pointers are handed over raw.
    current_tree, target_tree = repo[current], repo[target]
    with git_checkout_options(strategy=FORCE) as payload:
        opts = payload.checkout_options
        baseline = ffi.new("git_tree **")
        ffi.buffer(baseline)[:] = current_tree._pointer[:]  # type: ignore[attr-defined]
        opts.baseline = baseline[0]
        treeish = ffi.new("git_object **")
        ffi.buffer(treeish)[:] = target_tree._pointer[:]  # type: ignore[attr-defined]
        payload.check_error(C.git_checkout_tree(repo._repo, treeish[0], opts))


def checkout_repo(workspace: Path, store_path: Path, where: Path) -> pygit2.Repository:
    """A repository for libgit2's own restore: the workspace as its workdir, the store's objects
    (and through them the user's) as alternates, an index in step with the workspace."""
    pygit2.init_repository(str(where), bare=True)
    (where / "objects" / "info" / "alternates").write_text(f"{store_path / 'objects'}\n")
    shutil.copyfile(workspace / ".git" / "index", where / "index")  # its stat data: only changed files are hashed
    repo = pygit2.Repository(str(where))
    repo.workdir = str(workspace)  # in memory only: no `.git` file is written into the workspace
    # Untimed: the workspace as it is, with every file's stat data, as a warm git index would be
    # (a checkout leaves the entries of files it did not write as they were).
    repo.index.add_all()
    repo.index.write()
    return repo


def timed(fn: Callable[[], object]) -> float:
    """Milliseconds one call takes."""
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def timed_cpu(fn: Callable[[], object], cpu: list[float]) -> float:
    """Milliseconds one call takes; its CPU milliseconds (user and system) go to `cpu`.

    On a disk shared with other jobs a restore's wall time is mostly waiting for writeback;
    the CPU time is the part the code decides.
    """
    started_cpu = time.process_time()
    wall = timed(fn)
    cpu.append((time.process_time() - started_cpu) * 1000)
    return wall


@dataclass
class Row:
    """One line of the results: paired runs of ours and a baseline."""

    label: str
    baseline: str
    goal: str = ""
    ours: list[float] = field(default_factory=list)
    base: list[float] = field(default_factory=list)
    split: Counter[str] = field(default_factory=Counter)
    """How our walks in this row went (`SplitWalk.outcomes`: split over threads, or why not)."""

    def pair(
        self,
        i: int,
        ours: Callable[[], object],
        base: Callable[[], object],
        after_ours: Callable[[], object] | None = None,
    ) -> None:
        """One paired run; who goes first alternates, so neither always finds a warm cache.
        `after_ours` runs untimed right after ours (what ours left running in the background)."""
        if i % 2:
            self.base.append(timed(base))
            self.ours.append(timed(ours))
            if after_ours is not None:
                after_ours()
        else:
            self.ours.append(timed(ours))
            if after_ours is not None:
                after_ours()
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


def split_outcomes(store: SnapshotStore) -> Counter[str]:
    """How the store's walks went so far: split over threads, or why not (`SplitWalk.outcomes`)."""
    return Counter(store._refresher._split.outcomes)


def settle(store: SnapshotStore) -> None:
    """Waits, untimed, until the hashing process a capture started is up (or gave up), so its
    start (~80 ms of CPU in another process) never lands in a timed run of either side."""
    worker = store._refresher.hash_worker
    deadline = time.monotonic() + 30
    while worker.pid() is not None and not worker.usable() and worker.failed is None and time.monotonic() < deadline:
        time.sleep(0.01)


def worker_rss_mib(store: SnapshotStore) -> float | None:
    """The hashing process's resident memory, when it runs."""
    pid = store._refresher.hash_worker.pid()
    try:
        status = Path(f"/proc/{pid}/status").read_text() if pid is not None else ""
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return None


def describe_split(outcomes: Counter[str]) -> str:
    total = sum(outcomes.values())
    why = ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items()) if k != "split")
    return f"{outcomes['split']} of {total}" + (f" ({why})" if why else "")


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
    # A user's files are on disk, not in the page cache waiting for writeback: without this the
    # first minute of rows runs under the kernel's flush of the generated tree, and a restore's
    # rename over a file (ext4 then writes the new data out first) queues behind it.
    os.sync()
    return ws, paths, time.perf_counter() - started


def bench_size(
    files: int, repeat: int, workdir: Path, touch_all: bool, only: str | None = None, profile: bool = False,
    split_ab: bool = False,
) -> list[str]:
    """Runs every measurement for one tree size (or one section of them); returns the report lines."""
    captures = repeat if only in (None, "capture") else 0
    base = workdir / f"n{files}"
    shutil.rmtree(base, ignore_errors=True)
    ws, paths, setup_s = setup(files, base)
    rows: list[Row] = []

    # Both sides create their shadow repository inside the timed call, as a first capture does.
    first = Row("first capture (clean, committed)", "git init --bare SHADOW; copy .git/index; " + GIT_CAPTURE, "<= 1.0")
    store_size = 0
    seeded: Counter[str] = Counter()
    """How each first capture loaded the copied index: on a thread beside its checks, or before them."""
    for i in range(captures):
        data = base / f"data{i}"
        fresh = SnapshotStore(ws, data)
        first.pair(
            i,
            lambda s=fresh: s.capture(session_id="bench", reason="start"),
            lambda: GitShadow.create(ws, base).capture(),
            after_ours=lambda s=fresh: settle(s),
        )
        first.split.update(split_outcomes(fresh))
        seeded[fresh._shadow.seeded or "none"] += 1
        fresh.close()
        store_size = fresh.size_bytes()
        shutil.rmtree(data)
    rows.append(first)

    # From here on one store (watching, as in a session) and one git shadow, both warm.
    store = SnapshotStore(ws, base / "data", watch=True)
    store.capture(session_id="bench", reason="start")
    settle(store)
    shadow = GitShadow.create(ws, base)
    shadow.capture()
    mutate = Mutator(ws, paths)

    def ours_full() -> object:
        return store.capture(session_id="bench", reason="walk")

    for k in (0, 1, 100):
        row = Row(f"capture walking the tree, {k} changed", GIT_CAPTURE, "<= 1.0")
        before = split_outcomes(store)
        for i in range(captures * 2 if k < 100 else captures):
            mutate.change(k)
            row.pair(i, ours_full, shadow.capture)
        row.split = split_outcomes(store) - before
        rows.append(row)
    if split_ab and captures:
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
    worker_note = ""
    if touch_all and captures:
        row = Row("capture after every file touched, same content", GIT_CAPTURE, "<= 1.0")
        before = split_outcomes(store)
        worker = store._refresher.hash_worker
        answered = worker.answered
        runs = max(2, repeat // 2)
        for i in range(runs):
            mutate.touch_all()
            row.pair(i, ours_full, shadow.capture)
        row.split = split_outcomes(store) - before
        rows.append(row)
        rss = worker_rss_mib(store)
        worker_note = (
            f"  every file touched: the hashing process took part in {worker.answered - answered} of {runs}"
            + (f" (resident {rss:.0f} MiB)" if rss is not None else f" ({worker.failed or 'not started'})")
        )

    hinted = Row("write_file, 1 changed (path hint)", GIT_HINTED, "<= 1.0")
    for i in range(captures * 2):
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
        for i in range(captures * 2):
            changed = mutate.change(k)
            row.pair(
                i,
                lambda: store.capture(session_id="bench", reason="bash", watched=True),
                lambda c=changed: shadow.capture(c),
            )
        rows.append(row)

    repo = pygit2.Repository(str(store.path))
    profiler = cProfile.Profile() if profile else None
    checkout_with: pygit2.Repository | None = None
    for k in (1, 10, 100):
        row = Row(f"restore, {k} changed files", RAW_RESTORE, "<= 1.0")
        atomic = Row(f"  the same, vs raw with atomic writes, {k}", RAW_ATOMIC, "(the rename's share)", ours=row.ours)
        cpu = Row(f"  the same, CPU time only, {k}", RAW_RESTORE + " (CPU time)", "(the code's share)")
        like = Row(f"  the same, vs pygit2's checkout, {k}", PYGIT2_CHECKOUT, "(like with like)", ours=row.ours)
        like_cpu = Row(
            f"  the same, vs pygit2's checkout, CPU time, {k}", PYGIT2_CHECKOUT + " (CPU time)", "", ours=cpu.ours
        )
        for i in range(repeat if only in (None, "restore") else 0):
            # The target records its layout, as a turn's start does: restoring it is mode- and
            # folder-exact (the raw baseline is neither).
            target = store.capture(session_id="bench", reason="target", watched=True, record_layout=True)
            target_snap = target.snapshot or store.timeline("bench")[-1]

            def ours_block(k: int = k, row: Row = row, cpu: Row = cpu, target_snap: Snapshot = target_snap) -> None:
                # The agent changed k files and its capture ran (untimed); then the user restores.
                mutate.change(k)
                store.capture(session_id="bench", reason="changed", watched=True)
                if profiler is not None:
                    profiler.enable()
                row.ours.append(timed_cpu(lambda: store.restore(target_snap, session_id="bench"), cpu.ours))
                if profiler is not None:
                    profiler.disable()

            def raw_block(k: int = k, row: Row = row, cpu: Row = cpu, target_snap: Snapshot = target_snap) -> None:
                mutate.change(k)
                current = store.capture(session_id="bench", reason="changed", watched=True).tree
                row.base.append(timed_cpu(lambda: raw_restore(repo, ws, current, target_snap.tree), cpu.base))

            def atomic_block(k: int = k, row: Row = atomic, target_snap: Snapshot = target_snap) -> None:
                mutate.change(k)
                current = store.capture(session_id="bench", reason="changed", watched=True).tree
                row.base.append(timed(lambda: raw_restore(repo, ws, current, target_snap.tree, atomic=True)))

            def checkout_block(
                k: int = k, row: Row = like, cpu: Row = like_cpu, target_snap: Snapshot = target_snap
            ) -> None:
                nonlocal checkout_with
                if checkout_with is None:
                    checkout_with = checkout_repo(ws, store.path, base / "checkout.git")
                mutate.change(k)
                current = store.capture(session_id="bench", reason="changed", watched=True).tree
                co = checkout_with
                row.base.append(timed_cpu(lambda: checkout(co, current, target_snap.tree), cpu.base))

            blocks = [ours_block, raw_block, atomic_block, checkout_block]
            for block in blocks[i % 4 :] + blocks[: i % 4]:  # each goes first in turn
                block()
        rows += [row, atomic, cpu, like, like_cpu]

    a = store.capture(session_id="bench", reason="diff a")
    a_snap = a.snapshot or store.timeline("bench")[-1]
    git_a = shadow.capture()
    mutate.change(100)
    b_snap = store.capture(session_id="bench", reason="diff b").snapshot
    git_b = shadow.capture()
    diff_row = Row("diff two snapshots (100 files)", "git --git-dir=SHADOW diff --find-renames A B")
    for i in range(repeat if only in (None, "diff") else 0):
        diff_row.pair(
            i, lambda: store.diff(a_snap, b_snap), lambda: shadow.git("diff", "--find-renames", git_a, git_b)
        )
    rows.append(diff_row)
    store.close()

    lines = [
        f"N = {files:,} files (generated, committed and packed in {setup_s:.0f} s); medians of paired runs, ms",
        f"  {'operation':<44}{'ours':>9}{'base':>9}{'ratio':>7}  {'range':<10} goal",
    ]
    lines += [row.line() for row in rows if row.ours]
    git_size = dir_size(ws / ".git")
    if store_size:
        lines.append(
            f"  store after a first capture, closed: {store_size / 1024:,.0f} KiB = "
            f"{100 * store_size / git_size:.1f}% of the repository's .git ({git_size / 1024 / 1024:,.1f} MiB)"
        )
    if worker_note:
        lines.append(worker_note)
    if seeded:
        lines.append(
            f"  first capture: the copied index loaded beside its checks in {seeded['thread']} of {seeded.total()}"
            + ("" if seeded["thread"] == seeded.total() else " (else: no CPU free, or the copy could not be used)")
        )
    split_rows = [f"{row.label.removeprefix('capture ')}: {describe_split(row.split)}" for row in rows if row.split]
    if split_rows:
        lines.append("  our walks split over threads (else why not: busy = no CPU free now, small, other):")
        lines += [f"    {text}" for text in split_rows]
    lines.append("  baselines:")
    for row in rows:
        if row.ours:
            lines.append(f"    {row.label}: {row.baseline}")
    if profiler is not None:
        lines += restore_profile(profiler)
    return lines


def restore_profile(profiler: cProfile.Profile) -> list[str]:
    """Where ours spends a restore's time (CPU profile of every timed restore, all sizes of k)."""
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("cumulative").print_stats(r"agentcli/snapshots", 22)
    stats.sort_stats("tottime").print_stats(12)
    body = [line for line in out.getvalue().splitlines() if line.strip() and "function calls" not in line]
    title = "  where ours spends its restores (cProfile; cumulative, then own time):"
    return [title, *("    " + line for line in body)]


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
    parser.add_argument("--only", choices=["capture", "restore", "diff"], help="run one section's rows")
    parser.add_argument("--profile", action="store_true", help="also print a CPU profile of our restores")
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="agentcli-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"git {run('git', '--version').split()[-1]}, pygit2 {pygit2.__version__}, python {sys.version.split()[0]}")
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    try:
        for size in args.sizes:
            for line in bench_size(
                size, args.repeat, workdir, touch_all=not args.no_touch_all, only=args.only, profile=args.profile,
                split_ab=args.split_ab,
            ):
                print(line, flush=True)
            print(flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
