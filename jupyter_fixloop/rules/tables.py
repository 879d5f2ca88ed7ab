"""What the built-in engine knows by hand, as data: imports, APIs that moved or were removed, synonyms, held in
tables.json (its `explain` says what each table holds and where it comes from), read on first use
(`from .tables import KNOWN_IMPORTS`) by changed.py's reader.

Tables rather than code: teaching the engine another removed API or common alias is one line there, and every
repair that reads the table picks it up. Nothing there names a benchmark case.
"""

from .changed import reader

__getattr__ = reader("tables.json")
