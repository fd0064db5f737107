"""One ignore engine for the whole program: what git would leave out of `git add -A`.

The listing and search tools (`tools/`) and the snapshot store (`snapshots/`) both ask it, so
a file `grep` finds is a file a snapshot records, and the reverse. A shared top-level package
like `events.py`: it imports nothing of agentcli's, and pygit2 only inside `discover`.

    from agentcli.ignore import discover
    rules = discover(workspace).rules()          # one per walk or capture
    rules.is_ignored("build/out.o", is_dir=False)

- `wildmatch` — one line of an ignore file, translated into a regular expression as git reads it.
- `rules` — `IgnoreRules`: git's precedence of sources, for the paths of one workspace.
- `sources` — `discover`: which sources apply (repository root, a folder inside a repository,
  or no repository at all, where `NOT_A_REPOSITORY_EXCLUDES` stands in for `info/exclude`).

Why not pathspec (evaluated at 1.1.1, `GitIgnoreSpec`; bench/ignore_compare.py): it matches one
path against one flat list of patterns, so git's per-directory precedence needs glue either way
(~100 lines: a chain of sources per directory, parents judged before children, the first source
with a match deciding). With that glue it failed both rule tests (tests/ignore/test_ignore_rules.py)
that the rewrite formerly in `snapshots/ignores.py` passes: `out/**` ignores the directory `out`
itself, `a**/b` does not match `ab`, `[[:alpha:]]` is no class. Against `git check-ignore`
(A: 600 random pattern files, cases wrong; B: github/gitignore's 312 templates as root and nested
files, 26,758 paths, wrong verdicts; C: 5,010 paths under the Python and Node rules, time):

| judge                                      | A                 | B                   | C      |
|--------------------------------------------|-------------------|---------------------|--------|
| pathspec 1.1.1 + glue                      | 303 (232 raised)  | 119 in 18 templates | 204 ms |
| old `snapshots/ignores.py` (337 lines)     | 29                | 0                   | 147 ms |
| this package (wildmatch + rules, 494 lines)| 0                 | 0                   | 22 ms  |

pathspec raises on lines git accepts (`[[:nope:]]`, `[`), which would disable a whole file. The
old rewrite mistranslated reversed ranges (`[b-a]` matches `b` in git), unknown classes and a `-`
after a class.

So the rewrite stays, its class translation now ported from wildmatch.c, and pathspec is not a
dependency. The snapshot tests passed with all three. The speed comes from compiling each ignore
file into a few alternations (one `fullmatch` per file and kind of pattern, not one per pattern)
and from caching each directory's chain of sources and each directory's verdict.
"""

from agentcli.ignore.rules import ExcludeSource, IgnoreRules
from agentcli.ignore.sources import NOT_A_REPOSITORY_EXCLUDES, IgnoreSources, discover

__all__ = ["NOT_A_REPOSITORY_EXCLUDES", "ExcludeSource", "IgnoreRules", "IgnoreSources", "discover"]
