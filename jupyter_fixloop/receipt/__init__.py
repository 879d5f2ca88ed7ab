"""Receipts: what a run did, typed (values); its text for a model and for people (text); effect, smells."""

from ..doors import doors

_EXPORTS = {  # what the faces (notebook/, batch/, bench/, cli, demo) import from here -> its module
    "values": "values", "text": "text", "saved_check": "saved",
    "saved_output": "saved", "seeds": "saved", "unrepeatable": "saved",
}
__all__ = sorted(_EXPORTS)

__getattr__ = doors(__name__, _EXPORTS)
