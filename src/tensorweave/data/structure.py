"""tf.data.experimental's structure helpers: `get_structure` (the element spec of a
dataset, iterator or optional) and TF 1.x's names of specs (`Structure`: tf.TypeSpec;
`OptionalStructure`: tf.OptionalSpec; `DatasetStructure`: tf.data.DatasetSpec, in
dataset_spec.py; `TensorStructure`, `SparseTensorStructure`, `RaggedTensorStructure`,
`TensorArrayStructure`: constructors taking the dtype first, as TF 1.14 wrote them);
and the common element spec of datasets that one dataset reads in turn (concatenate,
sample_from_datasets, choose_from_datasets).
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dt
from tensorweave.framework import nest
from tensorweave.framework.api_export import export, tf_export
from tensorweave.framework.composite_specs import OptionalSpec
from tensorweave.framework.tensor_spec import SparseTensorSpec, TensorSpec, TypeSpec
from tensorweave.ops.data_flow.tensor_array_spec import TensorArraySpec
from tensorweave.ops.ragged.ragged_tensor_spec import RaggedTensorSpec


@tf_export("data.experimental.get_structure")
def get_structure(dataset_or_iterator):
    """The type of the elements of a dataset or iterator (its `element_spec`):
    tf.TensorSpec, tf.SparseTensorSpec and tf.RaggedTensorSpec values in the elements'
    structure.

    Args:
      dataset_or_iterator: a tf.data.Dataset or tf.data.Iterator.

    Returns:
      The element spec.

    Raises:
      TypeError: `dataset_or_iterator` is neither.
    """
    try:
        return dataset_or_iterator.element_spec
    except AttributeError:
        raise TypeError("Invalid `dataset_or_iterator`. `dataset_or_iterator` must be a "
                        "`tf.data.Dataset` or tf.data.Iterator object, but got %s."
                        % type(dataset_or_iterator)) from None


export(TypeSpec, "data.experimental.Structure")


@tf_export("data.experimental.TensorStructure")
def tensor_structure(dtype, shape) -> TensorSpec:
    """TF 1.x's `tf.TensorSpec(shape, dtype)`."""
    return TensorSpec(shape, dtype)


@tf_export("data.experimental.SparseTensorStructure")
def sparse_tensor_structure(dtype, shape) -> SparseTensorSpec:
    """TF 1.x's `tf.SparseTensorSpec(shape, dtype)`."""
    return SparseTensorSpec(shape, dtype)


@tf_export("data.experimental.TensorArrayStructure")
def tensor_array_structure(dtype, element_shape, dynamic_size, infer_shape
                           ) -> TensorArraySpec:
    """TF 1.x's `tf.TensorArraySpec(element_shape, dtype, dynamic_size, infer_shape)`."""
    return TensorArraySpec(element_shape, dtype, dynamic_size, infer_shape)


export(OptionalSpec, "data.experimental.OptionalStructure")


@tf_export("data.experimental.RaggedTensorStructure")
def ragged_tensor_structure(dtype, shape, ragged_rank: int) -> RaggedTensorSpec:
    """TF 1.x's `tf.RaggedTensorSpec(shape, dtype, ragged_rank)` (int64 row splits)."""
    return RaggedTensorSpec(shape, dtype, ragged_rank, _dt.int64)


def joinable(a, b) -> bool:
    """Whether the elements of `a` and `b` (datasets, or other ElementSpecs) have a
    common spec (TF's most_specific_common_supertype is not None): the same nesting,
    composites, dtypes and spec names; their shapes may differ."""
    try:
        nest.assert_same_structure(a._structure, b._structure)
    except (ValueError, TypeError):  # other nestings or dict keys
        return False
    return a._types == b._types and a._names == b._names and \
        all(_joinable_leaves(x, y) for x, y in zip(nest.flatten(a._structure),
                                                   nest.flatten(b._structure)))


def _joinable_leaves(a, b) -> bool:
    """Whether two structure leaves have a common spec: datasets' leaves when their
    specs have a common supertype (their shapes may differ), others when equal."""
    if isinstance(a, TypeSpec):
        return a.most_specific_common_supertype([b]) is not None
    return a == b


def joined_structure(specs):
    """The element structure of the common spec of joinable `specs`: the first's, with
    each dataset's leaf the common supertype of theirs (their shapes joined)."""
    columns = zip(*[nest.flatten(spec._structure) for spec in specs])
    leaves = [first.most_specific_common_supertype(others)
              if isinstance(first, TypeSpec) else first for first, *others in columns]
    return nest.pack_sequence_as(specs[0]._structure, leaves)


def joined_shapes(specs) -> list:
    """The component shapes of the common spec of joinable `specs`: the dimensions they
    all agree on."""
    shapes = list(specs[0]._shapes)
    for spec in specs[1:]:
        shapes = [a.most_specific_compatible_shape(b) for a, b in zip(shapes, spec._shapes)]
    return shapes

