"""Model configs and their JSON, as TF 2.15's Keras writes them in graph mode (its legacy
format): `get_config`/`from_config` of functional and Sequential models,
`to_json`, `tf.keras.models.model_from_json`/`model_from_config`, `clone_model`,
`tf.keras.layers.serialize`/`deserialize`, and the configs of Lambda layers.

A functional config lists the model's layers, each with its inbound nodes: for every
call of the layer inside the model, the structure of its inputs, each input as
[layer name, node index, tensor index, call keyword arguments]. Node indices count only
the calls inside the model. TF's Keras gives a functional model (and a Sequential
model with an Input) a node of its own at construction, from its inputs to its outputs,
which tensorweave does not make: configs count the calls of such a nested model from 1,
as TF's, and reading a config maps each index to the node the new call made, so configs
move between both.

Lambda layers: TF's Keras writes a Python function as marshalled bytecode; tensorweave
never writes nor runs code from a config. A named function that can be imported (or is
registered as a custom object) is written by name, which TF reads too; a `lambda`, a
nested function or a callable object raises NotImplementedError naming the limitation.
"""
from __future__ import annotations

import copy
import inspect
import json
import sys
from typing import Dict, Optional

import tensorweave as tf
from tensorweave.framework.api_export import exported, tf_export
from tensorweave.keras import serialization
from tensorweave.keras.engine.input_layer import Input, InputLayer
from tensorweave.keras.engine.node import get_history

KERAS_VERSION = "2.15.0"
_CONSTANT_VALUE = "_CONSTANT_VALUE"


# --- layers ------------------------------------------------------------------------------
def class_name(layer) -> str:
    """The class name a config names `layer` by ('Functional' for `Model(inputs,
    outputs)`, as TF's Keras whose functional models are of class Functional)."""
    from tensorweave.keras.engine.training import Model
    if type(layer) is Model and getattr(layer, "_is_graph_network", False):
        return "Functional"
    return serialization.get_registered_name(type(layer))


@tf_export("keras.layers.serialize")
def serialize(layer, use_legacy_format: bool = False) -> dict:
    """{'class_name': ..., 'config': layer.get_config()} of a layer or model."""
    return {"class_name": class_name(layer), "config": layer.get_config()}


def _layer_classes() -> Dict:
    from tensorweave.keras.engine.sequential import Sequential
    from tensorweave.keras.engine.training import Model
    classes = {k: v for k, v in exported("keras.layers").items() if inspect.isclass(v)}
    classes.update(Functional=Model, Model=Model, Sequential=Sequential)
    return classes


@tf_export("keras.layers.deserialize")
def deserialize(config: dict, custom_objects: Optional[Dict] = None,
                use_legacy_format: bool = False):
    """The layer (or model) a {'class_name', 'config'} dict describes; classes are
    looked up in `custom_objects`, the custom objects in effect, then tf.keras.layers.

    Raises:
      ValueError: an unknown class name, or not such a dict.
    """
    if not isinstance(config, dict) or "class_name" not in config or "config" not in config:
        raise ValueError("Improper config format for a layer: %s. Expecting a python dict "
                         "containing `class_name` and `config` keys" % (config,))
    objects = _layer_classes()
    objects.update(serialization.custom_objects_in_effect(custom_objects))
    cls = objects.get(config["class_name"])
    if cls is None:
        raise ValueError("Unknown layer: '%s'. %s" % (config["class_name"],
                                                      serialization._CUSTOM_OBJECT_HINT))
    layer_config = copy.deepcopy(config["config"])
    with serialization.CustomObjectScope(custom_objects):
        if "custom_objects" in inspect.signature(cls.from_config).parameters:
            return cls.from_config(layer_config, custom_objects=custom_objects)
        return cls.from_config(layer_config)


# --- functional configs ------------------------------------------------------------------
def _skips_first_node(layer) -> int:
    """1 for a layer whose calls a config counts from 1 (see the module docstring)."""
    if not getattr(layer, "_is_graph_network", False):
        return 0
    return int(isinstance(layer._network_layers[0], InputLayer))


def _network_nodes(model) -> set:
    return {id(node) for nodes in model._nodes_by_depth.values() for node in nodes}


def _node_conversion(model) -> Dict:
    """(id(layer), node index) -> the node's index in the config, for the calls inside
    `model`."""
    network_nodes = _network_nodes(model)
    conversion = {}
    for layer in model.layers:
        kept = _skips_first_node(layer)
        for index, node in enumerate(layer._inbound_nodes):
            if id(node) in network_nodes:
                conversion[(id(layer), index)] = kept
                kept += 1
    return conversion


def _coordinates(tensor, conversion) -> list:
    h = get_history(tensor)
    return [h.layer.name, conversion.get((id(h.layer), h.node_index), 0), h.tensor_index]


def _serialize_node(node, conversion) -> list:
    """The config of one call: the structure of its inputs, each as [layer, node,
    tensor, keyword arguments] (a constant as ['_CONSTANT_VALUE', -1, value, ...]).

    Raises:
      TypeError: arguments that JSON cannot hold.
    """
    names = node.layer._get_call_spec()[0]
    inputs, args = node.call_args[0], node.call_args[1:]
    kwargs = dict(zip(names[1:], args))
    kwargs.update(node.call_kwargs)

    def serialize_value(value):
        if get_history(value) is not None:
            return _coordinates(value, conversion)
        if isinstance(value, tf.Tensor):
            from tensorweave.keras import backend
            return backend.get_value(value).tolist()
        if hasattr(value, "tolist"):
            return value.tolist()
        return value

    kwargs = tf.nest.map_structure(serialize_value, kwargs)
    try:
        json.dumps(kwargs, default=serialization.get_json_type)
    except TypeError:
        raise TypeError("Layer %s was passed non-JSON-serializable arguments. Arguments had "
                        "types: %s. They cannot be serialized out when saving the model."
                        % (node.layer.name, tf.nest.map_structure(type, kwargs))) from None

    def serialize_input(value):
        if get_history(value) is not None:
            return _coordinates(value, conversion) + [kwargs]
        return [_CONSTANT_VALUE, -1, serialize_value(value), kwargs]

    data = _map_leaves(serialize_input, inputs, lambda x: not isinstance(x, (list, tuple,
                                                                           dict)))
    return data if tf.nest.is_nested(inputs) else [data]


def _map_leaves(fn, structure, is_leaf):
    """`fn` applied to the leaves of nested lists, tuples and dicts (as lists/dicts)."""
    if is_leaf(structure):
        return fn(structure)
    if isinstance(structure, dict):
        return {k: _map_leaves(fn, v, is_leaf) for k, v in structure.items()}
    return [_map_leaves(fn, v, is_leaf) for v in structure]


def _is_node_data(x) -> bool:
    """Whether `x` is one input of a node config: [name, node, tensor(, kwargs)]."""
    return isinstance(x, (list, tuple)) and len(x) in (3, 4) and isinstance(x[0], str)


def network_config(model, serialize_layer_fn=serialize) -> dict:
    """The functional config of `model`: {'name', 'trainable', 'layers',
    'input_layers', 'output_layers'} (TF's `get_network_config`)."""
    config = {"name": model.name, "trainable": model.trainable}
    conversion = _node_conversion(model)
    network_nodes = _network_nodes(model)
    layer_configs = []
    for layer in model.layers:
        inbound = [_serialize_node(node, conversion) for node in layer._inbound_nodes
                   if id(node) in network_nodes and not node.is_input]
        layer_config = serialize_layer_fn(layer)
        layer_config["name"] = layer.name
        layer_config["inbound_nodes"] = inbound
        layer_configs.append(layer_config)
    config["layers"] = layer_configs

    def coordinates_like(nested):
        packed = _map_leaves(lambda x: _coordinates(x, conversion), nested,
                             lambda x: isinstance(x, tf.Tensor))
        return packed if isinstance(nested, (list, tuple, dict)) else [packed]

    config["input_layers"] = coordinates_like(model._nested_inputs)
    config["output_layers"] = coordinates_like(model._nested_outputs)
    return config


def reconstruct_from_config(config: dict, custom_objects: Optional[Dict] = None,
                            created_layers: Optional[Dict] = None):
    """(inputs, outputs, layers by name) of the graph a functional config describes:
    its layers are made (or taken from `created_layers`) and called on each other's
    outputs in an order where every call's inputs exist (TF's
    `reconstruct_from_config`).

    Raises:
      ValueError: a node config of the wrong form.
    """
    created = created_layers if created_layers is not None else {}

    class NotYetComputed(Exception):
        """An input of a call comes from a call not made yet."""
    node_index_map: Dict = {}
    node_count: Dict = {}
    pending: Dict = {}

    def node_index(layer, config_index):
        if isinstance(layer, InputLayer):
            return 0
        return node_index_map.get((layer.name, config_index))

    def tensor_at(data):
        layer = created[data[0]]
        index = node_index(layer, data[1])
        if index is None:
            raise NotYetComputed(data[0])
        return tf.nest.flatten(layer._inbound_nodes[index].outputs)[data[2]]

    def call_kwargs(value):
        """Keyword arguments with the Keras tensors among them ([layer, node, tensor])
        made tensors again."""
        if _is_node_data(value) and len(value) == 3 and value[0] in created:
            return tensor_at(value)
        if isinstance(value, dict):
            return {k: call_kwargs(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(call_kwargs(v) for v in value)
        return value

    def process_node(layer, node_data) -> bool:
        kwargs = {}

        def input_of(data):
            nonlocal kwargs
            data = list(data)
            if len(data) == 4:
                kwargs = call_kwargs(data[3])
            elif len(data) != 3:
                raise ValueError("Improperly formatted model config.")
            if data[0] == _CONSTANT_VALUE:
                return data[2]
            return tensor_at(data)

        try:
            inputs = _map_leaves(input_of, node_data, _is_node_data)
        except NotYetComputed:
            return False
        flat = tf.nest.flatten(inputs)
        if not isinstance(inputs, dict) and len(flat) == 1:
            inputs = flat[0]
        outputs = layer(inputs, **kwargs)
        new_index = get_history(tf.nest.flatten(outputs)[0]).node_index
        node_index_map[(layer.name, node_count[layer.name])] = new_index
        node_count[layer.name] += 1
        return True

    for layer_data in config["layers"]:
        name = layer_data["name"]
        if name not in created:
            created[name] = deserialize(layer_data, custom_objects=custom_objects)
        node_count[name] = _skips_first_node(created[name])
        pending[name] = list(layer_data["inbound_nodes"])
    while any(pending.values()):
        progressed = False
        for layer_data in config["layers"]:
            name = layer_data["name"]
            while pending[name] and process_node(created[name], pending[name][0]):
                pending[name].pop(0)
                progressed = True
        if not progressed:
            raise ValueError("The model config cannot be rebuilt: the inputs of the calls "
                             "of %s are never computed"
                             % [name for name, nodes in pending.items() if nodes])

    def tensors_like(coordinates):
        return _map_leaves(tensor_at, coordinates, _is_node_data)

    return (tensors_like(config["input_layers"]), tensors_like(config["output_layers"]),
            created)


def functional_from_config(cls, config: dict, custom_objects: Optional[Dict] = None):
    """`cls.from_config(config)` of a Model class: a functional config rebuilds the graph
    (new weights) when `cls` takes (inputs, outputs); any other config is passed to
    `cls(**config)` (a subclassed model's own config).

    Raises:
      TypeError: a config `cls` does not accept.
    """
    from tensorweave.keras.engine.training import Model
    is_functional = all(k in config for k in ("name", "layers", "input_layers",
                                              "output_layers"))
    with serialization.CustomObjectScope(custom_objects):
        if is_functional and cls.__init__ is Model.__init__:
            inputs, outputs, _ = reconstruct_from_config(config, custom_objects)
            return cls(inputs=inputs, outputs=outputs, name=config.get("name"))
        try:
            return cls(**config)
        except TypeError as e:
            raise TypeError("Unable to revive model from config. When overriding the "
                            "`get_config()` method, make sure that the returned config "
                            "contains all items used as arguments in the constructor to %s, "
                            "which is the default behavior. You can override this default "
                            "behavior by defining a `from_config(cls, config)` class method "
                            "to specify how to create an instance of %s from its config. "
                            "Received config=%s Error encountered during deserialization: %s"
                            % (cls, cls.__name__, config, e)) from None


def model_config(model) -> dict:
    """`Model.get_config()`: the functional config, or for a subclassed model the base
    layer config ({} when that cannot be made)."""
    if getattr(model, "_is_graph_network", False):
        return copy.deepcopy(network_config(model))
    from tensorweave.keras.engine import base_layer, training
    arguments = model.__dict__.get("_auto_config")
    if type(model).get_config is not training.Model.get_config or arguments is None:
        return {}
    base = base_layer.Layer.get_config(model)
    config = dict(base)
    config.update(arguments)
    # Keras keeps the base keys only when `__init__` takes `**kwargs` (named so) or
    # names them; an argument of the same name overrides and is dropped with them.
    spec = inspect.getfullargspec(type(model).__init__)
    if spec.varkw != "kwargs":
        for key in set(base) - set(spec.args[1:]):
            config.pop(key, None)
    return config


# --- Sequential configs --------------------------------------------------------------------
def sequential_config(model) -> dict:
    """{'name', 'layers' (its InputLayer first when it has one), 'build_input_shape'
    (when built on a shape without an Input)}."""
    layers = model._network_layers if model._graph_initialized else model._layer_list
    config = {"name": model.name, "layers": copy.deepcopy([serialize(l) for l in layers])}
    build_shape = getattr(model, "_build_input_shape", None)
    if not getattr(model, "_is_graph_network", False) and build_shape is not None:
        config["build_input_shape"] = build_shape
    return config


def sequential_from_config(cls, config, custom_objects: Optional[Dict] = None):
    """A Sequential model rebuilt from its config (or a list of layer configs)."""
    if isinstance(config, dict) and "name" in config:
        name, layer_configs = config["name"], config["layers"]
        build_shape = config.get("build_input_shape")
    else:
        name, layer_configs, build_shape = None, config, None
    model = cls(name=name)
    for layer_config in layer_configs:
        model.add(deserialize(layer_config, custom_objects=custom_objects))
    if not model.inputs and isinstance(build_shape, (tuple, list)):
        model.build(build_shape)
    return model


# --- JSON and tf.keras.models --------------------------------------------------------------
def model_to_json(model, **kwargs) -> str:
    """`Model.to_json()`: {'class_name', 'config', 'keras_version', 'backend'} as JSON."""
    from tensorweave.keras import backend
    payload = {"class_name": class_name(model), "config": model.get_config(),
               "keras_version": KERAS_VERSION, "backend": backend.backend()}
    return json.dumps(payload, default=serialization.get_json_type, **kwargs)


@tf_export("keras.models.model_from_config")
def model_from_config(config: dict, custom_objects: Optional[Dict] = None):
    """The model (or layer) a {'class_name', 'config'} dict describes (new weights).

    Raises:
      TypeError: a list (a Sequential config of the old format).
      ValueError: an unknown class name.
    """
    if isinstance(config, list):
        raise TypeError("`model_from_config` expects a dictionary, not a list. Received: "
                        "config=%s. Did you meant to use `Sequential.from_config(config)`?"
                        % (config,))
    return deserialize(config, custom_objects=custom_objects)


@tf_export("keras.models.model_from_json")
def model_from_json(json_string: str, custom_objects: Optional[Dict] = None):
    """The model a `to_json()` string describes (new weights)."""
    return deserialize(json.loads(json_string), custom_objects=custom_objects)


@tf_export("keras.models.model_from_yaml")
def model_from_yaml(yaml_string, custom_objects=None):
    """Removed from TF's Keras (arbitrary code execution): raises RuntimeError."""
    raise RuntimeError("Method `model_from_yaml()` has been removed due to security risk of "
                       "arbitrary code execution. Please use `Model.to_json()` and "
                       "`model_from_json()` instead.")


@tf_export("keras.models.clone_model")
def clone_model(model, input_tensors=None, clone_function=None):
    """A new model of the same architecture as the functional or Sequential `model`,
    with new layers (new, freshly initialized weights) unless `clone_function` (layer ->
    layer, default `cls.from_config(layer.get_config())`) keeps some.

    Args:
      model: a functional or Sequential model.
      input_tensors: tensors to build the clone on (placeholders like the model's by
        default).
      clone_function: how each layer other than the inputs is cloned.

    Raises:
      ValueError: a subclassed model, or input tensors that do not fit.
    """
    from tensorweave.keras.engine.sequential import Sequential
    clone_function = clone_function or _clone_layer
    if isinstance(model, Sequential):
        return _clone_sequential(model, input_tensors, clone_function)
    if not getattr(model, "_is_graph_network", False):
        raise ValueError("Expected `model` argument to be a functional `Model` instance, but "
                         "got a subclassed model instead: %s" % (model,))
    created = {}
    inputs = None if input_tensors is None else tf.nest.flatten(input_tensors)
    if inputs is not None and len(inputs) != len(model._input_layers):
        raise ValueError("Input tensors should have the same number of elements as the model "
                         "inputs: %d, got %d" % (len(model._input_layers), len(inputs)))
    for i, layer in enumerate(model._input_layers):
        if inputs is None:
            created[layer.name] = InputLayer.from_config(layer.get_config())
        else:
            x = inputs[i]
            history = get_history(x)
            if history is None or not isinstance(history.layer, InputLayer):
                x = Input(tensor=x, name="input_wrapper_for_" + layer.name)
                history = get_history(x)
            created[layer.name] = history.layer

    def copy_layer(layer):
        if layer.name not in created:
            created[layer.name] = clone_function(layer)
        return {}

    config = network_config(model, serialize_layer_fn=copy_layer)
    new_inputs, new_outputs, _ = reconstruct_from_config(config, created_layers=created)
    from tensorweave.keras.engine.training import Model
    cls = type(model) if type(model).__init__ is Model.__init__ else Model
    return cls(new_inputs, new_outputs, name=model.name)


def _clone_layer(layer):
    return type(layer).from_config(layer.get_config())


def _clone_sequential(model, input_tensors, clone_function):
    layers = model._network_layers if model._graph_initialized else model._layer_list
    cloned = []
    for layer in layers:
        if isinstance(layer, InputLayer):
            if input_tensors is None:
                cloned.append(InputLayer.from_config(layer.get_config()))
            continue
        cloned.append(clone_function(layer))
    if input_tensors is None:
        return type(model)(layers=cloned, name=model.name)
    flat = tf.nest.flatten(input_tensors)
    if len(flat) != 1:
        raise ValueError("To clone a `Sequential` model, we expect at most one tensor as part "
                         "of `input_tensors`. Received: input_tensors=%s" % (input_tensors,))
    history = get_history(flat[0])
    if history is not None:
        if not isinstance(history.layer, InputLayer):
            raise ValueError("Cannot clone a `Sequential` model on top of a tensor that comes "
                             "from a Keras layer other than an `InputLayer`. Use the "
                             "Functional API instead. Received: input_tensors=%s"
                             % (input_tensors,))
        input_layer = history.layer
    else:
        x = Input(tensor=flat[0], name="input_wrapper_for_" + flat[0].op.name)
        input_layer = get_history(x).layer
    return type(model)(layers=[input_layer] + cloned, name=model.name)


# --- Lambda layers -------------------------------------------------------------------------
def _function_config(fn, what: str, allow_raw: bool):
    """(config value, type, module) of a function a Lambda holds."""
    if fn is None or (allow_raw and not callable(fn)):
        return fn, "raw", None
    name = getattr(fn, "__name__", None)
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", "")
    registered = serialization.get_registered_name(fn)
    if registered in serialization.get_custom_objects():
        return registered, "function", module
    importable = (inspect.isfunction(fn) or inspect.isbuiltin(fn)) and name and \
        name != "<lambda>" and "<locals>" not in qualname and module in sys.modules and \
        getattr(sys.modules[module], name, None) is fn
    if not importable:
        raise NotImplementedError(
            "Cannot serialize the %s %r of a Lambda layer: TF's Keras writes such a function "
            "as Python bytecode, which tensorweave does not write or load. Use a function "
            "defined at the top level of a module (it is written by name), register it "
            "with tf.keras.utils.register_keras_serializable(), or write a Layer subclass "
            "with get_config()." % (what, fn))
    return name, "function", module


def lambda_config(layer, base_config: dict) -> dict:
    """The config of a Lambda layer (TF's keys; functions by name, see the module
    docstring).

    Raises:
      NotImplementedError: a function that cannot be written by name.
    """
    config = dict(base_config)
    function, function_type, module = _function_config(layer.function, "function", False)
    config.update(function=function, function_type=function_type, module=module)
    shape, shape_type, shape_module = _function_config(layer._output_shape, "output_shape",
                                                       True)
    config.update(output_shape=shape, output_shape_type=shape_type,
                  output_shape_module=shape_module)
    if layer.mask is not None:
        mask, mask_type, mask_module = _function_config(layer.mask, "mask", True)
        config.update(mask=mask, mask_type=mask_type, mask_module=mask_module)
    config["arguments"] = layer.arguments
    return config


def lambda_from_config(cls, config: dict, custom_objects: Optional[Dict] = None):
    """A Lambda layer from its config: functions by name are looked up in the custom
    objects then in their module.

    Raises:
      NotImplementedError: a function serialized as bytecode.
      ValueError: a name not found.
    """
    config = dict(config)
    config["function"] = _parse_function(config, "function", "function_type", "module",
                                         custom_objects)
    if "output_shape" in config:
        config["output_shape"] = _parse_function(config, "output_shape",
                                                 "output_shape_type",
                                                 "output_shape_module", custom_objects)
    if "mask" in config:
        config["mask"] = _parse_function(config, "mask", "mask_type", "mask_module",
                                         custom_objects)
    return cls(**config)


def _parse_function(config: dict, key: str, type_key: str, module_key: str, custom_objects):
    value = config[key]
    kind = config.pop(type_key, "raw")
    module = config.pop(module_key, None)
    if kind == "lambda":
        raise NotImplementedError(
            "This Lambda layer's %s was serialized as Python bytecode (a Python `lambda`), "
            "which tensorweave does not load: rebuild the layer in code, or save the "
            "function by name" % key)
    if kind == "function":
        objects = dict(vars(sys.modules[module])) if module in sys.modules else {}
        found = serialization.get_registered_object(value, custom_objects, objects)
        if found is None:
            raise ValueError("Unknown %s of a Lambda layer: '%s' (module %s). %s"
                             % (key, value, module, serialization._CUSTOM_OBJECT_HINT))
        return found
    if kind == "raw" and isinstance(value, list):
        return tuple(value)
    return value
