"""Model calls: litellm for real models, a replay model for demos and recorded sessions.

A leaf layer: it knows the tools only by their JSON schemas and never imports the session.
"""
