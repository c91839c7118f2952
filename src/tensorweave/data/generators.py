"""Dataset.from_generator: the elements a Python generator yields, made when an iterator
reaches them.

The generator function is kept with the graph (like the traced dataset functions; a
GraphDef does not carry it). Each initialization of an iterator calls it again with
`args` (evaluated by the initializer, strings as bytes, as TF passes them) and converts
each yielded element to the declared structure, dtypes and shapes with TF's rules and
errors (see _Signature: NumPy casts, or convert_to_tensor's checks for a lone component
of unknown rank; an `output_signature` holding tf.SparseTensorSpec or
tf.RaggedTensorSpec is TF's other path, generator_specs.SpecSignature).
"""
from __future__ import annotations

import itertools
from typing import Callable

import numpy as np

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import errors
from tensorweave.framework import nest
from tensorweave.framework.op_builder import apply_op, as_numpy, convert_to_tensor
from tensorweave.framework.registry import TypeListAttr, kernel
from tensorweave.framework.shapes import TensorShape
from tensorweave.framework.tensor_spec import TensorSpec, TypeSpec, shape_text
from tensorweave.data import dataset_ops as _ds
from tensorweave.data import dataset_kernels as _kernels
from tensorweave.data import padding as _padding
from tensorweave.data import pipeline as _pipe
from tensorweave.data.dataset_ops import Dataset
from tensorweave.data.generator_specs import COMPOSITE_TYPE_SPECS, InvalidSplits, \
    SpecSignature, flatten_like
from tensorweave.data.pipeline import DatasetValue

_GENERATORS = "_tw_dataset_generators"
_KEYS = itertools.count()

_kernels.dataset_op("GeneratorDataset", ["args: Targs"], {"Targs": TypeListAttr(),
                                                     "generator": ""})


def from_generator(generator: Callable, output_types, output_shapes=None, args=None,
                   output_signature=None) -> Dataset:
    """See Dataset.from_generator."""
    from tensorweave.framework import graph as _graph
    if not callable(generator):
        raise TypeError("`generator` must be a Python callable.")
    signature = _signature(output_types, output_shapes, output_signature)
    _check_has_components(signature)
    arg_tensors = [convert_to_tensor(a, name="generator_arg") for a in (args or ())]
    table = _graph.get_default_graph().__dict__.setdefault(_GENERATORS, {})
    key = "generator_%d" % next(_KEYS)
    table[key] = (generator, signature)
    op = apply_op("GeneratorDataset", [arg_tensors], dict(
        _ds.spec_attrs(signature.types, signature.shapes),
        Targs=[t.dtype for t in arg_tensors], generator=key), name="GeneratorDataset")
    return Dataset(op.outputs[0], signature.structure, signature.types, signature.shapes,
                   names=signature.names)


def _signature(output_types, output_shapes, output_signature):
    """The declared elements: a _Signature for dense ones, a SpecSignature for an
    `output_signature` holding composite specs (TF converts those by another path).

    Raises:
      TypeError: as TF's, neither `output_types` nor `output_signature` is given, or
        both are, or `output_signature` holds something else than specs.
    """
    if output_signature is not None:
        _check_signature(output_signature, output_types, output_shapes)
        specs = nest.flatten(output_signature)
        if not all(isinstance(s, TensorSpec) for s in specs):
            return SpecSignature(output_signature)
        output_types = nest.map_structure(lambda spec: spec.dtype, output_signature)
        output_shapes = nest.map_structure(lambda spec: spec.shape, output_signature)
        names = [spec.name for spec in specs]
    elif output_types is None:
        raise TypeError("To specify the output signature you need to provide either the "
                        "`output_signature` argument or the `output_types` argument.")
    else:
        names = None
    types = [_dt.as_dtype(t) for t in nest.flatten(output_types)]
    structure = nest.pack_sequence_as(output_types, [0] * len(types))
    if output_shapes is None:
        shapes = [TensorShape(None)] * len(types)
    else:
        shapes = [TensorShape(s) for s in _padding.flatten_shapes(structure, output_shapes)]
    return _Signature(structure, types, shapes, names)


def _check_signature(output_signature, output_types, output_shapes) -> None:
    """Raises TypeError (TF's) unless `output_signature` is a structure of tf.TypeSpec
    given alone.

    Raises:
      TypeError: `output_types` or `output_shapes` is given too, or a leaf is no spec.
      NotImplementedError: a leaf is a spec of another kind than tf.TensorSpec,
        tf.SparseTensorSpec and tf.RaggedTensorSpec.
    """
    for given, arg in ((output_types, "output_types"), (output_shapes, "output_shapes")):
        if given is not None:
            raise TypeError("The `%s` argument can not be used together with the "
                            "`output_signature` argument." % arg)
    if _ds.has_list(output_signature):  # as TF's: a list is a leaf of an element
        raise TypeError("`output_signature` must contain objects that are subclass of "
                        "`tf.TypeSpec` but found %s which is not." % list)
    for spec in nest.flatten(output_signature):
        if not isinstance(spec, TypeSpec):
            raise TypeError("`output_signature` must contain objects that are subclass of "
                            "`tf.TypeSpec` but found %s which is not." % type(spec))
        if not isinstance(spec, (TensorSpec,) + COMPOSITE_TYPE_SPECS):
            raise NotImplementedError(
                "Dataset.from_generator: an `output_signature` component of %r is not "
                "supported (tensorweave's generators yield tf.TensorSpec, "
                "tf.SparseTensorSpec and tf.RaggedTensorSpec components)" % (spec,))


def _check_has_components(signature) -> None:
    """Raises as TF does for elements of no component: TF's generator function then
    returns its py_func op instead of tensors, which TF refuses.

    Raises:
      TypeError: the element structure is empty itself (`()`, `{}`).
      ValueError: it nests only empty structures (`((), {})`).
    """
    if signature.types:
        return
    structure = signature.structure
    members = structure.values() if isinstance(structure, dict) else structure
    if not list(members):
        raise TypeError("Unsupported return value from function passed to "
                        "Dataset.from_generator(): the generator's py_func op (the "
                        "element structure %r has no component)." % (structure,))
    raise ValueError("Could not pack sequence. Argument `structure` had 0 elements, but "
                     "argument `flat_sequence` had 1 elements. Received structure: %r, "
                     "flat_sequence: [the generator's py_func op]." % (structure,))


class _Signature:
    """What a generator's elements are declared to be: their `structure` (leaves 0) and
    each component's dtype, static shape and spec name (None: unnamed)."""

    def __init__(self, structure, types, shapes, names=None):
        self.structure, self.types, self.shapes = structure, types, shapes
        self.names = names or [None] * len(types)
        # TF converts a yielded element with NumPy casts (1.5 -> 1 for int64, "5" -> 5)
        # unless it is one component of unknown rank (or nothing): then with
        # convert_to_tensor's checks (1.5 for int64 fails)
        self.casts = bool(types) if nest.is_sequence(structure) else \
            shapes[0].rank is not None

    def converted(self, element) -> list:
        """The component arrays of a yielded `element`.

        Raises:
          TypeError: with TF's message, `element` does not convert or has another shape.
          _UnsupportedObject: a string component holds a number (on the NumPy path).
        """
        arrays = self._cast(element) if self.casts else self._checked(element)
        for a, s in zip(arrays, self.shapes):
            if not s.is_compatible_with(TensorShape(a.shape)):
                raise TypeError("`generator` yielded an element of shape %s where an "
                                "element of shape %s was expected."
                                % (tuple(a.shape), shape_text(s)))
        return arrays

    def _mismatch(self, element, expected) -> TypeError:
        return TypeError("`generator` yielded an element that did not match the expected "
                         "structure. The expected structure was %s, but the yielded "
                         "element was %s." % (expected, element))

    def _cast(self, element) -> list:
        try:
            flat = flatten_like(self.structure, element)
        except (TypeError, ValueError):
            raise self._mismatch(element, nest.pack_sequence_as(
                self.structure, self.types)) from None
        return [_numpy_cast(v, t) for v, t in zip(flat, self.types)]

    def _checked(self, element) -> list:
        from tensorweave.ops.array.constant_op import constant_array
        try:
            flat = flatten_like(self.structure, element)
            return [constant_array(v, t, allow_cast=False) for v, t in zip(flat, self.types)]
        except (TypeError, ValueError, OverflowError) as e:
            specs = [TensorSpec(s, t, n) for t, s, n in zip(self.types, self.shapes,
                                                            self.names)]
            mismatch = self._mismatch(element, nest.pack_sequence_as(self.structure,
                                                                     specs))
            raise TypeError("%s (%s)" % (mismatch, e)) from None


class _UnsupportedObject(TypeError):
    """A string component that holds something else than bytes or str: TF's py_func
    fails on it with an InternalError."""


def _numpy_cast(value, dtype: _dt.DType) -> np.ndarray:
    """`value` as TF's NumPy path converts a yielded component: np.asarray, then a C cast
    (1.5 -> 1, 2**40 wraps into int32, "5" -> 5); strings as object arrays of bytes.

    Raises:
      TypeError: with TF's message, the cast fails.
      OverflowError: a Python int too large for int64 (TF's UnknownError).
      _UnsupportedObject: a string component holds something else than bytes or str.
    """
    try:
        array = np.asarray(value).astype(dtype.as_numpy_dtype)
    except (TypeError, ValueError) as e:
        raise TypeError("`generator` yielded an element that could not be converted to the "
                        "expected type. The expected type was %s, but the yielded element "
                        "was %s." % (dtype.name, value)) from e
    if dtype is not _dt.string:
        return array
    for v in array.reshape(-1):
        if not isinstance(v, (bytes, str)):
            raise _UnsupportedObject("Unsupported object type %s" % type(v).__name__)
    return as_numpy(array, _dt.string)


class _Generated(DatasetValue):
    def __init__(self, op, generator, signature: _Signature, args):
        self.op, self.generator, self.signature, self.args = op, generator, signature, args

    def _converted(self, element) -> list:
        try:
            return self.signature.converted(element)
        except _UnsupportedObject as e:
            raise errors.InternalError(None, self.op, str(e)) from None
        except InvalidSplits as e:  # TF's RaggedTensorToVariant fails in its py_func
            raise errors.UnknownError(None, self.op, "InvalidArgumentError: %s" % e) \
                from None
        except TypeError as e:
            raise errors.InvalidArgumentError(None, self.op, "TypeError: %s" % e) from None
        except Exception as e:  # noqa: BLE001 - NumPy's OverflowError: py_func's classes
            raise _generator_error(self.op, e) from None

    def _elements(self, ctx, with_errors: bool):
        # with errors, an element that does not convert fails alone: the generator goes
        # on (TF's); an exception the generator raises ends it
        try:
            source = iter(self.generator(*self.args))
        except Exception as e:  # noqa: BLE001 - the user's code: reported as TF does
            raise _generator_error(self.op, e) from e
        while True:
            try:
                element = next(source)
            except StopIteration:
                return
            except Exception as e:  # noqa: BLE001
                raise _generator_error(self.op, e) from e
            try:
                yield self._converted(element)
            except (errors.InvalidArgumentError, errors.InternalError) as e:
                if not with_errors:
                    raise
                yield _pipe.ElementError(e)


def _generator_error(op, exc: BaseException) -> errors.OpError:
    """The error of an exception the generator raised: py_func's classes, as TF's
    (ValueError and TypeError: InvalidArgumentError, ..., others UnknownError)."""
    from tensorweave.ops.control_flow.script_ops import _error_class
    return _error_class(exc)(None, op, "%s: %s" % (type(exc).__name__, exc))


def _python_arg(a):
    a = np.asarray(a)
    if a.dtype == object and a.shape == ():
        return a[()]
    return a[()] if a.shape == () else a


@kernel("GeneratorDataset")
def _generator_kernel(ctx, *args):
    entry = ctx.op.graph.__dict__.get(_GENERATORS, {}).get(ctx.attrs["generator"])
    if entry is None:
        raise errors.FailedPreconditionError(
            None, ctx.op, "The generator of %s is not in this graph: Dataset.from_generator "
                          "keeps the Python function with the graph that built the dataset, "
                          "and a GraphDef does not carry it" % ctx.op.name)
    generator, signature = entry
    return _Generated(ctx.op, generator, signature, [_python_arg(a) for a in args])
