"""Turning Keras objects (initializers, regularizers, constraints, activations, losses)
into configs and back: `{'class_name': ..., 'config': {...}}` dicts and string names, as
TF's Keras legacy format writes them; the custom objects names are looked up in
(`tf.keras.utils.custom_object_scope`, `register_keras_serializable`); JSON encoding of
configs (`get_json_type`). The custom-object functions are exported into
tf.keras.utils by utils.py (exporting them from here would make that namespace before
utils.py is imported)."""
from __future__ import annotations

import inspect
import threading
from typing import Dict, Optional

import numpy as np


_GLOBAL_CUSTOM_OBJECTS: Dict = {}   # register_keras_serializable and get_custom_objects()
_GLOBAL_CUSTOM_NAMES: Dict = {}     # registered class or function -> its registered name
_SCOPES = threading.local()         # .stack: the dicts of the enclosing custom_object_scopes

_CUSTOM_OBJECT_HINT = ("Please ensure you are using a `keras.utils.custom_object_scope` and "
                       "that this object is included in the scope. See https://www.tensorflow"
                       ".org/guide/keras/save_and_serialize#registering_the_custom_object for "
                       "details.")


def serialize_object(obj):
    """A function or class as its name; an object with `get_config` as
    {'class_name': its class name, 'config': its config}; None as None."""
    if obj is None:
        return None
    if inspect.isfunction(obj) or inspect.isclass(obj):
        return get_registered_name(obj)
    if hasattr(obj, "get_config"):
        return {"class_name": get_registered_name(type(obj)), "config": obj.get_config()}
    raise ValueError("Cannot serialize %r: it has no `get_config` method" % (obj,))


def deserialize_object(config, module_objects: Dict, custom_objects: Optional[Dict],
                       printable_module_name: str):
    """The object a config names: a string is looked up in `custom_objects` then
    `module_objects` (a class found is instantiated with no arguments, a function
    returned); a {'class_name', 'config'} dict instantiates the class from its config.

    Raises:
      ValueError: an unknown name, or a config that is neither a string nor such a dict.
    """
    objects = dict(module_objects)
    objects.update(custom_objects_in_effect(custom_objects))
    if isinstance(config, str):
        found = _lookup(config, objects, printable_module_name)
        return found() if inspect.isclass(found) else found
    if isinstance(config, dict) and "class_name" in config:
        cls = _lookup(config["class_name"], objects, printable_module_name)
        arguments = dict(config.get("config") or {})
        if not inspect.isclass(cls):
            return cls
        if hasattr(cls, "from_config"):
            return cls.from_config(arguments)
        return cls(**arguments)
    raise ValueError("Could not interpret serialized %s: %s" % (printable_module_name, config))


def _lookup(name: str, objects: Dict, printable_module_name: str):
    found = objects.get(name)
    if found is None:
        raise ValueError("Unknown %s: '%s'. %s" % (printable_module_name, name,
                                                   _CUSTOM_OBJECT_HINT))
    return found


def get_object(identifier, deserialize, what: str):
    """What a Keras `get` gives: None for None, `deserialize(identifier)` for a name or
    config dict, a callable as it is.

    Raises:
      ValueError: an identifier of another type (or an unknown name).
    """
    if identifier is None:
        return None
    if isinstance(identifier, (dict, str)):
        return deserialize(identifier)
    if callable(identifier):
        return identifier
    raise ValueError("Could not interpret %s identifier: %s" % (what, identifier))


# --- custom objects --------------------------------------------------------------------------
def custom_objects_in_effect(custom_objects: Optional[Dict] = None) -> Dict:
    """The registered objects, those of the enclosing `custom_object_scope`s (innermost
    last), then `custom_objects`."""
    merged = dict(_GLOBAL_CUSTOM_OBJECTS)
    for scope in getattr(_SCOPES, "stack", []):
        merged.update(scope)
    merged.update(custom_objects or {})
    return merged


class CustomObjectScope:
    """A `with` scope in which deserialization also finds the given objects by name:
    `with custom_object_scope({'MyLayer': MyLayer}): model_from_json(...)`.

    Args:
      *args: dicts of name -> class or function.
    """

    def __init__(self, *args):
        self.custom_objects = {}
        for objects in args:
            self.custom_objects.update(objects or {})

    def __enter__(self):
        if not hasattr(_SCOPES, "stack"):
            _SCOPES.stack = []
        _SCOPES.stack.append(self.custom_objects)
        return self

    def __exit__(self, *exc_info):
        _SCOPES.stack.pop()


def get_custom_objects() -> Dict:
    """The global dict of custom objects (add to it to make names deserializable)."""
    return _GLOBAL_CUSTOM_OBJECTS


def register_keras_serializable(package: str = "Custom", name: Optional[str] = None):
    """A decorator registering a class or function as '<package>>name' (its name by
    default), the name its configs carry and deserialization finds.

    Raises:
      ValueError: a package name with '>', or a class without `get_config`.
    """
    def decorator(arg):
        registered = "%s>%s" % (package, name or arg.__name__)
        if inspect.isclass(arg) and not hasattr(arg, "get_config"):
            raise ValueError("Cannot register a class that does not have a get_config() "
                             "method.")
        _GLOBAL_CUSTOM_OBJECTS[registered] = arg
        _GLOBAL_CUSTOM_NAMES[arg] = registered
        return arg

    if ">" in package:
        raise ValueError("The package name must not contain a '>' character")
    return decorator


def get_registered_name(obj) -> str:
    """The name `obj` was registered under, else its `__name__`."""
    return _GLOBAL_CUSTOM_NAMES.get(obj, getattr(obj, "__name__", None))


def get_registered_object(name: str, custom_objects: Optional[Dict] = None,
                          module_objects: Optional[Dict] = None):
    """The object `name` stands for among the custom objects in effect, then
    `module_objects`; None when unknown."""
    found = custom_objects_in_effect(custom_objects).get(name)
    if found is None and module_objects:
        found = module_objects.get(name)
    return found


# --- JSON ----------------------------------------------------------------------------------
def get_json_type(obj):
    """What `json.dumps(config, default=get_json_type)` writes for values JSON does not
    know: configs of objects, lists of arrays and shapes, names of dtypes and functions.

    Raises:
      TypeError: any other value.
    """
    if hasattr(obj, "get_config"):
        return {"class_name": get_registered_name(type(obj)), "config": obj.get_config()}
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    if callable(obj) and hasattr(obj, "__name__"):
        return obj.__name__
    if type(obj).__name__ == "TensorShape":
        return obj.as_list() if obj.ndims is not None else None
    if type(obj).__name__ == "DType":
        return obj.name
    if type(obj).__name__ == "Dimension":
        return obj.value
    if isinstance(obj, bytes):
        return obj.decode("utf-8")
    raise TypeError("Not JSON Serializable: %s" % (obj,))
