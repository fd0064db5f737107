"""Decide what an action brought that the current phase has not seen before.

This is the definition of progress every rule relies on:

* **new file content** — a file reaches a content hash it has not had in this phase;
* **a newly passing check** — a check passes for the first time in this phase;
* **a new command** — a command line not run before in this phase, whatever its outcome
  (trying a different command is switching approach);
* **new information** — a successful call that wrote no files and whose tool, arguments and
  output together were never seen in this phase: reading a file not read before, a search
  not run before, re-reading a file after it changed, a poll whose status moved.

The first two are *strong* progress: the work itself moved. They clear the loop counters of
the rules. All four count against the no-progress rule, so an agent reading ten different
files at the start of a task is exploring, not stuck, while one re-reading the same three
files gets no credit: their output has not changed.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentcli.progress.actions import Action


@dataclass(frozen=True, slots=True)
class Novelty:
    """What one action brought that the phase had not seen."""

    new_files: tuple[str, ...] = ()
    """Files whose content is new to this phase."""

    returned_files: tuple[str, ...] = ()
    """Files whose content changed back to a version seen earlier in this phase."""

    newly_passing: tuple[str, ...] = ()
    """Checks passing for the first time in this phase."""

    new_command: bool = False
    """The action ran a command line not run before in this phase."""

    new_information: bool = False
    """A successful call, writing no files, with a tool/arguments/output never seen in this phase."""

    @property
    def strong(self) -> bool:
        """The work itself moved: new file content or a newly passing check."""
        return bool(self.new_files or self.newly_passing)

    @property
    def any(self) -> bool:
        """Any kind of progress, strong or exploratory."""
        return self.strong or self.new_command or self.new_information


_NOTHING = Novelty()


class NoveltyLedger:
    """Remembers, for the current phase, every file version, passed check, command and call result.

    Memory grows with the distinct facts of a phase (a few dozen bytes each, a few thousand
    per long phase); each lookup is a set or dict probe, so the cost per action stays flat.
    """

    def __init__(self) -> None:
        """Start with an empty phase."""
        self._current: dict[str, str] = {}
        self._versions: dict[str, set[str]] = {}
        self._passed: set[str] = set()
        self._commands: set[str] = set()
        self._calls: set[tuple[str, str, str]] = set()

    def new_phase(self) -> None:
        """Forget what the phase has seen, keeping each file's current content as its base.

        Keeping the base means an edit that is undone in the new phase still counts as a
        return to earlier content rather than as new content.
        """
        self._versions = {path: {digest} for path, digest in self._current.items()}
        self._passed = set()
        self._commands = set()
        self._calls = set()

    def observe(self, action: Action) -> Novelty:
        """Record an action and tell what it brought.

        Args:
            action: The action just recorded.

        Returns:
            The novelty of the action; a shared empty `Novelty` when it brought nothing.
        """
        for path, digest in action.file_hashes_before.items():
            # The content before the call is a version the file has had, not one the agent
            # produced: known from now on, but no progress.
            self._current[path] = digest
            self._versions.setdefault(path, set()).add(digest)

        new_files: list[str] = []
        returned: list[str] = []
        for path, digest in action.file_hashes.items():
            if self._current.get(path) == digest:
                continue
            self._current[path] = digest
            versions = self._versions.setdefault(path, set())
            if digest in versions:
                returned.append(path)
            else:
                versions.add(digest)
                new_files.append(path)

        newly_passing: list[str] = []
        if action.checks:
            # A test suite reports every test on every run. The superset test and the set
            # difference run in C, so only the few names not yet passed are looked at one by one.
            if not self._passed.issuperset(action.checks.keys()):
                unseen = action.checks.keys() - self._passed
                newly_passing = sorted(name for name in unseen if action.checks[name])
                self._passed.update(newly_passing)

        new_command = False
        if action.target_kind == "command" and action.target is not None:
            new_command = action.target not in self._commands
            self._commands.add(action.target)

        new_information = False
        # A call that wrote files is judged by the content it produced, not by its
        # arguments: otherwise an undo with fresh arguments would pass for progress.
        if action.ok and not action.file_hashes:
            key = (action.tool, action.args_hash, action.output_hash)
            if key not in self._calls:
                self._calls.add(key)
                new_information = True

        if not (new_files or returned or newly_passing or new_command or new_information):
            return _NOTHING
        return Novelty(
            new_files=tuple(new_files),
            returned_files=tuple(returned),
            newly_passing=tuple(newly_passing),
            new_command=new_command,
            new_information=new_information,
        )
