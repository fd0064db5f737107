"""What the user types before it reaches the session: slash commands, custom commands, @-mentions
and the prompt history.

Textual-free, so the TUI and the headless ``agentcli run /name`` share it; it reads the workspace
and the user's config folder, and never touches the session, the model or the snapshot store.
"""
