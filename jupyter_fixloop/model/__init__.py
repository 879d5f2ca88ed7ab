"""Models that write candidates: litellm's, the built-in engine, and the prompt they read."""

from importlib import import_module

_EXPORTS = {  # what the faces (notebook/, batch/, bench/, cli, demo) import from here -> its module
    "Model": "models", "Reply": "models", "get_model": "models", "check_model": "models", "count_tokens": "models",
    "build_messages": "prompt", "STOP": "prompt",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    """The doors above, imported on first use (importing the package stays cheap)."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = import_module(f"{__name__}.{_EXPORTS[name]}")
    return module if name == _EXPORTS[name] else getattr(module, name)
