"""Turning Keras objects (initializers, regularizers, constraints, activations, losses)
into configs and back: `{'class_name': ..., 'config': {...}}` dicts and string names, as
TF's Keras legacy format writes them."""
from __future__ import annotations

import inspect
from typing import Dict, Optional

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
        return obj.__name__
    if hasattr(obj, "get_config"):
        return {"class_name": type(obj).__name__, "config": obj.get_config()}
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
    objects.update(custom_objects or {})
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
