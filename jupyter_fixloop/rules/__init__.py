"""The built-in offline engine's rules (`fixloop/builtin`): the repairs, their families and tables."""

from typing import TYPE_CHECKING

from ..doors import doors

_EXPORTS = {  # what the faces (batch/) import from here -> its module
    "repair_module": "repairs",
}
__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # the doors' types, for readers and checkers (`X as X`: exported); none imported at run time
    from .repairs import repair_module as repair_module

__getattr__ = doors(__name__, _EXPORTS)
