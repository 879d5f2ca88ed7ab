"""Receipts: what a run did, typed, and its text for the model; the effect on the data and smells."""

from typing import TYPE_CHECKING

from ..kernel.doors import doors

_EXPORTS = {  # what the faces (notebook/, batch/, bench/, cli, demo) import from here -> its module
    "values": "values", "output_check": "values", "saved_check": "saved",
    "saved_output": "saved", "seeds": "saved", "unrepeatable": "saved",
}
__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # the doors' types, for readers and checkers (`X as X`: exported); none imported at run time
    from . import values as values
    from .saved import (
        saved_check as saved_check,
        saved_output as saved_output,
        seeds as seeds,
        unrepeatable as unrepeatable,
    )
    from .values import output_check as output_check

__getattr__ = doors(__name__, _EXPORTS)
