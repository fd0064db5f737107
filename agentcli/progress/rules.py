"""The stuck rules. Each watches the action stream through a bounded window and says what repeated.

Every rule is incremental: it keeps a counter or a short window and does a fixed amount of
work per action, so the cost of a record does not grow with the length of the session.
Strong progress (new file content, a newly passing check; see `novelty.py`) clears the loop
counters, because whatever repeated before it may legitimately repeat after it.

The rules stay together in one module (over 400 lines) so they can be read and tuned side by
side: each is a small class of the same shape.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass

from agentcli.progress.actions import Action
from agentcli.progress.config import ProgressConfig, RuleId
from agentcli.progress.novelty import Novelty

Signature = tuple[str, str, str, bool, str | None]
"""A call's identity for repeat detection: tool, arguments hash, output hash, ok, error key."""

_MAX_TRACKED_TARGETS = 256
_ERROR_QUOTE_LIMIT = 200


@dataclass(frozen=True, slots=True)
class Step:
    """One recorded action as the rules see it."""

    action: Action
    """The action itself."""

    novelty: Novelty
    """What it brought that the phase had not seen."""

    signature: Signature
    """Its identity for repeat detection."""

    error_key: str | None
    """Its error text with run-to-run noise masked, for comparing errors."""


@dataclass(frozen=True, slots=True)
class Finding:
    """A rule's claim that the agent is stuck, before escalation decides the severity."""

    rule: RuleId
    """The rule that fired."""

    evidence: str
    """What repeated, in one sentence."""


def quote_error(error: str | None) -> str:
    """Shorten an error for evidence text.

    Args:
        error: The error text, possibly multi-line or missing.

    Returns:
        The first line, cut to 200 characters, or a note that there was no message.
    """
    if not error or not error.strip():
        return "(no error message)"
    line = error.strip().splitlines()[0]
    return line if len(line) <= _ERROR_QUOTE_LIMIT else line[: _ERROR_QUOTE_LIMIT - 3] + "..."


def _describe_result(action: Action) -> str:
    if action.ok:
        return action.describe()
    return f"{action.describe()} (failed: {quote_error(action.error)})"


class Rule:
    """Base for stuck rules: observe each step, optionally fire."""

    rule: RuleId

    def observe(self, step: Step) -> Finding | None:
        """Take in one step and report a stuck pattern ending at it.

        Args:
            step: The step just recorded.

        Returns:
            A finding when the pattern is present, else None.
        """
        raise NotImplementedError

    def verdict_issued(self) -> None:
        """Hear that some rule's finding became a verdict.

        Most rules ignore it and keep counting, so that the next repeat of their pattern
        fires again (and halts).
        """


@dataclass(slots=True)
class _Streak:
    tool: str
    failure: tuple[str | None, str]
    count: int


class SameErrorRule(Rule):
    """The same error on the same target N times in a row.

    The same error means the same error text and the same output, run-to-run noise masked:
    a test command whose error is just "exit status 1" but whose report changed has failed
    differently. "In a row" means with no strong progress in between: a failing edit
    retried after reading the file, grepping or running other commands is still the same
    failure, while a failing test run after a successful new edit is a new attempt. A
    success of the same tool on the target, or a different failure there, ends the streak.
    """

    rule: RuleId = "same_error"

    def __init__(self, repeats: int) -> None:
        """Set the threshold.

        Args:
            repeats: Failures in a row that fire the rule.
        """
        self._repeats = repeats
        self._streaks: dict[str, _Streak] = {}

    def observe(self, step: Step) -> Finding | None:
        """See `Rule.observe`."""
        if step.novelty.strong:
            self._streaks.clear()
        action = step.action
        key = action.target if action.target is not None else action.tool
        streak = self._streaks.get(key)
        if action.ok:
            if streak is not None and streak.tool == action.tool:
                del self._streaks[key]
            return None
        failure = (step.error_key, action.output_hash)
        if streak is not None and streak.failure == failure:
            streak.count += 1
            streak.tool = action.tool
        else:
            if streak is None and len(self._streaks) >= _MAX_TRACKED_TARGETS:
                # Bound memory in a long exploration full of one-off failures; the oldest
                # streak is the least likely to be the one still repeating.
                del self._streaks[next(iter(self._streaks))]
            streak = _Streak(action.tool, failure, 1)
            self._streaks[key] = streak
        if streak.count < self._repeats:
            return None
        return Finding(
            self.rule,
            f"{action.describe()} failed {streak.count} times in a row with the same error: "
            f"{quote_error(action.error)}",
        )


class IdenticalCallRule(Rule):
    """The identical call with the identical result N times within a recent window.

    Identical means tool, arguments, output and outcome all equal: a poll whose output
    moves, or a test that now fails differently, is not a repeat. Repeats count only since
    the last strong progress, so running the same passing test after each new edit is fine.
    """

    rule: RuleId = "identical_call"

    def __init__(self, repeats: int, window: int) -> None:
        """Set the thresholds.

        Args:
            repeats: Identical calls that fire the rule.
            window: How many recent actions are looked back over.
        """
        self._repeats = repeats
        self._window: deque[Signature] = deque(maxlen=window)
        self._counts: Counter[Signature] = Counter()

    def observe(self, step: Step) -> Finding | None:
        """See `Rule.observe`."""
        if step.novelty.strong:
            self._window.clear()
            self._counts.clear()
        if len(self._window) == self._window.maxlen:
            evicted = self._window[0]
            self._counts[evicted] -= 1
            if not self._counts[evicted]:
                del self._counts[evicted]
        self._window.append(step.signature)
        count = self._counts[step.signature] + 1
        self._counts[step.signature] = count
        if count < self._repeats:
            return None
        action = step.action
        outcome = (
            "returned the same output each time"
            if action.ok
            else f"failed the same way each time: {quote_error(action.error)}"
        )
        return Finding(
            self.rule,
            f"{action.describe()} was called {count} times with the same arguments and {outcome}",
        )


class CycleRule(Rule):
    """The last calls form a cycle of length L (A,B,A,B or A,B,C,A,B,C ...) repeated R times.

    Every call in the cycle must match its counterpart in each round exactly (arguments and
    output), and no strong progress may happen inside it. A block of one repeated call is
    left to `IdenticalCallRule`. Shorter cycles are tried first, so the evidence names the
    smallest repeating unit.
    """

    rule: RuleId = "cycle"

    def __init__(self, min_len: int, max_len: int, repeats: int) -> None:
        """Set the thresholds.

        Args:
            min_len: Shortest cycle detected.
            max_len: Longest cycle detected.
            repeats: Rounds of the cycle that fire the rule.
        """
        self._min = min_len
        self._max = max_len
        self._repeats = repeats
        self._steps: deque[tuple[Signature, Action]] = deque(maxlen=max_len * repeats)

    def observe(self, step: Step) -> Finding | None:
        """See `Rule.observe`."""
        if step.novelty.strong:
            self._steps.clear()
        steps = self._steps
        steps.append((step.signature, step.action))
        size = len(steps)
        last = steps[-1][0]
        for length in range(self._min, self._max + 1):
            span = length * self._repeats
            if span > size:
                break
            if all(steps[-1 - i][0] == steps[-1 - i - length][0] for i in range(span - length)):
                if any(steps[-1 - i][0] != last for i in range(1, length)):
                    block = [steps[-length + i][1] for i in range(length)]
                    return Finding(
                        self.rule,
                        f"the last {span} calls repeat the same cycle of {length} calls with "
                        f"identical results: {' -> '.join(_describe_result(a) for a in block)}",
                    )
        return None


class OscillationRule(Rule):
    """A file's content goes back to an earlier version repeatedly (edit, undo, edit, undo).

    Returns are counted per file and cleared by any new content or newly passing check, so
    reverting several files once each, or removing a debug print now and another one an
    hour later, is not oscillation.
    """

    rule: RuleId = "oscillation"

    def __init__(self, returns: int) -> None:
        """Set the threshold.

        Args:
            returns: Returns of one file to earlier content that fire the rule.
        """
        self._threshold = returns
        self._returns: dict[str, int] = {}

    def observe(self, step: Step) -> Finding | None:
        """See `Rule.observe`."""
        if step.novelty.strong:
            self._returns.clear()
        worst: tuple[str, int] | None = None
        for path in step.novelty.returned_files:
            count = self._returns.get(path, 0) + 1
            self._returns[path] = count
            if count >= self._threshold and (worst is None or count > worst[1]):
                worst = (path, count)
        if worst is None:
            return None
        path, count = worst
        return Finding(
            self.rule,
            f"{path} went back to an earlier version {count} times with nothing new written in "
            f"between (edit, undo, edit, undo), most recently by {step.action.describe()}",
        )


@dataclass(slots=True)
class _CheckSource:
    best: int
    stalls: int


class ChecksStalledRule(Rule):
    """Check runs from one source keep failing without getting better (implement ⇄ validate).

    A run improves when fewer checks fail than in any earlier run of that source this
    phase, or when a check passes for the first time. After the first failing run, N runs
    in a row without improvement fire the rule; a run with no failures ends the watch.
    """

    rule: RuleId = "checks_stalled"

    def __init__(self, runs: int) -> None:
        """Set the threshold.

        Args:
            runs: Non-improving runs after the best one that fire the rule.
        """
        self._runs = runs
        self._sources: dict[tuple[str, str | None], _CheckSource] = {}

    def observe(self, step: Step) -> Finding | None:
        """See `Rule.observe`."""
        action = step.action
        if action.checks is None:
            return None
        key = (action.tool, action.target)
        # Counted in C: a suite of thousands of tests must not cost a Python loop per run.
        if all(action.checks.values()):
            self._sources.pop(key, None)
            return None
        failing = len(action.checks) - sum(map(bool, action.checks.values()))
        source = self._sources.get(key)
        if source is None or failing < source.best or step.novelty.newly_passing:
            best = failing if source is None else min(source.best, failing)
            if source is None and len(self._sources) >= _MAX_TRACKED_TARGETS:
                del self._sources[next(iter(self._sources))]
            self._sources[key] = _CheckSource(best=best, stalls=0)
            return None
        source.stalls += 1
        if source.stalls < self._runs:
            return None
        names = [name for name, passed in action.checks.items() if not passed]
        listed = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        return Finding(
            self.rule,
            f"{source.stalls} runs of {action.describe()} in a row did not reduce the failing checks "
            f"(best {source.best}, now {failing} failing: {listed})",
        )


class NoProgressRule(Rule):
    """N actions in a row with no progress of any kind (see `novelty.py`).

    After any verdict the count starts again, so the model gets a full window to act on
    the recovery message: actions from before the message are not held against it twice.
    """

    rule: RuleId = "no_progress"

    def __init__(self, window: int) -> None:
        """Set the threshold.

        Args:
            window: Actions without progress that fire the rule.
        """
        self._window = window
        self._idle: deque[Action] = deque(maxlen=window)

    def observe(self, step: Step) -> Finding | None:
        """See `Rule.observe`."""
        if step.novelty.any:
            self._idle.clear()
            return None
        self._idle.append(step.action)
        if len(self._idle) < self._window:
            return None
        seen = Counter(_describe_result(a) for a in self._idle)
        listed = ", ".join(
            name if times == 1 else f"{name} x{times}" for name, times in seen.most_common(4)
        )
        more = len(seen) - 4
        return Finding(
            self.rule,
            f"the last {self._window} actions brought no new file content, no new command, "
            f"no newly passing check and no new information: {listed}"
            + (f" and {more} other call{'' if more == 1 else 's'}" if more > 0 else ""),
        )

    def verdict_issued(self) -> None:
        """Give the model a full window after any verdict."""
        self._idle.clear()


def build_rules(config: ProgressConfig) -> tuple[Rule, ...]:
    """Make a fresh set of rules for a phase, in the order they are consulted.

    Args:
        config: The thresholds.

    Returns:
        One instance of every rule; the most specific evidence comes first, so when one
        action trips several rules the verdict names the clearest cause.
    """
    return (
        SameErrorRule(config.same_error_repeats),
        IdenticalCallRule(config.identical_call_repeats, config.identical_call_window),
        OscillationRule(config.oscillation_returns),
        CycleRule(config.cycle_min_len, config.cycle_max_len, config.cycle_repeats),
        ChecksStalledRule(config.check_stall_runs),
        NoProgressRule(config.no_progress_window),
    )
