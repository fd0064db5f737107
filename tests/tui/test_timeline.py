"""The snapshot timeline and the restore confirmation, with their own data (no store needed)."""

from __future__ import annotations

from collections.abc import Iterable
from types import SimpleNamespace
from typing import Any

import pytest
from textual.app import App
from textual.widget import Widget

from agentcli.events import FileChange, SnapshotCaptured, SnapshotRestored
from agentcli.tui.messages import SessionEventPosted
from agentcli.tui.screens import ConfirmRestore, planned_paths
from agentcli.tui.themes import ROLE_DEFAULTS
from agentcli.tui.widgets import SnapshotTimeline, TimelineEntry
from agentcli.tui.widgets import _timeline as timeline_module
from tests.tui.helpers import drain, wait_for


def diff_text(app: App[None]) -> str:
    return app.query_one("#diff-text").render().plain


def previews_done(app: App[None]) -> bool:
    """No diff preview is waiting or running (each runs in an exclusive worker)."""
    return not any(worker.group == "preview" and not worker.is_finished for worker in app.workers)


def captured(seq: int, path: str = "textstats.py", tool: str | None = "edit_file") -> SnapshotCaptured:
    return SnapshotCaptured(snapshot_id=f"snap{seq:02d}", seq=seq, tree="0" * 40, reason=f"after {tool}",
                            tool_name=tool, files=[FileChange(path=path, added=seq, removed=1)])


class FakeDiffer:
    """Stands in for ``session.diff``: records what was asked, answers with a one-file patch."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str | None]] = []

    async def __call__(self, a_ref: str, b_ref: str | None) -> Any:
        self.asked.append((a_ref, b_ref))
        patch = f"@@ -1 +1 @@\n-old line\n+new line from {a_ref}\n"
        return SimpleNamespace(files=[SimpleNamespace(path="textstats.py", status="modified", added=1, removed=1,
                                                      patch=patch, binary=False)])


class TimelineApp(App[None]):
    def __init__(self, differ: FakeDiffer | None) -> None:
        super().__init__()
        self.differ = differ
        self.requests: list[object] = []

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(ROLE_DEFAULTS)

    def compose(self) -> Iterable[Widget]:
        yield SnapshotTimeline(self.differ, id="timeline")

    def on_snapshot_timeline_restore_requested(self, message: SnapshotTimeline.RestoreRequested) -> None:
        self.requests.append(("restore", message.entry.id))

    def on_snapshot_timeline_undo_requested(self, message: SnapshotTimeline.UndoRequested) -> None:
        self.requests.append(("undo", message.snapshot_id))


async def test_snapshots_are_listed_with_sequence_tool_and_stats() -> None:
    app = TimelineApp(FakeDiffer())
    async with app.run_test(size=(60, 20)) as pilot:
        timeline = app.query_one(SnapshotTimeline)
        for seq in (1, 2, 3):
            timeline.post_message(SessionEventPosted(captured(seq)))
        await wait_for(pilot, lambda: timeline.option_list.option_count == 3, what="the three snapshots")
        prompts = [option.prompt.plain for option in timeline.option_list.options]
        assert prompts[2].startswith("#3") and "edit_file" in prompts[2] and "+3" in prompts[2]
        assert "textstats.py" in prompts[2]
        assert timeline.option_list.highlighted == 2, "the newest entry is followed"


async def test_fast_scrubbing_diffs_only_where_it_stops(monkeypatch: pytest.MonkeyPatch) -> None:
    # The moves below are handled one message at a time, and a preview starts whenever more than
    # the preview delay (0.12 s) passes between two of them, as it can when other jobs share the
    # cores. A longer delay keeps the burst faster than the delay, as a held key is.
    monkeypatch.setattr(timeline_module, "PREVIEW_DELAY_S", 1.0)
    differ = FakeDiffer()
    app = TimelineApp(differ)
    async with app.run_test(size=(60, 30)) as pilot:
        timeline = app.query_one(SnapshotTimeline)
        timeline.load(TimelineEntry.from_event(captured(seq)) for seq in range(1, 21))
        await wait_for(pilot, lambda: len(differ.asked) == 1, what="the first preview")
        # A burst of moves, as from a held arrow key (faster than the pilot can type). No pause in
        # between: on a loaded machine even a 10 ms pause can outlast the preview delay.
        for _ in range(15):
            timeline.action_scrub(-1)
        await wait_for(pilot, lambda: len(differ.asked) == 2, what="the preview after scrubbing")
        await wait_for(pilot, lambda: "#5 → working tree" in diff_text(app), what="the preview to be shown")
        await wait_for(pilot, lambda: previews_done(app), what="every preview worker to finish")
        await drain(pilot)
        assert differ.asked == [("snap20", None), ("snap05", None)], "the 14 entries scrubbed past were never diffed"
        text = diff_text(app)
        assert "#5 → working tree" in text and "+new line from snap05" in text


async def test_arrow_keys_scrub_and_the_preview_follows() -> None:
    differ = FakeDiffer()
    app = TimelineApp(differ)
    async with app.run_test(size=(60, 30)) as pilot:
        timeline = app.query_one(SnapshotTimeline)
        timeline.load(TimelineEntry.from_event(captured(seq)) for seq in range(1, 11))
        timeline.option_list.focus()
        await pilot.press("up", "up", "left", "right", "home")
        await wait_for(pilot, lambda: differ.asked and differ.asked[-1] == ("snap01", None), what="the preview")
        assert len(differ.asked) <= 6
        await pilot.press("end")
        await wait_for(pilot, lambda: differ.asked[-1] == ("snap10", None), what="the newest preview")


async def test_d_compares_with_the_previous_snapshot() -> None:
    differ = FakeDiffer()
    app = TimelineApp(differ)
    async with app.run_test(size=(60, 30)) as pilot:
        timeline = app.query_one(SnapshotTimeline)
        timeline.load(TimelineEntry.from_event(captured(seq)) for seq in (1, 2, 3))
        timeline.option_list.focus()
        await wait_for(pilot, lambda: len(differ.asked) == 1)
        await pilot.press("d")
        await wait_for(pilot, lambda: len(differ.asked) == 2)
        assert differ.asked[-1] == ("snap02", "snap03")
        await wait_for(pilot, lambda: "#2 → #3" in diff_text(app), what="the diff against the previous snapshot")


async def test_enter_asks_for_a_restore_and_u_for_an_undo() -> None:
    app = TimelineApp(FakeDiffer())
    async with app.run_test(size=(60, 30)) as pilot:
        timeline = app.query_one(SnapshotTimeline)
        timeline.load(TimelineEntry.from_event(captured(seq)) for seq in (1, 2, 3))
        timeline.option_list.focus()
        await pilot.press("up", "enter")
        await pilot.press("u")  # nothing to undo yet: a warning, no request
        timeline.post_message(SessionEventPosted(SnapshotRestored(target_id="snap02", target_seq=2,
                                                                  undo_snapshot_id="snap04")))
        await wait_for(pilot, lambda: timeline.undo_id == "snap04", what="the restore's undo point")
        await pilot.press("u")
        await wait_for(pilot, lambda: len(app.requests) == 2, what="the undo request")
        assert app.requests == [("restore", "snap02"), ("undo", "snap04")]


async def test_without_a_snapshot_store_the_timeline_says_so() -> None:
    app = TimelineApp(None)
    async with app.run_test(size=(60, 20)):
        assert "No snapshot store" in app.query_one("#diff-text").render().plain


def test_restore_plans_are_read_by_their_paths() -> None:
    plan = SimpleNamespace(changes=[SimpleNamespace(path="a.py", action="write"),
                                    SimpleNamespace(path="b.py", action="delete")])
    assert planned_paths(plan) == [("write", "a.py"), ("delete", "b.py")]
    assert planned_paths(SimpleNamespace(writes=["a.py"], deletes=["c.py"])) == [("write", "a.py"), ("delete", "c.py")]


class ModalApp(App[None]):
    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(ROLE_DEFAULTS)


async def test_the_confirmation_lists_the_paths_and_answers_y_or_n() -> None:
    plan = SimpleNamespace(changes=[SimpleNamespace(path="textstats.py", action="write"),
                                    SimpleNamespace(path="notes.txt", action="delete")])
    app = ModalApp()
    answers: list[bool | None] = []
    async with app.run_test(size=(80, 24)) as pilot:
        await app.push_screen(ConfirmRestore(3, "edit_file", plan), callback=answers.append)
        text = "\n".join(w.render().plain for w in app.screen.query("Static"))
        assert "snapshot #3" in text and "M textstats.py" in text and "D notes.txt" in text
        assert "2 paths will change" in text
        await pilot.press("y")
        await wait_for(pilot, lambda: len(answers) == 1, what="the first answer")
        await app.push_screen(ConfirmRestore(3, "edit_file", plan), callback=answers.append)
        await pilot.press("escape")
        await wait_for(pilot, lambda: len(answers) == 2, what="the second answer")
    assert answers == [True, False]


def test_a_restore_plan_names_re_created_files_as_added() -> None:
    plan = SimpleNamespace(changes=[SimpleNamespace(path="db.py", action="write", old_id=None),
                                    SimpleNamespace(path="app.py", action="write", old_id="ab12"),
                                    SimpleNamespace(path="old.py", action="delete", old_id="cd34")])
    assert planned_paths(plan) == [("create", "db.py"), ("write", "app.py"), ("delete", "old.py")]


def test_a_restores_entry_is_named_by_the_snapshot_number_within_its_session() -> None:
    from agentcli.restore_reason import restore_reason, restored_from

    reason = restore_reason("6a4b633d6fc7", 3, "4024606b76")
    assert restored_from(reason) is not None and restored_from(reason).seq == 3  # type: ignore[union-attr]
    assert TimelineEntry("x", 7, reason, None, (), "6a4b633d6fc7").label == "restored #3"
    assert TimelineEntry("x", 7, reason, None, (), "another").label == "restored #3 of 6a4b633d6fc7"
    assert TimelineEntry("x", 1, "session start", None, (), "6a4b633d6fc7").label == "session start"
    assert restored_from("restored snapshot by hand") is None


def test_an_entry_without_files_says_as_found_or_no_changes_not_plus_zero_minus_zero() -> None:
    from agentcli.tui.widgets._timeline import FileStat

    assert TimelineEntry("x", 1, "session start", None, ()).prompt().plain == "#1   session start as found"
    assert TimelineEntry("x", 4, "after bash", "bash", ()).prompt().plain == "#4   bash no changes"
    changed = TimelineEntry("x", 5, "after bash", "bash", (FileStat("a.py", 2, 1, "modified"),
                                                           FileStat("b.py", 0, 3, "modified")))
    assert changed.prompt().plain == "#5   bash +2 −4 a.py +1"
