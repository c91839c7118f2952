"""`tf.flags` (also `tf.app.flags`): TF1's command-line flags, which are absl-py's.

Every name of `absl.flags` is available here, imported on first use. `FLAGS` wraps
absl's global FlagValues as TF1 did: reading a flag before the command line was parsed
parses `sys.argv` first (an unknown flag raises UnrecognizedFlagError), and the DEFINE_*
functions accept this `FLAGS` wherever absl expects a FlagValues.
"""
from __future__ import annotations

import functools
import sys

from tensorweave.framework.api_export import export

# absl.flags names this module re-exports (tf.compat.v1.flags has all of them).
_ABSL_NAMES = (
    "ArgumentParser", "ArgumentSerializer", "BaseListParser", "BooleanFlag",
    "BooleanParser", "CantOpenFlagFileError", "CsvListSerializer", "DEFINE", "DEFINE_alias",
    "DEFINE_bool", "DEFINE_boolean", "DEFINE_enum", "DEFINE_enum_class", "DEFINE_flag",
    "DEFINE_float", "DEFINE_integer", "DEFINE_list", "DEFINE_multi", "DEFINE_multi_enum",
    "DEFINE_multi_enum_class", "DEFINE_multi_float", "DEFINE_multi_integer",
    "DEFINE_multi_string", "DEFINE_spaceseplist", "DEFINE_string", "DuplicateFlagError",
    "EnumClassFlag", "EnumClassListSerializer", "EnumClassParser", "EnumClassSerializer",
    "EnumFlag", "EnumParser", "Error", "Flag", "FlagHolder",
    "FlagNameConflictsWithMethodError", "FlagValues", "FloatParser",
    "IllegalFlagValueError", "IntegerParser", "ListParser", "ListSerializer",
    "MultiEnumClassFlag", "MultiFlag", "UnparsedFlagAccessError", "UnrecognizedFlagError",
    "ValidationError", "WhitespaceSeparatedListParser", "adopt_module_key_flags",
    "declare_key_flag", "disclaim_key_flags", "doc_to_help", "flag_dict_to_args",
    "get_help_width", "mark_bool_flags_as_mutual_exclusive", "mark_flag_as_required",
    "mark_flags_as_mutual_exclusive", "mark_flags_as_required", "multi_flags_validator",
    "override_value", "register_multi_flags_validator", "register_validator",
    "set_default", "text_wrap", "validator")


def _absl_flags():
    from absl import flags
    helpers = getattr(flags, "_helpers", None)
    ids = getattr(helpers, "disclaim_module_ids", None)
    if isinstance(ids, set):
        # Flags defined through this module belong to the caller's module (for --helpshort).
        ids.add(id(sys.modules[__name__]))
    return flags


class _FlagValuesWrapper:
    """`tf.flags.FLAGS`: absl's FLAGS, parsing sys.argv on the first read of a flag
    (as TF's wrapper: FlagValues' own attributes and methods, such as is_parsed() or
    _flags(), are read without parsing)."""

    def __init__(self):
        object.__setattr__(self, "_wrapped", None)

    def _flag_values(self):
        wrapped = object.__getattribute__(self, "_wrapped")
        if wrapped is None:
            wrapped = _absl_flags().FLAGS
            object.__setattr__(self, "_wrapped", wrapped)
        return wrapped

    def __getattr__(self, name):
        wrapped = self._flag_values()
        try:
            return wrapped.__getattribute__(name)  # FlagValues' own, not a flag
        except AttributeError:
            pass
        if not wrapped.is_parsed():
            wrapped(sys.argv)
        return getattr(wrapped, name)

    def __setattr__(self, name, value):
        setattr(self._flag_values(), name, value)

    def __delattr__(self, name):
        delattr(self._flag_values(), name)

    def __dir__(self):
        return dir(self._flag_values())

    def __getitem__(self, name):
        return self._flag_values()[name]

    def __setitem__(self, name, flag):
        self._flag_values()[name] = flag

    def __contains__(self, name):
        return name in self._flag_values()

    def __len__(self):
        return len(self._flag_values())

    def __iter__(self):
        return iter(self._flag_values())

    def __call__(self, *args, **kwargs):
        return self._flag_values()(*args, **kwargs)

    def __str__(self):
        return str(self._flag_values())

    def __repr__(self):
        return "<tf.flags.FLAGS wrapping %r>" % self._flag_values()


FLAGS = _FlagValuesWrapper()
export(FLAGS, "flags.FLAGS")
# tf.flags and tf.app.flags are this module.
export(sys.modules[__name__], "flags", "app.flags")


def unwrap(value):
    """absl's FlagValues for our FLAGS wrapper; anything else unchanged."""
    return value._flag_values() if isinstance(value, _FlagValuesWrapper) else value


def _accepting_wrapper(fn):
    """`fn` from absl, taking our FLAGS wherever it takes a FlagValues."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        args = [unwrap(a) for a in args]
        kwargs = {k: unwrap(v) for k, v in kwargs.items()}
        return fn(*args, **kwargs)
    return call


def __getattr__(name):
    if name not in _ABSL_NAMES:
        raise AttributeError("module 'tensorweave.flags' has no attribute %r" % name)
    value = getattr(_absl_flags(), name)
    if callable(value) and not isinstance(value, type):
        value = _accepting_wrapper(value)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_ABSL_NAMES))
