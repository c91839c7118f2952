"""The public TF1 namespace as a table: `tf_export` rows written where things are defined.

A builder declares its public names next to its definition:

    @tf_export("add", "math.add")
    def add(x, y, name=None): ...

`install(package)` then puts every exported object into `tensorweave` and its namespace
modules (`tf.math`, `tf.nn`, `tf.random`, ...), creating a module for a namespace that
has no package of its own. So no op family edits `tensorweave/__init__.py`, and a name
exported twice for different objects fails loudly, naming both places.
"""
from __future__ import annotations

import sys
import types
from typing import Any, Callable, Dict, List, Tuple

# namespace ("" is the top level) -> public name -> (object, "file:line" of the export)
_EXPORTS: Dict[str, Dict[str, Tuple[Any, str]]] = {}
# (module name, public name) pairs already put in place: installing again (after a lazy
# namespace loads) adds only new names, so a user's `tf.X = ...` is not undone
_INSTALLED: set = set()


def _where(depth: int) -> str:
    f = sys._getframe(depth)
    return "%s:%d" % (f.f_code.co_filename, f.f_lineno)


def _add(obj: Any, names, where: str) -> None:
    for full in names:
        ns, _, leaf = full.rpartition(".")
        table = _EXPORTS.setdefault(ns, {})
        old = table.get(leaf)
        if old is not None and old[0] is not obj:
            raise ValueError("tf.%s exported twice: first at %s, again at %s"
                             % (full, old[1], where))
        table[leaf] = (obj, where)


def tf_export(*names: str) -> Callable:
    """Decorator exporting a function or class under each of `names` ("add",
    "math.add", "nn.relu")."""
    where = _where(2)

    def deco(obj):
        _add(obj, names, where)
        return obj
    return deco


def export(obj: Any, *names: str) -> Any:
    """Exports a value that is not defined by a `def` or `class` (constants, aliases)."""
    _add(obj, names, _where(2))
    return obj


def exported(namespace: str = "") -> Dict[str, Any]:
    """name -> object for one namespace."""
    return {k: v[0] for k, v in _EXPORTS.get(namespace, {}).items()}


def install(package: types.ModuleType) -> None:
    """Puts every exported name into `package` and its namespace modules.

    A namespace that is a real subpackage (tensorweave.nn, tensorweave.train) is filled
    in place; any other becomes a module registered in sys.modules, so both
    `tf.math.add` and `from tensorweave.math import add` work.
    """
    for ns in sorted(_EXPORTS, key=lambda s: s.count(".")):
        _fill(package, ns.split(".") if ns else [], ns)


def install_namespace(module: types.ModuleType, namespace: str) -> None:
    """Puts the exports of `namespace` (and of the namespaces below it) into `module`,
    the package that is that namespace: a lazily imported library (tensorweave.data)
    then offers its names to `from ... import` before `tf.<namespace>` is touched."""
    for ns in sorted(_EXPORTS, key=lambda s: s.count(".")):
        if ns == namespace or ns.startswith(namespace + "."):
            _fill(module, ns.split(".")[namespace.count(".") + 1:], ns)


def _fill(root: types.ModuleType, parts: List[str], ns: str) -> None:
    """Sets namespace `ns`'s exports on the module `parts` below `root` (module
    attributes are read from __dict__, never through a module's __getattr__)."""
    target = root
    for part in parts:
        sub = target.__dict__.get(part)
        if not isinstance(sub, types.ModuleType):
            name = "%s.%s" % (target.__name__, part)
            sub = sys.modules.get(name)
            if sub is None:
                sub = types.ModuleType(name, "tf.%s (TF1 namespace)" % name.split(".", 1)[1])
                sys.modules[name] = sub
            setattr(target, part, sub)
        target = sub
    for leaf, (obj, _) in _EXPORTS[ns].items():
        if (target.__name__, leaf) not in _INSTALLED:
            setattr(target, leaf, obj)
            _INSTALLED.add((target.__name__, leaf))


def replace_exports(replacements: Dict[int, Any]) -> None:
    """Exports each replacement under every public name of the object it replaces
    (`replacements`: id of the exported object -> its replacement), in one pass over the
    export table, and sets it where those names are already installed: how a composite
    type routes the public ops to its own versions (TF's dispatch: `tf.add` of a
    RaggedTensor).

    Raises:
      ValueError: an object to replace is not exported.
    """
    found = set()
    for table in _EXPORTS.values():
        for leaf, (obj, where) in table.items():
            replacement = replacements.get(id(obj))
            if replacement is not None:
                table[leaf] = (replacement, where)
                found.add(id(obj))
    if len(found) != len(replacements):
        raise ValueError("replace_exports: an object to replace is not exported (%d of "
                         "%d are)" % (len(found), len(replacements)))
    for module_name, leaf in _INSTALLED:
        module = sys.modules.get(module_name)
        if module is None:
            continue
        replacement = replacements.get(id(module.__dict__.get(leaf)))
        if replacement is not None:
            setattr(module, leaf, replacement)
