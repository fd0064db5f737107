"""A thinking model with tools, killed mid-run and resumed from the log: never a 400.

The real ``agentcli`` command runs against the Anthropic-protocol server with reasoning on; it is
SIGKILLed after its fifth model call, resumed with ``agentcli resume --last``, and finishes. The
server refuses any assistant tool use sent back without its signed thinking, so a run that ends
with every answer 200 sent them back exactly, across the kill.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from tests.e2e.test_cli import events
from tests.llm_servers.conftest import API_KEY
from tests.support.agentcli_process import AGENTCLI
from tests.support.anthropic_server import AnthropicServer, Call, Reply

CLAUDE = "anthropic/claude-sonnet-4-5-20250929"


def _step(number: int) -> Reply:
    return Reply(thinking=f"Step {number}: read file {number}.", calls=[Call("read_file", {"path": f"f{number}.txt"})])


def test_killed_mid_run_then_resumed_finishes_with_every_request_accepted(
    workspace: Path, anthropic_server: AnthropicServer
) -> None:
    for number in range(1, 11):
        (workspace / f"f{number}.txt").write_text(f"file {number}\n")
    (workspace / ".agentcli.toml").write_text('[models.reasoning]\ndefault = 2048\n')
    env = {**os.environ, "ANTHROPIC_API_KEY": API_KEY}
    args = ["--model", CLAUDE, "--api-base", anthropic_server.base_url, "-o", "jsonl"]
    anthropic_server.add(*[_step(n) for n in range(1, 8)])
    first = subprocess.Popen([*AGENTCLI, "run", "read the ten files", *args], cwd=workspace, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        anthropic_server.wait_for(lambda: len(anthropic_server.requests) >= 5, timeout=60)
    finally:
        first.send_signal(signal.SIGKILL)
        first.communicate(timeout=30)
    anthropic_server.script.clear()
    done = len(anthropic_server.requests)
    anthropic_server.add(*[_step(n) for n in range(done + 1, 11)], Reply(thinking="All read.", calls=[
        Call("complete", {"summary": "read all ten"})]))
    second = subprocess.run([*AGENTCLI, "resume", "--last", *args], cwd=workspace, env=env, capture_output=True,
                            text=True, timeout=120)
    assert second.returncode == 0, second.stdout[-2000:] + second.stderr[-2000:]
    ended = [e for e in events(second.stdout) if e["type"] == "turn_ended"]
    assert ended[-1]["outcome"] == "completed"
    statuses = [response.status for response in anthropic_server.responses()]
    assert statuses and set(statuses) == {200}, statuses
    last = anthropic_server.requests[-1]
    assert last["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    reads = [m for m in last["messages"] if m["role"] == "assistant" and m["content"][-1]["type"] == "tool_use"]
    assert len(reads) >= 9 and all(m["content"][0]["type"] == "thinking" for m in reads)
