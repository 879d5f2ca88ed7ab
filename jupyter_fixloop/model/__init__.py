"""Models that write candidates: litellm's, the built-in engine (its rules are rules/), and the prompt they read."""

from typing import TYPE_CHECKING

from ..doors import doors

_EXPORTS = {  # what the faces (notebook/, batch/, bench/, cli, demo) import from here -> its module
    "Model": "models", "Reply": "models", "LastRun": "models", "get_model": "models", "check_model": "models",
            "count_tokens": "models",
    "build_messages": "prompt", "STOP": "prompt", "variables_from_json": "variables",
}
__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # the doors' types, for readers and checkers (`X as X`: exported); none imported at run time
    from .models import (
        LastRun as LastRun,
        Model as Model,
        Reply as Reply,
        check_model as check_model,
        count_tokens as count_tokens,
        get_model as get_model,
    )
    from .prompt import STOP as STOP, build_messages as build_messages
    from .variables import variables_from_json as variables_from_json

__getattr__ = doors(__name__, _EXPORTS)
