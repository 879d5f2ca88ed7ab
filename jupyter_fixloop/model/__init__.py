"""Models that write candidates: litellm's, the built-in engine, and the prompt they read."""
