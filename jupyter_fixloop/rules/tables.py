"""What the built-in engine knows, as data: imports, APIs that moved or were removed, synonyms.

Tables rather than code: teaching the engine another removed API or common alias is one line here,
and every repair that reads the table picks it up. Nothing here names a benchmark case.
"""

from __future__ import annotations

import re

KNOWN_IMPORTS = {
    "np": "import numpy as np",
    "pd": "import pandas as pd",
    "plt": "import matplotlib.pyplot as plt",
    "sns": "import seaborn as sns",
    "mpl": "import matplotlib as mpl",
    "sp": "import scipy as sp",
    "tf": "import tensorflow as tf",
    "px": "import plotly.express as px",
    "go": "import plotly.graph_objects as go",
    "stats": "from scipy import stats",
    "Path": "from pathlib import Path",
    "defaultdict": "from collections import defaultdict",
    "Counter": "from collections import Counter",
    "OrderedDict": "from collections import OrderedDict",
    "namedtuple": "from collections import namedtuple",
    "deque": "from collections import deque",
    "deepcopy": "from copy import deepcopy",
    "dataclass": "from dataclasses import dataclass",
    "partial": "from functools import partial",
    "reduce": "from functools import reduce",
    "lru_cache": "from functools import lru_cache",
    "StringIO": "from io import StringIO",
    "BytesIO": "from io import BytesIO",
    "date": "from datetime import date",
    "timedelta": "from datetime import timedelta",
    "timezone": "from datetime import timezone",
    "pprint": "from pprint import pprint",
    "glob": "from glob import glob",
    "Decimal": "from decimal import Decimal",
    "Fraction": "from fractions import Fraction",
    "sqrt": "from math import sqrt",
    "pi": "from math import pi",
    "chain": "from itertools import chain",
    "combinations": "from itertools import combinations",
    "permutations": "from itertools import permutations",
    "product": "from itertools import product",
    "groupby": "from itertools import groupby",
    "islice": "from itertools import islice",
    "tqdm": "from tqdm import tqdm",
    "display": "from IPython.display import display",
    "train_test_split": "from sklearn.model_selection import train_test_split",
    "LinearRegression": "from sklearn.linear_model import LinearRegression",
    "LogisticRegression": "from sklearn.linear_model import LogisticRegression",
    "StandardScaler": "from sklearn.preprocessing import StandardScaler",
}
"""Names used without an import: the import a notebook author almost always means."""


MOVED_NAMES = {
    ("pandas", "datetime"): "datetime",
    ("fractions", "gcd"): "math",
    ("scipy.misc", "comb"): "scipy.special",
    ("scipy.misc", "factorial"): "scipy.special",
    **{("collections", n): "collections.abc" for n in (
        "Mapping", "MutableMapping", "Sequence", "MutableSequence", "Iterable", "Iterator", "Callable",
        "Set", "MutableSet", "Hashable", "Sized", "Container", "Generator", "KeysView", "ValuesView")},
}
"""`from M import X` that stopped working: (M, X) -> the module that has X now."""


MOVED_MODULES = {"pandas.util.testing": "pandas.testing", "seaborn.apionly": "seaborn"}
"""Modules that were renamed or merged into another (`import pandas.util.testing as tm`: the knowledge base's
rewriters move what its entries name, `from pandas.util.testing import X` among them). `seaborn.apionly` was
seaborn without its style: seaborn 0.8 "no longer applied" the style on import and, "correspondingly", deprecated
the module (removed in 0.10, its entry naming no replacement): `import seaborn` is what it was."""


REMOVED_ATTRIBUTES = {
    "numpy": {  # numpy 2's own AttributeError names the rest (`np.float_`, `np.Inf`, `np.float`: message_hint
        # reads it), and the old numpy's deprecations name more (changed.NUMPY_REMOVED); these two no numpy
        # at hand says
        "unicode": "str", "NAN": "{m}.nan",
    },
    "pandas": {
        "datetime": "__import__('datetime').datetime", "np": "__import__('numpy')",
        "Int64Index": "{m}.Index", "UInt64Index": "{m}.Index", "Float64Index": "{m}.Index",
        "value_counts": "{m}.Series.value_counts",
    },
    "datetime": {
        "now": "{m}.datetime.now", "today": "{m}.date.today", "strptime": "{m}.datetime.strptime",
        "fromtimestamp": "{m}.datetime.fromtimestamp", "fromisoformat": "{m}.datetime.fromisoformat",
    },
}
"""Module attributes that are gone (NumPy 2, pandas 2) or live one level down (`datetime.now`), by
module: `{m}` is the alias the cell uses."""


LITERALS = {"true": "True", "false": "False", "null": "None", "none": "None", "nil": "None",
            "nan": "float('nan')", "NaN": "float('nan')", "inf": "float('inf')", "Infinity": "float('inf')"}
"""Names from JSON, JavaScript or R that Python spells differently."""


RENAMED_METHODS = {
    # removed in pandas 1-3 (those whose notes name the method to use, `sort`, `applymap`, `pad`, `get_values`,
    # are generic.said_method's: the knowledge base)
    "iteritems": "items", "as_matrix": "to_numpy",
    "is_monotonic": "is_monotonic_increasing", "iterkv": "items", "select_dtypes_": "select_dtypes",
    # names borrowed from SQL, R and other libraries
    "avg": "mean", "average": "mean", "med": "median", "stdev": "std", "variance": "var",
    "count_values": "value_counts", "valuecounts": "value_counts", "todict": "to_dict",
    "sortby": "sort_values", "sort_by": "sort_values", "orderby": "sort_values", "order_by": "sort_values",
    "dropnull": "dropna", "dropnan": "dropna", "drop_na": "dropna", "fillnull": "fillna",
    "fill_na": "fillna", "fillnan": "fillna", "isnan": "isna", "is_na": "isna", "is_null": "isnull",
    "distinct": "unique", "uniques": "unique", "n_unique": "nunique", "countunique": "nunique",
    "groupBy": "groupby", "reshape": "to_numpy().reshape", "group_by": "groupby", "filter_by": "query",
                   "where_": "where",
}
"""Methods pandas/numpy objects do not have, and the one that was meant."""


PY2_METHODS = {("dict", "iteritems"): "items", ("dict", "itervalues"): "values", ("dict", "iterkeys"): "keys",
               ("dict", "viewitems"): "items", ("dict", "viewkeys"): "keys", ("dict", "viewvalues"): "values"}
"""Python 2 methods and their Python 3 names."""

STR_METHODS = {
    "lower", "upper", "strip", "lstrip", "rstrip", "split", "rsplit", "startswith", "endswith",
    "contains", "title", "capitalize", "zfill", "len", "find", "isdigit", "isnumeric", "isalpha",
    "isalnum", "isspace", "islower", "isupper", "casefold", "swapcase", "center", "ljust", "rjust",
    "partition", "rpartition", "splitlines", "count", "index", "encode", "match", "fullmatch", "extract",
    "join", "removeprefix", "removesuffix",
}


DT_ATTRS = {
    "year", "month", "day", "hour", "minute", "second", "microsecond", "dayofweek", "day_of_week",
    "weekday", "dayofyear", "day_of_year", "quarter", "day_name", "month_name", "date", "time",
    "strftime", "is_month_end", "is_month_start", "days_in_month", "normalize", "tz_localize",
    "tz_convert", "total_seconds", "days", "seconds", "floor", "ceil", "isocalendar", "week",
}
"""Series methods that live behind the `.str` / `.dt` accessors."""


PANDAS_LIKE = re.compile(r"^(DataFrame|Series|Index|\w*GroupBy|ndarray|Rolling|Expanding|Resampler|\w*Index)$")


KEYWORD_FIXES = {
    # (wrong keyword, keyword the function has instead, how the value changes)
    ("digits", "ndigits"): "same", ("digits", "decimals"): "same", ("decimal", "decimals"): "same",
    ("reversed", "reverse"): "same", ("descending", "reverse"): "same",
    ("ascending", "reverse"): "negate", ("reverse", "ascending"): "negate",
    ("descending", "ascending"): "negate", ("column", "columns"): "same", ("cols", "columns"): "same",
    ("inplace", None): "drop",
}
"""Keyword arguments a function does not take, by what is meant: a synonym, or its negation."""


REMOVED_CALLS = {("numpy", "asscalar"): "{0}.item()", ("numpy", "alen"): "len({0})"}
"""Removed functions whose replacement is a method or builtin: `np.asscalar(a)` -> `a.item()`."""


SUBMODULES = ("errors", "api.types", "testing", "plotting", "tseries.offsets", "linalg", "random", "ma")
"""Where pandas and numpy keep names that are not at the top level."""
