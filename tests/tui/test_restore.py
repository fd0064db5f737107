"""Scrub, restore and undo against a real Session with its snapshot store."""

from __future__ import annotations

from pathlib import Path

from agentcli.llm.replay import ReplayModel
from agentcli.tui.app import AgentApp
from agentcli.tui.screens import ConfirmRestore
from tests.tui.helpers import drain, make_app, make_session, recording, wait_for, wait_idle

BUGGY = 'return text.lower().split(" ")'
FIXED = 'return re.findall(r"[a-z0-9\']+", text.lower())'

EDITS = recording(
    ("Fixing the split.", [("edit_file", {"path": "textstats.py", "old_string": BUGGY, "new_string": FIXED})]),
    ("And a note.", [("write_file", {"path": "NOTES.md", "content": "fixed words()\n"})]),
    ("Done.", [("complete", {"summary": "fixed"})]),
)


async def test_scrub_restore_and_undo(project: Path) -> None:
    source = project / "textstats.py"
    assert BUGGY in source.read_text()
    session = make_session(project, ReplayModel(EDITS), snapshots=True)
    app = make_app(project, session, initial_prompt="fix it")
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_idle(pilot, app)
        assert FIXED in source.read_text() and (project / "NOTES.md").exists()
        timeline = app.timeline
        await wait_for(pilot, lambda: len(timeline.entries) >= 2, what="snapshots on the timeline")
        entries = list(timeline.entries)
        assert [e.seq for e in entries] == sorted(e.seq for e in entries)
        edit = next(e for e in entries if e.tool_name == "edit_file")
        assert any(f.path == "textstats.py" for f in edit.files)

        # Scrub to the oldest snapshot: its diff against the working tree shows the later edits.
        await pilot.press("f2")
        await pilot.press("home")
        oldest = timeline.entries[0]
        await wait_for(pilot, lambda: f"#{oldest.seq} → working tree" in app.query_one("#diff-text").render().plain,
                       what="the preview of the oldest snapshot")

        # Restore to the snapshot before the note was written: asks first, listing NOTES.md.
        target_index = next(i for i, e in enumerate(timeline.entries) if e.tool_name == "edit_file")
        timeline.option_list.highlighted = target_index
        count_before = len(timeline.entries)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmRestore), what="the confirmation")
        modal = app.screen
        assert isinstance(modal, ConfirmRestore)
        assert ("delete", "NOTES.md") in modal.paths
        await pilot.press("y")
        await wait_for(pilot, lambda: not (project / "NOTES.md").exists(), what="the restore")
        assert FIXED in source.read_text(), "the edit is in the restored snapshot"
        await wait_for(pilot, lambda: len(timeline.entries) > count_before, what="the undo point on the timeline")
        assert timeline.undo_id is not None
        edit_seq = timeline.entries[target_index].seq
        await wait_for(pilot, lambda: "No differences." in app.query_one("#diff-text").render().plain,
                       what="the preview of the restored snapshot against the working tree it now matches")
        await wait_for(pilot, lambda: timeline.entries[-1].label == f"restored #{edit_seq}",
                       what="the restore's entry, named by the snapshot's number")
        assert f"restored #{edit_seq} " in timeline.option_list.get_option_at_index(
            len(timeline.entries) - 1).prompt.plain
        assert any("restored the workspace" in n.render().plain for n in app.query("NoticeBlock"))

        # Undo: restore what the restore replaced.
        await pilot.press("u")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmRestore), what="the undo confirmation")
        undo = app.screen
        assert isinstance(undo, ConfirmRestore)
        assert ("create", "NOTES.md") in undo.paths, "a file the restore deleted comes back as added"
        assert "A NOTES.md" in "\n".join(w.render().plain for w in undo.query("Static"))
        await pilot.press("y")
        await wait_for(pilot, lambda: (project / "NOTES.md").exists(), what="the undo")
        assert (project / "NOTES.md").read_text() == "fixed words()\n"


def restores_done(app: AgentApp) -> bool:
    return not any(worker.group == "restore" and not worker.is_finished for worker in app.workers)


async def test_restoring_while_the_agent_works_is_refused(project: Path) -> None:
    rec = recording(("Writing.", [("write_file", {"path": "a.txt", "content": "a"})]),
                    ("Running.", [("bash", {"command": "sleep 20"})]))
    session = make_session(project, ReplayModel(rec), snapshots=True)
    app = make_app(project, session, initial_prompt="go")
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_for(pilot, lambda: app.control_state == "executingTool" and app.timeline.entries != [],
                       what="a running command with a snapshot taken")
        await wait_for(pilot, lambda: any(c.name == "bash" for c in app.calls), what="the bash call")
        app.restore_to(app.timeline.entries[0])
        await wait_for(pilot, lambda: any("Pause the agent" in n.message for n in app._notifications),
                       what="the refusal")
        await wait_for(pilot, lambda: restores_done(app), what="the restore worker to finish")
        await drain(pilot)
        assert not isinstance(app.screen, ConfirmRestore)
        assert any("Pause the agent" in n.message for n in app._notifications)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.control_state == "paused")
