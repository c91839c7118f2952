"""Shape-manipulating array ops (array_ops, array_join_ops, array_pad_ops, array_fill_ops).

The STATIC and RUN tables were recorded from TensorFlow 1.x graph mode (tf.compat.v1):
static shapes, op types and build-time errors, then run-time values and errors. Messages of
run-time errors TF itself could not format are taken from TF's kernel sources.
"""
import re

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error
from tensorweave.framework import errors


def P(shape, dt=tf.float32):
    return tf.placeholder(dt, shape)


def I(shape=None):  # noqa: E743
    return tf.placeholder(tf.int32, shape)


A = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def _describe(r):
    if isinstance(r, (list, tuple)):
        return "[" + "; ".join(_describe(t) for t in r) + "]"
    return "%s %s %s" % (r.op.type, r.dtype.name, r.shape)


def _fmt(v):
    if isinstance(v, list):
        return "[" + "; ".join(_fmt(x) for x in v) + "]"
    v = np.asarray(v)
    return "%s%s %s" % (v.dtype, list(v.shape),
                        np.array2string(v.reshape(-1), separator=",", max_line_width=10**6))


_ERR = {"ValueError": ValueError, "TypeError": TypeError,
        "InvalidArgumentError": errors.InvalidArgumentError}

# (name, builder, error class or None, expected "OpType dtype shape" or message fragment)
STATIC = [
    ('reshape_1', lambda: tf.reshape(P([None,3]), [-1]), None, 'Reshape float32 (?,)'),
    ('reshape_2', lambda: tf.reshape(P([None,3]), [-1, 3]), None, 'Reshape float32 (?, 3)'),
    ('reshape_3', lambda: tf.reshape(P([None,3]), [2, -1]), None, 'Reshape float32 (2, ?)'),
    ('reshape_4', lambda: tf.reshape(P([2,3]), [3, -1]), None, 'Reshape float32 (3, 2)'),
    ('reshape_5', lambda: tf.reshape(P([2,3]), [4]), ValueError,
     'Cannot reshape a tensor with 6 elements to shape [4] (4 elements)'),
    ('reshape_6', lambda: tf.reshape(P([2,3]), [4, -1]), ValueError,
     'Dimension size must be evenly divisible by 4 but is 6'),
    ('reshape_7', lambda: tf.reshape(P([None,3]), I([2])), None, 'Reshape float32 (?, ?)'),
    ('reshape_8', lambda: tf.reshape(P([None,3]), I()), None, 'Reshape float32 <unknown>'),
    ('reshape_9', lambda: tf.reshape(P(None), [2, -1]), None, 'Reshape float32 (2, ?)'),
    ('reshape_10', lambda: tf.reshape(P([2,None]), [-1, -1]), None, 'Reshape float32 (?, ?)'),
    ('reshape_11', lambda: tf.reshape(P([None,4]), [2, 2, -1]), None, 'Reshape float32 (2, 2, ?)'),
    ('reshape_12', lambda: tf.reshape(P([None,4]), tf.stack([I([]), 4])), None,
     'Reshape float32 (?, 4)'),
    ('reshape_13', lambda: tf.reshape(P([None,4]), tf.shape(P([5, None]))), None,
     'Reshape float32 (5, ?)'),
    ('reshape_14', lambda: tf.reshape(P([6,None]), [3, 4]), None, 'Reshape float32 (3, 4)'),
    ('reshape_15', lambda: tf.reshape(P([5,None]), [3, 4]), ValueError,
     'Dimension size must be evenly divisible by 5 but is 12'),
    ('reshape_16', lambda: tf.reshape(P([0,None]), [3, -1]), None, 'Reshape float32 (3, 0)'),
    ('reshape_17', lambda: tf.reshape(P([2,3]), tf.concat([[2], I([1])], 0)), None,
     'Reshape float32 (2, 3)'),
    ('transpose_1', lambda: tf.transpose(P([2,None,4])), None, 'Transpose float32 (4, ?, 2)'),
    ('transpose_2', lambda: tf.transpose(P([2,None,4]), [1,0,2]), None,
     'Transpose float32 (?, 2, 4)'),
    ('transpose_3', lambda: tf.transpose(P(None), [1,0,2]), None, 'Transpose float32 (?, ?, ?)'),
    ('transpose_4', lambda: tf.transpose(P([2,3]), I([2])), None, 'Transpose float32 (?, ?)'),
    ('transpose_5', lambda: tf.transpose(P(None), I([3])), None, 'Transpose float32 (?, ?, ?)'),
    ('transpose_6', lambda: tf.transpose(P([2,3]), [0,2]), ValueError,
     'perm dim 2 is out of range of input rank 2'),
    ('transpose_7', lambda: tf.transpose(P([2,3]), [0,1,2]), ValueError,
     'Dimension must be 2 but is 3'),
    ('transpose_8', lambda: tf.transpose(P([2,3,4]), [-1,0,1]), None,
     'Transpose float32 (4, 2, 3)'),
    ('transpose_9', lambda: tf.transpose(P(None), I([1])), None, 'Transpose float32 <unknown>'),
    ('concat_1', lambda: tf.concat([P([2,3]), P([None,3])], 0), None, 'ConcatV2 float32 (?, 3)'),
    ('concat_2', lambda: tf.concat([P([2,3]), P([2,None])], -1), None, 'ConcatV2 float32 (2, ?)'),
    ('concat_3', lambda: tf.concat([P([2,3]), P([2,4])], 0), ValueError,
     'Dimension 0 in both shapes must be equal, but are 3 and 4. Shapes are [3] and [4].'),
    ('concat_4', lambda: tf.concat([P([2,3]), P([2])], 0), ValueError,
     'Shape must be rank 2 but is rank 1'),
    ('concat_5', lambda: tf.concat([P([2,3]), P(None)], 1), None, 'ConcatV2 float32 (2, ?)'),
    ('concat_6', lambda: tf.concat([P([2,3]), P([2,3])], I()), None, 'ConcatV2 float32 (?, ?)'),
    ('concat_7', lambda: tf.concat([P([2,3]), P([2,3])], 2), ValueError,
     'Shape must be at least rank 3 but is rank 2'),
    ('concat_8', lambda: tf.concat([P([]), P([])], I()), ValueError,
     "Can't concatenate scalars (use tf.stack instead)"),
    ('concat_8b', lambda: tf.concat([P([]), P([])], 0), ValueError,
     "Can't concatenate scalars (use tf.stack instead)"),
    ('concat_8c', lambda: tf.concat([], 0), ValueError,
     "List argument 'values' to 'ConcatV2' Op with length 0 shorter than minimum length 2."),
    ('concat_9', lambda: tf.concat([P([2,3])], 0), None, 'Identity float32 (2, 3)'),
    ('concat_10', lambda: tf.concat([P(None), P(None)], 0), None, 'ConcatV2 float32 <unknown>'),
    ('concat_11', lambda: tf.concat([P([2,3,4]), P([2,5,4])], -2), None,
     'ConcatV2 float32 (2, 8, 4)'),
    ('split_1', lambda: tf.split(P([6,4]), 3), None,
     '[Split float32 (2, 4); Split float32 (2, 4); Split float32 (2, 4)]'),
    ('split_2', lambda: tf.split(P([6,4]), 4), ValueError,
     'Dimension size must be evenly divisible by 4 but is 6'),
    ('split_2z', lambda: tf.split(P([6,4]), 0), ValueError,
     "Attr 'num_split' of 'Split' Op passed 0 less than minimum 1."),
    ('split_2v', lambda: tf.split(P([6,4]), tf.placeholder(tf.int32, [None]), num=0), ValueError,
     "Attr 'num_split' of 'SplitV' Op passed 0 less than minimum 1."),
    ('split_3', lambda: tf.split(P([6,4]), 2, axis=-1), None,
     '[Split float32 (6, 2); Split float32 (6, 2)]'),
    ('split_4', lambda: tf.split(P([None,4]), 2), None,
     '[Split float32 (?, 4); Split float32 (?, 4)]'),
    ('split_5', lambda: tf.split(P([6,4]), 2, axis=I()), None,
     '[Split float32 (?, ?); Split float32 (?, ?)]'),
    ('split_6', lambda: tf.split(P(None), 2, axis=1), None,
     '[Split float32 <unknown>; Split float32 <unknown>]'),
    ('split_7', lambda: tf.split(P([6,4]), [1,2,-1]), None,
     '[SplitV float32 (1, 4); SplitV float32 (2, 4); SplitV float32 (3, 4)]'),
    ('split_8', lambda: tf.split(P([6,4]), [1,2,3]), None,
     '[SplitV float32 (1, 4); SplitV float32 (2, 4); SplitV float32 (3, 4)]'),
    ('split_9', lambda: tf.split(P([6,4]), [1,2,4]), ValueError,
     "can't split axis of size 6 into pieces of size [1,2,4]"),
    ('split_10', lambda: tf.split(P([6,4]), [1,-1,-1]), ValueError,
     'size_splits can only have one -1'),
    ('split_11', lambda: tf.split(P([None,4]), [1,-1]), None,
     '[SplitV float32 (1, 4); SplitV float32 (?, 4)]'),
    ('split_12', lambda: tf.split(P([6,4]), I([3])), None,
     '[SplitV float32 (?, 4); SplitV float32 (?, 4); SplitV float32 (?, 4)]'),
    ('split_13', lambda: tf.split(P([6,4]), I([None])), ValueError,
     'Cannot infer argument `num` from shape'),
    ('split_14', lambda: tf.split(P([6,4]), 2, axis=2), ValueError,
     'Dimension size, given by scalar input 2 must be in range [-2, 2)'),
    ('split_15', lambda: tf.split(P([6,4]), [1,7,-1]), ValueError,
     'Split size at index 2 must be >= 0. Got: -2'),
    ('stack_1', lambda: tf.stack([P([2,None]), P([None,3])]), None, 'Pack float32 (2, 2, 3)'),
    ('stack_2', lambda: tf.stack([P([2,3]), P([2,3])], axis=-1), None, 'Pack float32 (2, 3, 2)'),
    ('stack_3', lambda: tf.stack([P([2,3]), P([2,4])]), ValueError,
     'Dimension 1 in both shapes must be equal, but are 3 and 4. Shapes are [2,3] and [2,4].'),
    ('stack_4', lambda: tf.stack([P([2,3]), P([2,3])], axis=3), ValueError,
     'Argument `axis` = 3 not in range [-3, 3)'),
    ('stack_5', lambda: tf.stack([P(None), P(None)], axis=1), None, 'Pack float32 <unknown>'),
    ('stack_6', lambda: tf.stack([1, 2, 3]), None, 'Const int32 (3,)'),
    ('stack_7', lambda: tf.stack([I([]), 3]), None, 'Pack int32 (2,)'),
    ('stack_8', lambda: tf.stack([P([2]), P([])], axis=0), ValueError,
     'Shapes must be equal rank, but are 1 and 0'),
    ('unstack_1', lambda: tf.unstack(P([3,None])), None,
     '[Unpack float32 (?,); Unpack float32 (?,); Unpack float32 (?,)]'),
    ('unstack_2', lambda: tf.unstack(P([3,4]), axis=-1), None,
     '[Unpack float32 (3,); Unpack float32 (3,); Unpack float32 (3,); Unpack float32 (3,)]'),
    ('unstack_3', lambda: tf.unstack(P([None,4])), ValueError,
     'Cannot infer argument `num` from shape (?, 4)'),
    ('unstack_4', lambda: tf.unstack(P(None)), ValueError,
     'Cannot infer argument `num` from shape <unknown>'),
    ('unstack_5', lambda: tf.unstack(P(None), num=2), None,
     '[Unpack float32 <unknown>; Unpack float32 <unknown>]'),
    ('unstack_6', lambda: tf.unstack(P([3,4]), num=2), ValueError, 'Dimension must be 2 but is 3'),
    ('unstack_7', lambda: tf.unstack(P([3,4]), axis=2), ValueError,
     'Argument `axis` = 2 not in range [-2, 2)'),
    ('expand_1', lambda: tf.expand_dims(P([2,3]), 1), None, 'ExpandDims float32 (2, 1, 3)'),
    ('expand_2', lambda: tf.expand_dims(P([2,3]), -1), None, 'ExpandDims float32 (2, 3, 1)'),
    ('expand_3', lambda: tf.expand_dims(P([2,3]), 3), ValueError,
     'dim 3 not in the interval [-3, 2].'),
    ('expand_4', lambda: tf.expand_dims(P([2,3]), I()), None, 'ExpandDims float32 <unknown>'),
    ('expand_5', lambda: tf.expand_dims(P(None), 0), None, 'ExpandDims float32 <unknown>'),
    ('expand_6', lambda: tf.expand_dims(P([2,3]), dim=0), None, 'ExpandDims float32 (1, 2, 3)'),
    ('expand_7', lambda: tf.expand_dims(P([2,3])), ValueError,
     'Must specify an axis argument to tf.expand_dims()'),
    ('expand_8', lambda: tf.expand_dims(P([2,3]), [0, 1]), ValueError,
     "'dim' input must be a tensor with a single value"),
    ('expand_9', lambda: tf.expand_dims(P([2,3]), -4), ValueError,
     'dim -4 not in the interval [-3, 2].'),
    ('squeeze_1', lambda: tf.squeeze(P([1,2,1,3])), None, 'Squeeze float32 (2, 3)'),
    ('squeeze_2', lambda: tf.squeeze(P([1,2,1,3]), [0]), None, 'Squeeze float32 (2, 1, 3)'),
    ('squeeze_3', lambda: tf.squeeze(P([1,None,1,3])), None, 'Squeeze float32 <unknown>'),
    ('squeeze_4', lambda: tf.squeeze(P([1,None,1,3]), [1]), None, 'Squeeze float32 (1, 1, 3)'),
    ('squeeze_5', lambda: tf.squeeze(P([1,2,1,3]), 1), ValueError,
     'Can not squeeze dim[1], expected a dimension of 1, got 2'),
    ('squeeze_6', lambda: tf.squeeze(P([1,2,1,3]), 4), ValueError,
     'squeeze_dims[0] not in [-4,4).'),
    ('squeeze_7', lambda: tf.squeeze(P(None)), None, 'Squeeze float32 <unknown>'),
    ('squeeze_8', lambda: tf.squeeze(P([1,2,1,3]), squeeze_dims=[-2]), None,
     'Squeeze float32 (1, 2, 3)'),
    ('shape_1', lambda: tf.shape(P([2,3])), None, 'Const int32 (2,)'),
    ('shape_2', lambda: tf.shape(P([None,3])), None, 'Shape int32 (2,)'),
    ('shape_3', lambda: tf.shape(P(None), out_type=tf.int64), None, 'Shape int64 (?,)'),
    ('shape_4', lambda: tf.shape_n([P([2,3]), P(None)]), None,
     '[ShapeN int32 (2,); ShapeN int32 (?,)]'),
    ('shape_5', lambda: tf.rank(P([2,3])), None, 'Const int32 ()'),
    ('shape_6', lambda: tf.rank(P(None)), None, 'Rank int32 ()'),
    ('shape_7', lambda: tf.size(P([2,3])), None, 'Const int32 ()'),
    ('shape_8', lambda: tf.size(P([None,3])), None, 'Size int32 ()'),
    ('shape_9', lambda: tf.size(P([None,0])), None, 'Const int32 ()'),
    ('shape_10', lambda: tf.size(P(None), out_type=tf.int64), None, 'Size int64 ()'),
    ('fill_1', lambda: tf.fill([2,3], 1.5), None, 'Fill float32 (2, 3)'),
    ('fill_2', lambda: tf.fill(I([2]), 1), None, 'Fill int32 (?, ?)'),
    ('fill_3', lambda: tf.fill(tf.stack([I([]), 3]), 1), None, 'Fill int32 (?, 3)'),
    ('fill_4', lambda: tf.fill([2,-3], 1), ValueError,
     'Invalid value in tensor used for shape: -3'),
    ('fill_5', lambda: tf.fill([2,3], [1, 2]), ValueError, 'Shape must be rank 0 but is rank 1'),
    ('fill_6', lambda: tf.fill(3, 1), ValueError, 'Shape must be rank 1 but is rank 0'),
    ('zeros_1', lambda: tf.zeros([2,3]), None, 'Const float32 (2, 3)'),
    ('zeros_2', lambda: tf.zeros([20,100], tf.int32), None, 'Fill int32 (20, 100)'),
    ('zeros_3', lambda: tf.zeros(tf.stack([I([]), 3])), None, 'Fill float32 (?, 3)'),
    ('zeros_4', lambda: tf.zeros(I([])), None, 'Fill float32 (?,)'),
    ('zeros_5', lambda: tf.zeros([I([]), 3], tf.bool), None, 'Fill bool (?, 3)'),
    ('zeros_6', lambda: tf.zeros(tf.TensorShape([2, 3]), tf.string), None, 'Const string (2, 3)'),
    ('zeros_7', lambda: tf.ones(3), None, 'Fill float32 (3,)'),
    ('zeros_8', lambda: tf.ones(I([2]), tf.int64), None, 'Fill int64 (?, ?)'),
    ('zeros_9', lambda: tf.zeros(tf.TensorShape([None, 3])), ValueError,
     'Cannot convert a partially known TensorShape (?, 3) to a Tensor.'),
    ('like_1', lambda: tf.zeros_like(P([2,3])), None, 'Const float32 (2, 3)'),
    ('like_2', lambda: tf.zeros_like(P([None,3])), None, 'ZerosLike float32 (?, 3)'),
    ('like_3', lambda: tf.zeros_like(P([None,3]), dtype=tf.int32), None, 'Fill int32 (?, 3)'),
    ('like_4', lambda: tf.ones_like(P([2,3])), None, 'Fill float32 (2, 3)'),
    ('like_5', lambda: tf.ones_like(P([None,3])), None, 'Fill float32 (?, 3)'),
    ('like_6', lambda: tf.ones_like(P([None,3]), dtype=tf.bool), None, 'Fill bool (?, 3)'),
    ('like_7', lambda: tf.zeros_like(P([2,3]), optimize=False), None, 'ZerosLike float32 (2, 3)'),
    ('tile_1', lambda: tf.tile(P([2,None]), [3, 2]), None, 'Tile float32 (6, ?)'),
    ('tile_2', lambda: tf.tile(P([2,None]), [3, 0]), None, 'Tile float32 (6, 0)'),
    ('tile_3', lambda: tf.tile(P([2,3]), I([2])), None, 'Tile float32 (?, ?)'),
    ('tile_4', lambda: tf.tile(P(None), I([2])), None, 'Tile float32 (?, ?)'),
    ('tile_5', lambda: tf.tile(P(None), I()), None, 'Tile float32 <unknown>'),
    ('tile_6', lambda: tf.tile(P([2,3]), [1,2,3]), ValueError,
     'Shape must be rank 2 but is rank 3'),
    ('tile_7', lambda: tf.tile(P([2,3]), tf.stack([I([]), 2])), None, 'Tile float32 (?, 6)'),
    ('tile_8', lambda: tf.tile(P([2,None]), [1, 1]), None, 'Tile float32 (2, ?)'),
    ('pad_1', lambda: tf.pad(P([2,None]), [[1,2],[3,4]]), None, 'Pad float32 (5, ?)'),
    ('pad_2', lambda: tf.pad(P([2,3]), I([2,2])), None, 'Pad float32 (?, ?)'),
    ('pad_3', lambda: tf.pad(P(None), I([None,2])), None, 'Pad float32 <unknown>'),
    ('pad_4', lambda: tf.pad(P([2,3]), [[1,2],[3,4]], constant_values=1.0), None,
     'PadV2 float32 (5, 10)'),
    ('pad_5', lambda: tf.pad(P([2,3]), [[1,2],[3,4]], mode="reflect"), None,
     'MirrorPad float32 (5, 10)'),
    ('pad_6', lambda: tf.pad(P([2,3]), [[1,2],[3,4]], mode="foo"), ValueError,
     'Value of argument `mode` expected to be one of "CONSTANT", "REFLECT", or "SYMMETRIC". Rece'),
    ('pad_7', lambda: tf.pad(P([2,3]), [[1,2],[-3,4]]), ValueError,
     'Paddings must be non-negative'),
    ('pad_8', lambda: tf.pad(P([2,3]), [[1,2]]), ValueError, 'Shape must be rank 1 but is rank 2'),
    ('pad_9', lambda: tf.pad(P(None), [[1,2],[3,4]], mode="symmetric"), None,
     'MirrorPad float32 (?, ?)'),
    ('pad_10', lambda: tf.pad(P([2,3]), I([None,2]), mode="symmetric"), None,
     'MirrorPad float32 (?, ?)'),
    ('pad_11', lambda: tf.pad(P([2,3]), [[1,2],[-3,4]], mode="symmetric"), ValueError,
     'Paddings must be non-negative'),
    ('pad_12', lambda: tf.pad(P([2,3]), [[1,I([])],[3,4]]), None, 'Pad float32 (?, 10)'),
    ('bcast_1', lambda: tf.broadcast_to(P([3]), [2,3]), None, 'BroadcastTo float32 (2, 3)'),
    ('bcast_2', lambda: tf.broadcast_to(P([3]), [2,4]), ValueError,
     'Dimensions must be equal, but are 3 and 4'),
    ('bcast_3', lambda: tf.broadcast_to(P([3]), [2,None] if False else tf.stack([2, I([])])), None,
     'BroadcastTo float32 (2, 3)'),
    ('bcast_4', lambda: tf.broadcast_to(P([2,3]), [3]), ValueError,
     'Shape must be at most rank 1 but is rank 2'),
    ('bcast_5', lambda: tf.broadcast_to(P(None), [2,3]), None, 'BroadcastTo float32 (2, 3)'),
    ('bcast_6', lambda: tf.broadcast_to(P([1,3]), I([3])), None, 'BroadcastTo float32 (?, ?, 3)'),
    ('bcast_7', lambda: tf.broadcast_to(P([1,3]), I([None])), None,
     'BroadcastTo float32 <unknown>'),
    ('rev_1', lambda: tf.reverse(P([2,3]), [1]), None, 'ReverseV2 float32 (2, 3)'),
    ('rev_2', lambda: tf.reverse(P([2,3]), [2]), ValueError,
     "'axis'[0] = 2 is out of valid range [0, 1"),
    ('rev_3', lambda: tf.reverse(P([2,3]), [0,-2]), ValueError,
     'axis 0 specified more than once.'),
    ('rev_4', lambda: tf.reverse(P([2,3]), 1), ValueError, 'Shape must be rank 1 but is rank 0'),
    ('rev_5', lambda: tf.reverse_v2(P(None), [5]), None, 'ReverseV2 float32 <unknown>'),
    ('mesh_1', lambda: tf.meshgrid(P([3]), P([4]), P([5])), None,
     '[BroadcastTo float32 (4, 3, 5); BroadcastTo float32 (4, 3, 5); BroadcastTo float32 (4,'
     ' 3, 5)]'),
    ('mesh_2', lambda: tf.meshgrid(P([3]), P([None]), indexing="ij"), None,
     '[BroadcastTo float32 (3, ?); BroadcastTo float32 (3, ?)]'),
    ('mesh_3', lambda: tf.meshgrid(P([3]), P([4]), indexing="foo"), ValueError,
     "Argument `indexing` parameter must be either 'xy' or 'ij', got 'foo'"),
    ('mesh_4', lambda: tf.meshgrid([1,2], [3,4,5]), None,
     '[BroadcastTo int32 (3, 2); BroadcastTo int32 (3, 2)]'),
    ('inv_1', lambda: tf.invert_permutation(I([3])), None, 'InvertPermutation int32 (3,)'),
    ('inv_2', lambda: tf.invert_permutation(I([3,3])), ValueError,
     'Shape must be rank 1 but is rank 2'),
    ('inv_3', lambda: tf.invert_permutation(P([3])), TypeError,
     "Value passed to parameter 'x' has DataType float32 not in list of allowed values: int32, i"),

]


@pytest.mark.parametrize("case", STATIC, ids=[c[0] for c in STATIC])
def test_static_shapes_and_build_errors_match_tf1(case):
    _, build, err, expected = case
    with tf.Graph().as_default():
        if err is None:
            assert _describe(build()) == expected
        else:
            with pytest.raises(err, match=re.escape(expected)):
                build()


# (name, builder, feeds for the placeholders in creation order, expected value | error)
RUN = [
    ('r1', lambda: tf.reshape(P(None), [4]), lambda: [np.zeros(6)],
     'InvalidArgumentError',
     'Input to reshape is a tensor with 6 values, but the requested shape has 4'),
    ('r2', lambda: tf.reshape(P(None), [4, -1]), lambda: [np.zeros(6)],
     'InvalidArgumentError',
     'Input to reshape is a tensor with 6 values, but the requested shape requires a multiple of'),
    ('r3', lambda: tf.reshape(P(None), [-1, -1]), lambda: [np.zeros(6)],
     'InvalidArgumentError',
     'Only one input size may be -1, not both 0 and 1'),
    ('r4', lambda: tf.reshape(P(None), [2, -2]), lambda: [np.zeros(6)],
     'ValueError',
     'Invalid value in tensor used for shape: -2'),
    ('r5', lambda: tf.reshape(P(None), [0, -1]), lambda: [np.zeros((0, 3))], 'float32[0, 3] []'),
    ('r6', lambda: tf.reshape(P(None), [-1, 0]), lambda: [np.zeros((2, 0))], 'float32[2, 0] []'),
    ('r7', lambda: tf.reshape(P(None), tf.placeholder(tf.int32)), lambda: [np.zeros(6), [[2, 3]]],
     'InvalidArgumentError',
     'sizes input must be 1-D, not [1,2]'),
    ('r8', lambda: tf.reshape(P(None), [3, 2, 1]), lambda: [A[0, :, :2]],
     'float32[3, 2, 1] [0.,1.,4.,5.,8.,9.]'),
    ('t1', lambda: tf.transpose(P(None), tf.placeholder(tf.int32)), lambda: [A, [0, 1]],
     'InvalidArgumentError',
     'transpose expects a vector of size 3. But input(1) is a vector of size 2'),
    ('t2', lambda: tf.transpose(P(None), tf.placeholder(tf.int32)), lambda: [A, [0, 1, 3]],
     'InvalidArgumentError',
     '3 is out of range [0 .. 3)'),
    ('t3', lambda: tf.transpose(P(None), tf.placeholder(tf.int32)), lambda: [A, [0, 1, 1]],
     'InvalidArgumentError',
     '2 is missing from {0,1,1}.'),
    ('t4', lambda: tf.transpose(P(None), tf.placeholder(tf.int32)), lambda: [A, [2, 0, 1]],
     'float32[4, 2, 3] [ 0., 4., 8.,12.,16.,20., 1., 5., 9.,13.,17.,21., 2.,'
     ' 6.,10.,14.,18.,22., 3., 7.,11.,15.,19.,23.]'),
    # TF's kernel counts a negative perm entry from the end
    ('t4n', lambda: tf.transpose(P(None), tf.placeholder(tf.int32)), lambda: [A, [-1, 0, 1]],
     'float32[4, 2, 3] [ 0., 4., 8.,12.,16.,20., 1., 5., 9.,13.,17.,21., 2.,'
     ' 6.,10.,14.,18.,22., 3., 7.,11.,15.,19.,23.]'),
    ('t4m', lambda: tf.transpose(P(None), tf.placeholder(tf.int32)), lambda: [A, [-1, 2, 0]],
     'InvalidArgumentError',
     '1 is missing from {2,2,0}.'),
    ('t4o', lambda: tf.transpose(P(None), tf.placeholder(tf.int32)), lambda: [A, [-4, 0, 1]],
     'InvalidArgumentError',
     '-1 is out of range [0 .. 3)'),
    ('t5', lambda: tf.transpose(tf.constant([[1+2j, 3j]]), conjugate=True), lambda: [],
     'complex128[2, 1] [1.-2.j,0.-3.j]'),
    ('t6', lambda: tf.transpose(P(None)), lambda: [A],
     'float32[4, 3, 2] [ 0.,12., 4.,16., 8.,20., 1.,13., 5.,17., 9.,21., 2.,14.,'
     ' 6.,18.,10.,22., 3.,15., 7.,19.,11.,23.]'),
    ('c1', lambda: tf.concat([P(None), P(None)], 1), lambda: [np.ones((2, 3)), np.ones((2, 4))],
     'float32[2, 7] [1.,1.,1.,1.,1.,1.,1.,1.,1.,1.,1.,1.,1.,1.]'),
    ('c2', lambda: tf.concat([P(None), P(None)], 1), lambda: [np.ones((2, 3)), np.ones((3, 4))],
     'InvalidArgumentError',
     'ConcatOp : Dimension 0 in both shapes must be equal: shape[0] = [2,3] vs. shape[1] = [3,4]'),
    ('c3', lambda: tf.concat([P(None), P(None)], 1), lambda: [np.ones((2, 3)), np.ones((2,))],
     'InvalidArgumentError',
     'ConcatOp : Ranks of all input tensors should match: shape[0] = [2,3] vs. shape[1] = [2]'),
    ('c4', lambda: tf.concat([P(None), P(None)], tf.placeholder(tf.int32)),
     lambda: [np.ones((2, 3)), np.ones((2, 3)), 5],
     'InvalidArgumentError',
     'ConcatOp : Expected concatenating dimensions in the range [-2, 2), but got 5'),
    ('c5', lambda: tf.concat([P(None), P(None)], tf.placeholder(tf.int32)),
     lambda: [np.ones((2, 3)), np.ones((2, 3)), -1],
     'float32[2, 6] [1.,1.,1.,1.,1.,1.,1.,1.,1.,1.,1.,1.]'),
    ('s1', lambda: tf.split(P(None), 3, axis=1), lambda: [np.zeros((2, 4))],
     'InvalidArgumentError',
     'Number of ways to split should evenly divide the split dimension, but got split_dim 1 (siz'),
    ('s2', lambda: tf.split(P(None), 2, axis=tf.placeholder(tf.int32)),
     lambda: [np.zeros((2, 4)), 3],
     'InvalidArgumentError',
     '-input rank(-2) <= split_dim < input rank (2), but got 3'),
    ('s3', lambda: tf.split(P(None), tf.placeholder(tf.int32, [3]), axis=1),
     lambda: [np.arange(8.).reshape(2, 4), [1, -1, 1]],
     '[float32[2, 1] [0.,4.]; float32[2, 2] [1.,2.,5.,6.]; float32[2, 1] [3.,7.]]'),
    ('s4', lambda: tf.split(P(None), tf.placeholder(tf.int32, [3]), axis=1),
     lambda: [np.arange(8.).reshape(2, 4), [1, -1, -1]],
     'InvalidArgumentError',
     'There can only be one -1 in the input.'),
    ('s5', lambda: tf.split(P(None), tf.placeholder(tf.int32, [3]), axis=1),
     lambda: [np.arange(8.).reshape(2, 4), [1, 2, 3]],
     'InvalidArgumentError',
     'Determined shape must either match input shape along split_dim exactly if fully specified,'),
    ('s6', lambda: tf.split(P(None), tf.placeholder(tf.int32, [3]), axis=1),
     lambda: [np.arange(8.).reshape(2, 4), [1, 5, -1]],
     'InvalidArgumentError',
     'Determined shape must either match input shape along split_dim exactly if fully specified,'),
    ('s7', lambda: tf.split(P(None), tf.placeholder(tf.int32, [2]), axis=1),
     lambda: [np.arange(8.).reshape(2, 4), [1, 2]],
     'InvalidArgumentError',
     'Determined shape must either match input shape along split_dim exactly if fully specified,'),
    ('p1', lambda: tf.stack([P(None), P(None)]), lambda: [np.ones(2), np.ones(3)],
     'InvalidArgumentError',
     'Shapes of all inputs must match: values[0].shape = [2] != values[1].shape = [3]'),
    ('p2', lambda: tf.stack([P(None), P(None)], axis=1),
     lambda: [np.arange(2.), np.arange(2.) + 5],
     'float32[2, 2] [0.,5.,1.,6.]'),
    ('u1', lambda: tf.unstack(P(None), num=3), lambda: [np.ones((2, 4))],
     'InvalidArgumentError',
     'Input shape axis 0 must equal 3, got shape [2,4]'),
    ('u2', lambda: tf.unstack(P(None), num=2, axis=-1), lambda: [np.arange(4.).reshape(2, 2)],
     '[float32[2] [0.,2.]; float32[2] [1.,3.]]'),
    ('e1', lambda: tf.expand_dims(P(None), tf.placeholder(tf.int32)), lambda: [np.ones((2, 3)), 3],
     'InvalidArgumentError',
     'Tried to expand dim index 3 for tensor with 2 dimensions.'),
    ('e2', lambda: tf.expand_dims(P(None), tf.placeholder(tf.int32)),
     lambda: [np.ones((2, 3)), -3],
     'float32[1, 2, 3] [1.,1.,1.,1.,1.,1.]'),
    ('e3', lambda: tf.expand_dims(P(None), tf.placeholder(tf.int32)),
     lambda: [np.ones((2, 3)), [0, 1]],
     'InvalidArgumentError',
     "'dim' must be a tensor with a single value"),
    ('q1', lambda: tf.squeeze(P(None), [1]), lambda: [np.ones((2, 3))],
     'InvalidArgumentError',
     'Can not squeeze dim[1], expected a dimension of 1, got 3'),
    ('q2', lambda: tf.squeeze(P(None), [3]), lambda: [np.ones((2, 3))],
     'InvalidArgumentError',
     'Tried to squeeze dim index 3 for tensor with 2 dimensions.'),
    ('q3', lambda: tf.squeeze(P(None)), lambda: [np.ones((1, 2, 1))], 'float32[2] [1.,1.]'),
    ('f1', lambda: tf.fill(tf.placeholder(tf.int32), 2.0), lambda: [[2, -1]],
     'InvalidArgumentError',
     'Dimension -1 must be >= 0'),
    ('f2', lambda: tf.fill(tf.placeholder(tf.int32), 2.0), lambda: [[[2, 1]]],
     'InvalidArgumentError',
     'dims must represent a vector, got shape [1,2]'),
    ('f3', lambda: tf.fill([2], tf.placeholder(tf.float32)), lambda: [[1.0]],
     'float32[2] [1.,1.]'),
    ('ti1', lambda: tf.tile(P(None), tf.placeholder(tf.int32)),
     lambda: [np.ones((2, 3)), [1, 2, 3]],
     'InvalidArgumentError',
     'Expected multiples argument to be a vector of length 2 but got length 3'),
    ('ti2', lambda: tf.tile(P(None), tf.placeholder(tf.int32)), lambda: [np.ones((2, 3)), [1, -2]],
     'InvalidArgumentError',
     'Expected multiples[1] >= 0, but got -2'),
    ('ti3', lambda: tf.tile(P(None), tf.placeholder(tf.int32)),
     lambda: [np.arange(6.).reshape(2, 3), [2, 2]],
     'float32[4, 6] [0.,1.,2.,0.,1.,2.,3.,4.,5.,3.,4.,5.,0.,1.,2.,0.,1.,2.,3.,4.,5.,3.,4.,5.]'),
    ('pa1', lambda: tf.pad(P(None), tf.placeholder(tf.int32)), lambda: [np.ones((2, 3)), [[1, 1]]],
     'InvalidArgumentError',
     'The first dimension of paddings must be the rank of inputs[1,2] [2,3]'),
    ('pa2', lambda: tf.pad(P(None), tf.placeholder(tf.int32)),
     lambda: [np.ones((2, 3)), [[1, 1], [-1, 0]]],
     'InvalidArgumentError',
     'Paddings must be non-negative: -1 0'),
    ('pa3', lambda: tf.pad(P(None), tf.placeholder(tf.int32), mode="REFLECT"),
     lambda: [np.ones((2, 3)), [[2, 0], [0, 0]]],
     'InvalidArgumentError',
     'paddings must be less than the dimension size: 2, 0 not less than 2'),
    ('pa4', lambda: tf.pad(P(None), tf.placeholder(tf.int32), mode="SYMMETRIC"),
     lambda: [np.ones((2, 3)), [[3, 0], [0, 0]]],
     'InvalidArgumentError',
     'paddings must be no greater than the dimension size: 3, 0 greater than 2'),
    ('pa5', lambda: tf.pad(P(None), tf.placeholder(tf.int32), mode="SYMMETRIC"),
     lambda: [np.arange(6.).reshape(2, 3), [[2, 1], [3, 2]]],
     'float32[5, 8]'
     ' [5.,4.,3.,3.,4.,5.,5.,4.,2.,1.,0.,0.,1.,2.,2.,1.,2.,1.,0.,0.,1.,2.,2.,1.,'
     '5.,4.,3.,3.,4.,5.,5.,4.,5.,4.,3.,3.,4.,5.,5.,4.]'),
    ('pa6', lambda: tf.pad(P(None), tf.placeholder(tf.int32), constant_values=7.0),
     lambda: [np.arange(6.).reshape(2, 3), [[0, 1], [2, 0]]],
     'float32[3, 5] [7.,7.,0.,1.,2.,7.,7.,3.,4.,5.,7.,7.,7.,7.,7.]'),
    ('pa7', lambda: tf.pad(P(None), tf.placeholder(tf.int32), mode="REFLECT"),
     lambda: [np.ones((2, 3)), [[2, 0], [-1, 0]]],
     'InvalidArgumentError',
     'paddings must be less than the dimension size: 2, 0 not less than 2'),
    ('pa8', lambda: tf.pad(P(None), tf.placeholder(tf.int32)),
     lambda: [np.ones((2, 3)), [[1, 1, 1], [1, 1, 1]]],
     'InvalidArgumentError',
     'paddings must be a matrix with 2 columns: [2,3]'),
    ('b1', lambda: tf.broadcast_to(P(None), tf.placeholder(tf.int32)),
     lambda: [np.ones(3), [2, 4]],
     'InvalidArgumentError',
     'Incompatible shapes: [3] vs. [2,4]'),
    ('b2', lambda: tf.broadcast_to(P(None), tf.placeholder(tf.int32)),
     lambda: [np.ones((2, 3)), [3]],
     'InvalidArgumentError',
     'Rank of input (2) must be no greater than rank of output shape (1).'),
    ('b3', lambda: tf.broadcast_to(P(None), tf.placeholder(tf.int32)),
     lambda: [np.arange(3.), [2, 1, 3]],
     'float32[2, 1, 3] [0.,1.,2.,0.,1.,2.]'),
    ('v1', lambda: tf.reverse(P(None), tf.placeholder(tf.int32)), lambda: [np.ones((2, 3)), [2]],
     'InvalidArgumentError',
     "'axis'[0] = 2 is out of valid range [0, 1"),
    ('v2', lambda: tf.reverse(P(None), tf.placeholder(tf.int32)),
     lambda: [np.ones((2, 3)), [1, -1]],
     'InvalidArgumentError',
     'axis 1 specified more than once.'),
    ('v3', lambda: tf.reverse(P(None), tf.placeholder(tf.int32)),
     lambda: [np.arange(6.).reshape(2, 3), [-1]],
     'float32[2, 3] [2.,1.,0.,5.,4.,3.]'),
    ('i1', lambda: tf.invert_permutation(tf.placeholder(tf.int32)), lambda: [[2, 0, 1]],
     'int32[3] [1,2,0]'),
    ('i2', lambda: tf.invert_permutation(tf.placeholder(tf.int32)), lambda: [[2, 0, 3]],
     'InvalidArgumentError',
     '3 is not between 0 and 3'),
    ('i3', lambda: tf.invert_permutation(tf.placeholder(tf.int32)), lambda: [[1, 0, 1]],
     'InvalidArgumentError',
     '1 is duplicated in the input.'),
    ('i4', lambda: tf.invert_permutation(tf.placeholder(tf.int32)), lambda: [[[1, 0]]],
     'InvalidArgumentError',
     'invert_permutation expects a 1D vector.'),
    ('z1', lambda: tf.zeros_like(tf.constant([b"a", b"b"])), lambda: [], "object[2] [b'',b'']"),
    ('z2', lambda: tf.zeros_like(tf.placeholder(tf.string)),
     lambda: [np.array([b"a"], dtype=object)],
     "object[1] [b'']"),
    ('z3', lambda: tf.ones_like(tf.placeholder(tf.bool)), lambda: [[True, False]],
     'bool[2] [ True, True]'),
    ('z4', lambda: tf.pad(tf.constant([[True]]), [[1, 0], [0, 1]]), lambda: [],
     'bool[2, 2] [False,False, True,False]'),
    ('z5', lambda: tf.pad(tf.constant([[b"x"]]), [[1, 0], [0, 1]]), lambda: [],
     "object[2, 2] [b'',b'',b'x',b'']"),
    ('z6', lambda: tf.tile(tf.constant([b"x", b"y"]), [2]), lambda: [],
     "object[4] [b'x',b'y',b'x',b'y']"),
    ('z7', lambda: tf.concat([tf.constant([b"x"]), tf.constant([b"y"])], 0), lambda: [],
     "object[2] [b'x',b'y']"),
    ('z8', lambda: tf.reverse(tf.constant([True, False, False]), [0]), lambda: [],
     'bool[3] [False,False, True]'),
    ('z10', lambda: tf.size(tf.placeholder(tf.float32)), lambda: [np.zeros((2, 0, 3))],
     'int32[] [0]'),
    ('z11', lambda: tf.rank(tf.placeholder(tf.float32)), lambda: [np.zeros((2, 0, 3))],
     'int32[] [3]'),
    ('z12', lambda: tf.broadcast_to(tf.constant([b"a"]), [2]), lambda: [],
     "object[2] [b'a',b'a']"),
    ('z13', lambda: tf.zeros([2], tf.string), lambda: [], "object[2] [b'',b'']"),

]


@pytest.mark.parametrize("case", RUN, ids=[c[0] for c in RUN])
def test_run_values_and_errors_match_tf1(case):
    build, feeds = case[1], case[2]
    with tf.Graph().as_default() as g:
        if len(case) == 5:
            with pytest.raises(_ERR[case[3]], match=re.escape(case[4])):
                r = build()
                phs = [op.outputs[0] for op in g.get_operations() if op.type == "Placeholder"]
                with tf.Session() as s:
                    s.run(r, dict(zip(phs, feeds())))
            return
        r = build()
        phs = [op.outputs[0] for op in g.get_operations() if op.type == "Placeholder"]
        with tf.Session() as s:
            assert _fmt(s.run(r, dict(zip(phs, feeds())))) == case[3]


# --- values against NumPy, over dtypes ------------------------------------------------------
DTYPES = [np.float16, np.float32, np.float64, np.int32, np.int64, np.bool_, object]


def _sample(dtype, shape):
    raw = np.arange(int(np.prod(shape))).reshape(shape)
    if dtype is object:
        return np.vectorize(lambda v: b"s%d" % v, otypes=[object])(raw)
    if dtype is np.bool_:
        return raw % 3 == 0
    return raw.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_forward_values_match_numpy_over_dtypes(sess, dtype):
    x = _sample(dtype, (2, 3, 4))
    y = _sample(dtype, (2, 1, 4))
    tdt = tf.string if dtype is object else tf.as_dtype(dtype)
    px = tf.placeholder(tdt, [None, 3, None])
    py = tf.placeholder(tdt, None)
    pad_value = {object: b"", np.bool_: False}.get(dtype, 0)
    checks = [
        (tf.reshape(px, [4, -1]), x.reshape(4, -1)),
        (tf.transpose(px, [2, 0, 1]), x.transpose(2, 0, 1)),
        (tf.transpose(px), x.T),
        (tf.concat([px, py], 1), np.concatenate([x, y], 1)),
        (tf.split(px, 3, axis=1)[1], x[:, 1:2]),
        (tf.split(px, [1, -1], axis=-1)[1], x[..., 1:]),
        (tf.stack([px, px], axis=2), np.stack([x, x], 2)),
        (tf.unstack(px, num=4, axis=-1)[3], x[..., 3]),
        (tf.expand_dims(px, -2), x[:, :, None, :]),
        (tf.squeeze(py, [1]), y[:, 0]),
        (tf.tile(py, [1, 2, 1]), np.tile(y, (1, 2, 1))),
        (tf.pad(px, [[0, 1], [2, 0], [0, 0]]),
         np.pad(x, [(0, 1), (2, 0), (0, 0)], constant_values=pad_value)),
        (tf.pad(px, [[1, 1], [2, 2], [0, 3]], "SYMMETRIC"),
         np.pad(x, [(1, 1), (2, 2), (0, 3)], mode="symmetric")),
        (tf.pad(px, [[1, 1], [2, 2], [0, 3]], "Reflect"),
         np.pad(x, [(1, 1), (2, 2), (0, 3)], mode="reflect")),
        (tf.broadcast_to(py, [3, 2, 5, 4]), np.broadcast_to(y, (3, 2, 5, 4))),
        (tf.reverse(px, [0, -1]), x[::-1, :, ::-1]),
        (tf.zeros_like(py), np.full(y.shape, pad_value, dtype=x.dtype)),
        (tf.shape(px), np.array([2, 3, 4], np.int32)),
    ]
    if dtype is not object:
        checks.append((tf.ones_like(py), np.ones(y.shape, dtype=x.dtype)))
    outs = sess.run([c[0] for c in checks], {px: x, py: y})
    for (t, ref), out in zip(checks, outs):
        assert out.dtype == ref.dtype, t
        assert out.shape == ref.shape, t
        np.testing.assert_array_equal(out, ref)
        assert t.shape.is_compatible_with(out.shape), t


def test_pad_static_shape_from_a_partly_known_stacked_paddings(sess):
    # TF1 reads the known entries of a stacked paddings tensor (get_static_value partial)
    n = tf.placeholder(tf.int32, [])
    x = tf.placeholder(tf.float32, [2, 4])
    paddings = tf.stack([[n, 1], [0, 3]])
    y = tf.pad(x, paddings)
    assert y.shape.as_list() == [None, 7]
    assert sess.run(y, {x: np.ones((2, 4)), n: 2}).shape == (5, 7)
    value = tf.get_static_value(paddings, partial=True)
    assert value.dtype == object and value.shape == (2, 2)
    assert value[0, 0] is None and value.tolist()[1] == [0, 3]


def test_pad_with_constant_values_and_bool_string_constants(sess):
    x = np.arange(6, dtype=np.int64).reshape(2, 3)
    out = sess.run(tf.pad(x, [[1, 0], [0, 2]], constant_values=-7))
    np.testing.assert_array_equal(out, np.pad(x, [(1, 0), (0, 2)], constant_values=-7))
    assert tf.pad(x, [[1, 0], [0, 2]], constant_values=-7).op.type == "PadV2"
    s = sess.run(tf.pad(tf.constant([[b"a"]]), [[0, 1], [0, 0]], constant_values=b"z"))
    assert s.tolist() == [[b"a"], [b"z"]]


def test_fill_zeros_ones_values_and_dtypes(sess):
    n = I([])
    outs = sess.run([tf.fill([2, 3], np.float64(2.5)), tf.zeros(tf.stack([n, 2]), tf.int64),
                     tf.ones([2, 2], tf.bool), tf.zeros([30, 40], tf.float16),
                     tf.ones(n, tf.int32), tf.zeros([2], tf.string)], {n: 3})
    np.testing.assert_array_equal(outs[0], np.full((2, 3), 2.5))
    assert outs[0].dtype == np.float64
    assert outs[1].dtype == np.int64 and outs[1].shape == (3, 2) and not outs[1].any()
    assert outs[2].dtype == np.bool_ and outs[2].all()
    assert outs[3].dtype == np.float16 and outs[3].shape == (30, 40)
    np.testing.assert_array_equal(outs[4], np.ones(3, np.int32))
    assert outs[5].tolist() == [b"", b""]


@pytest.mark.parametrize("shape", [[-1], [2, -1], [2000, -1]])
def test_zeros_and_ones_of_a_negative_dimension_fail_like_fill(graph, shape):
    for make in (tf.zeros, tf.ones):
        with pytest.raises(ValueError, match="Fill dimensions must be >= 0"):
            make(shape)


def test_meshgrid_values_match_numpy(sess):
    x, y, z = np.arange(3.), np.arange(4.) + 10, np.arange(2.) - 5
    for indexing in ("xy", "ij"):
        got = sess.run(tf.meshgrid(x, y, z, indexing=indexing))
        for g, r in zip(got, np.meshgrid(x, y, z, indexing=indexing)):
            np.testing.assert_array_equal(g, r)
    assert tf.meshgrid() == []
    with pytest.raises(TypeError, match="'foo' is an invalid keyword"):
        tf.meshgrid(x, foo=1)


def test_shape_size_rank_values_with_unknown_shapes(sess):
    x = P(None)
    v = np.zeros((2, 0, 5), np.float32)
    out = sess.run([tf.shape(x), tf.shape(x, out_type=tf.int64), tf.size(x), tf.rank(x),
                    tf.shape_n([x, x], out_type=tf.int64)], {x: v})
    np.testing.assert_array_equal(out[0], [2, 0, 5])
    assert out[0].dtype == np.int32 and out[1].dtype == np.int64
    assert out[2] == 0 and out[2].dtype == np.int32
    assert out[3] == 3 and out[3].dtype == np.int32
    assert [a.tolist() for a in out[4]] == [[2, 0, 5], [2, 0, 5]]


def test_invert_permutation_and_conjugate_transpose(sess):
    p = np.random.permutation(7).astype(np.int64)
    np.testing.assert_array_equal(sess.run(tf.invert_permutation(p)), np.argsort(p))
    c = np.array([[1 + 2j, 3 - 1j], [2j, 4]], np.complex64)
    np.testing.assert_array_equal(sess.run(tf.transpose(c, conjugate=True)), c.conj().T)
    assert tf.transpose(c, conjugate=True).op.type == "ConjugateTranspose"
    assert tf.transpose(np.ones((2, 3)), conjugate=True).op.type == "Transpose"


def test_transpose_of_unknown_rank_reverses_dims(sess):
    x = P(None)
    t = tf.transpose(x)
    assert t.shape.ndims is None
    np.testing.assert_array_equal(sess.run(t, {x: A}), A.T)


# --- strings: object arrays of bytes throughout ---------------------------------------------
def test_string_elements_stay_object_arrays_of_bytes(sess):
    """Packing, unpacking, gathering and slicing string tensors down to scalars and back:
    NumPy indexing gives a bare bytes element, np.array of 0-d object arrays nests them,
    and np.array of bytes makes an |S array, which drops trailing NULs (TF 2.21's values)."""
    v = tf.constant([b"a\x00", b"b", b"c\x00\x00"])
    ph = tf.placeholder_with_default(v, [3])
    for x in (v, ph):
        scalars = [x[0], tf.gather(x, 2), tf.unstack(x)[1], tf.reshape(tf.slice(x, [2], [1]), [])]
        got = sess.run({"stack": tf.stack(scalars), "stack1": tf.stack([tf.stack(scalars)], 1),
                        "concat": tf.concat([tf.stack(scalars[:2]), x], 0),
                        "unstack": tf.unstack(x), "joined": tf.strings.join(scalars[:2])})
        for key in ("stack", "stack1", "concat"):
            assert got[key].dtype == object, key
        assert got["stack"].tolist() == [b"a\x00", b"c\x00\x00", b"b", b"c\x00\x00"]
        assert got["stack1"].tolist() == [[b"a\x00"], [b"c\x00\x00"], [b"b"], [b"c\x00\x00"]]
        assert got["concat"].tolist() == [b"a\x00", b"c\x00\x00", b"a\x00", b"b", b"c\x00\x00"]
        assert got["unstack"] == [b"a\x00", b"b", b"c\x00\x00"]
        assert got["joined"] == b"a\x00c\x00\x00"


# --- build-time values and graph structure as in TF1 -------------------------------------------
def test_static_values_flow_into_shapes(graph):
    y = P([5, 7])
    n = I([])
    assert tf.reshape(P([35]), tf.shape(P([5, 7]))).shape.as_list() == [5, 7]
    assert tf.zeros(tf.stack([n, 3])).shape.as_list() == [None, 3]
    assert tf.fill(tf.concat([[2], tf.shape(y)], 0), 1.0).shape.as_list() == [2, 5, 7]
    assert tf.get_static_value(tf.stack([1, tf.size(y)])).tolist() == [1, 35]
    assert tf.get_static_value(tf.unstack(tf.constant([[1, 2], [3, 4]]))[1]).tolist() == [3, 4]
    assert tf.get_static_value(tf.fill([2], 3)).tolist() == [3, 3]
    assert tf.get_static_value(tf.stack([n, 3])) is None
    assert tf.get_static_value(tf.stack([1, 2], axis=0)).tolist() == [1, 2]
    ranked = apply_rank(P([None, 2, 3]))
    assert tf.get_static_value(ranked) == 3


def apply_rank(x):
    from tensorweave.framework.op_builder import apply_op
    return apply_op("Rank", [x]).outputs[0]


def test_builders_make_the_same_op_types_as_tf1(graph):
    assert tf.shape(P([2, 3])).op.type == "Const"
    assert tf.shape(P([None, 3])).op.type == "Shape"
    assert tf.rank(P([None])).op.type == "Const"
    assert tf.size(P([None, 0])).op.type == "Const"
    assert tf.zeros([2, 3]).op.type == "Const"
    assert tf.zeros([10, 100]).op.type == "Fill"
    assert tf.zeros_like(P([2, 3])).op.type == "Const"
    assert tf.zeros_like(P([None, 3])).op.type == "ZerosLike"
    assert tf.ones_like(P([None, 3])).op.type == "Fill"
    assert tf.stack([1, 2]).op.type == "Const"
    assert tf.stack([I([]), 2]).op.type == "Pack"
    c = tf.concat([P([2])], 0)
    assert c.op.type == "Identity" and c.op.name == "concat/concat"
    assert tf.transpose(P([2, 3]), name="t").op.name == "t"
    assert tf.split(P([4]), [1, 3])[0].op.get_attr("Tlen") == tf.int32
    assert tf.reverse_v2 is tf.reverse and tf.manip.tile is tf.tile
    assert tf.math.invert_permutation is tf.invert_permutation


def test_argument_errors(graph):
    with pytest.raises(ValueError, match="Must specify an axis argument"):
        tf.expand_dims(P([2]))
    # TF names the deprecated argument first
    with pytest.raises(ValueError, match=r"^Cannot specify both 'dim' and 'axis'\.$"):
        tf.expand_dims(P([2]), 0, dim=0)
    with pytest.raises(ValueError, match=r"^Cannot specify both 'squeeze_dims' and 'axis'\.$"):
        tf.squeeze(P([1]), [0], squeeze_dims=[0])
    for num in (-1, -2):
        with pytest.raises(ValueError, match="Attr 'num' of 'Unpack' Op passed %d less than "
                                             "minimum 0." % num):
            tf.unstack(P([None, 3]), num=num)
    for make in (lambda: tf.tile(P([2]), [[1]]), lambda: tf.reshape(P([2]), [[2]])):
        with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
            make()
    with pytest.raises(ValueError, match="Input must be scalar but has rank 1"):
        tf.one_hot([1], [3])
    with pytest.raises(ValueError, match="Rank-0 tensors are not supported"):
        tf.split(P([4]), I([]))
    with pytest.raises(ValueError, match="not in range"):
        tf.stack([P([2])], axis=2)
    with pytest.raises(ValueError, match="Cannot convert a partially known TensorShape"):
        tf.ones(tf.TensorShape([None, 2]))
    with pytest.raises(TypeError, match="does not match"):
        tf.stack([P([2]), I([2])])
    with pytest.raises(TypeError, match="not in list of allowed values"):
        tf.reshape(P([2]), tf.constant([2.0]))


# --- gradients ---------------------------------------------------------------------------------
def _err(x, x_shape, y, y_shape, init=None):
    return compute_gradient_error(x, x_shape, y, y_shape, x_init_value=init)


def _x(shape, static=True):
    return tf.placeholder(tf.float64, shape if static else [None] * len(shape))


@pytest.mark.parametrize("static", [True, False], ids=["static", "dynamic"])
def test_gradients_of_reshaping_ops(graph, static):
    x = _x([2, 3, 4], static)
    cases = [
        (tf.reshape(x, [4, -1]), [4, 6]),
        (tf.transpose(x, [1, 2, 0]), [3, 4, 2]),
        (tf.expand_dims(x, 1), [2, 1, 3, 4]),
        (tf.squeeze(tf.expand_dims(x, -1), [3]), [2, 3, 4]),
        (tf.reverse(x, [0, 2]), [2, 3, 4]),
        (tf.tile(x, [2, 1, 3]), [4, 3, 12]),
        (tf.broadcast_to(tf.expand_dims(x, 1), [2, 5, 3, 4]), [2, 5, 3, 4]),
        (tf.pad(x, [[1, 0], [0, 2], [1, 1]]), [3, 5, 6]),
        (tf.pad(x, [[1, 0], [0, 2], [1, 1]], constant_values=3.0), [3, 5, 6]),
        (tf.pad(x, [[1, 0], [0, 2], [1, 3]], "REFLECT"), [3, 5, 8]),
        (tf.pad(x, [[1, 2], [0, 3], [4, 1]], "SYMMETRIC"), [5, 6, 9]),
    ]
    for y, y_shape in cases:
        assert _err(x, [2, 3, 4], y, y_shape) < 1e-8, y.op.type


@pytest.mark.parametrize("static", [True, False], ids=["static", "dynamic"])
def test_gradients_of_joining_ops(graph, static):
    x = _x([2, 3], static)
    w = tf.constant(np.arange(6.).reshape(2, 3))
    parts = tf.split(x, 3, axis=1)
    sv = tf.split(x, [1, -1], axis=1)
    cases = [
        (tf.concat([x, w, x], 1), [2, 9]),
        (tf.concat([w, x], tf.constant(-2)), [4, 3]),
        (tf.concat([parts[2], parts[0]], 1), [2, 2]),   # parts[1] gets a zero gradient
        (tf.concat([sv[1], sv[1]], 0), [4, 2]),
        (tf.stack([x, w, x], axis=1), [2, 3, 3]),
        (tf.unstack(x, num=3, axis=1)[2], [2]),
        (tf.stack(tf.unstack(x, num=2)[::-1], axis=-1), [3, 2]),
    ]
    for y, y_shape in cases:
        assert _err(x, [2, 3], y, y_shape) < 1e-8, y.op.type


def test_gradients_of_concat_with_fed_axis_and_fill_value(graph):
    x = _x([2, 3], static=False)
    axis = I([])
    y = tf.concat([x, tf.ones_like(x)], axis)
    err = compute_gradient_error(x, [2, 3], y, [2, 6], extra_feed_dict={axis: 1})
    assert err < 1e-8
    v = tf.placeholder(tf.float64, [])
    assert _err(v, [], tf.fill([2, 3], v), [2, 3], np.float64(0.5)) < 1e-8


def test_gradient_of_meshgrid_and_mirror_pad_grad(graph):
    from tensorweave.framework.op_builder import apply_op
    x = _x([3])
    y = tf.meshgrid(x, tf.constant([1., 2.], tf.float64))[0]
    assert _err(x, [3], y, [2, 3]) < 1e-8
    g = _x([4, 7])
    for mode in ("REFLECT", "SYMMETRIC"):
        folded = apply_op("MirrorPadGrad", [g, [[1, 1], [2, 2]]], {"mode": mode}).outputs[0]
        assert folded.shape.as_list() == [2, 3]
        assert _err(g, [4, 7], folded, [2, 3]) < 1e-8


def test_not_differentiable_ops_give_no_gradient(graph):
    x = _x([2, 3])
    for y in (tf.cast(apply_rank(x), tf.float64), tf.zeros_like(tf.identity(x)) + 0.0,
              tf.ones_like(x)):
        assert tf.gradients(y, x)[0] is None


def test_stack_gives_python_values_the_dtype_of_the_tensors(sess):
    # TF's Pack infers its type from the tensors among the values
    x = tf.constant(3, tf.int64)
    y = tf.stack([2, x])
    assert y.dtype == tf.int64
    np.testing.assert_array_equal(sess.run(y), np.array([2, 3], np.int64))
    with pytest.raises(TypeError):
        tf.stack([2.5, x])
