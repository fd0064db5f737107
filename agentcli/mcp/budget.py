"""How many tools each MCP server may offer when all of them together would be too many.

OpenAI refuses a request with more than 128 tools (``array_above_max_length``), and with it every
turn of the session; a server such as a cloud provider's can list hundreds. The room left after
agentcli's own tools is shared so that small servers keep all their tools and the large ones
split the rest evenly (water-filling), rather than the first server to start taking it all.
"""

from __future__ import annotations

from collections.abc import Mapping

MAX_TOOLS = 128
"""The most tools one request may carry: OpenAI's limit, the strictest of the main providers."""


def share(room: int, wanted: Mapping[str, int]) -> dict[str, int]:
    """How many tools each server keeps, given ``room`` for all of them and how many each has."""
    kept: dict[str, int] = {}
    left = max(room, 0)
    # Smallest first: a server that needs less than an even share leaves the rest to the others.
    order = sorted(wanted, key=lambda name: (wanted[name], name))
    for index, name in enumerate(order):
        fair = left // (len(order) - index)
        kept[name] = min(wanted[name], fair)
        left -= kept[name]
    return kept
