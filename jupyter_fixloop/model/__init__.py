"""Models that write candidates: litellm's, the built-in engine, and the prompt they read."""

from ..doors import doors

_EXPORTS = {  # what the faces (notebook/, batch/, bench/, cli, demo) import from here -> its module
    "Model": "models", "Reply": "models", "LastRun": "models", "get_model": "models", "check_model": "models",
            "count_tokens": "models",
    "build_messages": "prompt", "STOP": "prompt",
}
__all__ = sorted(_EXPORTS)

__getattr__ = doors(__name__, _EXPORTS)
