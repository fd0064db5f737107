"""How much of the window an agent chunk takes: about as many widgets as Markdown makes of it.

The window of mounted blocks is bounded by this weight, so a chunk of lists and tables (a widget
or more per line) must weigh more than a chunk of a few long paragraphs, or the window holds
thousands of widgets and every garbage collection walks them (bench/tui_streaming.py).
"""

from __future__ import annotations

from agentcli.tui.widgets._records import Record

TABLE = "| a | b |\n|---|---|\n" + "".join(f"| {n} | {n * n} |\n" for n in range(10))
FENCE = "```python\n" + "".join(f"x{n} = {n}\n" for n in range(30)) + "```\n"


def test_a_table_weighs_a_line_per_row_and_a_fence_weighs_one() -> None:
    assert Record("agent", TABLE).weight == 12
    assert Record("agent", FENCE).weight == 1
    assert Record("agent", "One paragraph.\n\nAnother one.\n").weight == 2
    assert Record("agent", "- one\n- two\n- three\n").weight == 3


def test_the_weight_follows_a_chunk_that_is_still_streaming() -> None:
    record = Record("agent", "Intro.\n\n")
    assert record.weight == 1
    record.text += TABLE
    assert record.weight == 13
    record.text += FENCE + "After.\n"
    assert record.weight == 15


def test_other_blocks_weigh_one() -> None:
    assert Record("user", "a\nb\nc\n").weight == 1
    assert Record("agent", "").weight == 1
