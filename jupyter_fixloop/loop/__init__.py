"""The loop: rounds of candidates, each run and judged; fix, afix, verify."""

from ..doors import doors

_EXPORTS = {  # what the faces (notebook/, batch/, bench/, cli, demo) import from here -> its module
    "fix": "run", "afix": "run", "verify": "run", "averify": "run", "sandbox_settings": "run", "first_messages": "run",
    "judge": "verdict", "judge_result": "verdict", "Expectations": "verdict", "timeout": "verdict",
    "output_check": "verdict",
}
__all__ = sorted(_EXPORTS)

__getattr__ = doors(__name__, _EXPORTS)
