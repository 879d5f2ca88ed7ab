"""Receipts: what a run did, typed, and its text for the model; the effect on the data and smells."""

from ..doors import doors

_EXPORTS = {  # what the faces (notebook/, batch/, bench/, cli, demo) import from here -> its module
    "values": "values", "output_check": "values", "saved_check": "saved",
    "saved_output": "saved", "seeds": "saved", "unrepeatable": "saved",
}
__all__ = sorted(_EXPORTS)

__getattr__ = doors(__name__, _EXPORTS)
