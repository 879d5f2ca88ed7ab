"""The loop: rounds of candidates, each run and judged; fix, afix, verify."""

from typing import TYPE_CHECKING

from ..doors import doors

_EXPORTS = {  # what the faces (notebook/, batch/, bench/, cli, demo) import from here -> its module
    "fix": "run", "afix": "run", "verify": "run", "averify": "run", "sandbox_settings": "run", "first_messages": "run",
    "warm_up": "run",
    "judge": "verdict", "judge_result": "verdict", "Expectations": "verdict", "timeout": "verdict",
    "output_check": "verdict", "expecting": "verdict", "printed": "verdict", "Warned": "looks",
    "looks_wrong": "looks",
}
__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # the doors' types, for readers and checkers (`X as X`: exported); none imported at run time
    from .looks import Warned as Warned, looks_wrong as looks_wrong
    from .run import (
        afix as afix,
        averify as averify,
        first_messages as first_messages,
        fix as fix,
        sandbox_settings as sandbox_settings,
        verify as verify,
        warm_up as warm_up,
    )
    from .verdict import (
        Expectations as Expectations,
        expecting as expecting,
        judge as judge,
        judge_result as judge_result,
        output_check as output_check,
        printed as printed,
        timeout as timeout,
    )

__getattr__ = doors(__name__, _EXPORTS)
