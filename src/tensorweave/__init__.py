"""tensorweave: the TensorFlow 1.x graph-mode programming model, in Python.

`import tensorweave as tf` runs TF1 (`tensorflow.compat.v1`) graph-mode programs. This
module only re-exports the public names; the code lives in the subpackages.
"""
# tf.__version__ is the TensorFlow API this package implements (TF1 programs test it,
# e.g. `tf.__version__ >= "1.4"`); tensorweave's own release is __tensorweave_version__.
__tensorweave_version__ = "0.1.0"
__version__ = "1.15.5"
VERSION = __version__
GRAPH_DEF_VERSION = 134  # TF 1.15's: graphs record it as versions.producer

import sys as _sys  # noqa: E402

from tensorweave.framework import dtypes as _dtypes_module  # noqa: E402
from tensorweave.framework.dtypes import (  # noqa: E402,F401
    DType, as_dtype, bfloat16, bool, complex64, complex128, double, float16, float32,
    float64, half, int8, int16, int32, int64, resource, string, uint8, uint16, uint32,
    uint64, variant)
from tensorweave.framework.shapes import Dimension, TensorShape, dimension_value  # noqa
from tensorweave.framework.device_spec import DeviceSpec  # noqa: E402,F401
from tensorweave.framework import errors  # noqa: E402,F401
from tensorweave.framework import serialize as _serialize  # noqa: E402,F401
from tensorweave.framework import sparse_tensor as _sparse_tensor  # noqa: E402,F401
from tensorweave.framework import tensor_spec as _tensor_spec  # noqa: E402,F401
from tensorweave.framework import type_spec_from_value as _type_spec_from_value  # noqa
from tensorweave.framework.graph import (  # noqa: E402,F401
    Graph, GraphKeys, Operation, Tensor, add_to_collection, add_to_collections,
    colocate_with, container, control_dependencies, device, get_collection, get_collection_ref,
    get_default_graph, get_name_scope, name_scope, reset_default_graph)
from tensorweave.framework.op_builder import (  # noqa: E402,F401
    convert_to_tensor, register_tensor_conversion_function)
from tensorweave.framework.registry import not_differentiable as NotDifferentiable  # noqa
from tensorweave.framework.registry import not_differentiable as NoGradient  # noqa
from tensorweave.framework.tensor_util import get_static_value  # noqa: E402,F401
from tensorweave.runtime.config import (  # noqa: E402,F401
    ConfigProto, GPUOptions, GraphOptions, OptimizerOptions, RunMetadata, RunOptions)
from tensorweave.runtime.session import (  # noqa: E402,F401
    InteractiveSession, Session, get_default_session)

# --- op families ------------------------------------------------------------------------
# Importing a family registers its ops, kernels and gradients and fills the export table
# (framework/api_export.py); `_api.install` below puts the exported names in place.
from tensorweave import ops as _ops  # noqa: E402
from tensorweave import train  # noqa: E402

_ops.load_all()
train.load_all()
from tensorweave.train import meta_graph as _meta_graph  # noqa: E402,F401
from tensorweave.framework import graph_util as _graph_util  # noqa: E402,F401
from tensorweave.framework import quantize_training as _quantize_training  # noqa: E402,F401
from tensorweave.framework import framework_lib as _framework_lib  # noqa: E402,F401
from tensorweave.framework import behavior as _behavior  # noqa: E402,F401
from tensorweave.framework import jit as _jit  # noqa: E402,F401
from tensorweave.distribute import mirrored as _mirrored  # noqa: E402,F401
from tensorweave.distribute import one_device as _one_device  # noqa: E402,F401
from tensorweave.ops.array.constant_op import constant, placeholder, placeholder_with_default  # noqa
from tensorweave.ops.control_flow.structure import (  # noqa: E402,F401
    group, identity, identity_n, no_op, stop_gradient, tuple, with_dependencies)

from tensorweave.framework.indexed_slices import IndexedSlices, IndexedSlicesValue  # noqa
from tensorweave.autodiff import (  # noqa: E402,F401
    AggregationMethod, RegisterGradient, UnconnectedGradients, custom_gradient,
    grad_pass_through, gradients, hessians, recompute_grad)
from tensorweave.autodiff.custom_gradient import is_tensor  # noqa: E402,F401
from tensorweave import test  # noqa: E402,F401
from tensorweave import compat  # noqa: E402,F401
from tensorweave import nn  # noqa: E402,F401
from tensorweave import raw_ops  # noqa: E402,F401
from tensorweave import platform as _platform  # noqa: E402,F401
from tensorweave import summary  # noqa: E402,F401
from tensorweave.distribute import cluster as _cluster  # noqa: E402,F401
from tensorweave.distribute import cluster_resolver as _cluster_resolver  # noqa: E402,F401
from tensorweave.distribute import server as _server  # noqa: E402,F401
from tensorweave.framework import api_export as _api  # noqa: E402

_api.export(VERSION, "version.VERSION")
__git_version__ = _framework_lib.GIT_VERSION  # TF's dunder forms of the build stamps
__compiler_version__ = _framework_lib.COMPILER_VERSION
__cxx11_abi_flag__ = _framework_lib.CXX11_ABI_FLAG
__monolithic_build__ = _framework_lib.MONOLITHIC_BUILD
_api.export(GRAPH_DEF_VERSION, "version.GRAPH_DEF_VERSION")
_api.install(_sys.modules[__name__])

# Namespaces that are libraries built on the ops, imported on first access so that
# `import tensorweave` stays fast; each exports only into its own namespace.
_LAZY_NAMESPACES = ("layers", "losses", "metrics", "profiler", "python", "saved_model",
                    "distributions", "data", "feature_column", "estimator", "keras")


def __getattr__(name: str):
    if name in _LAZY_NAMESPACES:
        import importlib
        module = importlib.import_module("tensorweave." + name)
        _api.install(_sys.modules[__name__])
        return module
    if name in summary._PROTO_CLASSES:  # tf.Summary, tf.Event, ...: TensorBoard's protos
        return summary._proto_class(name)
    raise AttributeError("module 'tensorweave' has no attribute %r" % name)


def __dir__():
    return sorted(set(globals()) | set(_LAZY_NAMESPACES) | set(summary._PROTO_CLASSES))


