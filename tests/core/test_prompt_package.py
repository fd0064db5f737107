"""The Textual-free input layer: slash parsing, custom command files, @-mentions, history, and
the AGENTS.md files that go into the system prompt."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from agentcli.prompt.custom import CommandProblem, CustomCommand, load_commands, parse_command
from agentcli.prompt.history import PromptHistory, history_path
from agentcli.prompt.mentions import attach, complete, mention, mentioned, workspace_paths
from agentcli.prompt.slash import BUILT_IN, matching, parse_slash
from agentcli.session.instructions import find_instructions, instructions_section


def test_a_slash_command_is_only_a_leading_name() -> None:
    assert parse_slash("/model build openai/gpt-4.1") == parse_slash("  /MODEL build openai/gpt-4.1")
    slash = parse_slash("/compact keep the plan\nand the errors")
    assert slash is not None and slash.name == "compact" and slash.args == "keep the plan\nand the errors"
    assert parse_slash("/usr/bin is odd") is None, "a path is a message"
    assert parse_slash("//not a command") is None
    assert parse_slash("fix /help text") is None
    assert [c.name for c in matching(list(BUILT_IN), "cmp")] == ["compact"]
    assert matching(list(BUILT_IN), "re")[0].name in ("resume", "rewind")


def test_custom_commands_substitute_arguments_and_name_bad_files(tmp_path: Path) -> None:
    folder = tmp_path / ".agentcli" / "commands"
    folder.mkdir(parents=True)
    (folder / "fix.md").write_text("---\ndescription: Fix an issue\nmodel: openai/gpt-4.1\n---\nFix issue $1 in $2.\n")
    (folder / "plain.md").write_text("Summarize the repo.")
    (folder / "open.md").write_text("---\ndescription: never closed\nFix it")
    (folder / "help.md").write_text("shadowing a built-in")
    (folder / "empty.md").write_text("---\ndescription: nothing\n---\n\n")
    user = tmp_path / "user"
    (user / "commands").mkdir(parents=True)
    (user / "commands" / "fix.md").write_text("the user's own fix, shadowed by the workspace's")
    found = load_commands(tmp_path, user)
    assert sorted(found.commands) == ["fix", "plain"]
    fix = found.commands["fix"]
    assert fix.model == "openai/gpt-4.1" and fix.description == "Fix an issue"
    assert fix.expand('42 "src/a b.py"') == "Fix issue 42 in src/a b.py."
    assert found.commands["plain"].expand("in one line") == "Summarize the repo.\n\nin one line"
    problems = {p.path.name: p.problem for p in found.problems}
    assert "never closed" in problems["open.md"]
    assert "built-in" in problems["help.md"]
    assert "no text" in problems["empty.md"]
    bad = parse_command(folder / "open.md")
    assert isinstance(bad, CommandProblem) and str(folder / "open.md") in str(bad)
    assert isinstance(parse_command(folder / "plain.md"), CustomCommand)


def test_mentions_attach_files_with_line_numbers_and_folders_as_listings(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("import os\nprint(os.getcwd())\n")
    (tmp_path / "blob.bin").write_bytes(b"\0\1\2")
    outside = tmp_path.parent / "outside.txt"
    outside.write_text("secret")
    text = "see @src/app.py, the @src/ folder, @blob.bin, mail me@example.com, @nothing and @../outside.txt"
    assert mentioned(text) == ["src/app.py", "src/", "blob.bin", "nothing", "../outside.txt"]
    result = attach(tmp_path, text)
    assert result.paths == ["src/app.py", "src/", "blob.bin"]
    assert '<file path="src/app.py">\n     1\timport os\n     2\tprint(os.getcwd())\n</file>' in result.text
    assert '<folder path="src/">\napp.py\n</folder>' in result.text
    assert "binary file" in result.text
    assert result.problems == ["@../outside.txt is outside the workspace; not attached"]


def test_completion_leaves_out_ignored_and_secret_files(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.py").write_text("")
    (tmp_path / ".env").write_text("KEY=1")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("")
    (tmp_path / "main_test.py").write_text("")
    paths = workspace_paths(tmp_path)
    assert "src/main.py" in paths and "src/" in paths
    assert not any(p.startswith("build") for p in paths) and ".env" not in paths
    assert set(complete(paths, "main")[:2]) == {"main_test.py", "src/main.py"}
    assert complete(paths, "smp") == ["src/main.py"]
    # Typed in full, an ignored or secret file still attaches: the user asked for it.
    assert attach(tmp_path, "@.env").paths == [".env"]


def test_history_persists_per_workspace_and_searches_newest_first(tmp_path: Path) -> None:
    path = history_path(tmp_path / "ws", tmp_path / "data")
    history = PromptHistory(path)
    for text in ("fix the bug", "fix the bug", "add tests\nfor parse()", "explain"):
        history.add(text)
    again = PromptHistory(path)
    assert again.entries == ["fix the bug", "add tests\nfor parse()", "explain"]
    assert again.search("FIX") == ["fix the bug"]
    assert history_path(tmp_path / "other", tmp_path / "data") != path


def test_a_history_line_that_is_not_utf8_is_skipped_and_the_rest_kept(tmp_path: Path) -> None:
    path = history_path(tmp_path / "ws", tmp_path / "data")
    path.parent.mkdir(parents=True)
    path.write_bytes(b'"first"\n"caf\xe9"\n\xff\xfe"x"\n"last"\n')
    history = PromptHistory(path)
    assert history.entries == ["first", "last"] and history.problem is None
    history.add("new")
    assert PromptHistory(path).entries == ["first", "last", "new"]


def test_a_command_file_that_is_not_utf8_is_a_problem_naming_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "deploy.md"
    path.write_bytes(b"Deploy to caf\xe9\n")
    problem = parse_command(path)
    assert isinstance(problem, CommandProblem)
    assert str(problem) == f"{path}: not UTF-8 (byte 0xe9 at offset 13); save it as UTF-8"


def test_instructions_precedence_workspace_then_parents_then_user(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    workspace = repo / "packages" / "api"
    workspace.mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / "AGENTS.md").write_text("root rules")
    (repo / "packages" / "CLAUDE.md").write_text("packages rules (Claude Code's file)")
    (workspace / "AGENTS.md").write_text("api rules")
    (workspace / "CLAUDE.md").write_text("ignored: AGENTS.md wins in the same folder")
    user = tmp_path / "config"
    user.mkdir()
    (user / "AGENTS.md").write_text("user rules")
    (tmp_path / "AGENTS.md").write_text("above the repository: not read")
    files = find_instructions(workspace, user)
    assert [f.text for f in files] == ["api rules", "packages rules (Claude Code's file)", "root rules", "user rules"]
    section = instructions_section(files, workspace)
    assert section.index("api rules") < section.index("root rules") < section.index("user rules")
    assert "--- AGENTS.md ---" in section and "--- ../CLAUDE.md ---" not in section


def test_quoted_mentions_attach_names_with_spaces_and_quotes(tmp_path: Path) -> None:
    (tmp_path / "my file.txt").write_text("spaced\n")
    (tmp_path / 'say "hi".txt').write_text("quoted\n")
    (tmp_path / "v1.").write_text("a trailing dot is part of this name\n")
    result = attach(tmp_path, 'look at @"my file.txt" and @"say \\"hi\\".txt", then @"v1."')
    assert result.paths == ["my file.txt", 'say "hi".txt', "v1."] and result.problems == []
    assert '<file path="my file.txt">\n     1\tspaced\n</file>' in result.text
    for name in ("my file.txt", 'say "hi".txt', "v1.", "a@b.py", "back\\slash.md", "plain.py", "src/"):
        assert mentioned(f"see @{mention(name)} here") == [name], name


def test_a_mention_that_looks_like_a_path_but_names_no_file_is_a_problem(tmp_path: Path) -> None:
    text = 'fix @missing.md, @src/gone/ and @"no such file" — not @property, @user or a@b.py'
    result = attach(tmp_path, text)
    assert result.paths == []
    assert result.problems == ["@missing.md: not attached (no such file)",
                               "@src/gone/: not attached (no such file)",
                               '@"no such file": not attached (no such file)']
    # A name completion offered counts as meant even without an extension (deleted since).
    assert attach(tmp_path, "see @Makefile", offered={"Makefile"}).problems == [
        "@Makefile: not attached (no such file)"]
    assert attach(tmp_path, "see @Makefile").problems == []


def test_decorators_and_package_scopes_are_plain_text_paths_are_not(tmp_path: Path) -> None:
    """``@app.route`` got a 'not attached' notice: any dot and letters counted as an extension."""
    (tmp_path / "src").mkdir()
    plain = "@app.route @mock.patch @app.patch @mcp.tool @pytest.fixture @types/node @angular/core @example.com"
    assert attach(tmp_path, plain).problems == []
    meant = "@notes.md @src/gone @./build/x @.envrc @report.ADOC @docs/"
    assert attach(tmp_path, meant).problems == [f"@{name}: not attached (no such file)" for name in
                                                ("notes.md", "src/gone", "./build/x", ".envrc", "report.ADOC",
                                                 "docs/")]
    # An extension the workspace's files have counts too (the paths completion offered).
    assert attach(tmp_path, "see @flow.route", offered={"routes/main.route"}).problems == [
        "@flow.route: not attached (no such file)"]


def test_completion_offers_no_name_it_cannot_write_back(tmp_path: Path) -> None:
    # A file name that is not UTF-8 shows with U+FFFD, which names no file on disk: not offered,
    # in a git repository (git ls-files) or outside one (a walk).
    for repo in (False, True):
        folder = tmp_path / f"ws{int(repo)}"
        folder.mkdir()
        if repo:
            subprocess.run(["git", "init", "-q", str(folder)], check=True)
        (folder / "good name.txt").write_text("ok")
        fd = os.open(os.fsencode(folder) + b"/bad\xff.txt", os.O_CREAT | os.O_WRONLY)
        os.close(fd)
        paths = workspace_paths(folder)
        assert paths == ["good name.txt"], (repo, paths)
        assert attach(folder, f"@{mention(paths[0])}").paths == ["good name.txt"]


def test_an_instructions_link_out_of_the_repository_is_refused_and_named(tmp_path: Path) -> None:
    """A cloned repository's AGENTS.md linking to ``~/.ssh/id_ed25519`` would put the key in every
    system prompt; a link inside the repository, and the user's own file, are read."""
    repo = tmp_path / "repo"
    workspace = repo / "app"
    workspace.mkdir(parents=True)
    (repo / ".git").mkdir()
    secret = tmp_path / "id_ed25519"
    secret.write_text("PRIVATE KEY")
    (workspace / "AGENTS.md").symlink_to(secret)
    (repo / "docs").mkdir()
    (repo / "docs" / "agents.md").write_text("shared rules")
    (repo / "AGENTS.md").symlink_to(repo / "docs" / "agents.md")
    user = tmp_path / "config"
    user.mkdir()
    (tmp_path / "dotfiles.md").write_text("my own rules")
    (user / "AGENTS.md").symlink_to(tmp_path / "dotfiles.md")
    files = find_instructions(workspace, user)
    assert [(f.text, f.refused) for f in files] == [
        ("", f"it links out of the repository, to {secret}"), ("shared rules", ""), ("my own rules", "")]
    assert files[0].label(workspace) == f"AGENTS.md (not read: it links out of the repository, to {secret})"
    section = instructions_section(files, workspace)
    assert "PRIVATE KEY" not in section and "--- AGENTS.md ---" not in section
    assert "shared rules" in section and "my own rules" in section
