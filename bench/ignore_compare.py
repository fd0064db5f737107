"""agentcli.ignore against pathspec's GitIgnoreSpec (with per-directory glue), git as the judge.

The evaluation behind `agentcli/ignore/__init__.py`. Three measurements, each engine next to
the other:

* random pattern files (atoms such as `**/`, `[!a]`, `[b-a]`, `[[:alpha:]]`), in the root,
  in a nested directory and in `.git/info/exclude`: verdicts compared with
  `git check-ignore --no-index` on a fixed set of paths;
* with `--templates DIR` (a checkout of github/gitignore): each template as the root
  `.gitignore` and another as a nested one, on paths made from their own patterns;
* speed: 5,000 paths under the Python and Node rules, one fresh engine per pass.

pathspec is not a dependency of agentcli: `pip install 'pathspec>=1.1'` to include it.

    python bench/ignore_compare.py [--cases 600] [--templates ~/src/gitignore]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from agentcli.ignore import ExcludeSource, IgnoreRules

Judge = Callable[[Path], Callable[[str, bool], bool]]
"""Given a work tree, a predicate (path, is_dir) -> ignored."""


def ours(ws: Path) -> Callable[[str, bool], bool]:
    return IgnoreRules(ws, [ExcludeSource(path=ws / ".git" / "info" / "exclude")]).is_ignored


def pathspec_glue(ws: Path) -> Callable[[str, bool], bool]:
    """pathspec for the patterns; git's precedence of per-directory sources written around it."""
    from pathspec import GitIgnoreSpec

    specs: dict[str, GitIgnoreSpec | None] = {}
    dirs: dict[str, bool] = {}

    def spec(path: Path) -> GitIgnoreSpec | None:
        key = os.fsdecode(path)
        if key not in specs:
            readable = path.is_file() and not path.is_symlink()
            specs[key] = GitIgnoreSpec.from_lines(path.read_text().splitlines()) if readable else None
        return specs[key]

    def excluded(parts: list[str], is_dir: bool) -> bool:
        full = "/".join(parts)
        bases = ["/".join(parts[:k]) for k in range(len(parts) - 1, -1, -1)]
        sources = [(base, ws / base / ".gitignore") for base in bases]
        sources.append(("", ws / ".git" / "info" / "exclude"))
        for base, file in sources:
            compiled = spec(file)
            if compiled is None:
                continue
            rel = full[len(base) + 1 :] if base else full
            result = compiled.check_file(rel + "/" if is_dir else rel)
            if result.include is not None:
                return bool(result.include)
        return False

    def ignored(path: str, is_dir: bool) -> bool:
        parts = path.split("/")
        for i in range(1, len(parts)):
            key = "/".join(parts[:i])
            if key not in dirs:
                dirs[key] = excluded(parts[:i], True)
            if dirs[key]:
                return True
        return excluded(parts, is_dir)

    return ignored


def git_ignored(ws: Path, paths: list[tuple[str, bool]]) -> set[str]:
    proc = subprocess.run(
        ["git", "check-ignore", "--no-index", "--stdin", "-z"], cwd=ws,
        input="\0".join(p for p, _ in paths) + "\0", capture_output=True, text=True,
    )
    return {p for p in proc.stdout.split("\0") if p}


def make_paths(ws: Path, paths: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
    made: list[tuple[str, bool]] = []
    for rel, is_dir in paths:
        target = ws / rel
        try:
            if is_dir:
                target.mkdir(parents=True, exist_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                if not target.exists():
                    target.write_text("x")
        except OSError:
            continue
        made.append((rel, is_dir))
    return made


def judge_all(judges: dict[str, Judge], ws: Path, paths: list[tuple[str, bool]], tally: dict[str, list[int]]) -> None:
    """Adds [cases with a disagreement, wrong verdicts, cases that raised] per judge."""
    expected = git_ignored(ws, paths)
    for name, judge in judges.items():
        try:
            is_ignored = judge(ws)
            got = {p for p, d in paths if is_ignored(p, d)}
        except Exception:  # noqa: BLE001 - a judge that raises on a pattern git accepts is counted
            tally[name][2] += 1
            got = None
        if got != expected:
            tally[name][0] += 1
            tally[name][1] += len(expected ^ (got or set()))


ATOMS = ["a", "b", "*", "**", "?", "/", "[ab]", "[!a]", "x", "[a-c]", "[]a]", "\\*", "[", "**/", "/**", " ",
         "[[:alpha:]]", "[b-a]", "[[:nope:]]", "[[:x]", "[[:alpha:]-b]", "[a-]", "[a-b-c]"]
RANDOM_PATHS = [("a", False), ("b", False), ("ab", False), ("x/a", False), ("c/b", False), ("c/x/b", False),
                ("ba/x", False), ("xx", True), ("b2/a/x", False), ("x/ab/b", False)]


def random_cases(judges: dict[str, Judge], cases: int, root: Path) -> dict[str, list[int]]:
    rng = random.Random(11)
    tally = {name: [0, 0, 0] for name in judges}

    def pattern_file() -> str:
        return "".join(
            ("!" if rng.random() < 0.4 else "") + "".join(rng.choice(ATOMS) for _ in range(rng.randint(1, 5))) + "\n"
            for _ in range(rng.randint(1, 4))
        )

    for i in range(cases):
        ws = root / f"r{i}"
        subprocess.run(["git", "init", "-q", str(ws)], check=True)
        files = {".gitignore": pattern_file()}
        if rng.random() < 0.5:
            files[rng.choice(["x", "c", "c/x", "b2"]) + "/.gitignore"] = pattern_file()
        if rng.random() < 0.3:
            files[".git/info/exclude"] = pattern_file()
        for rel, text in files.items():
            (ws / rel).parent.mkdir(parents=True, exist_ok=True)
            (ws / rel).write_text(text)
        judge_all(judges, ws, make_paths(ws, RANDOM_PATHS), tally)
    return tally


def template_paths(text: str, prefix: str, rng: random.Random) -> list[str]:
    """Paths that exercise a template: each pattern made concrete, and some files below it."""
    out: set[str] = set()
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        body = line.lstrip("!").strip("/").replace("**", "d1/d2")
        body = re.sub(r"\[!?([^\]])[^\]]*\]", r"\1", body).replace("*", "zz").replace("?", "q").replace("\\", "")
        body = re.sub(r"/+", "/", body)
        if not body or ".git" in body.split("/") or body.startswith("./"):
            continue
        out.add(prefix + body)
        if rng.random() < 0.4:
            out.add(prefix + body + "/inner.txt")
        if rng.random() < 0.3:
            out.add(prefix + "deep/" + body.split("/")[-1])
    out |= {prefix + p for p in ["README.md", "src/main.c", "build/out.o", "logs/a.log", "node_modules/x/index.js"]}
    return sorted(out)


def template_cases(judges: dict[str, Judge], templates: Path, root: Path) -> tuple[dict[str, list[int]], int, int]:
    rng = random.Random(7)
    found = sorted(templates.rglob("*.gitignore"))
    texts = [(p, p.read_text(errors="replace")) for p in found]
    tally = {name: [0, 0, 0] for name in judges}
    total = 0
    for i, (_, text) in enumerate(texts):
        nested = texts[(i * 7 + 3) % len(texts)][1]
        ws = root / f"t{i}"
        subprocess.run(["git", "init", "-q", str(ws)], check=True)
        (ws / ".gitignore").write_text(text)
        (ws / "sub").mkdir()
        (ws / "sub" / ".gitignore").write_text(nested)
        files = template_paths(text, "", rng) + template_paths(nested, "sub/", rng)
        files = [p for p in files if p != "sub/.gitignore"]
        dirs = {"/".join(p.split("/")[:k]) for p in files for k in range(1, p.count("/") + 1)}
        paths = make_paths(ws, [(p, p in dirs) for p in sorted(set(files) | dirs)])
        total += len(paths)
        judge_all(judges, ws, paths, tally)
    return tally, len(texts), total




def speed(judges: dict[str, Judge], root: Path) -> dict[str, float]:
    from ignore_walk import ROOT_RULES  # the same rules the walk benchmark uses

    ws = root / "speed"
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / ".gitignore").write_text(ROOT_RULES)
    for d, rules in [("src/pkg", "*.tmp\n!keep.tmp\ngenerated/\n"), ("web/app", "dist/\n*.map\n")]:
        (ws / d).mkdir(parents=True)
        (ws / d / ".gitignore").write_text(rules)
    old = time.time() - 3600  # an hour old: the engines' caches trust them, as in real use
    for ignore_file in ws.rglob(".gitignore"):
        os.utime(ignore_file, (old, old))
    rng = random.Random(3)
    dirs = ["src", "src/pkg", "src/pkg/sub", "lib", "tests", "tests/unit", "docs", "web/app", "web/app/comp", "tools"]
    exts = [".py", ".js", ".log", ".pyc", ".txt", ".o", ".md", ".tmp"]
    paths = [(f"{rng.choice(dirs)}/f{i}{rng.choice(exts)}", False) for i in range(5000)] + [(d, True) for d in dirs]
    best: dict[str, float] = {}
    for name, judge in judges.items():
        times = []
        for _ in range(5):
            start = time.perf_counter()
            is_ignored = judge(ws)
            for p, d in paths:
                is_ignored(p, d)
            times.append(time.perf_counter() - start)
        best[name] = min(times)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=600)
    parser.add_argument("--templates", type=Path, help="a checkout of github/gitignore")
    args = parser.parse_args()
    judges: dict[str, Judge] = {"agentcli.ignore": ours}
    try:
        import pathspec

        judges[f"pathspec {pathspec.__version__} + glue"] = pathspec_glue
    except ImportError:
        print("pathspec is not installed: measuring agentcli.ignore alone")
    sys.path.insert(0, str(Path(__file__).parent))
    with tempfile.TemporaryDirectory(prefix="ignore-compare-") as tmp:
        root = Path(tmp)
        tally = random_cases(judges, args.cases, root)
        print(f"random pattern files ({args.cases}): cases disagreeing with git / wrong verdicts / raised")
        for name, (cases, wrong, raised) in tally.items():
            print(f"  {name:28} {cases:5} {wrong:6} {raised:5}")
        if args.templates is not None:
            tally, count, total = template_cases(judges, args.templates, root)
            print(f"github/gitignore ({count} templates, {total} paths): "
                  "templates disagreeing / wrong verdicts / raised")
            for name, (cases, wrong, raised) in tally.items():
                print(f"  {name:28} {cases:5} {wrong:6} {raised:5}")
        print("5,010 paths under the Python and Node rules, fresh engine, best of 5:")
        for name, seconds in speed(judges, root).items():
            print(f"  {name:28} {seconds * 1000:7.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
