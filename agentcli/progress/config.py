"""The `[progress]` configuration table: every threshold the stuck detector uses.

The model lives in :mod:`agentcli.config` with the other settings, so one validation reports a bad
value with the file it came from; it is re-exported here for the tracker.
"""

from agentcli.config import RULE_IDS, ProgressConfig, RuleId

__all__ = ["RULE_IDS", "ProgressConfig", "RuleId"]
