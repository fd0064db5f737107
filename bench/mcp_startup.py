"""How long MCP tools take to appear, next to the bare SDK doing the same, and what starting them
costs a TUI's event loop.

Each run is a fresh interpreter (imports included, as a session pays them): the baseline connects
the SDK's ``Client`` to ``mcp-server-time`` over stdio and lists its tools; agentcli's run starts
the same server through ``McpManager`` (SDK imported in a thread, the read side watched, tools
declared and put in the registry) until ``registry.ready()``. Both report the longest gap of a
10 ms ticker on their event loop meanwhile: what a TUI drawing frames would feel.

Goal (issue 17): tools appear within a second of the session starting on an idle machine, at
most 1.2x the bare SDK, and no loop gap near the SDK's half-second import.

    python bench/mcp_startup.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile

SERVER = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]

_TICKER = """
import asyncio, time
gaps = [0.0]
async def ticker():
    last = time.perf_counter()
    while True:
        await asyncio.sleep(0.01)
        now = time.perf_counter()
        gaps.append(now - last - 0.01)
        last = now
"""

BASELINE = _TICKER + """
async def main():
    tick = asyncio.create_task(ticker())
    await asyncio.sleep(0.05)  # the ticker is running before anything is imported
    began = time.perf_counter()
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
    async with Client(StdioServerParameters(command=SERVER[0], args=SERVER[1:])) as client:
        tools = (await client.list_tools()).tools
        took = time.perf_counter() - began
    tick.cancel()
    print(json.dumps({"s": took, "tools": len(tools), "gap": max(gaps)}))
asyncio.run(main())
"""

AGENTCLI = _TICKER + """
from pathlib import Path
from agentcli.config_mcp import McpServerSettings
from agentcli.mcp import McpManager, ServerList, ServerSpec
from agentcli.tools.registry import ToolRegistry
async def main():
    tick = asyncio.create_task(ticker())
    await asyncio.sleep(0.05)  # the ticker is running before anything is imported
    began = time.perf_counter()
    registry = ToolRegistry([])
    spec = ServerSpec("time", McpServerSettings(command=SERVER[0], args=SERVER[1:]), "config")
    manager = McpManager(ServerList((spec,)), Path(WORKSPACE), registry)
    manager.start()
    await registry.ready()
    took = time.perf_counter() - began
    await manager.aclose()
    tick.cancel()
    print(json.dumps({"s": took, "tools": len(registry.names), "gap": max(gaps)}))
asyncio.run(main())
"""


def _run(code: str, workspace: str) -> dict[str, float]:
    prelude = f"import json\nSERVER = {SERVER!r}\nWORKSPACE = {workspace!r}\n"
    done = subprocess.run([sys.executable, "-c", prelude + code], capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as workspace:
        _run(BASELINE, workspace)  # warm the bytecode caches
        pairs = [(_run(BASELINE, workspace), _run(AGENTCLI, workspace)) for _ in range(runs)]
    base = statistics.median(b["s"] for b, _ in pairs)
    ours = statistics.median(a["s"] for _, a in pairs)
    print(f"tools listed (median of {runs}): bare SDK {base:.2f} s, agentcli {ours:.2f} s, ratio {ours / base:.2f}x")
    print(f"longest event-loop gap (median): bare SDK {statistics.median(b['gap'] for b, _ in pairs) * 1000:.0f} ms, "
          f"agentcli {statistics.median(a['gap'] for _, a in pairs) * 1000:.0f} ms")
    print(f"tools: bare SDK {pairs[0][0]['tools']:.0f}, agentcli {pairs[0][1]['tools']:.0f}")


if __name__ == "__main__":
    main()
