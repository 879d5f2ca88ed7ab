"""What a library's own code says it deprecated, for tools/harvest_changes.py: the tables of old and new names
its warnings are made from (pandas 2.2's frequency aliases), the `.. deprecated::` directives and the
DeprecationWarning / FutureWarning messages of its functions and classes (IPython 8), and the removals a
later release's notes state as a rule ("anything deprecated since before IPython 8.16 is gone", IPython
9.0), each name found absent from that release's code.

The code comes from the libraries' sdists (PyPI, unpacked by pip) into the notes folder, beside the notes.
"""

from __future__ import annotations

import ast
import pathlib
import re

# the tables of old -> new names a library's code warns with (file under notes/<library>, release, the table,
# what it applies to), and the warning that says each (pandas 2.2.3 `to_offset`, pandas/_libs/tslibs/offsets.pyx)
WARNED = {"pandas": [("code/2.2.3/dtypes.pyx", "2.2.3", "c_OFFSET_DEPR_FREQSTR",
                      "frequencies of offsets (date_range, resample, asfreq), not of Period"),
                     ("code/2.2.3/dtypes.pyx", "2.2.3", "c_DEPR_ABBREVS", "frequencies and resolutions")]}
WARNING = {"pandas": "'{old}' is deprecated and will be removed in a future version, please use '{new}' instead."}

# a library's code to read deprecations from (under notes/<library>, its release), and a later release whose
# notes state which of them are gone: (its code, its release, deprecated before this release, its notes file,
# the words that say so)
CODE = {"IPython": {"deprecated": ("code/8.37.0/IPython", "8.37.0"),
                    "gone": ("code/9.0.0/IPython", "9.0.0", (8, 16), "version9.rst",
                             "anything deprecated since before IPython 8.16 is gone")}}
# an old release's code whose warnings of one keyword (a `warn` under `if <parameter> is not None:`) are read
# (under notes/<library>, its release): pandas 0.19.2 ("by argument to sort_index is deprecated, pls use
# .sort_values(by=...)"), the last release before 0.20 removed many of the keywords it warned of
KEYWORDS_WARNED = {"pandas": [("code/0.19.2/pandas", "0.19.2")]}
# an old release's code whose shim modules say where a package moved (under notes/<library>, its release): IPython
# 5.10's `ShimModule(src='IPython.html.widgets', mirror='ipywidgets')`, beside its warning "`IPython.html.widgets`
# has moved to `ipywidgets`"; and its modules and functions whose warning (of any category) says where they moved:
# "IPython.utils.traitlets has moved to a top-level traitlets package." (a module's, over `from traitlets import *`),
# "get_ipython_package_dir has moved to the IPython.paths module" (a function's). IPython 4.0.0, the release of the
# split (2015), is read first; a move a later release says again keeps 4.0.0 as its release, in the later words
SHIMS = {"IPython": [("code/4.0.0/IPython", "4.0.0"), ("code/5.10.0/IPython", "5.10.0")]}
# a warning's words saying where a module or a function moved: the old name, the new home, whether a module's words
# name the module (`the IPython.paths module`: the function keeps its name there)
MOVED_WORDS = re.compile(r"^`?([A-Za-z_][\w.]*)`? has moved to (?:(the )|a top-level )?`?([A-Za-z_][\w.]*?)`?"
                         r"(?: (?:module|package))?(?: since IPython [\d.]+)?\.?$")
# an old release's code whose module-level functions and classes say their deprecation in a `@deprecated("...")`
# decorator (under notes/<library>, its release): scikit-learn 1.1.3, the last release with the functions 1.0
# deprecated ("Function :func:`plot_roc_curve` is deprecated in 1.0 and will be removed in 1.2. Use one of the
# class methods: ..."); its methods' and properties' decorators are left out (changed.json's tables read them)
DECORATED = {"scikit-learn": [("code/1.1.3/sklearn", "1.1.3")]}
BARE_METHOD = re.compile(r"(?<![`\w.:])([A-Z]\w*\.[a-z_]\w*)(?![`\w])")  # `ConfusionMatrixDisplay.from_estimator`
CATEGORIES = {"DeprecationWarning", "FutureWarning", "PendingDeprecationWarning", "ShimWarning"}
DIRECTIVE = re.compile(r"\.\. deprecated::\s*([\d.]+)[ \t]*\n((?:[ \t]*\n)*(?:[ \t]+\S[^\n]*\n?)*)")
SINCE = re.compile(r"\b(?:since|in)\s+(?:IPython\s+|version\s+)?v?(\d+\.\d+(?:\.\d+)?)", re.I)


def warned(notes: pathlib.Path, library: str) -> list[dict]:
    """The deprecations a library's code warns of from a table of old and new names (pandas 2.2's frequency
    aliases: `'M'` -> `'ME'`, `'H'` -> `'h'`), in the warning's words; the fiscal-month variants (`A-DEC`)
    follow their base alias and are left out."""
    found = []
    for file, version, table, scope in WARNED.get(library, []):
        path = notes / library / file
        if not path.exists():
            continue
        body = re.search(rf"^cdef dict {table} = \{{(.*?)^\}}", path.read_text(), re.S | re.M)
        for old, new in re.findall(r'^\s*"([^"]+)":\s*"([^"]+)",', body.group(1) if body else "", re.M):
            if "-" in old:
                continue
            found.append({
                "library": library, "change": "deprecated", "version": version, "deprecated_in": version,
                "removed_in": None, "names": [old], "kind": "alias", "replacement": new, "replacement_is": "code",
                "replacement_named": True, "words": WARNING[library].format(old=old, new=new),
                "source": f"{library}=={version}:{file.split('/')[-1]} {table}", "applies_to": scope,
            })
    return found


def definitions(tree: ast.Module) -> list[tuple[str, ast.AST]]:
    """(qualified name, node) of a module's functions and classes and of its classes' methods."""
    found = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.append((node.name, node))
        if isinstance(node, ast.ClassDef):
            found += [(f"{node.name}.{n.name}", n) for n in node.body
                      if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return found


def defined(tree: ast.Module) -> set[str]:
    """The names a module defines, assigns or imports at its top level, and its classes' methods."""
    names = {name for name, _ in definitions(tree)}
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def _message(node: ast.expr) -> str:
    """A warning's text: a string, an f-string (its fields as `{...}`), or strings added together."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{...}" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _message(node.left) + _message(node.right)
    return ""


def deprecation_of(node: ast.AST) -> tuple[str | None, str] | None:
    """(the release it says, its words) of a function's or class's own deprecation: its docstring's
    `.. deprecated::` directive, or the first DeprecationWarning / FutureWarning its body issues."""
    doc = ast.get_docstring(node) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else None
    said = DIRECTIVE.search((doc or "") + "\n")
    if said:
        return said.group(1).rstrip("."), " ".join(said.group(2).split())
    body = node.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else []
    for call in (n for statement in body for n in ast.walk(statement) if isinstance(n, ast.Call)):
        func = call.func
        category = [*call.args[1:2], *(k.value for k in call.keywords if k.arg == "category")]
        if (isinstance(func, ast.Attribute) and func.attr == "warn" or isinstance(func, ast.Name)
                and func.id == "warn") and call.args and any(isinstance(c, ast.Name) and c.id in CATEGORIES
                                                              for c in category):
            words = " ".join(_message(call.args[0]).split())
            if words:
                since = SINCE.search(words)
                return (since.group(1) if since else None), words
    return None


def keyword_warning(node: ast.AST) -> tuple[str, str] | None:
    """(the parameter, the words) of a function's warning about one of its keywords: a DeprecationWarning or
    FutureWarning issued under `if <parameter> is not None:` (or `if <parameter>:`), whose words name it."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    params = {a.arg for a in [*node.args.args, *node.args.kwonlyargs]} - {"self", "cls"}
    for test in (n for n in ast.walk(node) if isinstance(n, ast.If)):
        cond = test.test
        subject = cond.left if isinstance(cond, ast.Compare) and isinstance(cond.ops[0], ast.IsNot) else cond
        if not (isinstance(subject, ast.Name) and subject.id in params):
            continue
        said = deprecation_of(ast.FunctionDef(name="", args=node.args, body=test.body, decorator_list=[]))
        if said and re.search(rf"\b{subject.id}\b", said[1]):
            return subject.id, said[1]
    return None


CODE_LIKE = re.compile(r"(?<![`\w])(\.?[A-Za-z_][\w.]*\([^()\s]*\))")  # `.sort_values(by=...)` in a warning's words


def keyword_deprecations(notes: pathlib.Path, library: str, entry) -> list[dict]:
    """The keyword deprecations an old release's code warns of (KEYWORDS_WARNED), each named by its keyword and
    its function (`by`, `pandas.core.frame.DataFrame.sort_index`), the code its words name quoted as code."""
    found = []
    for folder, release in KEYWORDS_WARNED.get(library, []):
        root = notes / library / folder
        for path in sorted(root.rglob("*.py")) if root.is_dir() else []:
            if "tests" in path.parts:
                continue
            module = _module_of(path, root)
            for qualname, node in definitions(ast.parse(path.read_text(errors="replace"))):
                said = keyword_warning(node)
                if said is None:
                    continue
                keyword, words = said
                item = entry(library, tuple(int(p) for p in release.split(".")),
                             f"{library}=={release}:{path.relative_to(root.parent)}", "deprecated",
                             CODE_LIKE.sub(r"``\1``", words))
                item.update(names=[keyword, f"{module}.{qualname}"], kind="keyword", module=module, words=words)
                found.append(item)
    return found


def _literal(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def shim_moves(notes: pathlib.Path, library: str, entry) -> list[dict]:
    """The packages an old release's shims say moved (SHIMS): each `ShimModule(src=..., mirror=...)` of a module
    whose warning says it was deprecated, that warning's words and release, the mirror its replacement; then the
    modules and functions whose own warning says where they moved (`moved_words`). A move a later release says again
    keeps the release that said it first and takes the later words (4.0.0's nbconvert shim said "import from
    ipython_nbconvert", 5.10's "from nbconvert", its mirror)."""
    found, said_before = [], {}
    for folder, release in SHIMS.get(library, []):
        root = notes / library / folder
        for path in sorted(root.rglob("*.py")) if root.is_dir() else []:
            if "tests" in path.parts:
                continue
            tree = ast.parse(path.read_text(errors="replace"))
            for item in _shims(tree, path, root, release, library, entry) + moved_words(tree, path, root, release,
                                                                                        library, entry):
                key = (item["names"][0], item["replacement"])
                if key in said_before:  # said again: the first release that said it, in the last one's words
                    said_before[key].update(words=item["words"], source=item["source"])
                else:
                    said_before[key] = item
                    found.append(item)
    return found


def _shims(tree: ast.Module, path: pathlib.Path, root: pathlib.Path, release: str, library: str, entry) -> list[dict]:
    said = deprecation_of(ast.FunctionDef(name="", args=ast.arguments([], [], None, [], [], None, []),
                                          body=tree.body, decorator_list=[]))
    if said is None:
        return []
    found = []
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "ShimModule"):
        given = {k.arg: _literal(k.value) for k in call.keywords}
        if not given.get("src") or not given.get("mirror"):
            continue  # a name made in a loop (`'ipykernel.%s' % pkg`): not said as written
        since, words = said
        item = entry(library, tuple(int(p) for p in (since or release).split(".")),
                     f"{library}=={release}:{path.relative_to(root.parent)}", "deprecated", words)
        item.update(names=[given["src"]], kind="module", replacement=given["mirror"], replacement_is="code",
                    replacement_named=True, module=_module_of(path, root))
        found.append(item)
    return found


def _warned_words(body: list[ast.stmt]) -> list[str]:
    """The words of each `warn("...")` (or `warnings.warn`) of these statements, of any category."""
    calls = [n for s in body if isinstance(s, ast.Expr) for n in [s.value] if isinstance(n, ast.Call)]
    return [" ".join(_message(c.args[0]).split()) for c in calls if c.args and (
        getattr(c.func, "id", "") == "warn" or getattr(c.func, "attr", "") == "warn")]


def moved_words(tree: ast.Module, path: pathlib.Path, root: pathlib.Path, release: str, library: str,
                entry) -> list[dict]:
    """The modules and functions of an old release whose own warning says where they moved (MOVED_WORDS): a
    module's, at its top ("IPython.utils.traitlets has moved to a top-level traitlets package.": the module,
    whose new home is that package), a function's, in its body ("get_ipython_package_dir has moved to the
    IPython.paths module": `IPython.utils.path.get_ipython_package_dir` -> `IPython.paths.get_ipython_package_dir`;
    "IPython.utils.io.atomic_writing has moved to notebook.services.contents.fileio": the function of that module)."""
    module = _module_of(path, root)
    found = []
    places = [(module, "module", tree.body)] + [(f"{module}.{name}", "function", node.body)
                                                 for name, node in definitions(tree) if "." not in name
                                                 and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for old, kind, body in places:
        for words in _warned_words(body):
            m = MOVED_WORDS.match(words)
            if m is None or not (old == m.group(1) or old.endswith("." + m.group(1))):
                continue
            new = m.group(3) if kind == "module" else f"{m.group(3)}.{old.rpartition('.')[2]}"
            since = SINCE.search(words)
            item = entry(library, tuple(int(p) for p in (since.group(1) if since else release).split(".")),
                         f"{library}=={release}:{path.relative_to(root.parent)}", "deprecated", words)
            item.update(names=[old], kind=kind, replacement=new, replacement_is="code", replacement_named=True,
                        module=module)
            found.append(item)
    return found


def _module_of(path: pathlib.Path, root: pathlib.Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def code_deprecations(notes: pathlib.Path, library: str, entry) -> list[dict]:
    """The deprecations a library's code says (its functions', classes' and methods' own, each named by its
    module: `IPython.core.display.set_matplotlib_formats`), then the removals a later release states as a
    rule, each a name that release's code no longer defines. `entry` makes an entry of the words."""
    spec = CODE.get(library)
    root = notes / library / spec["deprecated"][0] if spec else None
    if root is None or not root.is_dir():
        return []
    found = []
    for path in sorted(root.rglob("*.py")):
        if "tests" in path.parts:
            continue
        tree = ast.parse(path.read_text(errors="replace"))
        module = _module_of(path, root)
        for qualname, node in definitions(tree):
            said = deprecation_of(node)
            if said is None or not said[1] or qualname.endswith("__getattr__"):  # a module's: names unknown
                continue
            since, words = said
            qualname = qualname.removesuffix(".__init__")  # a class's constructor: the class
            version = tuple(int(p) for p in (since or spec["deprecated"][1]).split(".")[:3])
            item = entry(library, version, f"{library}=={spec['deprecated'][1]}:{path.relative_to(root.parent)}",
                         "deprecated", words)
            use = {p.strip().rstrip("()") for p in item["replacement"].split(" or ")}
            item["names"] = [f"{module}.{qualname}", *(n for n in item["names"] if n != qualname and n not in use
                                                      and not f"{module}.{qualname}".endswith(n))]
            item["kind"] = ("class" if isinstance(node, ast.ClassDef) or node.name == "__init__" else
                            "method" if "." in qualname else "function")
            item["module"] = module
            found.append(item)
    return found + _gone(notes, library, spec, found, entry)


def _gone(notes: pathlib.Path, library: str, spec: dict, deprecations: list[dict], entry) -> list[dict]:
    """The removals a release's notes state as a rule, one for each deprecated name its code no longer has."""
    code, version, before, notes_file, words = spec["gone"]
    root, text = notes / library / code, notes / library / notes_file
    if not root.is_dir() or not text.exists() or words not in " ".join(text.read_text().split()):
        return []
    paragraph = next(p for p in re.split(r"\n\s*\n", text.read_text()) if words in " ".join(p.split()))
    found = []
    for item in deprecations:
        module = item["module"]
        qualname = item["names"][0][len(module) + 1:]
        path = root.parent / pathlib.Path(*module.split("."))
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        if tuple(int(p) for p in item["version"].split(".")) >= before:
            continue
        if path.exists() and qualname.split(".")[0] in defined(ast.parse(path.read_text(errors="replace"))):
            continue
        gone = entry(library, tuple(int(p) for p in version.split(".")), f"{library}:{notes_file}", "removed",
                     " ".join(paragraph.split()))
        gone.update(names=[item["names"][0]], kind=item["kind"], module=module, replacement="none",
                    replacement_is="none", replacement_named=True, evidence=f"not defined in {library} {version}'s "
                                                     f"{path.relative_to(root.parent)}")
        found.append(gone)
    return found


def decorated_deprecations(notes: pathlib.Path, library: str, entry) -> list[dict]:
    """The deprecations an old release's module-level functions and classes say in their `@deprecated("...")`
    decorator (DECORATED), each named by its module (`sklearn.metrics._plot.roc_curve.plot_roc_curve`)."""
    found = []
    for folder, release in DECORATED.get(library, []):
        root = notes / library / folder
        for path in sorted(root.rglob("*.py")) if root.is_dir() else []:
            if "tests" in path.parts or path.name.startswith("_testing"):
                continue
            module = _module_of(path, root)
            for node in ast.parse(path.read_text(errors="replace")).body:
                said = next((" ".join(_message(d.args[0]).split()) for d in getattr(node, "decorator_list", [])
                             if isinstance(d, ast.Call) and isinstance(d.func, ast.Name) and d.func.id == "deprecated"
                             and d.args), "")
                if not said:
                    continue
                since = SINCE.search(said)
                version = tuple(int(p) for p in (since.group(1) if since else release).split(".")[:3])
                # a class's method written bare ("ConfusionMatrixDisplay.from_estimator") is code: read as quoted
                item = entry(library, version, f"{library}=={release}:{path.relative_to(root.parent)}", "deprecated",
                             BARE_METHOD.sub(r"``\1``", said))
                if item["replacement_is"] != "code":  # what names no code to use instead, the notes say
                    continue
                item["words"] = said
                use = {p.strip().rstrip("()") for p in item["replacement"].split(" or ")}
                item["names"] = [f"{module}.{node.name}", *(n for n in item["names"] if n != node.name
                                                            and n not in use and not n.endswith("." + node.name))]
                item["kind"] = "class" if isinstance(node, ast.ClassDef) else "function"
                item["module"] = module
                found.append(item)
    return found

