"""What changed between a library's old version and today's, asked of both versions, never written by
hand: the tables of jupyter_fixloop/rules/changed.json (read by rules/changed.py, which says what each holds).

- `KEYWORD_ONLY_NOW`: the arguments a library took by position and takes only by keyword now;
- `NUMPY_REMOVED`: numpy names that are gone now and that the old numpy's own deprecation text
  names the replacement of ("Please use `prod` instead"), where that replacement is there now. (Names
  numpy still explains in its AttributeError, as `np.float_`, are read from that error instead.)
- `RENAMED_KEYWORDS`: scikit-learn parameters its old version's warnings say were renamed ("`sparse`
  was renamed to `sparse_output`"), where the old name is gone now and the new one is there.
- `SKLEARN_MOVED`: scikit-learn classes and functions that are gone now and that the old version's
  deprecation names the replacement of ("Import impute.SimpleImputer from sklearn instead").
- `SKLEARN_MODULES_MOVED`: the modules of `sklearn.externals` that are gone now and whose old
  deprecation, said on import, names the package to use instead ("Please rely on the official version
  of six"), where that package is installed.
- `SETTERS_REMOVED`: the pandas properties whose setter is gone now and whose old setter said to use a method
  instead ("Setting categories in-place is deprecated ... Use rename_categories instead", pandas 1.5.3's source).
- `REDUCERS_BY_NAME`: the callables pandas' groupby, resample and pivot_table ran as its own method of that
  name before 3.0 (`_cython_table`: `np.var` as `"var"`), where today's direct use gives another result.
- `SCIPY_MOVED`: the numpy functions scipy re-exported, deprecated (scipy 1.4-1.11: "scipy.exp is
  deprecated and will be removed in SciPy 2.0.0, use numpy.exp instead") and removed: the numpy one
  its deprecation names, where that one is there now.
- `FORWARDED`: the functions an old version kept only to warn and hand their arguments on to another (seaborn
  0.9-0.11's `factorplot`: `catplot` with `kind='point'` where none was given, `size` as `height`; read from the
  source, `source seaborn`), where the package has that other one now and not the old name.

- From the source of versions that do not install on Python 3.11 (`source`, read with `ast`): the
  keywords scikit-learn's warnings say were renamed or "Use max_iter and tol instead" where its code
  then hands the old value over (`RENAMED_KEYWORDS`, with `KEYWORD_EXTRAS`: the other parameters that code
  set), the keywords it says have no effect (`NO_EFFECT_KEYWORDS`), matplotlib's renamed keywords
  (`RENAMED_CALL_KEYWORDS`), the names of the modules scikit-learn said moved (`SKLEARN_NAMES_MOVED`,
  only those whose positional parameters are the same now), and the values scikit-learn 1.0-1.1 said
  the new one "is equivalent" to (`EQUIVALENT_VALUES`: `criterion='mse'` -> `'squared_error'`, where today's
  class refuses the old value), and the methods scikit-learn's `@deprecated` said to use instead
  (`SKLEARN_METHODS_RENAMED`: `get_feature_names` -> `get_feature_names_out`, wrapped in `list(...)` where the
  old method's docstring says it returned a list and today's says an array), and the defaults today's docstrings
  say changed (`CHANGED_DEFAULTS`: "The default solver changed from 'liblinear' to 'lbfgs' in 0.22."), where an
  old version's constructor ran with the old one (for a sentinel it warned about, `solver='warn'`, the default
  its docstring named) and today's signature has the new one.

    # 1. in a side venv with the old versions (see docs/benchmarks.md, "The corpora"; scipy 1.10.1
    #    with numpy<1.25 in a venv of its own: `dump scipy > /tmp/scipy110-sigs.json`):
    /tmp/old37/bin/python tools/drift_tables.py dump pandas numpy matplotlib sklearn > /tmp/old-sigs.json
    /tmp/oldpd/bin/python tools/drift_tables.py dump pandas numpy matplotlib sklearn > /tmp/oldpd-sigs.json
    # 1b. the sdists of the versions between (pip of the Python 3.7 venv prepares their metadata, with
    #     `wheel` installed there; scikit-learn 0.24.2's did not prepare), unpacked, read here:
    /tmp/old37/bin/pip download --no-deps --no-binary :all: --no-build-isolation -d /tmp/src scikit-learn==0.19.2
    #     (and 0.18.2, 0.20.4, 0.22.2.post1, 0.23.2; matplotlib 2.0.2, 2.2.5, 3.0.3, 3.3.4), `tar xzf` each, then
    python tools/drift_tables.py source sklearn /tmp/src/scikit-learn-0.19.2 > /tmp/src/sklearn-0.19.2.json
    python tools/drift_tables.py source matplotlib /tmp/src/matplotlib-2.2.5 > /tmp/src/matplotlib-2.2.5.json
    # 1c. scikit-learn 1.0.2 and 1.1.3: their wheels hold the source; unzipped, not installed
    pip download --no-deps --only-binary :all: --python-version 3.10 --platform manylinux2014_x86_64 \
        --implementation cp -d /tmp/whl scikit-learn==1.0.2      # and 1.1.3
    unzip -q /tmp/whl/scikit_learn-1.0.2-*.whl 'sklearn/*' -d /tmp/src/sk1.0.2
    python tools/drift_tables.py source sklearn /tmp/src/sk1.0.2 > /tmp/src/sklearn-1.0.2.json
    # 1d. scikit-learn 0.21.3's installed source, read the same way (for CHANGED_DEFAULTS); pandas 1.5.3's
    #     (for SETTERS_REMOVED)
    python tools/drift_tables.py source pandas /tmp/oldpd/lib/python3.11/site-packages > /tmp/src/pandas-1.5.3.json
    python tools/drift_tables.py source sklearn /tmp/old37/lib/python3.7/site-packages > /tmp/src/sklearn-0.21.3.json
    # 2. here, with today's versions: write the tables (where two old versions differ, what they agree on),
    #    saying which versions the dumps came from (else the file names of the dumps are said)
    python tools/drift_tables.py compare --from "old versions (pandas 0.25.3, ... matplotlib 3.3.4)" \
        /tmp/old-sigs.json /tmp/oldpd-sigs.json /tmp/np22-sigs.json /tmp/scipy110-sigs.json /tmp/src/*.json \
        > jupyter_fixloop/rules/changed.json
    # 2b. the entries one more old version adds to the stored tables, kept as they are (seaborn 0.9.1, 2026-11-30:
    #     `/work/era/old37/bin/python tools/drift_tables.py dump seaborn > /tmp/seaborn-0.9.1.json`, then)
    python tools/drift_tables.py compare --onto jupyter_fixloop/rules/changed.json \
        --from "seaborn 0.9.1 on Python 3.7" /tmp/seaborn-0.9.1.json > /tmp/changed.json   # then moved over it
    #     and (2026-12-01) seaborn 0.9.1's installed source, for FORWARDED:
    python tools/drift_tables.py source seaborn /work/era/old37/lib/python3.7/site-packages > /tmp/sns-src.json
    python tools/drift_tables.py compare --onto jupyter_fixloop/rules/changed.json --from "seaborn 0.9.1's source \
        on Python 3.7 (its functions that only warn and hand their arguments on)" /tmp/sns-src.json > /tmp/changed.json

`dump` writes, for each public function, method and estimator constructor of the libraries named, its positional
parameters in order. `compare` finds each again where it lives now and writes (as JSON, with what generated it and
from which versions: `tables_json`), keyed as a TypeError names it now (`DataFrame.pivot`, `SVC.__init__`, `concat`;
seaborn's functions by their module, `seaborn.boxplot`), the old positional names that follow the ones still
positional, when those are keyword-only now, and the other tables. Runs on Python 3.7 too.
"""

from __future__ import annotations  # Python 3.7 reads `dict | None`

import builtins
import importlib
import inspect
import json
import pkgutil
import re
import sys

USE_INSTEAD = re.compile(r"[Uu]se\s+(?::\w+:)?`*(?:np\.|numpy\.)?([A-Za-z_][\w.]*)`*\s+(?:instead|by itself)")

TARGETS = {  # modules (their functions and classes' constructors) and classes (their methods)
    "pandas": ["pandas", "pandas.DataFrame", "pandas.Series", "pandas.Index", "pandas.MultiIndex"],
    "numpy": ["numpy", "numpy.ndarray", "numpy.random", "numpy.linalg"],
    "matplotlib": ["matplotlib.pyplot", "matplotlib.axes.Axes", "matplotlib.figure.Figure", "matplotlib.patches",
                   "matplotlib.lines", "matplotlib.text", "matplotlib.collections", "matplotlib.colors",
                   "matplotlib.ticker", "matplotlib.legend", "matplotlib.gridspec", "matplotlib.cm",
                   "matplotlib.animation"],
    "seaborn": ["seaborn"],
}
SKLEARN_FUNCTIONS = ["sklearn.model_selection", "sklearn.metrics", "sklearn.datasets", "sklearn.preprocessing",
                     "sklearn.utils"]


def positional(obj):
    """The names of `obj`'s parameters that can be passed by position (without self), or None."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    names = [p.name for p in sig.parameters.values() if p.kind in kinds]
    return names[1:] if names[:1] in (["self"], ["cls"]) else names


def keyword_only(obj):
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return set()
    return {p.name for p in sig.parameters.values() if p.kind == inspect.Parameter.KEYWORD_ONLY}


def resolve(path: str):
    """The object at a dotted path (`sklearn.svm.SVC`, `pandas.DataFrame.pivot`), or None."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except Exception:  # noqa: BLE001 - any import failure means "not there"
            continue
        for name in parts[cut:]:
            try:
                obj = getattr(obj, name)
            except Exception:  # noqa: BLE001 - removed (sklearn raises ImportError for load_boston)
                return None
        return obj
    return None


def members(path: str) -> dict:
    """A module's functions and its own classes' constructors, or a class's methods."""
    owner = resolve(path)
    top = path.split(".")[0]
    found = {}
    for name in dir(owner):
        if name.startswith("_"):
            continue
        try:
            obj = getattr(owner, name)
        except Exception:  # noqa: BLE001
            continue
        if inspect.isclass(obj):
            if not inspect.ismodule(owner) or not getattr(obj, "__module__", "").startswith(top):
                continue
            names = positional(obj.__init__)
        else:
            names = positional(obj) if callable(obj) else None
        if names:
            found[path + "." + name] = names
    return found


def _sklearn_modules():
    """scikit-learn's public modules that import here, with their pkgutil info."""
    import sklearn

    for info in pkgutil.walk_packages(sklearn.__path__, "sklearn."):
        if any(part.startswith("_") or part == "tests" for part in info.name.split(".")[1:]):
            continue
        try:
            yield info, importlib.import_module(info.name)
        except Exception:  # noqa: BLE001
            continue


def estimator_classes() -> dict:
    """Every scikit-learn estimator class, under its public path."""

    found = {}
    for info, module in _sklearn_modules():
        for name in dir(module):
            obj = getattr(module, name, None)
            if not name.startswith("_") and inspect.isclass(obj) and hasattr(obj, "get_params"):
                found.setdefault(info.name + "." + name, obj)
    return found


def estimators() -> dict:
    """Every scikit-learn estimator's constructor's positional parameters, under its public path."""
    found = {}
    for path, cls in estimator_classes().items():
        names = positional(cls.__init__)
        if names:
            found[path] = names
    return found


def numpy_deprecated() -> dict:
    """The old numpy's own words on each name it deprecated: its tables of removed and former names,
    and the `.. deprecated::` note of a function's docstring."""
    import numpy

    words = {}
    for table in ("__deprecated_attrs__", "__expired_functions__", "__former_attrs__", "__expired_attributes__"):
        for name, text in (getattr(numpy, table, None) or {}).items():
            words[name] = text if isinstance(text, str) else " ".join(str(t) for t in text)
    for name in dir(numpy):
        obj = getattr(numpy, name, None)
        doc = getattr(obj, "__doc__", None) or ""
        note = re.search(r"\.\. deprecated::(.*?)(?:\n\s*\n|$)", doc, re.DOTALL)
        if not name.startswith("_") and note:
            words.setdefault(name, " ".join(note.group(1).split()))
        elif not name.startswith("_") and callable(obj):
            warned = [text for text in _strings(obj) if "deprecated" in text]
            if warned:
                words.setdefault(name, " ".join(warned[0].split()))
    return words


def _strings(function):
    """The string constants in a function's source (a warning's text, its adjacent parts joined)."""
    import ast
    import textwrap

    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError, ValueError):
        return []
    found = []
    strings = tuple(t for t in (getattr(ast, "Str", None), ast.Constant) if t)  # Python 3.7 parses ast.Str
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "warn":
            texts = [n.value if hasattr(n, "value") else n.s for n in ast.walk(node) if isinstance(n, strings)]
            found += [t for t in texts if isinstance(t, str)]
            found += ["".join(v.value for v in n.values if isinstance(v, ast.Constant))
                      for n in ast.walk(node) if isinstance(n, ast.JoinedStr)]
    return found


def sklearn_deprecated() -> dict:
    """scikit-learn's own words on the classes and functions it deprecated (its `deprecated` decorator
    writes them at the head of the docstring: "DEPRECATED: Imputer was deprecated in version 0.20 ...
    Import impute.SimpleImputer from sklearn instead.")."""

    words = {}
    for info, module in _sklearn_modules():
        for name in dir(module):
            obj = getattr(module, name, None)
            doc = (obj.__init__.__doc__ if inspect.isclass(obj) else getattr(obj, "__doc__", None)) or ""
            if not name.startswith("_") and callable(obj) and doc.startswith("DEPRECATED"):
                words[info.name + "." + name] = " ".join(doc.split("\n\n")[0].split())
    return words


def sklearn_modules_deprecated() -> dict:
    """scikit-learn's own words on the modules of `sklearn.externals` it deprecated, said when one is
    imported ("Please rely on the official version of six", "Please import this functionality directly
    from joblib"). Run before anything imports them: a module warns on its first import only."""
    import warnings

    import sklearn.externals

    words = {}
    for info in pkgutil.iter_modules(sklearn.externals.__path__, "sklearn.externals."):
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            try:
                importlib.import_module(info.name)
            except Exception:  # noqa: BLE001
                continue
        texts = [str(w.message) for w in said if "deprecated" in str(w.message)]
        if texts:
            words[info.name] = " ".join(texts[0].split())
    return words


_SENTENCE = r"(?:[^.]|\.\d)*?"  # up to the end of a sentence ("1.2" is no end)
RENAMED = [re.compile(p) for p in (
    r"``?(\w+)``? was renamed to ``?(\w+)``?",
    r"``?(\w+)``? (?:is|was|has been) deprecated" + _SENTENCE + r"\. [Uu]se ``?(\w+)``? instead",
    r"``?(\w+)``? (?:is|was) deprecated in (?:version )?[\d.]+ and will be renamed to ``?(\w+)``?",
)]


def sklearn_renamed() -> dict:
    """The parameters scikit-learn's estimators renamed, in the warnings their methods raise ("`sparse` was
    renamed to `sparse_output` in version 1.2"): {class path: [[old, new], ...]}."""
    found = {}
    for path, cls in estimator_classes().items():
        texts = [cls.__doc__ or ""]  # its parameters' notes: ".. deprecated:: 1.2 `sparse` is deprecated ..."
        for _, method in inspect.getmembers(cls, inspect.isfunction):
            if getattr(method, "__module__", "").startswith("sklearn"):
                texts += _strings(method)
        pairs = [m.groups() for text in texts for pattern in RENAMED for m in pattern.finditer(" ".join(text.split()))]
        if pairs:
            found[path] = sorted({tuple(p) for p in pairs})
    return found


def scipy_deprecated() -> dict:
    """scipy's own words on the numpy functions it re-exported and deprecated: calling `scipy.exp` warned
    "scipy.exp is deprecated and will be removed in SciPy 2.0.0, use numpy.exp instead"; the wrapper that
    warns holds that message (its closure), so it is read without calling anything."""
    import scipy

    words = {}
    for name, obj in sorted(vars(scipy).items()):  # not dir(): scipy's __dir__ lists its submodules only
        cells = getattr(obj, "__closure__", None) or ()
        said = [c.cell_contents for c in cells if isinstance(c.cell_contents, str) and "deprecated" in c.cell_contents]
        if not name.startswith("_") and callable(obj) and said:
            words["scipy." + name] = " ".join(said[0].split())
    return words


NUMPY_INSTEAD = re.compile(r"use (numpy(?:\.\w+)+) instead")  # numpy.exp, numpy.lib.scimath.sqrt


def scipy_moved(words: dict) -> dict:
    """Names gone from scipy now whose old deprecation names the numpy function to use instead, where that
    one is there now: {(module, name): (module, name)}."""
    table = {}
    for path, text in sorted(words.items()):
        m = NUMPY_INSTEAD.search(text)
        if resolve(path) is None and m and resolve(m.group(1)) is not None:
            table[tuple(path.rsplit(".", 1))] = tuple(m.group(1).rsplit(".", 1))
    return table


# --- the source of versions that do not install here (sdists of scikit-learn 0.18-0.23, matplotlib 2.0-3.3) ---

OLD_WORD = r"['`]*(\w+)['`]*"
SOURCE_RENAMED = [re.compile(p) for p in (  # the library says the new one replaces the old
    r"``?(\w+)``? was renamed to ``?(\w+)``?",
    r"'(\w+)' kwarg is deprecated, and has been replaced by the '(\w+)' kwarg",
)]
# "X is deprecated ... Use Y [and Z] instead": a rename only where the old version's code hands X's value to Y
SOURCE_USE = re.compile(r"(?:[Pp]arameter )?" + OLD_WORD + r"(?: parameter| keyword)? (?:is|was|has been) deprecated"
                        + _SENTENCE + r"\. [Uu]se (?:the )?['`]*(\w+)['`]*(?: and ['`]*(\w+)['`]*)?(?: parameters?)? "
                        r"instead")
NO_EFFECT = re.compile(r"(?:[Pp]arameter )?" + OLD_WORD + r"(?: parameter| keyword)? (?:is|was|has been) deprecated"
                       r"(?: in (?:version )?[\d.]+)?,? and has no effect")
# matplotlib 3.2-3.3's `to_rgba_array`: a string of one-letter colors read as that many colors (`''`: none)
STRING_AS_LIST = re.compile(r"[Uu]sing a string of single character colors as a color sequence is deprecated[^.]*\."
                            r".*?[Uu]se an explicit list instead\.")
# scikit-learn 1.0-1.1: "Criterion 'mse' was deprecated in v1.0 ... Use `criterion='squared_error'` which is
# equivalent." (a warning, or a `.. deprecated::` note of the class's docstring): a value renamed, same meaning
EQUIVALENT_VALUE = re.compile(r"['\"](\w+)['\"] (?:was|has been) deprecated[^.]*(?:\.\d+[^.]*)*\.\s*[Uu]se "
                              r"`*(\w+)=['\"](\w+)['\"]`* which is equivalent")
IN_FAVOR = re.compile(r"in favou?r of the (\w+) module")
MOVED_TO = re.compile(r"\b\w+\.(\w+) has been moved to (\w+)\.(\w+)")


def _module_name(root, path) -> str:
    import os

    rel = os.path.relpath(path, root)[:-3].replace(os.sep, ".")
    return rel[: -len(".__init__")] if rel.endswith(".__init__") else rel


def _text(node) -> str:
    """The string a node spells, adjacent and `%`-formatted parts joined as far as they are constants."""
    import ast

    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp):
        return _text(node.left) + (_text(node.right) if isinstance(node.op, ast.Add) else "")
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value for v in node.values if isinstance(v, ast.Constant))
    if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "format":
        return _text(node.func.value)
    return ""


def _warn_texts(node) -> list:
    """(warning call, its text) for every `warnings.warn` / `warn_deprecated` in `node`."""
    import ast

    found = []
    for call in ast.walk(node):
        name = getattr(call.func, "attr", getattr(call.func, "id", "")) if isinstance(call, ast.Call) else ""
        said = [*call.args, *(k.value for k in call.keywords if k.arg == "message")] if name else []
        if name in ("warn", "warn_deprecated") and said:  # `warn_deprecated("3.2", message="...")`
            found.append((call, " ".join(" ".join(_text(a) for a in said).split())))
    return found


def _shim(function, warn_call, old: str, new: str, also: str) -> dict | None:
    """What the old version's code does where it warns about `old`: None unless it hands `old`'s value to
    `new` (`max_iter = self.n_iter`); then {other parameter the warning names: the constant it sets}."""
    import ast

    for block in ast.walk(function):
        if not isinstance(block, ast.If) or not any(warn_call is n for s in block.body for n in ast.walk(s)):
            continue
        handed, extras = False, {}
        for stmt in block.body:
            if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
                continue
            target = stmt.targets[0]
            name = (target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")).lstrip("_")
            value = stmt.value.attr if isinstance(stmt.value, ast.Attribute) else getattr(stmt.value, "id", None)
            if name == new and value == old:
                handed = True
            elif also and name == also and isinstance(stmt.value, ast.Constant):
                extras[also] = repr(stmt.value.value)
        return extras if handed else None
    return None


def _forwards(node) -> list | None:
    """A function kept only to warn and hand its arguments on (seaborn 0.9: `def factorplot(*args, **kwargs)`,
    warns, `kwargs["height"] = kwargs.pop("size")`, `kwargs.setdefault("kind", "point")`, `return
    catplot(*args, **kwargs)`): [the function it calls, {keyword: the keyword it became}, {keyword: the value it
    set where none was given, as written}]; None for any other function."""
    import ast

    args, body = node.args, node.body
    last = body[-1] if body else None
    call = last.value if isinstance(last, ast.Return) and isinstance(last.value, ast.Call) else None
    if (args.args or not (args.vararg and args.kwarg) or call is None or not isinstance(call.func, ast.Name)
            or not _warn_texts(node) or [ast.dump(a) for a in call.args] != [ast.dump(ast.Starred(
                ast.Name(args.vararg.arg, ast.Load()), ast.Load()))]
            or [(k.arg, getattr(k.value, "id", "")) for k in call.keywords] != [(None, args.kwarg.arg)]):
        return None
    renamed, defaults, kwargs = {}, {}, args.kwarg.arg
    for n in ast.walk(node):
        pop = n.value if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) else None
        if _on(pop, kwargs, "pop", 1) and isinstance(n.targets[0], ast.Subscript) and _constant(n.targets[0].slice):
            renamed[pop.args[0].value] = n.targets[0].slice.value
        elif _on(n, kwargs, "setdefault", 2) and _constant(n.args[1]):
            defaults[n.args[0].value] = repr(n.args[1].value)
    return [call.func.id, renamed, defaults]


def _on(call, name: str, method: str, count: int) -> bool:
    """Whether `call` is `name.method(<a string>, ...)` with `count` arguments."""
    import ast

    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == method
            and getattr(call.func.value, "id", "") == name and len(call.args) == count and _constant(call.args[0]))


def _constant(node) -> bool:
    import ast

    return isinstance(node, ast.Constant)


def _signature(function) -> list:
    """The names a function defined in source takes by position (without self), '*' where it takes *args."""
    args = function.args
    names = [a.arg for a in (*getattr(args, "posonlyargs", []), *args.args)]
    names = names[1:] if names[:1] in (["self"], ["cls"]) else names
    return names + (["*"] if args.vararg else [])


def _read_setter(owner: str, function, found) -> None:
    """A property setter that warns "Setting categories in-place is deprecated ... Use rename_categories instead"
    (pandas 1.x)."""
    import ast

    if any(isinstance(d, ast.Attribute) and d.attr == "setter" for d in function.decorator_list):
        for _, text in _warn_texts(function):
            for attribute, method in SETTER_INSTEAD.findall(text):
                if attribute == function.name:
                    found["setters"].setdefault(owner, {})[attribute] = method


def _read_class(module, node, found) -> None:
    """A class's deprecation decorator, its bases, its constructor and what its methods' warnings say."""
    import ast

    path = f"{module}.{node.name}"
    bases = [a for b in node.bases for a in (b.args if isinstance(b, ast.Call) else [b])]  # six.with_metaclass(M, B)
    found["bases"][path] = [b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "") for b in bases]
    init = next((f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
    found["signatures"][path] = _signature(init) if init else None
    if init:
        found["defaults"][path] = _defaults(node, init)
    for function in (f for f in node.body if isinstance(f, ast.FunctionDef)):
        _read_setter(node.name, function, found)
        alternative = _alternative(function) or _said_instead(function)
        if alternative:
            found["methods"].setdefault(path, {})[function.name] = [
                alternative, _signature(function), _returns(ast.get_docstring(function) or "")]
        for call, text in _warn_texts(function):
            for pattern in SOURCE_RENAMED:
                for old, new in pattern.findall(text):
                    found["renamed"].setdefault(path, {})[old] = [new, {}]
                    found["renamed calls"].setdefault(function.name, {})[old] = new  # matplotlib's `hist(normed=)`
            for old, new, also in SOURCE_USE.findall(text):
                extras = _shim(function, call, old, new, also)
                if extras is not None:
                    found["renamed"].setdefault(path, {})[old] = [new, extras]
            for m in NO_EFFECT.finditer(text):  # the sentence that says so
                found["no effect"].setdefault(path, {})[m.group(1)] = m.group(0) + "."
    for text in [" ".join((ast.get_docstring(node) or "").split()), *(t for f in node.body if isinstance(
            f, ast.FunctionDef) for _, t in _warn_texts(f))]:
        for old, parameter, new in EQUIVALENT_VALUE.findall(text):
            found["values"].setdefault(path, {}).setdefault(parameter, {})[old] = new


SETTER_INSTEAD = re.compile(r"Setting (\w+) in-place is deprecated[^.]*\.\s*Use (\w+) instead")


def setters_removed(said: dict) -> dict:
    """(class, attribute) -> method, from the old source's property setters that said "Setting categories in-place
    is deprecated ... Use rename_categories instead", where today's class (pandas, by name) has that property
    with no setter and the method said."""
    import pandas

    table = {}
    for owner, attributes in sorted(said.items()):
        cls = getattr(pandas, owner, None)
        for attribute, method in sorted(attributes.items()):
            prop = getattr(cls, attribute, None) if cls is not None else None
            if isinstance(prop, property) and prop.fset is None and callable(getattr(cls, method, None)):
                table[(owner, attribute)] = method
    return table


# a numpydoc parameter's header: "optional (default=10)", "default: 'lbfgs'"
PARAMETER_DEFAULT = re.compile(r"\bdefault\s*[=:]?\s*(['\"][^'\"]*['\"]|[\w.+-]+)")


def _literal(text: str):
    """The Python value `text` spells (`'liblinear'`, ``` ``'auto'`` ```, `10`, `None`), or `...` (none)."""
    import ast

    try:
        return ast.literal_eval(text.strip().strip("`"))
    except (ValueError, SyntaxError):
        return ...


def parameter_docs(doc: str) -> dict:
    """{parameter: (its header line, the lines under it)} of a numpydoc Parameters section (cleaned, as
    `inspect.getdoc` and `ast.get_docstring` give it: headers at the margin, descriptions indented)."""
    lines = doc.splitlines()
    start = next((i + 2 for i, line in enumerate(lines[:-1]) if line.strip() == "Parameters"
                  and set(lines[i + 1].strip()) == {"-"}), None)
    found, name = {}, None
    for i, line in enumerate(lines[start:] if start else [], start or 0):
        if i + 1 < len(lines) and line.strip() and set(lines[i + 1].strip()) == {"-"}:
            break  # the next section
        header = re.match(r"(\w+)\s*(?::\s*(.*))?$", line)
        if header and not line[:1].isspace():
            name = header.group(1)
            found[name] = (header.group(2) or "", [])
        elif name:
            found[name][1].append(line)
    return found


def _warned_values(tree) -> set:
    """(name, string) for each `if <name> == 'warn':` (or `in (..., 'warn')`) whose body warns: a sentinel
    the old code stood in for a default it was about to change (`if solver == 'warn': solver = 'liblinear'`)."""
    import ast

    found = set()
    for block in ast.walk(tree):
        test = block.test if isinstance(block, ast.If) else None
        if not isinstance(test, ast.Compare) or len(test.comparators) != 1 or not _warn_texts(
                ast.Module(body=block.body, type_ignores=[])):
            continue
        left, right = test.left, test.comparators[0]
        name = (left.attr if isinstance(left, ast.Attribute) else getattr(left, "id", "")).lstrip("_")
        values = right.elts if isinstance(right, (ast.Tuple, ast.List, ast.Set)) else [right]
        found |= {(name, v.value) for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str)}
    return found


def _defaults(node, init) -> dict:
    """{parameter: [its default in the old constructor's signature, and the default its docstring names where
    it names one]}: constants only (`solver='warn'`, "default: 'liblinear'": `['warn', 'liblinear']`)."""
    import ast

    args = init.args
    pairs = [*zip(args.args[len(args.args) - len(args.defaults):], args.defaults),
             *((a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None)]
    docs = parameter_docs(ast.get_docstring(node) or "")
    found = {}
    for arg, default in pairs:
        said = PARAMETER_DEFAULT.search(" ".join(docs.get(arg.arg, ("", []))[0].split()))
        values = [_literal(ast.unparse(default)), _literal(said.group(1)) if said else ...]
        if _plain(values[0]):
            found[arg.arg] = [v for v in values if _plain(v)]
    return found


def _plain(value) -> bool:
    return value is not ... and isinstance(value, (str, int, float, bool, type(None)))


def _run_defaults(found) -> dict:
    """{class: {parameter: the default the old constructor ran with}}: its signature's, or, for a sentinel the
    old code warns about anywhere in the library (`if solver == 'warn': ... warnings.warn(...)`), the default
    its docstring names."""
    warned = set().union(*found["warned"].values())
    ran = {}
    for path, parameters in found["defaults"].items():
        for name, (value, *said) in parameters.items():
            if isinstance(value, str) and (name, value) in warned:
                if not said:
                    continue
                value = said[0]
            ran.setdefault(path, {})[name] = value
    return ran


def _decorator_text(node) -> str:
    """The text of a `@deprecated("...")` decorator (scikit-learn's), or ''."""
    import ast

    for d in node.decorator_list:
        if isinstance(d, ast.Call) and getattr(d.func, "id", getattr(d.func, "attr", "")) == "deprecated" and d.args:
            return " ".join(_text(d.args[0]).split())
    return ""


def _alternative(node) -> str:
    """The `alternative=` of matplotlib's `@cbook.deprecated("2.0", alternative="set_facecolor")`, or ''."""
    import ast

    for d in node.decorator_list:
        if isinstance(d, ast.Call) and getattr(d.func, "id", getattr(d.func, "attr", "")) == "deprecated":
            return next((k.value.value for k in d.keywords if k.arg == "alternative"
                         and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)), "")
    return ""


SAID_INSTEAD = re.compile(r"[Uu]se `*(\w+)(?:\(\))?`* instead")  # "Please use get_feature_names_out instead."


def _said_instead(node) -> str:
    """The method scikit-learn's `@deprecated("... Please use get_feature_names_out instead.")` on a method
    says to use, or '' (and '' on a property: an attribute, not a call)."""
    import ast

    names = {getattr(d, "id", getattr(d, "attr", "")) for d in node.decorator_list if not isinstance(d, ast.Call)}
    m = SAID_INSTEAD.search(_decorator_text(node))
    return m.group(1) if m and not names & {"property", "setter", "getter"} else ""


RETURNS = re.compile(r"^Returns\n-+\n(.*)", re.MULTILINE)


def _returns(doc: str) -> str:
    """The type a numpydoc docstring's Returns section names first (`feature_names_ : list of length
    (n_features,)`: 'list of length (n_features,)'), or ''."""
    m = RETURNS.search(doc)
    return m.group(1).strip().split(" : ", 1)[-1].strip() if m else ""


def _renamed_parameters(node) -> list:
    """matplotlib's `@_rename_parameter("3.3", "s", "text")` decorators on a function (constant names only)."""
    import ast

    pairs = []
    for d in node.decorator_list:
        name = getattr(d.func, "attr", getattr(d.func, "id", "")) if isinstance(d, ast.Call) else ""
        if name.lstrip("_") == "rename_parameter" and len(d.args) >= 3 and all(
                isinstance(a, ast.Constant) for a in d.args[1:3]):
            pairs.append([d.args[1].value, d.args[2].value])
    return pairs


def _read_module(root, path, found) -> None:
    import ast

    module = _module_name(root, path)
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            tree = ast.parse(f.read())
    except SyntaxError:  # Python 2 only code
        return
    for _, text in _warn_texts(ast.Module(body=[s for s in tree.body if not isinstance(
            s, (ast.FunctionDef, ast.ClassDef))], type_ignores=[])):
        if IN_FAVOR.search(text):  # said on import: the module moved
            found["modules"][module] = f"{module.split('.')[0]}.{IN_FAVOR.search(text).group(1)}"
        for old, new_module, new in MOVED_TO.findall(text):  # "lda.LDA has been moved to discriminant_analysis..."
            found["moved"][f"{module}.{old}"] = f"{module.split('.')[0]}.{new_module}.{new}"
    found["warned"][module] = _warned_values(tree)
    for node in tree.body:
        _read_statement(module, node, found)


def _read_statement(module, node, found) -> None:
    """One top-level statement of a module: a class, a function, scikit-learn 0.22's deprecated modules."""
    import ast

    if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
        found["names"].setdefault(module, {})[node.name] = (
            _signature(node) if isinstance(node, ast.FunctionDef) else None)
        if _decorator_text(node):
            found["deprecated"][f"{module}.{node.name}"] = _decorator_text(node)
    if isinstance(node, ast.ClassDef):
        _read_class(module, node, found)
        for f in (f for f in node.body if isinstance(f, ast.FunctionDef)):
            for old, new in _renamed_parameters(f):  # a constructor is named as its TypeError names it
                key = f"{node.name}.__init__" if f.name == "__init__" else f.name
                found["renamed calls"].setdefault(key, {})[old] = new
    if isinstance(node, ast.FunctionDef):
        if _forwards(node) and not node.name.startswith("_"):
            found["forwards"][f"{module}.{node.name}"] = _forwards(node)
        for old, new in _renamed_parameters(node):
            found["renamed calls"].setdefault(node.name, {})[old] = new
        for _, text in _warn_texts(node):
            for pattern in SOURCE_RENAMED:
                for old, new in pattern.findall(text):
                    found["renamed calls"].setdefault(node.name, {})[old] = new
            for said in STRING_AS_LIST.findall(text):  # `warn_deprecated("3.2", message=...)`: the version first
                since = re.match(r"(\d+\.\d+) ", text)
                said = said.replace(" and will be removed %(removal)s", "")
                found["string as list"][f"{module}.{node.name}"] = said.replace(
                    "%(since)s", since.group(1) if since else "an old version")
    if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "_DEPRECATED_MODULES":
        for item in ast.literal_eval(node.value):  # (new file, deprecated path, correct import path, importee)
            found["modules"][item[1]] = item[2]


def _inherited(found) -> None:
    """A warning in a base class's method speaks for its subclasses (`BaseSGD._validate_params` for
    `Perceptron`): each class gets what its bases, by name, say."""
    by_name = {path.rsplit(".", 1)[1]: path for path in found["bases"]}
    for table in ("renamed", "no effect", "values"):
        for path in found["bases"]:
            todo, seen = list(found["bases"][path]), set()
            while todo:
                base = by_name.get(todo.pop())
                if base and base not in seen:
                    seen.add(base)
                    todo += found["bases"].get(base, [])
                    for old, said in found[table].get(base, {}).items():
                        found[table].setdefault(path, {}).setdefault(old, said)


def source(library: str, root: str) -> dict:
    """What an unpacked sdist's source says (`source sklearn /tmp/scikit-learn-0.19.2`), read with `ast`
    without installing it: deprecated classes and functions, renamed and no-effect parameters, moved modules
    and the names (and positional parameters) those modules defined."""
    import os

    found = {k: {} for k in ("bases", "signatures", "renamed", "no effect", "deprecated", "modules", "names",
                             "renamed calls", "methods", "moved", "string as list", "values", "defaults",
                             "warned", "setters", "forwards")}
    package = os.path.join(root, library if library in ("sklearn", "pandas", "seaborn") else os.path.join(
        "lib", library))
    for folder, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "tests")
        for name in sorted(files):
            if name.endswith(".py"):
                _read_module(os.path.dirname(package), os.path.join(folder, name), found)
    _inherited(found)
    for path, sig in found["signatures"].items():
        module, name = path.rsplit(".", 1)
        if module in found["names"] and name in found["names"][module]:
            found["names"][module][name] = sig
    if library in ("pandas", "seaborn"):
        return {"pandas setters": found["setters"]} if library == "pandas" else {"forwards": found["forwards"]}
    prefix = "sklearn" if library == "sklearn" else "matplotlib"
    return {f"{prefix} deprecated": found["deprecated"], f"{prefix} source renamed": found["renamed"],
            f"{prefix} no effect": found["no effect"], f"{prefix} modules renamed": found["modules"],
            f"{prefix} module names": found["names"], f"{prefix} renamed calls": found["renamed calls"],
            f"{prefix} method alternatives": found["methods"], f"{prefix} names said moved": found["moved"],
            f"{prefix} string as list": found["string as list"], f"{prefix} equivalent values": found["values"],
            f"{prefix} defaults": _run_defaults(found), "forwards": found["forwards"]}


def forwarded(said: dict) -> dict:
    """(package, name) gone from the package now -> what the old version's function of that name handed its
    arguments to (`_forwards`), where the package has that one now: `sns.factorplot(...)` ran as
    `sns.catplot(..., kind='point')`, its `size=` as `height=`."""
    out = {}
    for path, (target, renamed, defaults) in said.items():
        package = importlib.import_module(path.split(".")[0])
        name = path.rpartition(".")[2]
        if not hasattr(package, name) and hasattr(package, target):
            out[package.__name__, name] = (target, renamed, defaults)
    return out


def dump(libraries) -> dict:
    found = {}
    if "numpy" in libraries:
        found["numpy deprecated"] = numpy_deprecated()
    if "scipy" in libraries:
        found["scipy deprecated"] = scipy_deprecated()
    if "sklearn" in libraries:
        found["sklearn modules deprecated"] = sklearn_modules_deprecated()
        found["sklearn deprecated"] = sklearn_deprecated()
        found["sklearn renamed"] = sklearn_renamed()
    for library in libraries:
        if library == "sklearn":
            found.update(estimators())
            for path in SKLEARN_FUNCTIONS:
                found.update(members(path))
        for path in TARGETS.get(library, []):
            found.update(members(path))
    return found


def error_name(obj, path: str) -> str:
    """How a TypeError about too many positional arguments names `obj` now (Python 3.10+: its qualname)."""
    if inspect.isclass(obj):
        return obj.__init__.__qualname__
    return getattr(obj, "__qualname__", path.rsplit(".", 1)[-1])


def numpy_removed(words: dict) -> dict:
    """Names gone from numpy now whose old deprecation names a replacement numpy has now."""
    import numpy

    table = {}
    for name, text in sorted(words.items()):
        try:
            getattr(numpy, name)
            continue  # still there, or explained by numpy's own AttributeError
        except AttributeError as exc:
            if "`np." in str(exc) or "`numpy." in str(exc):
                continue
        m = USE_INSTEAD.search(text)
        if m and m.group(1) != name and " by itself" in m.group(0) and hasattr(builtins, m.group(1)):
            table[name] = m.group(1)  # "use `str` by itself": the builtin
        elif m and m.group(1) != name and hasattr(numpy, m.group(1).split(".")[0]):
            table[name] = "{m}." + m.group(1)
    return table


SKLEARN_INSTEAD = re.compile(r"Import ([\w.]+) from sklearn instead")  # an import said outright: a drop-in


SKLEARN_PACKAGE = re.compile(r"official version of (\w+)|import this functionality directly from (\w+)")


def sklearn_modules_moved(words: dict) -> dict:
    """Modules gone from `sklearn.externals` now whose old deprecation names the package to import instead,
    where that package is installed: {(package, module): (None, package)} (`import six`)."""
    table = {}
    for path, text in sorted(words.items()):
        m = SKLEARN_PACKAGE.search(text)
        new = m and (m.group(1) or m.group(2))
        if new and resolve(path) is None and resolve(new) is not None:
            table[tuple(path.rsplit(".", 1))] = (None, new)
    return table


SKLEARN_RENAMED = re.compile(r"'(\w+)' (?:was|has been) renamed to '(\w+)'")  # "The 'GraphLasso' was renamed to ..."


def _renamed_in_package(path: str, text: str) -> dict:
    """"'GraphLasso' was renamed to 'GraphicalLasso'": the new name, under the module and each package above
    it that has it now (`from sklearn.covariance import GraphLasso`)."""
    m = SKLEARN_RENAMED.search(text)
    module, name = path.rsplit(".", 1)
    if not m or m.group(1) != name or m.group(2).startswith("_"):
        return {}
    parts = module.split(".")
    homes = [".".join(parts[:cut]) for cut in range(len(parts), 1, -1)]
    public = next((home for home in reversed(homes) if resolve(f"{home}.{m.group(2)}") is not None), None)
    return {(home, name): (public, m.group(2)) for home in homes if public and resolve(f"{home}.{name}") is None}


def sklearn_moved(words: dict) -> dict:
    """Names gone from scikit-learn now whose old deprecation names the one to import instead, where
    that one is there now: {(module, name): (module, name)}."""
    table = {}
    for path, text in sorted(words.items()):
        module, name = path.rsplit(".", 1)
        if resolve(path) is not None:
            continue
        table.update(_renamed_in_package(path, text))
        m = SKLEARN_INSTEAD.search(text)
        new = m and f"sklearn.{m.group(1)}"
        if new and resolve(new) is not None:
            new_module, new_name = new.rsplit(".", 1)
            public = new_module.split("._")[0]  # `sklearn.impute._base` -> `sklearn.impute`
            table[(module, name)] = (public if hasattr(resolve(public), new_name) else new_module, new_name)
    return table


def renamed_keywords(renamed: dict) -> dict:
    """{(a TypeError's name for the constructor, old keyword): new keyword} where the old keyword is gone
    now and the new one is there."""
    table = {}
    for path, pairs in sorted(renamed.items()):
        cls = resolve(path)
        if cls is None:
            continue
        params = set(positional(cls.__init__) or []) | keyword_only(cls.__init__)
        for old, new in pairs:
            if old not in params and new in params:
                table[(error_name(cls, path), old)] = new
    return table


_CLASSES = {}


def current_class(path: str):
    """The class at `path` now, or the scikit-learn estimator of that name wherever it lives now
    (`sklearn.linear_model.perceptron.Perceptron` is `sklearn.linear_model.Perceptron`)."""
    if not _CLASSES:
        _CLASSES.update({p.rsplit(".", 1)[1]: cls for p, cls in sorted(estimator_classes().items(), reverse=True)})
    found = resolve(path)
    return found if inspect.isclass(found) else _CLASSES.get(path.rsplit(".", 1)[1])


def _parameters(cls) -> set:
    return set(positional(cls.__init__) or []) | keyword_only(cls.__init__)


def source_renamed(renamed: dict) -> dict:
    """{(a TypeError's name for the constructor, old keyword): new keyword} from the source's renames (the
    text says renamed, or the old code handed the old value to the new parameter), where the old keyword is
    gone now and the new one is there."""
    table = {}
    for path, said in sorted(renamed.items()):
        cls = current_class(path)
        if cls is None or not hasattr(cls, "get_params"):
            continue
        params = _parameters(cls)
        for old, (new, extras) in said.items():
            if old not in params and new in params and set(extras) <= params:
                table[(error_name(cls, path), old)] = new
    return table


def source_extras(renamed: dict) -> dict:
    """{(constructor, old keyword): ((another parameter, the constant the old code set it to), ...)}:
    `Perceptron(n_iter=40)` was `max_iter=40, tol=None` in the version that deprecated it."""
    table = {}
    for path, said in sorted(renamed.items()):
        cls = current_class(path)
        if cls is None or not hasattr(cls, "get_params"):
            continue
        for old, (new, extras) in said.items():
            if extras and (error_name(cls, path), old) in source_renamed({path: {old: [new, extras]}}):
                table[(error_name(cls, path), old)] = tuple(sorted(extras.items()))
    return table


def no_effect(said: dict) -> dict:
    """{(constructor, keyword gone now): the old version's words that it has no effect}."""
    table = {}
    for path, words in sorted(said.items()):
        cls = current_class(path)
        if cls is not None and hasattr(cls, "get_params"):
            for old, text in words.items():
                if old not in _parameters(cls):
                    table[(error_name(cls, path), old)] = text
    return table


def equivalent_values(said: dict) -> dict:
    """{(class, parameter, old value): new value} where the old version said the new value "is equivalent"
    and today's class, still there, takes the parameter and refuses the old value (its own validation)."""
    table = {}
    for path, parameters in sorted(said.items()):
        cls = current_class(path)
        if cls is None or not hasattr(cls, "get_params"):
            continue
        for parameter, values in parameters.items():
            allowed = _allowed_strings(cls, parameter)
            for old, new in values.items():
                if allowed is not None and new in allowed and old not in allowed:
                    table[(cls.__name__, parameter, old)] = new
    return table


# today's docstrings: ".. versionchanged:: 0.22 The default solver changed from 'liblinear' to 'lbfgs' in 0.22.",
# "The default value of ``n_estimators`` changed from 10 to 100 in 0.22.", "Default value changed from 1e-3 to 1e-4
# for consistency ..." (the parameter it sits under, or the one it names; "will change", "if None ..." left out)
DEFAULT_CHANGED = re.compile(r"(?:`+(\w+)`+ )?(?:[Tt]he )?[Dd]efault(?: value)?(?: (?:of|for) `*(\w+)`*| (\w+))?"
                             r"(?: default)? (?:was |has )?changed from (\S+?) to (\S+?)(?=[,.]?(?:\s|$))")
NOTE = re.compile(r"^([ \t]*)\.\. versionchanged::[^\n]*\n((?:\1[ \t]+\S[^\n]*\n)+)", re.MULTILINE)


def default_notes(doc: str) -> dict:
    """{parameter: (old default, new default)} that a numpydoc docstring's `.. versionchanged::` notes under
    its parameters say changed, where both are constants (`'liblinear'`, ``` ``'auto'`` ```, `10`, `None`)."""
    found = {}
    for name, (_, lines) in parameter_docs(doc).items():
        for note in NOTE.finditer("\n".join(lines) + "\n"):
            m = DEFAULT_CHANGED.match(" ".join(note.group(2).split()))
            named = {n for n in (m.groups()[:3] if m else ()) if n}
            old, new = (_literal(v) for v in m.groups()[3:]) if m else (..., ...)
            if m and named <= {name} and _plain(old) and _plain(new):
                found[name] = (old, new)
    return found


def _default_now(cls, parameter: str):
    try:
        default = inspect.signature(cls).parameters[parameter].default
    except (KeyError, TypeError, ValueError):
        return ...
    return ... if default is inspect.Parameter.empty else default


def _same(a, b) -> bool:
    return type(a) is type(b) and a == b  # `True` is not `1`


def _accepts(cls, parameter: str, value) -> bool:
    """Whether today's class takes `value` for `parameter` (its `_parameter_constraints`, where it has them)."""
    from sklearn.utils._param_validation import make_constraint

    constraints = getattr(cls, "_parameter_constraints", {}).get(parameter)
    return constraints is None or any(make_constraint(c).is_satisfied_by(value) for c in constraints)


def changed_defaults(dumps) -> dict:
    """{(class, parameter): (old default, new default)}: what today's docstring says changed ("The default
    solver changed from 'liblinear' to 'lbfgs'"), for the class and each public subclass, where an old
    version's constructor ran with the old default (`_run_defaults`), today's signature has the new one, and
    today's class still takes the old one."""
    ran = {}
    for d in dumps:
        for path, parameters in d.get("sklearn defaults", {}).items():
            for name, value in parameters.items():
                ran.setdefault((path.rsplit(".", 1)[1], name), []).append(value)
    table = {}
    for cls in sorted(set(estimator_classes().values()), key=lambda c: c.__name__):
        for name, (old, new) in default_notes(inspect.getdoc(cls) or "").items():
            for sub in _subclasses(cls):
                key = (sub.__name__, name)
                if sub.__name__.startswith("_") or not _same(_default_now(sub, name), new):
                    continue
                if any(_same(v, old) for v in ran.get(key, [])) and _accepts(sub, name, old):
                    table[key] = (old, new)
    return table


def _allowed_strings(cls, parameter: str):
    """The strings today's scikit-learn class accepts for `parameter` (`_parameter_constraints`), or None."""
    constraints = getattr(cls, "_parameter_constraints", {}).get(parameter)
    if constraints is None:
        return None
    allowed = set()
    for c in constraints:
        options = getattr(c, "options", None)
        if options is not None:
            allowed |= {o for o in options if isinstance(o, str)}
    return allowed


def strings_as_lists(said: dict) -> dict:
    """{function: (the one-letter colors today's matplotlib names, the old deprecation)} where the old
    version read a string of one-letter colors as that many colors and said "Use an explicit list instead",
    and today's function, still there, rejects such a string (`to_rgba_array('rg')` raises)."""
    from matplotlib.colors import BASE_COLORS

    letters = "".join(sorted(name for name in BASE_COLORS if len(name) == 1))
    table = {}
    for path, text in sorted(said.items()):
        function = resolve(path)
        if function is None:
            continue
        try:
            function(letters[:2])
        except ValueError:
            table[path.rsplit(".", 1)[1]] = (letters, text)
    return table


def _safe_by_position(old, new) -> bool:
    """Whether a call written for `old`'s positional parameters means the same with `new`'s: each argument
    it passes by position lands on a parameter of the same name (or raises: more than `new` takes)."""
    if old is None or new is None:
        return False
    old = [n for n in old if n != "*"]
    return all(a == b for a, b in zip(old, new))


def names_moved(dumps) -> dict:
    """{(module gone now, name): (module, name)}: a module the old version said moved ("in favor of the
    model_selection module", scikit-learn 0.22's table of deprecated modules), each name it defined that the
    new module has now and that takes the same arguments by position (`KFold(n, n_folds)` is not
    `KFold(n_splits)`: not moved)."""
    moves, names = {}, {}
    for d in dumps:
        moves.update(d.get("sklearn modules renamed", {}))
        for module, defined in d.get("sklearn module names", {}).items():
            names.setdefault(module, {}).update(defined)
    table = {}
    for d in dumps:  # "lda.LDA has been moved to discriminant_analysis.LinearDiscriminantAnalysis"
        for path, new in d.get("sklearn names said moved", {}).items():
            if resolve(path.rsplit(".", 1)[0]) is None and resolve(new) is not None:
                table[tuple(path.rsplit(".", 1))] = tuple(new.rsplit(".", 1))
    for old, new in sorted(moves.items()):
        if resolve(old) is not None or resolve(new) is None:
            continue
        for name, was in sorted(names.get(old, {}).items()):
            obj = resolve(f"{new}.{name}")
            if obj is None:
                continue
            if _safe_by_position(was, positional(obj.__init__ if inspect.isclass(obj) else obj)):
                table[(old, name)] = (new, name)  # (a class whose constructor the old source does not show: None)
    return table


def renamed_calls(said: dict) -> dict:
    """{(function, old keyword): new keyword} for matplotlib: its `_rename_parameter` decorators and "'normed'
    kwarg ... replaced by the 'density' kwarg", where a function or constructor of that name now takes the
    new keyword and not the old."""
    import matplotlib.axes
    import matplotlib.pyplot
    import matplotlib.scale

    table = {}
    for function, pairs in sorted(said.items()):
        owner, _, name = function.rpartition(".")
        candidates = [getattr(m, owner or name, None) for m in (matplotlib.axes.Axes, matplotlib.pyplot,
                                                                matplotlib.scale)]
        for obj in (c for c in candidates if callable(c)):
            params = set(inspect.signature(obj).parameters) if not owner else _parameters(obj)
            for old, new in pairs.items():
                if old not in params and new in params:
                    table[(function, old)] = new
    return table


ALTERNATIVE_METHOD = re.compile(r"`*\.?(?:\w+\.)?(\w+)(?:\(\))?`*")  # "set_facecolor", "`.Axes.set_facecolor`"


def _subclasses(cls) -> set:
    found, todo = set(), [cls]
    while todo:
        c = todo.pop()
        if c not in found:
            found.add(c)
            todo += c.__subclasses__()
    return found


def methods_renamed(said: dict) -> dict:
    """{method gone now: (the method the old version's deprecation named as its alternative, the class it was
    deprecated on, the names of that class and its subclasses as an AttributeError names them)}, where that
    one is there now and takes the same arguments by position (`Axes.set_axis_bgcolor(color)` ->
    `set_facecolor(color)`)."""
    import matplotlib.axes  # noqa: F401 - the classes whose subclasses are named
    import matplotlib.pyplot  # noqa: F401

    table = {}
    for path, methods in sorted(said.items()):
        cls = resolve(path)
        if not inspect.isclass(cls):
            continue
        for old, (alternative, was, *_) in sorted(methods.items()):
            m = ALTERNATIVE_METHOD.fullmatch(alternative.strip())
            new = m and getattr(cls, m.group(1), None)
            if not m or old.startswith("_") or m.group(1).startswith("_"):
                continue  # private: not what a notebook calls
            if hasattr(cls, old) or not _takes_as_before(was, new):
                continue
            types = tuple(sorted(sub.__name__ for sub in _subclasses(cls) if not sub.__name__.startswith("_")))
            table[old] = (m.group(1), path.rsplit(".", 1)[1], types)
    return table


def _takes_as_before(was, new) -> bool:
    """Whether `new` is a method that takes what the old one, of positional parameters `was`, took by position:
    the same names, and no more of them than it takes."""
    now = (positional(new) or []) if callable(new) else None
    return _safe_by_position(was, now) and len([n for n in was if n != "*"]) <= len(now)


ARRAY = re.compile(r"(?:numpy\.)?(?:nd)?array(?![-\w])")  # "ndarray of str objects", not "array-like"


def sklearn_methods_renamed(said: dict) -> dict:
    """{(class, method gone now): (the method scikit-learn's `@deprecated` said to use instead, 'list' or '')},
    keyed by the class's name today and each public subclass's, as an AttributeError names the object, where
    the class is there now, the old method is not, and the one said is there and takes the same arguments by
    position. 'list' where the old method's docstring said it returns a list and today's says an array:
    `vec.get_feature_names()` was `list(vec.get_feature_names_out())`."""
    table = {}
    for path, methods in sorted(said.items()):
        cls = current_class(path)
        for old, (alternative, was, *returned) in sorted(methods.items()) if cls is not None else ():
            new = getattr(cls, alternative, None)  # (a dump of before the type was read: no type, no list)
            if old.startswith("_") or alternative.startswith("_") or hasattr(cls, old) or not _takes_as_before(
                    was, new):
                continue
            listed = (returned or [""])[0].startswith("list")
            wrap = "list" if listed and ARRAY.match(_returns(inspect.getdoc(new) or "")) else ""
            for sub in _subclasses(cls):
                if sub.__name__.startswith("_") or hasattr(sub, old):
                    continue
                if sub is cls:  # a class's own deprecation wins over its base's
                    table[(sub.__name__, old)] = (alternative, wrap)
                else:
                    table.setdefault((sub.__name__, old), (alternative, wrap))
    return table


STILL_POSITIONAL = {}  # key -> how many arguments it still takes by position


# seaborn 0.12 made `data` its functions' first and only positional argument, the variables (`x`, `y`, `hue`) it
# took first keyword-only behind it: there the old positional names, from the first that differs, are named as
# they were (each a parameter today); its functions keyed by their module (`seaborn.boxplot`, not pyplot's `boxplot`)
REORDERED = ("seaborn.",)


def _kept(path: str, was: list, now: list):
    """How many arguments by position a call written for `was` keeps as they are today: all of today's where
    `was` begins with them; where seaborn reordered them, those up to the first that differs; else None."""
    if was[:len(now)] == now[:len(was)]:
        return len(now)
    if not path.startswith(REORDERED):
        return None
    kept = 0
    while was[kept] == now[kept]:
        kept += 1
    return kept


def compare(old: dict) -> dict:
    table = {}
    for path, was in sorted(old.items()):
        if path.endswith(" deprecated"):
            continue
        obj = resolve(path)
        if obj is None:
            continue
        target = obj.__init__ if inspect.isclass(obj) else obj
        now, kw_only = positional(target) or [], keyword_only(target)
        kept = _kept(path, was, now)
        if kept is None or len(was) <= kept:
            continue  # reordered, or nothing lost
        moved = []
        for name in was[kept:]:
            if name not in kw_only | set(now[kept:]):  # a keyword now (one still positional only where reordered)
                break
            moved.append(name)
        if moved:
            key = path if path.startswith(REORDERED) and not inspect.isclass(obj) else error_name(obj, path)
            STILL_POSITIONAL[key] = kept
            if key in table and table[key] != tuple(moved):
                table[key] = None  # two callables of one name that differ: no entry
            else:
                table.setdefault(key, tuple(moved))
    return {k: v for k, v in table.items() if v}


def merged(tables) -> dict:
    """One table from several old versions': where they name the arguments differently, the names they
    agree on (a notebook may have been written for either)."""
    out = {}
    for table in tables:
        for key, names in table.items():
            if key not in out:
                out[key] = names
                continue
            common = 0
            while common < min(len(names), len(out[key])) and names[common] == out[key][common]:
                common += 1
            out[key] = out[key][:common]
    return {k: v for k, v in out.items() if v}


GENERATED = "by tools/drift_tables.py (compare): do not edit by hand, run the tool again (its docstring says how)"
LIBRARIES = ("pandas", "numpy", "matplotlib", "scikit-learn", "scipy", "seaborn")


def tables_json(tables: dict, made_from: str) -> str:
    """The tables as jupyter_fixloop/rules/changed.json holds them: what generated them and from which versions,
    then each table (in the order given) as its entries sorted, one `[key, value]` a line (a tuple: an array)."""
    out = ["{", f'  "generated": {json.dumps(GENERATED)},', f'  "from": {json.dumps(made_from)},', '  "tables": {']
    for i, (name, entries) in enumerate(tables.items()):
        rows = [f"      {json.dumps([key, value], ensure_ascii=False)}" for key, value in sorted(entries.items())]
        out.append(f"    {json.dumps(name)}: [" + ("\n" + ",\n".join(rows) + "\n    " if rows else "") + "]"
                   + ("," if i < len(tables) - 1 else ""))
    return "\n".join([*out, "  }", "}"]) + "\n"


def made_from(dumps_said: str) -> str:
    """What the tables were made from: the old versions' dumps, against the versions installed here, today."""
    import datetime
    from importlib import metadata

    today = []
    for name in LIBRARIES:
        try:
            today.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            continue
    return f"{dumps_said}, against today's ({', '.join(today)}), {datetime.date.today().isoformat()}"


def reducers_by_name() -> dict:
    """The callables pandas' groupby, resample and pivot_table ran as their own method of that name before 3.0
    (`pandas.core.common._cython_table`, still held today for `Series.apply`; pandas 2.1 warned: "The provided
    callable <function var> is currently using SeriesGroupBy.var. In a future version of pandas, the provided
    callable will be used directly. To keep current behavior pass the string "var" instead."), where the
    callable used directly gives another result than that method on a Series with a missing value:
    {"numpy.var": "var"} (numpy's ddof is 0, pandas' 1; `np.median` does not skip NaN)."""
    import math

    import numpy
    import pandas
    from pandas.core import common

    sample = pandas.Series([1.0, 2.0, 4.0, 8.0, math.nan])
    table = {}
    for function, name in getattr(common, "_cython_table", {}).items():
        try:
            direct, method = function(sample), getattr(sample, name)()
        except Exception:
            continue
        if not numpy.allclose(numpy.asarray(direct, float), numpy.asarray(method, float), equal_nan=True):
            table[f"{function.__module__}.{function.__name__}"] = name
    return table


def _source_tables(dumps) -> dict:
    """The tables read from the source of versions that do not install here (`source` dumps)."""
    tables = {}
    for name, read in (
            ("KEYWORD_EXTRAS", lambda d: source_extras(d.get("sklearn source renamed", {}))),
            ("NO_EFFECT_KEYWORDS", lambda d: no_effect(d.get("sklearn no effect", {}))),
            ("RENAMED_CALL_KEYWORDS", lambda d: renamed_calls(d.get("matplotlib renamed calls", {}))),
            ("EQUIVALENT_VALUES", lambda d: equivalent_values(d.get("sklearn equivalent values", {})))):
        tables[name] = {}
        for d in dumps:
            tables[name].update(read(d))
    tables["CHANGED_DEFAULTS"] = changed_defaults(dumps)
    methods = {}
    for d in dumps:
        methods.update(methods_renamed(d.get("matplotlib method alternatives", {})))
    tables["METHODS_RENAMED"] = {old: said[:2] for old, said in methods.items()}
    tables["TYPES_OF"] = {said[1]: tuple(said[2]) for said in methods.values()}
    tables["SKLEARN_METHODS_RENAMED"] = {}
    for d in dumps:
        tables["SKLEARN_METHODS_RENAMED"].update(sklearn_methods_renamed(d.get("sklearn method alternatives", {})))
    tables["SKLEARN_NAMES_MOVED"] = names_moved(dumps)
    tables["STRING_AS_LIST"] = {}
    for d in dumps:
        tables["STRING_AS_LIST"].update(strings_as_lists(d.get("matplotlib string as list", {})))
    return tables


def compared_tables(dumps) -> dict:
    """Every table of jupyter_fixloop/rules/changed.json, from the dumps of the old versions and their source."""
    tables = {"KEYWORD_ONLY_NOW": merged([compare(d) for d in dumps])}
    tables["STILL_POSITIONAL"] = {k: STILL_POSITIONAL[k] for k in tables["KEYWORD_ONLY_NOW"]}
    for name, words, read in (("NUMPY_REMOVED", "numpy deprecated", numpy_removed),
                              ("RENAMED_KEYWORDS", "sklearn renamed", renamed_keywords),
                              ("SKLEARN_MOVED", "sklearn deprecated", sklearn_moved),
                              ("SKLEARN_MODULES_MOVED", "sklearn modules deprecated", sklearn_modules_moved),
                              ("SCIPY_MOVED", "scipy deprecated", scipy_moved)):
        tables[name] = {}
        for d in dumps:
            tables[name].update(read(d.get(words, {})))
        if name == "RENAMED_KEYWORDS":  # and those the old versions' source says were renamed
            for d in dumps:
                tables[name].update(source_renamed(d.get("sklearn source renamed", {})))
    tables.update(_source_tables(dumps))
    tables["SETTERS_REMOVED"] = {}
    for d in dumps:
        tables["SETTERS_REMOVED"].update(setters_removed(d.get("pandas setters", {})))
    tables["REDUCERS_BY_NAME"] = reducers_by_name()
    tables["FORWARDED"] = {}
    for d in dumps:
        tables["FORWARDED"].update(forwarded(d.get("forwards", {})))
    return tables


def _tuples(value):
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def onto(stored: dict, tables: dict) -> dict:
    """The tables a file of them holds (`compare --onto`, changed.json) with the entries `tables` adds: a key it
    holds keeps its entry (the old versions it was made from are not all here to make it again)."""
    out = {name: {_tuples(k): _tuples(v) for k, v in held} for name, held in stored["tables"].items()}
    for name, entries in tables.items():
        for key, value in entries.items():
            out.setdefault(name, {}).setdefault(key, value)
    return out


def main(argv) -> int:
    if len(argv) >= 2 and argv[0] == "dump":
        json.dump(dump(argv[1:]), sys.stdout, indent=0, sort_keys=True)
        return 0
    if len(argv) == 3 and argv[0] == "source":
        json.dump(source(argv[1], argv[2]), sys.stdout, indent=0, sort_keys=True)
        return 0
    if len(argv) >= 2 and argv[0] == "compare":
        stored, argv = (json.load(open(argv[2])), argv[2:]) if argv[1] == "--onto" else (None, argv)
        said, paths = (argv[2], argv[3:]) if argv[1] == "--from" else (f"the dumps {', '.join(argv[1:])}", argv[1:])
        dumps = [json.load(open(path)) for path in paths]
        tables = compared_tables(dumps)
        if stored is None:
            sys.stdout.write(tables_json(tables, made_from(said)))
        else:
            sys.stdout.write(tables_json(onto(stored, tables), stored["from"] + "; then " + made_from(said)))
        return 0
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
