"""`tf.test.StubOutForTesting` (TF1's googletest helper): replaces attributes of modules,
classes or instances for a test and puts the originals back on `CleanUp`.

Two ways, as TF's: `Set(parent, name, value)` stubs exactly `parent.name`; `SmartSet(obj,
name, value)` stubs where the attribute is defined for the lookup that finds it (an
instance's class unless the instance holds the attribute itself), so that inheritance
keeps working. A staticmethod stays a staticmethod when it is put back.
"""
from __future__ import annotations

import inspect
from typing import Any, List, Tuple


def _unwrap(obj: Any) -> Any:
    """The object a TF decorator wraps (TF's tf_decorator.unwrap); others as they are."""
    target = getattr(obj, "_tf_decorator", None)
    while target is not None:
        obj = target.decorated_target
        target = getattr(obj, "_tf_decorator", None)
    return obj


def _original(owner: Any, attr_name: str, value: Any) -> Any:
    """`value` as it must be set back on `owner`: getattr turns a staticmethod into a plain
    function, which would bind as a method if set back as it is."""
    stored = getattr(owner, "__dict__", {}).get(attr_name)
    if stored is not None and isinstance(stored, staticmethod):
        return staticmethod(value)
    return value


class StubOutForTesting:
    """Support class for stubbing methods out for unit testing.

    Sample usage:

        stubs = tf.test.StubOutForTesting()
        stubs.Set(os.path, 'exists', lambda x: 1)
        ...
        stubs.CleanUp()

    It is also a context manager whose exit calls `CleanUp`.
    """

    def __init__(self):
        self.cache: List[Tuple[Any, Any, str]] = []  # Set: (parent, old value, name)
        self.stubs: List[Tuple[Any, str, Any]] = []  # SmartSet: (owner, name, old value)

    def __del__(self):
        # as TF's: a last resort; call CleanUp (or use `with`) to restore at a known time
        self.CleanUp()

    def __enter__(self) -> "StubOutForTesting":
        return self

    def __exit__(self, unused_exc_type, unused_exc_value, unused_tb) -> None:
        self.CleanUp()

    def CleanUp(self) -> None:  # noqa: N802 - TF's method name
        """Undoes all SmartSet() and Set() calls, restoring the original definitions."""
        self.SmartUnsetAll()
        self.UnsetAll()

    def SmartSet(self, obj: Any, attr_name: str, new_attr: Any) -> None:  # noqa: N802
        """Replaces `obj.attr_name` with `new_attr` where the attribute is defined.

        A module, or an instance that holds the attribute itself, is stubbed directly;
        otherwise the stub goes on a class of the method resolution order (of `obj` if it
        is a class, else of its class), as TF does: the most derived one.

        Args:
          obj: the module, class or instance whose attribute to replace.
          attr_name: the attribute's name.
          new_attr: its new value.

        Raises:
          AttributeError: `obj` has no attribute `attr_name`.
        """
        obj = _unwrap(obj)
        if inspect.ismodule(obj) or (not inspect.isclass(obj) and
                                     attr_name in getattr(obj, "__dict__", {})):
            orig_obj = obj
            orig_attr = getattr(obj, attr_name)
        else:
            mro = list(inspect.getmro(obj if inspect.isclass(obj) else obj.__class__))
            mro.reverse()
            orig_obj, orig_attr, found = None, None, False
            for cls in mro:
                try:
                    orig_obj = cls
                    orig_attr = getattr(obj, attr_name)
                    found = True
                except AttributeError:
                    continue
            if not found:
                raise AttributeError("Attribute not found.")
        orig_attr = _original(obj, attr_name, orig_attr)
        self.stubs.append((orig_obj, attr_name, orig_attr))
        setattr(orig_obj, attr_name, new_attr)

    def SmartUnsetAll(self) -> None:  # noqa: N802
        """Reverses SmartSet() calls, restoring things to their original definitions
        (later calls do nothing until SmartSet() is called again)."""
        for owner, name, value in reversed(self.stubs):
            setattr(owner, name, value)
        self.stubs = []

    def Set(self, parent: Any, child_name: str, new_child: Any) -> None:  # noqa: N802
        """Replaces `parent.child_name` with `new_child`, saving the prior definition for
        `UnsetAll`. A staticmethod or classmethod of a class may be replaced.

        Args:
          parent: the module, class or instance holding the attribute.
          child_name: the attribute's name.
          new_child: its new value.

        Raises:
          AttributeError: `parent` has no attribute `child_name`.
        """
        old_child = _original(parent, child_name, getattr(parent, child_name))
        self.cache.append((parent, old_child, child_name))
        setattr(parent, child_name, new_child)

    def UnsetAll(self) -> None:  # noqa: N802
        """Reverses Set() calls, restoring things to their original definitions; undone
        in reverse order, so that repeated Set() calls of one attribute restore the
        first original."""
        for parent, old_child, child_name in reversed(self.cache):
            setattr(parent, child_name, old_child)
        self.cache = []
