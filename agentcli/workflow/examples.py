"""A workflow file to copy: the README shows it, and a test loads and compiles it."""

from __future__ import annotations

EXAMPLE_WORKFLOW_NAME = "review-fix"

EXAMPLE_WORKFLOW_TOML = '''\
# .agentcli/workflows/review-fix.toml — run it with: agentcli run --workflow review-fix "…"
description = "Review the code into REVIEW.md, fix what the review lists, finish when the checks pass."
initial = "review"
terminal = ["done"]

[[phases]]
name = "review"
description = "Read the code and write the findings to REVIEW.md."
model = "plan"              # a role from [models] in the config, or a litellm model string
max_steps = 30
tools = ["read_file", "list_files", "glob", "grep", "write_file"]
instructions = """
Review the code in {workspace} for bugs and risky code. Change no code in this phase.
Write your findings to REVIEW.md with write_file, one numbered item per problem.
Writing REVIEW.md ends the review."""

[[phases]]
name = "fix.edit"
description = "Fix the problems REVIEW.md lists."
model = "build"
max_steps = 50
tools = ["read_file", "glob", "grep", "edit_file", "write_file", "bash", "finish_phase"]
instructions = """
Fix the problems listed in REVIEW.md, one at a time. Call finish_phase when all are fixed."""

[[phases]]
name = "fix.check"
description = "Run the project's checks."
tools = ["run_checks"]
tool_choice = "run_checks"  # entering this phase runs the checks at once

[[phases]]
name = "done"
tools = []                  # only complete, clarify and pause are left
tool_choice = "required"
instructions = "The checks passed. Call complete with a summary of the fixes."

# A custom trigger: any tool can move the workflow on. Here, writing the review does.
[[transitions]]
from = "review"
to = "fix.edit"
tool = "write_file"

[[transitions]]
from = "fix.edit"
to = "fix.check"
tool = "finish_phase"

[[transitions]]
from = "fix.check"
to = "done"
checks = "passed"

[[transitions]]
from = "fix.check"
to = "fix.edit"
checks = "failed"
'''
"""A complete workflow file: nested phases, a custom tool trigger (``write_file``) and checks."""
