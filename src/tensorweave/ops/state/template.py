"""`tf.make_template`: a function whose variables are shared between its calls.

TF1 semantics: the first call creates the variables (through `get_variable`) in the
template's variable scope; every later call re-enters that scope with reuse=True, so it
uses the same variables, and a later call that creates a new trainable variable (for
instance with `tf.Variable`) is an error. With `create_scope_now_` the scope is named
when the template is made rather than at its first call.
"""
from __future__ import annotations

import functools
import logging
from typing import Callable, Optional

from tensorweave.framework.api_export import tf_export
from tensorweave.framework.graph import GraphKeys, get_collection
from tensorweave.ops.state import variable_scope as _vs


class Template:
    """A function wrapped so that all its calls share variables (see `make_template`)."""

    def __init__(self, name: str, func: Callable, create_scope_now: bool = False,
                 unique_name: Optional[str] = None, custom_getter: Optional[Callable] = None):
        self._func = func
        self._stacktrace_name = name
        self._name = name
        self._unique_name = unique_name
        self._custom_getter = custom_getter
        self._variables_created = False
        self._variable_scope = None
        if create_scope_now:
            scope_name = unique_name or _vs._get_unique_variable_scope(name)
            with _vs._PureVariableScope(scope_name, custom_getter=custom_getter) as vs:
                self._variable_scope = vs

    def _call_func(self, args, kwargs):
        trainable_at_start = len(get_collection(GraphKeys.TRAINABLE_VARIABLES))
        global_at_start = len(get_collection(GraphKeys.GLOBAL_VARIABLES))
        result = self._func(*args, **kwargs)
        if not self._variables_created:
            self._variables_created = True
            return result
        trainable = get_collection(GraphKeys.TRAINABLE_VARIABLES)
        if len(trainable) != trainable_at_start:
            raise ValueError("Trainable variable created when calling a template after the "
                             "first time, perhaps you used tf.Variable when you meant "
                             "tf.get_variable: %s" % (trainable[trainable_at_start:],))
        if len(get_collection(GraphKeys.GLOBAL_VARIABLES)) != global_at_start:
            logging.getLogger("tensorflow").info(
                "New variables created when calling a template after the first time, "
                "perhaps you used tf.Variable when you meant tf.get_variable: %s",
                get_collection(GraphKeys.GLOBAL_VARIABLES)[global_at_start:])
        return result

    def __call__(self, *args, **kwargs):
        if self._variable_scope is not None:
            if self._variables_created:
                with _vs.variable_scope(self._variable_scope, reuse=True):
                    return self._call_func(args, kwargs)
            with _vs.variable_scope(self._variable_scope):
                return self._call_func(args, kwargs)
        with _vs.variable_scope(self._unique_name, self._name,
                                custom_getter=self._custom_getter) as vs:
            self._variable_scope = vs
            return self._call_func(args, kwargs)

    @property
    def name(self) -> str:
        """The name given to `make_template`."""
        return self._name

    @property
    def func(self) -> Callable:
        """The wrapped function (with the keyword arguments bound)."""
        return self._func

    @property
    def variable_scope(self):
        """The VariableScope (None before the first call unless created now)."""
        return self._variable_scope

    @property
    def variable_scope_name(self) -> Optional[str]:
        """The name of the variable scope ending in "/" (as TF1), or None before the
        scope exists."""
        if self._variable_scope is None:
            return None
        name = self._variable_scope.name
        return name if not name or name.endswith("/") else name + "/"

    def _scoped(self, key: str) -> list:
        if self._variable_scope is None:
            return []
        return get_collection(key, self.variable_scope_name)

    @property
    def variables(self) -> list:
        """The global variables created in the template's scope."""
        return self._scoped(GraphKeys.GLOBAL_VARIABLES)

    global_variables = variables

    @property
    def trainable_variables(self) -> list:
        """The trainable variables created in the template's scope."""
        return self._scoped(GraphKeys.TRAINABLE_VARIABLES)

    @property
    def non_trainable_variables(self) -> list:
        """The global variables of the scope that are not trainable."""
        trainable = set(map(id, self.trainable_variables))
        return [v for v in self.variables if id(v) not in trainable]

    @property
    def local_variables(self) -> list:
        """The local variables created in the template's scope."""
        return self._scoped(GraphKeys.LOCAL_VARIABLES)


@tf_export("make_template")
def make_template(name_, func_, create_scope_now_: bool = False,
                  unique_name_: Optional[str] = None, custom_getter_=None,
                  **kwargs) -> Template:
    """Wraps `func_` so that every call shares the variables of the first call.

    Args:
      name_: the name of the variable scope (made unique unless `unique_name_` is given).
      func_: the function to wrap; it creates variables with `tf.get_variable`.
      create_scope_now_: name the variable scope now rather than at the first call.
      unique_name_: use this exact scope name instead of a unique one made from `name_`.
      custom_getter_: a custom getter for the scope's variables.
      **kwargs: keyword arguments bound to `func_`.

    Returns:
      A Template: call it like `func_`.

    Raises:
      ValueError: (at a later call) `func_` created a new trainable variable.
    """
    if kwargs:
        func_ = functools.partial(func_, **kwargs)
    return Template(name_, func_, create_scope_now=create_scope_now_,
                    unique_name=unique_name_, custom_getter=custom_getter_)
