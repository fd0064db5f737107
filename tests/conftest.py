"""Shared fixtures: an isolated home for agentcli's data, and the local model server.

Also the suite's rules for CI and for loaded machines: under ``CI=true`` a skip fails unless the
test is marked ``may_skip`` with the reason it depends on the machine, and Hypothesis checks no
wall-clock deadlines (a slow machine is not a failing test; ``bench/`` measures speed).
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.support.openai_server import OpenAIServer

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

# Hypothesis fails an example that takes over 200 ms (``deadline``) and a test whose data is slow
# to generate (``too_slow``): both are wall-clock checks that fail when other jobs share the
# cores. A test's own ``@settings`` inherits these unless it sets the same field (so a test that
# lists its own suppressed health checks lists ``too_slow`` too).
settings.register_profile("agentcli", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("agentcli")

CI = os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}
"""CI runs every test: a skip there is a test that silently did not run, so it fails."""


def _skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


def _unexpected_skip(report: pytest.TestReport | pytest.CollectReport, item: pytest.Item | None) -> bool:
    if not CI or not report.skipped or hasattr(report, "wasxfail"):
        return False
    marker = item.get_closest_marker("may_skip") if item is not None else None
    if marker is None:
        return True
    return not (marker.kwargs.get("reason") or (marker.args[0] if marker.args else ""))


def _fail_instead(report: pytest.TestReport | pytest.CollectReport) -> None:
    reason = _skip_reason(report)
    report.outcome = "failed"
    report.longrepr = (
        f"skipped under CI=true, where every test must run: {reason}\n"
        "Install what the test needs in .ci/run, or, if it truly depends on the machine, mark it "
        "@pytest.mark.may_skip(reason=...) saying what it needs."
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if _unexpected_skip(report, item):
        _fail_instead(report)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    report = yield
    if _unexpected_skip(report, None):  # a whole module skipped (``pytest.skip(allow_module_level=True)``)
        _fail_instead(report)
    return report


SLOW_FIRST = (
    "tests/tui/test_history_paging.py",  # paging through a whole history, page-up bursts: 7-13 s
    "tests/e2e/",
    "tests/fleet/",
    "tests/mcp/test_mcp_cli.py",
    "tests/llm_servers/test_agent_killed.py",
    "tests/cli/",
    "tests/llm_servers/test_prompt_cache_bench.py",
    "tests/mcp/test_mcp_servers.py",
    "tests/tui/test_stream.py",
    # Modules without agentcli processes whose longest test takes 5-17 s (a run with --durations).
    "tests/tui/test_offscreen_lines.py",
    "tests/tui/test_sessions.py",
    "tests/tui/test_prompt_input.py",
    "tests/tui/test_panes_and_keys.py",  # notifications and the 80x24 overlay: 5-6 s each
    "tests/tui/test_typing_from_panes.py",
    "tests/snapshots/test_snapshots_watcher.py",
    "tests/snapshots/test_snapshots_splitwalk.py",
    "tests/mcp/test_mcp_session.py",
    "tests/tui/test_restore.py",
)
"""Test paths that start agentcli processes or run long, most expensive first.

With ``-n auto`` each worker takes tests off the front of one queue: a long test picked up last
leaves the other core idle until it ends, so the long ones go first and the short ones fill in
behind them. Only the order changes; a path missing from here just runs in its usual place.
"""


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: a worker per core and one more. About a third of two workers' time was spent
    waiting (on agentcli processes, local servers, MCP servers starting, the app's timers), with
    a core idle; a third worker fills it. Whole suite on 2 cores, the same tree, load ~2: 276 s
    with two workers, 246 s with three (four: 267 s, more CPU spent collecting and starting)."""
    return len(os.sched_getaffinity(0)) + 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        path = item.nodeid.split("::", 1)[0]
        return next((n for n, prefix in enumerate(SLOW_FIRST) if path.startswith(prefix)), len(SLOW_FIRST))

    # A stable sort: tests of one module stay together and in their order (module fixtures).
    items.sort(key=rank)


@pytest.fixture(autouse=True, scope="session")
def keys_handled_in_turn() -> Iterator[None]:
    """``pilot.press`` of several keys waits for each but the last to be handled by the app's
    queues, not for the process to idle (``tests/support/keys.py``): typing a line took seconds."""
    from tests.support.keys import keys_handled_in_turn

    with keys_handled_in_turn():
        yield


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point agentcli's config, data and cache directories at a fresh temporary folder."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    for name in list(os.environ):
        if name.startswith("AGENTCLI_"):
            monkeypatch.delenv(name)
    return home


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    srv = OpenAIServer().start()
    yield srv
    srv.stop()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws.resolve()


@pytest.fixture
def git_workspace(workspace: Path) -> Path:
    """A workspace that is a git repository with one commit (made with pygit2: no git CLI needed)."""
    import pygit2

    (workspace / "README.md").write_text("# project\n")
    repo = pygit2.init_repository(str(workspace))
    repo.index.add_all()
    repo.index.write()
    tree = repo.index.write_tree()
    signature = pygit2.Signature("test", "test@example.com")
    repo.create_commit("HEAD", signature, signature, "init", tree, [])
    return workspace
