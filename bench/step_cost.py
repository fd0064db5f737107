"""CPU per model call through litellm against a local server: agentcli's Session against a stand-in.

The stand-in is the smallest agent loop one can write on litellm with its defaults
(``STAND_IN`` below, printed so anyone can rerun it): ``litellm.acompletion(stream=True,
tools=...)``, the tool calls joined from the chunks, the file read, the result appended. agentcli
runs the same task through its real Session (chart, permissions, session log, snapshots, its
litellm client). Each run is a fresh interpreter with litellm already imported before the clock
starts; the scripted server (``tests/support/openai_server.py``) runs in a process of its own so
its CPU is not counted. Runs are interleaved (stand-in, agentcli, stand-in, ...) so a load that
drifts hits both alike, and the ratio is taken per pair.

Used by ``bench/loop_overhead.py --litellm``; runnable alone:

    python bench/step_cost.py [--steps 2 300] [--pairs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SERVER = r"""
import re, sys, time
sys.path.insert(0, sys.argv[1])
from tests.support.openai_server import Call, OpenAIServer, Reply

TEXT = "I read the next file to see what it holds, then I go on with the one after it. " * 2

def answer(body):
    steps = int(re.search(r"read (\d+) files", body["messages"][1]["content"]).group(1))
    done = sum(1 for m in body["messages"] if m["role"] == "tool")
    if done >= steps:
        return Reply(text="All read.", calls=[Call("complete", {"summary": f"read {steps} files"})], usage=(100, 20))
    return Reply(text=TEXT, calls=[Call("read_file", {"path": f"f{done + 1}.txt"})], usage=(100, 40))

first = sys.argv[2]

def recorded(body):
    import json, os
    if not os.path.exists(first):  # what agentcli sends: the stand-in sends the same prompt and tools
        with open(first, "w") as handle:
            json.dump({"system": body["messages"][0], "tools": body.get("tools", [])}, handle)
    return answer(body)

server = OpenAIServer().start()
server.default = recorded
print(server.base_url, flush=True)
sys.stdin.read()
"""

STAND_IN = r"""
import asyncio, json, sys, time
import litellm
base, workspace, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(sys.argv[4]) as handle:
    FIRST = json.load(handle)  # agentcli's system prompt and tool schemas, as the server received them
TOOLS = FIRST["tools"]

async def main():
    messages = [FIRST["system"],
                {"role": "user", "content": f"read {steps} files"}]
    calls = 0
    started = time.process_time()
    while True:
        response = await litellm.acompletion(model="openai/bench", messages=messages, tools=TOOLS, stream=True,
                                             api_base=base, api_key="sk-none",
                                             stream_options={"include_usage": True})
        calls += 1
        text, pending = "", {}
        async for chunk in response:
            if not chunk.choices:
                continue
            delta = chunk.choices[0].delta
            text += delta.content or ""
            for part in delta.tool_calls or []:
                call = pending.setdefault(part.index, {"id": "", "name": "", "arguments": ""})
                call["id"] = part.id or call["id"]
                call["name"] = part.function.name or call["name"]
                call["arguments"] += part.function.arguments or ""
        tool_calls = [{"id": c["id"], "type": "function",
                       "function": {"name": c["name"], "arguments": c["arguments"]}} for c in pending.values()]
        messages.append({"role": "assistant", "content": text, "tool_calls": tool_calls})
        if any(c["function"]["name"] == "complete" for c in tool_calls):
            break
        for call in tool_calls:
            path = json.loads(call["function"]["arguments"])["path"]
            with open(f"{workspace}/{path}") as handle:
                output = handle.read()
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": output})
    print(json.dumps({"calls": calls, "cpu": time.process_time() - started}))

asyncio.run(main())
"""

AGENTCLI = r"""
import asyncio, json, sys, time
from pathlib import Path
from agentcli.config import ModelLimitSettings, ModelRoles, Settings
from agentcli.llm.warmup import import_litellm
from agentcli.session.factory import new_session
base, workspace, steps = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
import_litellm()  # as the TUI's background import has done by the first call

async def main():
    # A window no step reaches: the stand-in never compacts either.
    settings = Settings(model="openai/bench", api_base=base, max_steps=steps + 10,
                        models=ModelRoles(limits={"openai/bench": ModelLimitSettings(context_window=10_000_000)}))
    session = new_session(workspace, settings, data_dir=workspace.parent / "data", default_permission_mode="all")
    started = time.process_time()
    ended = await session.run_turn(f"read {steps} files")
    cpu = time.process_time() - started
    assert ended.outcome == "completed", ended
    print(json.dumps({"calls": session.totals.steps, "cpu": cpu}))

asyncio.run(main())
"""


def workspace_with(files: int) -> Path:
    home = Path(tempfile.mkdtemp(prefix="agentcli-step-cost-"))
    workspace = home / "project"
    workspace.mkdir()
    for number in range(1, files + 1):
        (workspace / f"f{number}.txt").write_text("".join(f"{number:05d} line {n} of the file\n" for n in range(20)))
    return workspace


def run_one(code: str, *args: str, env: dict[str, str]) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=1800)
    if out.returncode != 0:
        raise SystemExit(f"run failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, nargs="+", default=[2, 300])
    parser.add_argument("--pairs", type=int, default=3)
    options = parser.parse_args()
    compare(options.steps, options.pairs)


def compare(step_counts: list[int], pairs: int) -> None:
    env = {key: value for key, value in os.environ.items()
           if key not in ("EXPERIMENTAL_OPENAI_BASE_LLM_HTTP_HANDLER", "MAX_BASE64_LENGTH_FOR_LOGGING")}
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    env["AGENTCLI_NO_WARMUP"] = "1"
    env["PYTHONPATH"] = str(ROOT)
    first = Path(tempfile.mkdtemp(prefix="agentcli-step-cost-")) / "first_request.json"
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(ROOT), str(first)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert server.stdout is not None
        base = server.stdout.readline().strip()
        run_one(AGENTCLI, base, str(workspace_with(1)), "1", env=env)  # records the prompt and tools; warms caches
        print("the stand-in (baseline) is STAND_IN in bench/step_cost.py, run per pair as:")
        print(f"  python -c \"$STAND_IN\" {base} WORKSPACE STEPS {first}")
        for steps in step_counts:
            workspace = workspace_with(steps)
            ratios, stand_in, agent = [], [], []
            for _ in range(pairs):
                baseline = run_one(STAND_IN, base, str(workspace), str(steps), str(first), env=env)
                ours = run_one(AGENTCLI, base, str(workspace), str(steps), env=env)
                per_base, per_ours = baseline["cpu"] / baseline["calls"], ours["cpu"] / ours["calls"]
                stand_in.append(per_base)
                agent.append(per_ours)
                ratios.append(per_ours / per_base)
            print(f"{steps:4d} steps: CPU per model call, stand-in median "
                  f"{statistics.median(stand_in) * 1000:6.1f} ms, "
                  f"agentcli median {statistics.median(agent) * 1000:6.1f} ms; paired ratio agentcli/stand-in "
                  f"median {statistics.median(ratios):.2f}x (range {min(ratios):.2f}-{max(ratios):.2f}, {pairs} pairs)")
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
