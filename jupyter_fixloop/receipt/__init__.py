"""Receipts: what a run did, typed (values); its text for a model and for people (text); effect, smells."""

from typing import TYPE_CHECKING

from ..doors import doors

_EXPORTS = {  # what the faces (notebook/, batch/, bench/, cli, demo) import from here -> its module
    "values": "values", "text": "text", "saved_check": "saved", "SAVED_CHECK": "saved",
    "saved_output": "saved", "seeds": "saved", "unrepeatable": "saved",
}
__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # the doors' types, for readers and checkers (`X as X`: exported); none imported at run time
    from . import text as text, values as values
    from .saved import (
        SAVED_CHECK as SAVED_CHECK,
        saved_check as saved_check,
        saved_output as saved_output,
        seeds as seeds,
        unrepeatable as unrepeatable,
    )

__getattr__ = doors(__name__, _EXPORTS)
