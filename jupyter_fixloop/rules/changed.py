"""What changed in the libraries, in their own words: the tables tools/drift_tables.py generates from the
old versions and their source against today's, stored as data in changed.json (its `generated` and `from`
say by what and from which versions; do not edit it by hand: run the tool again, its docstring says how).
Read on first use of a table (`from .changed import KEYWORD_ONLY_NOW`), once; each is a dict whose keys and
values are as below (a JSON array read back as a tuple).

- `KEYWORD_ONLY_NOW`: keyed as a TypeError names the callable now (`DataFrame.pivot`, `SVC.__init__`,
  `concat`): the arguments it took by position that follow those still positional, now keyword-only, in
  the order the old versions took them (where two old versions differ, what they agree on).
- `STILL_POSITIONAL`: how many arguments each of those still takes by position (for errors that do not say:
  scikit-learn's parameter validation raises a bare "too many positional arguments").
- `NUMPY_REMOVED`: numpy names gone now that the old numpy's deprecation says to replace
  ("Please use `prod` instead"); `{m}` is the alias the cell uses.
- `SKLEARN_MOVED`: (module, name) gone from scikit-learn now -> (module, name) its old deprecation
  said to import instead, or said it was renamed to ("'GraphLasso' was renamed to 'GraphicalLasso'",
  under each package above that has the new name).
- `SKLEARN_MODULES_MOVED`: (package, module) gone from `sklearn.externals` now -> (None, the package its
  old deprecation said to use instead): `import six`.
- `SCIPY_MOVED`: (module, name) gone from scipy now -> the numpy function its old deprecation said to
  use instead ("scipy.exp is deprecated ..., use numpy.exp instead").

From the old versions' source:
- `RENAMED_KEYWORDS` also holds the scikit-learn parameters whose deprecation said "Use max_iter and tol
  instead" where the deprecating version's own code handed the old value to the new parameter
  (`max_iter = self.n_iter`), for each class inheriting the method that warns.
- `KEYWORD_EXTRAS`: (constructor, old keyword) -> the other parameters that code set, and to what
  (`self._tol = None`): `Perceptron(n_iter=40)` ran as `max_iter=40, tol=None`.
- `NO_EFFECT_KEYWORDS`: (constructor, keyword gone now) -> the old version's sentence saying it has no effect.
- `RENAMED_CALL_KEYWORDS`: matplotlib's renamed keywords, keyed by the called name (or constructor) as
  its `_rename_parameter` decorators and "'normed' kwarg ... replaced by the 'density' kwarg" say, where
  that callable takes the new keyword now and not the old.
- `EQUIVALENT_VALUES`: (scikit-learn class, parameter, old value) -> the value scikit-learn 1.0-1.1 said
  "is equivalent" ("Criterion 'mse' was deprecated in v1.0 ... Use `criterion='squared_error'` which is
  equivalent", a warning or the class docstring's `.. deprecated::` note), for each class inheriting it,
  where today's class takes the new value and refuses the old (its `_parameter_constraints`).
- `CHANGED_DEFAULTS`: (scikit-learn class, parameter) -> (the default an old version ran with, today's), where
  today's docstring says so under that parameter (".. versionchanged:: 0.22 The default solver changed from
  'liblinear' to 'lbfgs' in 0.22."), the constructor of scikit-learn 0.20.4, 0.21.3 (its installed source),
  1.0.2 or 1.1.3 had the old default (for a sentinel its code warned about, `solver='warn'`, the default its
  docstring named: "default: 'liblinear'"), today's signature has the new one and today's class still takes
  the old one; for the class and each public subclass.
- `METHODS_RENAMED`: a method gone now -> (the method matplotlib's `@deprecated(alternative=...)` named,
  the class it was on), where that one takes the same arguments by position now (`set_axis_bgcolor(color)`
  -> `set_facecolor(color)`); `TYPES_OF`: that class and its subclasses, as an AttributeError names them.
- `SKLEARN_METHODS_RENAMED`: (class, method gone now) -> (the method the `@deprecated` on the old method
  said to use instead, "list" or ""), read from scikit-learn 1.0.2's and 1.1.3's source ("Please use
  get_feature_names_out instead."), keyed by the class's name and each public subclass's as an
  AttributeError names the object, where the one said takes the same arguments by position now; "list"
  where the old method's docstring says it returns a list and today's says an array:
  `get_feature_names()` -> `list(get_feature_names_out())`.
- `SKLEARN_NAMES_MOVED`: (module gone now, name) -> (module, name): the modules scikit-learn said moved
  ("in favor of the model_selection module", 0.22's table of deprecated modules), each name the old module
  defined that the new one has now with the same positional parameters (`KFold(n, n_folds)` is left out),
  and the classes a module said "has been moved to" (`lda.LDA` -> `discriminant_analysis.LinearDiscriminantAnalysis`).
- `SETTERS_REMOVED`: (pandas class, attribute) whose setter is gone now -> the method its old setter said to use
  instead, read from pandas 1.5.3's source ("Setting categories in-place is deprecated and will raise in a future
  version. Use rename_categories instead."), where today's class has the property with no setter and the method.
- `REDUCERS_BY_NAME`: a callable pandas' groupby, resample and pivot_table ran as its own method of that name
  before 3.0 (`pandas.core.common._cython_table`; pandas 2.1: "To keep current behavior pass the string "var"
  instead"), where used directly, as pandas 3 does, it gives another result than that method on a Series with a
  missing value (numpy's `var` has ddof 0, pandas' 1; `np.median` does not skip NaN).
- `STRING_AS_LIST`: a matplotlib function that read a string of one-letter colors as that many colors
  (`c=''`: none, hollow markers; `c='rg'`: red, green) and said "Use an explicit list instead" (3.2's
  deprecation in `to_rgba_array`), where today's rejects such a string; with today's one-letter color names.
- `FORWARDED`: (package, function gone now) -> (the function the old version's one handed its arguments to,
  {keyword: the keyword it became}, {keyword: the value it set where none was given, as written}), read from
  functions that only warned and called another (seaborn 0.9-0.11: `factorplot(*args, **kwargs)` ran
  `catplot(*args, **kwargs)` with `kind='point'` unless given and `size` as `height`), where the package has
  that other function now.
"""

from __future__ import annotations

import functools
import json
import pathlib
import re

HERE = pathlib.Path(__file__).parent


@functools.cache
def tables(file: str = "changed.json") -> dict[str, dict]:
    """Every table of a data file beside this one (changed.json; tables.json, the hand-written ones) by its name,
    read once: a list of [key, value] pairs is a dict (a JSON array key or value read back as a tuple), a list of
    names a tuple; an object or a string is itself; each of its `messages`, a regular expression, compiled."""
    with (HERE / file).open(encoding="utf-8") as f:
        stored = json.load(f)
    return {**{name: re.compile(said) for name, said in stored.get("messages", {}).items()},
            **{name: _table(held) for name, held in stored["tables"].items()}}


def _table(held):
    if isinstance(held, list) and held and all(isinstance(v, str) for v in held):
        return tuple(held)
    return {_tuples(k): _tuples(v) for k, v in held} if isinstance(held, list) else held


def _tuples(value):
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def reader(file: str):
    """A module's `__getattr__` that reads its names from the tables of `file` (`from .changed import X`)."""
    def __getattr__(name: str) -> dict:
        try:
            return tables(file)[name]
        except KeyError:
            raise AttributeError(f"no table {name!r} in {file}") from None

    return __getattr__


__getattr__ = reader("changed.json")
