"""The work behind the chart: one object per state's work, the guards and the transitions' actions.

The chart (``chart.py``) names its callbacks; python-statemachine resolves each name on these
listeners. Every piece shares one :class:`~agentcli.session.turn.Turn`:

- ``thinking.py`` — ``think`` (thinking, reminded): stream one model call, record the reply.
- ``calling.py`` — ``run_call`` (executingTool): run or refuse the next call, record its result.
- ``capturing.py`` — ``capture_baseline`` / ``capture_after_call``: write the workspace's tree;
  ``capture_cut_off`` after a call a pause stopped (from ``calling.py``'s exit action).
- ``reviewing.py`` — ``review_progress`` (reviewingProgress): feed the progress tracker, raise the
  phase signals; ``is_stuck``.
- ``compacting.py`` — ``summarize_history`` (compacting): the model summarizes the older part of
  its view.
- ``guards.py`` — the questions the transitions ask of an outcome.
- ``endings.py`` — the transitions' actions: how a turn ends, what the model is told.
"""

from __future__ import annotations

from agentcli.session.calling import Calling
from agentcli.session.capturing import Capturing
from agentcli.session.compacting import Compacting
from agentcli.session.endings import Endings
from agentcli.session.guards import Guards
from agentcli.session.reviewing import Reviewing
from agentcli.session.thinking import Thinking
from agentcli.session.turn import Turn


def listeners(turn: Turn) -> list[object]:
    """The objects the chart resolves its callbacks on, for one session."""
    capturing = Capturing(turn)  # also captures after a call cut off, on leaving executingTool
    return [Thinking(turn), Calling(turn, capturing), capturing, Reviewing(turn), Compacting(turn), Guards(turn),
            Endings(turn)]
