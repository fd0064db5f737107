"""What the shared ignore engine costs in a walk of a large tree, next to libgit2's verdict.

Builds a git work tree of N files (default 100,000) under a temporary directory: source trees
with nested `.gitignore` files (one with a negation), github/gitignore-style root rules for
Python and Node, plus ignored `node_modules/`, `build/` and `__pycache__/` directories. Then it
walks the tree three ways and prints the wall time of each (best of --repeats):

* the bare walk (`os.scandir`, no ignore checks): the floor;
* the walk pruned by `agentcli.ignore` (what list_files, glob and grep do), with a fresh
  engine per walk as the tools make one per call;
* the same walk judged by libgit2's `Repository.path_is_ignored` per entry (the tools' engine
  before `agentcli.ignore`).

It checks that the two judges keep the same files, and exits 1 if they do not.

    python bench/ignore_walk.py [--files 100000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from agentcli.ignore import discover

ROOT_RULES = """\
# Python
__pycache__/
*.py[cod]
*$py.class
*.so
.Python
build/
develop-eggs/
dist/
downloads/
eggs/
.eggs/
lib64/
parts/
sdist/
var/
wheels/
*.egg-info/
.installed.cfg
*.egg
MANIFEST
*.manifest
*.spec
pip-log.txt
htmlcov/
.tox/
.nox/
.coverage
.coverage.*
.cache
nosetests.xml
coverage.xml
*.cover
.hypothesis/
.pytest_cache/
*.mo
*.pot
*.log
local_settings.py
db.sqlite3
instance/
.webassets-cache
.scrapy
docs/_build/
target/
.ipynb_checkpoints
profile_default/
ipython_config.py
.pdm.toml
__pypackages__/
celerybeat-schedule
*.sage.py
.env
.venv
env/
venv/
ENV/
.spyderproject
.ropeproject
/site
.mypy_cache/
.dmypy.json
.pyre/
.pytype/
cython_debug/
# Node
logs
npm-debug.log*
yarn-debug.log*
lerna-debug.log*
report.[0-9]*.[0-9]*.[0-9]*.[0-9]*.json
pids
*.pid
*.seed
*.pid.lock
lib-cov
coverage
*.lcov
.nyc_output
.grunt
bower_components
.lock-wscript
build/Release
node_modules/
jspm_packages/
web_modules/
*.tsbuildinfo
.npm
.eslintcache
.stylelintcache
.rpt2_cache/
.rts2_cache_cjs/
.node_repl_history
*.tgz
.yarn-integrity
.env.development.local
.next
out
.nuxt
.vuepress/dist
.temp
.docusaurus
.serverless/
.fusebox/
.dynamodb/
.tern-port
.vscode-test
.yarn/cache
.pnp.*
"""

EXTENSIONS = (".py", ".ts", ".js", ".md", ".json", ".log", ".pyc", ".txt", ".tmp")


def build_tree(root: Path, files: int, seed: int = 1) -> None:
    """Writes a work tree of about `files` files, a fifth of them in ignored directories."""
    rng = random.Random(seed)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text(ROOT_RULES)
    dirs = [f"pkg{a}/mod{b}/sub{c}" for a in range(20) for b in range(10) for c in range(5)]
    for d in dirs[::50]:
        (root / d).mkdir(parents=True, exist_ok=True)
        (root / d / ".gitignore").write_text("*.tmp\n!keep.tmp\ngenerated/\n")
    for i in range(files):
        kind = rng.random()
        if kind < 0.12:
            rel = f"node_modules/dep{i % 300}/lib/f{i}.js"
        elif kind < 0.17:
            rel = f"build/obj{i % 40}/f{i}.o"
        elif kind < 0.20:
            rel = f"{rng.choice(dirs)}/__pycache__/f{i}.pyc"
        else:
            rel = f"{rng.choice(dirs)}/f{i}{rng.choice(EXTENSIONS)}"
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
    old = time.time() - 3600  # an hour old, as in real use: the engine trusts its cache of them
    for ignore_file in root.rglob(".gitignore"):
        os.utime(ignore_file, (old, old))


def walk(root: Path, keep: Callable[[str, bool], bool]) -> list[str]:
    """Workspace-relative paths of the files kept, pruning ignored directories."""
    out: list[str] = []
    stack = [("", root)]
    while stack:
        rel_dir, folder = stack.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
                is_dir = entry.is_dir(follow_symlinks=False)
                if not keep(rel, is_dir):
                    continue
                if is_dir:
                    stack.append((rel, Path(entry.path)))
                else:
                    out.append(rel)
    return sorted(out)


def best_of(repeats: int, run: Callable[[], list[str]]) -> tuple[float, list[str]]:
    times: list[float] = []
    result: list[str] = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    import pygit2

    with tempfile.TemporaryDirectory(prefix="ignore-bench-") as tmp:
        root = Path(tmp).resolve() / "ws"
        build_tree(root, args.files)
        repo = pygit2.Repository(str(root))

        def engine_walk() -> list[str]:
            rules = discover(root).rules()
            return walk(root, lambda rel, is_dir: not rules.is_ignored(rel, is_dir))

        def libgit2_walk() -> list[str]:
            def keep(rel: str, is_dir: bool) -> bool:
                return rel.rsplit("/", 1)[-1] != ".git" and not repo.path_is_ignored(rel + "/" if is_dir else rel)

            return walk(root, keep)

        bare, everything = best_of(args.repeats, lambda: walk(root, lambda rel, is_dir: rel != ".git"))
        ours, kept = best_of(args.repeats, engine_walk)
        theirs, kept_by_libgit2 = best_of(args.repeats, libgit2_walk)
        print(f"tree: {len(everything)} files, {len(kept)} not ignored")
        print(f"bare walk              {bare * 1000:8.0f} ms")
        per_file = (ours - bare) * 1e6 / max(len(kept), 1)
        print(f"agentcli.ignore walk   {ours * 1000:8.0f} ms  (+{per_file:.1f} µs per file kept)")
        print(f"libgit2 walk           {theirs * 1000:8.0f} ms")
        if kept != kept_by_libgit2:
            print(f"DISAGREE: {len(set(kept) ^ set(kept_by_libgit2))} paths", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
