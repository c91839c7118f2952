"""TF 2.x's TensorList ops through tf.raw_ops: values against NumPy, errors and static
shapes against TF 2.21 (messages recorded from it), gradients numerically, lists as
while_loop variables (both control-flow executors) and in a GraphDef round trip."""
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gradient_checker import compute_gradient_error
from tensorweave.framework import errors
from tensorweave.ops.data_flow.tensor_list import TensorList

R = tf.raw_ops
F32 = tf.float32


def _reserve(shape=(2,), n=3, dtype=F32):
    return R.TensorListReserve(element_shape=list(shape) if shape != -1 else -1,
                               num_elements=n, element_dtype=dtype)


def _empty(shape=-1, max_num_elements=-1, dtype=F32):
    return R.EmptyTensorList(element_shape=shape, max_num_elements=max_num_elements,
                             element_dtype=dtype)


def _from(x, shape=-1):
    return R.TensorListFromTensor(tensor=x, element_shape=shape)


def _stack(lst, shape=-1, dtype=F32, **kw):
    return R.TensorListStack(input_handle=lst, element_shape=shape, element_dtype=dtype, **kw)


# --- values ---------------------------------------------------------------------------------
def test_reserve_set_item_stack_fills_unset_elements_with_zeros(sess):
    lst = R.TensorListSetItem(input_handle=_reserve(), index=1, item=[1.0, 2.0])
    out, n = sess.run([_stack(lst), R.TensorListLength(input_handle=lst)])
    np.testing.assert_array_equal(out, [[0, 0], [1, 2], [0, 0]])
    assert out.dtype == np.float32 and n == 3


def test_from_tensor_get_item_and_values_are_immutable(sess):
    x = np.arange(12, dtype=np.float32).reshape(3, 2, 2)
    lst = _from(x)
    changed = R.TensorListSetItem(input_handle=lst, index=0, item=-np.ones((2, 2), "f"))
    items = [R.TensorListGetItem(input_handle=lst, index=i, element_shape=-1,
                                 element_dtype=F32) for i in range(3)]
    got, old, new = sess.run([items, _stack(lst), _stack(changed)])
    for i in range(3):
        np.testing.assert_array_equal(got[i], x[i])
    np.testing.assert_array_equal(old, x)  # SetItem made a new list
    np.testing.assert_array_equal(new[0], -np.ones((2, 2)))
    np.testing.assert_array_equal(new[1:], x[1:])


def test_get_item_of_unset_element_infers_shape_from_set_ones(sess):
    lst = R.TensorListSetItem(input_handle=_reserve([-1]), index=1, item=[1.0, 2.0])
    item = R.TensorListGetItem(input_handle=lst, index=0, element_shape=-1,
                               element_dtype=F32)
    np.testing.assert_array_equal(sess.run(item), [0, 0])


def test_set_item_resizes_when_asked(sess):
    lst = R.TensorListSetItem(input_handle=_reserve(), index=4, item=[1.0, 2.0],
                              resize_if_index_out_of_bounds=True)
    np.testing.assert_array_equal(sess.run(_stack(lst, [2])),
                                  [[0, 0], [0, 0], [0, 0], [0, 0], [1, 2]])


def test_push_back_pop_back(sess):
    lst = _empty([2], max_num_elements=3)
    lst = R.TensorListPushBack(input_handle=lst, tensor=[1.0, 2.0])
    lst = R.TensorListPushBack(input_handle=lst, tensor=[3.0, 4.0])
    rest, last = R.TensorListPopBack(input_handle=lst, element_shape=-1, element_dtype=F32)
    out = sess.run([_stack(lst), last, R.TensorListLength(input_handle=rest)])
    np.testing.assert_array_equal(out[0], [[1, 2], [3, 4]])
    np.testing.assert_array_equal(out[1], [3, 4])
    assert out[2] == 1


def test_pop_back_of_unset_element_is_zeros(sess):
    _, item = R.TensorListPopBack(input_handle=_reserve([2]), element_shape=-1,
                                  element_dtype=F32)
    np.testing.assert_array_equal(sess.run(item), [0, 0])


def test_gather_scatter_variants(sess):
    x = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
    lst = R.TensorListScatter(tensor=x, indices=[4, 0, 2], element_shape=[2])
    v2 = R.TensorListScatterV2(tensor=x[:1], indices=[1], element_shape=-1, num_elements=3)
    into = R.TensorListScatterIntoExistingList(input_handle=_reserve(), tensor=x[:2],
                                               indices=[4, 1])
    gathered = R.TensorListGather(input_handle=lst, indices=[2, 4, 1], element_shape=-1,
                                  element_dtype=F32)
    out = sess.run([gathered, _stack(lst), _stack(v2, [2]), _stack(into)])
    np.testing.assert_array_equal(out[0], [[5, 6], [1, 2], [0, 0]])
    np.testing.assert_array_equal(out[1], [[3, 4], [0, 0], [5, 6], [0, 0], [1, 2]])
    np.testing.assert_array_equal(out[2], [[0, 0], [1, 2], [0, 0]])
    np.testing.assert_array_equal(out[3], [[0, 0], [3, 4], [0, 0], [0, 0], [1, 2]])


def test_split_concat_and_concat_of_unset_elements(sess):
    x = np.arange(10, dtype=np.float32).reshape(5, 2)
    lst = R.TensorListSplit(tensor=x, element_shape=[-1, 2], lengths=[2, 0, 3])
    value, lengths = R.TensorListConcatV2(input_handle=lst, element_shape=-1,
                                          leading_dims=np.zeros([0], np.int64),
                                          element_dtype=F32)
    v1 = R.TensorListConcat(input_handle=lst, element_dtype=F32)
    part = R.TensorListSetItem(input_handle=_reserve([-1, 2]), index=1, item=x[:2])
    given = R.TensorListConcatV2(input_handle=part, element_shape=-1,
                                 leading_dims=[1, 5, 2], element_dtype=F32)
    inferred = R.TensorListConcatV2(input_handle=part, element_shape=-1,
                                    leading_dims=np.zeros([0], np.int64), element_dtype=F32)
    out = sess.run([value, lengths, v1.tensor, given, inferred])
    np.testing.assert_array_equal(out[0], x)
    np.testing.assert_array_equal(out[1], [2, 0, 3])
    np.testing.assert_array_equal(out[2], x)
    zeros = np.zeros((2, 2), np.float32)
    np.testing.assert_array_equal(out[3].tensor, np.concatenate([zeros[:1], x[:2], zeros]))
    np.testing.assert_array_equal(out[3].lengths, [1, 2, 2])
    np.testing.assert_array_equal(out[4].tensor, np.concatenate([zeros, x[:2], zeros]))


def test_resize_length_element_shape(sess):
    lst = _from(np.array([[3, 4], [5, 6]], np.float32))
    grown, shrunk = (R.TensorListResize(input_handle=lst, size=n) for n in (3, 1))
    out = sess.run([_stack(grown, [2]), _stack(shrunk),
                    R.TensorListElementShape(input_handle=_reserve([-1, 2]),
                                             shape_type=tf.int64),
                    R.TensorListElementShape(input_handle=_reserve(-1), shape_type=tf.int32)])
    np.testing.assert_array_equal(out[0], [[3, 4], [5, 6], [0, 0]])
    np.testing.assert_array_equal(out[1], [[3, 4]])
    np.testing.assert_array_equal(out[2], [-1, 2])
    assert out[2].dtype == np.int64 and out[3] == -1 and out[3].dtype == np.int32


def test_empty_stack_with_known_shape_and_concat_lists(sess):
    a, b = _from([[1.0, 2.0]]), _from([[3.0, 4.0]])
    both = R.TensorListConcatLists(input_a=a, input_b=b, element_dtype=F32)
    out = sess.run([_stack(_empty([2])), _stack(both)])
    assert out[0].shape == (0, 2)
    np.testing.assert_array_equal(out[1], [[1, 2], [3, 4]])


def test_push_back_batch(sess):
    handles = tf.placeholder(tf.variant, [2])
    out = R.TensorListPushBackBatch(input_handles=handles, tensor=[[1.0], [2.0]])
    lists = np.empty(2, object)
    lists[0] = TensorList((), F32, (1,))
    lists[1] = TensorList((np.ones(1, np.float32),), F32, None)
    got = sess.run(out, {handles: lists})
    assert [len(x) for x in got] == [1, 2]
    np.testing.assert_array_equal(got[1].tensors[1], [2.0])


def test_zeros_like_and_add_n_of_lists(sess):
    lst = R.TensorListSetItem(input_handle=_reserve([-1]), index=1, item=[3.0, 4.0])
    a, b = _from([[1.0, 2.0]]), _from([[3.0, 4.0]])
    out = sess.run([_stack(tf.zeros_like(lst), [2]), _stack(tf.add_n([a, b])),
                    _stack(tf.add_n([_reserve(), lst])), _stack(tf.identity(a))])
    np.testing.assert_array_equal(out[0], np.zeros((3, 2)))
    np.testing.assert_array_equal(out[1], [[4, 6]])
    np.testing.assert_array_equal(out[2], [[0, 0], [3, 4], [0, 0]])
    np.testing.assert_array_equal(out[3], [[1, 2]])



def _scalar_shape():
    return tf.constant([], tf.int32)  # [] alone would be a float tensor, as in TF


def _variant_item(lst, index):
    return R.TensorListGetItem(input_handle=lst, index=index, element_shape=_scalar_shape(),
                               element_dtype=tf.variant)


def test_list_of_lists_holds_the_inner_lists(sess):
    # TF's gradient of a nested while loop keeps each inner loop's accumulators (lists)
    # in lists of the outer loop: elements that are scalar variants. Values: TF 2.21's
    a, b = _from([[1.0, 2.0]]), _from([[3.0, 4.0], [5.0, 6.0]])
    outer = _empty(_scalar_shape(), dtype=tf.variant)
    outer = R.TensorListPushBack(input_handle=outer, tensor=a)
    outer = R.TensorListPushBack(input_handle=outer, tensor=b)
    rest, last = R.TensorListPopBack(input_handle=outer, element_shape=_scalar_shape(),
                                     element_dtype=tf.variant)
    replaced = R.TensorListSetItem(input_handle=outer, index=0, item=b)
    out = sess.run([_stack(last), _stack(_variant_item(rest, 0)),
                    R.TensorListLength(input_handle=rest),
                    _stack(_variant_item(tf.add_n([outer, outer]), 1)),
                    _stack(_variant_item(tf.zeros_like(outer), 0)),
                    _stack(_variant_item(replaced, 0))])
    np.testing.assert_array_equal(out[0], [[3, 4], [5, 6]])
    np.testing.assert_array_equal(out[1], [[1, 2]])
    assert out[2] == 1
    np.testing.assert_array_equal(out[3], [[6, 8], [10, 12]])
    np.testing.assert_array_equal(out[4], [[0, 0]])
    np.testing.assert_array_equal(out[5], [[3, 4], [5, 6]])


def test_list_of_optionals(sess):
    # TF's gradient of a cond inside a loop keeps the cond's intermediates as optionals
    # in a list
    opt = R.OptionalFromValue(components=[tf.constant([1.5, 2.5])])
    lst = R.TensorListPushBack(input_handle=_empty(_scalar_shape(), dtype=tf.variant),
                               tensor=opt)
    _, popped = R.TensorListPopBack(input_handle=lst, element_shape=_scalar_shape(),
                                    element_dtype=tf.variant)
    value, = R.OptionalGetValue(optional=popped, output_types=[F32], output_shapes=[[2]])
    np.testing.assert_array_equal(sess.run(value), [1.5, 2.5])

# --- run-time errors (messages as TF 2.21's) ------------------------------------------------
_RUN_ERRORS = [
    (lambda: R.TensorListGetItem(input_handle=_reserve(), index=5, element_shape=[2],
                                 element_dtype=F32),
     "Trying to access element 5 in a list with 3 elements."),
    (lambda: R.TensorListGetItem(input_handle=_reserve(-1), index=0, element_shape=-1,
                                 element_dtype=F32),
     "Trying to read an uninitialized tensor but element_shape is not fully defined: "
     "<unknown> and no list element is set."),
    (lambda: R.TensorListSetItem(input_handle=_reserve(), index=3, item=[1.0, 2.0]),
     "Trying to modify element 3 in a list with 3 elements."),
    (lambda: R.TensorListSetItem(input_handle=_reserve(), index=0,
                                 item=tf.placeholder_with_default([1.0, 2.0, 3.0], None)),
     "Tried to set a tensor with incompatible shape at a list index. Item element shape: "
     "[3] list shape: [2]"),
    (lambda: R.TensorListSetItem(input_handle=_reserve(), index=0, item=[1, 2]),
     "Invalid data types; op elements int32 but list elements float"),
    (lambda: _stack(_empty([-1])),
     "Tried to stack elements of an empty list with non-fully-defined element_shape: [?]"),
    (lambda: _stack(_reserve([-1])), "Tried to stack list which only contains "
     "uninitialized tensors and has a non-fully-defined element_shape: [?]"),
    (lambda: _stack(_reserve(), num_elements=2),
     "Operation expected a list with 2 elements but got a list with 3 elements."),
    (lambda: _stack(R.TensorListPushBack(input_handle=R.TensorListPushBack(
        input_handle=_empty(), tensor=[1.0]), tensor=[1.0, 2.0])),
     "PartialTensorShape: Incompatible shapes during merge: [1] vs. [2]"),
    (lambda: R.TensorListPushBack(input_handle=R.TensorListPushBack(
        input_handle=_empty(max_num_elements=1), tensor=[1.0]), tensor=[1.0]),
     "Tried to push item into a full list list size: 1 max_num_elements: 1"),
    (lambda: R.TensorListPushBack(input_handle=_empty([2]), tensor=[1.0]),
     "Tried to append a tensor with incompatible shape to a list. Op element shape: [1] "
     "list shape: [2]"),
    (lambda: R.TensorListPopBack(input_handle=_empty([2]), element_shape=-1,
                                 element_dtype=F32),
     "Trying to pop from an empty list."),
    (lambda: R.EmptyTensorList(element_shape=-1, max_num_elements=[1], element_dtype=F32),
     "max_num_elements expected to be a scalar but got shape: [1]"),
    (lambda: _reserve(n=-2),
     "The num_elements to reserve must be a non negative number, but got -2"),
    (lambda: R.TensorListGather(input_handle=_reserve(), indices=[0, 4], element_shape=-1,
                                element_dtype=F32),
     "Index 4 out o range; list only has 3 elements."),
    (lambda: R.TensorListGather(input_handle=_reserve([-1]), indices=np.zeros(0, np.int32),
                                element_shape=-1, element_dtype=F32),
     "Tried to gather 0-elements from a list with non-fully-defined shape: [?]"),
    (lambda: R.TensorListScatter(tensor=[[1.0]], indices=[-1], element_shape=-1),
     "Indices in TensorListScatter must all be non-negative."),
    (lambda: R.TensorListScatter(tensor=[[1.0]], indices=[0, 1], element_shape=-1),
     "Invalid number of rows in input tensor. Expected: 2 Actual: 1"),
    (lambda: R.TensorListScatterV2(tensor=[[1.0]], indices=[3], element_shape=-1,
                                   num_elements=2),
     "TensorListScatter: Trying to scatter at index 3 in list with size 2"),
    (lambda: R.TensorListScatterIntoExistingList(input_handle=_reserve(),
                                                 tensor=[[1.0, 2.0]], indices=[0, 1]),
     "Expected len(indices) == tensor.shape[0], but saw: 2 vs. 1"),
    (lambda: R.TensorListFromTensor(
        tensor=tf.placeholder_with_default([[1.0, 2.0]], None), element_shape=[3]),
     "Specified a list with shape [3] from a tensor with shape [2]"),
    (lambda: R.TensorListFromTensor(tensor=1.0, element_shape=-1),
     "Tensor must be at least a vector, but saw shape: []"),
    (lambda: R.TensorListConcatV2(input_handle=_empty([-1, -1]), element_shape=-1,
                                  leading_dims=np.zeros([0], np.int64), element_dtype=F32),
     "All except the first dimension must be fully defined when concating an empty tensor "
     "list. element_shape: [?]"),
    (lambda: R.TensorListConcatV2(input_handle=_from([1.0, 2.0]), element_shape=-1,
                                  leading_dims=np.zeros([0], np.int64), element_dtype=F32),
     "Concat saw a scalar shape at index 0 but requires at least vectors."),
    (lambda: R.TensorListConcatV2(input_handle=_reserve([-1, 2]), element_shape=-1,
                                  leading_dims=[1], element_dtype=F32),
     "List contains uninitialized tensor at index 1 but leading_dims has only 1 elements."),
    (lambda: R.TensorListConcatV2(input_handle=_from([[[1.0, 2.0]]]), element_shape=[2, 2],
                                  leading_dims=np.zeros([0], np.int64), element_dtype=F32),
     "First entry of element_shape input does not match the first dim of list element at "
     "index: 0 Expected: 2 Actual: 1"),
    (lambda: R.TensorListConcat(input_handle=_reserve([-1, 2]), element_dtype=F32),
     "Trying to concat list with only uninitialized tensors but "
     "element_shape_except_first_dim is not fully defined: <unknown>"),
    (lambda: R.TensorListSplit(tensor=[1.0, 2.0], element_shape=-1, lengths=[-1, 3]),
     "Invalid value in lengths: -1"),
    (lambda: R.TensorListSplit(tensor=[1.0, 2.0], element_shape=-1, lengths=[1, 3]),
     "Attempting to slice [1, 4] from tensor with length 2"),
    (lambda: R.TensorListSplit(tensor=[1.0, 2.0], element_shape=-1, lengths=[1]),
     "Unused values in tensor. Length of tensor: 2 Values used: 1"),
    (lambda: R.TensorListResize(input_handle=_reserve(), size=-1),
     "TensorListSlice expects size to be non-negative. Got: -1"),
    (lambda: R.TensorListConcatLists(input_a=_reserve([2], n=1),
                                     input_b=_from([[3.0, 4.0]]), element_dtype=F32),
     "input_a and input_b TensorList element shapes are not identical at index 0.  Saw [2] "
     "vs. <unknown>"),
    (lambda: tf.add_n([_reserve(n=1), _reserve(n=2)]),
     "Trying to add two lists of tensors with different lengths. One is 1 and the other "
     "is 2"),
    (lambda: tf.add_n([_from([[1.0, 2.0]]), _from([[3.0, 4.0, 5.0]])]),
     "Trying to add two tensors with incompatible element shapes. One is [2] and the other "
     "is [3]"),
]


@pytest.mark.parametrize("build, message", _RUN_ERRORS)
def test_run_time_errors(sess, build, message):
    fetch = build()
    if isinstance(fetch, tuple):
        fetch = fetch[-1]
    if getattr(fetch, "dtype", None) is tf.variant:  # a list: fetch its length
        fetch = R.TensorListLength(input_handle=fetch)
    with pytest.raises(errors.InvalidArgumentError) as e:
        sess.run(fetch)
    assert e.value.message.split("\n")[0] == message
    assert e.value.op.type.startswith(("TensorList", "EmptyTensorList", "AddN"))


def test_input_that_is_not_a_list(sess):
    v = tf.placeholder(tf.variant, [])
    with pytest.raises(errors.InvalidArgumentError, match="Input handle is not a list"):
        sess.run(R.TensorListLength(input_handle=v), {v: object()})


# --- build-time errors and static shapes --------------------------------------------------
@pytest.mark.parametrize("build, message", [
    (lambda: R.TensorListGetItem(input_handle=_reserve(), index=0, element_shape=[2],
                                 element_dtype=tf.int32),
     "Expected list with element dtype int32 but got list with element dtype float"),
    (lambda: _stack(_reserve(), dtype=tf.int32), "Trying to read from list with wrong "
     "element dtype. List has type float but expected type int32"),
    (lambda: R.TensorListPushBack(input_handle=_empty([2]), tensor=[1, 2]),
     "Trying to push to list with wrong element dtype. List has type float but trying to "
     "push element with type int32"),
    (lambda: R.TensorListConcatLists(input_a=_reserve(), input_b=_reserve(dtype=tf.int32),
                                     element_dtype=F32),
     "input_b.type != element_dtype: int32 vs. float"),
    (lambda: R.TensorListReserve(element_shape=3, num_elements=3, element_dtype=F32),
     "Received an invalid shape scalar with a static value that "
     "is not '-1'"),
    (lambda: R.TensorListReserve(element_shape=[[3]], num_elements=3, element_dtype=F32),
     "Shape must be at most rank 1 but is rank 2"),
    (lambda: R.TensorListSetItem(input_handle=_reserve(), index=0, item=[1.0, 2.0, 3.0]),
     "not compatible"),
    (lambda: R.TensorListSplit(tensor=1.0, element_shape=-1, lengths=[1]),
     "Shape must be at least rank 1 but is rank 0"),
])
def test_build_time_errors(graph, build, message):
    with pytest.raises(ValueError, match=None) as e:
        build()
    assert message in str(e.value)


def test_static_shapes_follow_the_list(graph):
    lst = _reserve([-1, 2])
    assert _stack(lst, [3, -1]).shape.as_list() == [None, 3, 2]
    assert _stack(lst, num_elements=3).shape.as_list() == [3, None, 2]
    gathered = R.TensorListGather(input_handle=lst, indices=[0, 1], element_shape=-1,
                                  element_dtype=F32)
    assert gathered.shape.as_list() == [2, None, 2]
    concat = R.TensorListConcatV2(input_handle=lst, element_shape=-1, leading_dims=[1, 1, 1],
                                  element_dtype=F32)
    assert concat.tensor.shape.as_list() == [None, 2]
    assert R.TensorListElementShape(input_handle=lst, shape_type=tf.int32).shape == [2]
    item = R.TensorListGetItem(input_handle=tf.identity(_from(tf.zeros([4, 5, 6]))),
                               index=0, element_shape=-1, element_dtype=F32)
    assert item.shape.as_list() == [5, 6]
    assert lst.dtype is tf.variant and lst.shape == []


# --- gradients ----------------------------------------------------------------------------
def test_gradient_set_item_on_from_tensor(graph):
    x = tf.placeholder(tf.float64, [3, 2])
    z = tf.placeholder(tf.float64, [2])
    lst = R.TensorListSetItem(input_handle=_from(x * x, [2]), index=1, item=tf.sin(z))
    y = _stack(lst, dtype=tf.float64) * 2.0
    assert compute_gradient_error([x, z], [[3, 2], [2]], y, [3, 2]) < 1e-6


def test_gradient_set_item_values(sess):
    x = tf.constant(np.ones((3, 2)))
    z = tf.constant([5.0, 6.0], tf.float64)
    lst = R.TensorListSetItem(input_handle=_from(x), index=1, item=z)
    gx, gz = tf.gradients(_stack(lst, dtype=tf.float64) * 3.0, [x, z])
    out = sess.run([gx, gz])
    np.testing.assert_array_equal(out[0], [[3, 3], [0, 0], [3, 3]])
    np.testing.assert_array_equal(out[1], [3, 3])


def test_gradient_get_item(graph):
    x = tf.placeholder(tf.float64, [3, 2])
    lst = _from(x)
    read = [R.TensorListGetItem(input_handle=lst, index=i, element_shape=-1,
                                element_dtype=tf.float64) for i in (0, 2)]
    y = read[0] * read[1] + tf.sin(read[1])
    assert compute_gradient_error(x, [3, 2], y, [2]) < 1e-6


def test_gradient_push_back_pop_back(graph):
    x = tf.placeholder(tf.float64, [2])
    lst = _empty([2], dtype=tf.float64)
    lst = R.TensorListPushBack(input_handle=lst, tensor=x * x)
    lst = R.TensorListPushBack(input_handle=lst, tensor=tf.sin(x))
    rest, last = R.TensorListPopBack(input_handle=lst, element_shape=[2],
                                     element_dtype=tf.float64)
    y = last * 2.0 + _stack(rest, [2], dtype=tf.float64)[0]
    assert compute_gradient_error(x, [2], y, [2]) < 1e-6


def test_gradient_gather_scatter(graph):
    x = tf.placeholder(tf.float64, [3, 2])
    lst = R.TensorListScatterV2(tensor=x, indices=[4, 0, 2], element_shape=[2],
                                num_elements=6)
    # distinct indices: TF's gradient scatters into a list, so of repeated indices only
    # one gradient would count
    y = R.TensorListGather(input_handle=lst, indices=[2, 4, 5], element_shape=-1,
                           element_dtype=tf.float64) * 1.5
    assert compute_gradient_error(x, [3, 2], y, [3, 2]) < 1e-6
    scattered = R.TensorListScatter(tensor=x, indices=[1, 0, 2], element_shape=-1)
    assert compute_gradient_error(x, [3, 2], tf.square(_stack(scattered, [2],
                                                              dtype=tf.float64)),
                                  [3, 2]) < 1e-6


def test_gradient_scatter_into_existing_list(graph):
    x = tf.placeholder(tf.float64, [3, 2])
    z = tf.placeholder(tf.float64, [2, 2])
    lst = R.TensorListScatterIntoExistingList(input_handle=_from(x), tensor=z * z,
                                              indices=[2, 0])
    y = _stack(lst, [2], dtype=tf.float64)
    assert compute_gradient_error([x, z], [[3, 2], [2, 2]], y, [3, 2]) < 1e-6


def test_gradient_split_concat(graph):
    x = tf.placeholder(tf.float64, [5, 2])
    lst = R.TensorListSplit(tensor=x, element_shape=[-1, 2], lengths=[2, 3])
    y = tf.square(R.TensorListConcatV2(input_handle=lst, element_shape=-1,
                                       leading_dims=np.zeros([0], np.int64),
                                       element_dtype=tf.float64).tensor)
    assert compute_gradient_error(x, [5, 2], y, [5, 2]) < 1e-6
    v1 = R.TensorListConcat(input_handle=lst, element_dtype=tf.float64).tensor
    assert compute_gradient_error(x, [5, 2], v1 * 3.0, [5, 2]) < 1e-6


def test_gradient_resize_and_set_item_with_resize(graph):
    x = tf.placeholder(tf.float64, [2, 2])
    z = tf.placeholder(tf.float64, [2])
    lst = R.TensorListResize(input_handle=_from(x), size=4)
    lst = R.TensorListSetItem(input_handle=lst, index=5, item=z * 2.0,
                              resize_if_index_out_of_bounds=True)
    y = _stack(lst, [2], dtype=tf.float64)
    assert compute_gradient_error([x, z], [[2, 2], [2]], y, [6, 2]) < 1e-6


def test_gradient_of_two_uses_of_a_list_adds_lists(graph):
    x = tf.placeholder(tf.float64, [3, 2])
    lst = _from(x)
    a = _stack(lst, dtype=tf.float64)
    b = R.TensorListGetItem(input_handle=lst, index=1, element_shape=-1,
                            element_dtype=tf.float64)
    y = tf.sin(a) * b
    assert compute_gradient_error(x, [3, 2], y, [3, 2]) < 1e-6


# --- while_loop, GraphDef -------------------------------------------------------------------
@pytest.fixture(params=["structured", "tagged"])
def loop_executor(request, monkeypatch):
    """Both control-flow executors (the policy reads TW_EXECUTOR when a session starts)."""
    if request.param == "tagged":
        monkeypatch.setenv("TW_EXECUTOR", "tagged")
    else:
        monkeypatch.delenv("TW_EXECUTOR", raising=False)
    return request.param


def _squares_loop(n: int, x):
    """A list of x * i for i < n, built in a while_loop with the list as loop variable."""
    def body(i, lst):
        item = tf.cast(i, tf.float64) * x
        return i + 1, R.TensorListSetItem(input_handle=lst, index=i, item=item)

    lst = _reserve([2], n, tf.float64)
    _, lst = tf.while_loop(lambda i, _: i < n, body, [tf.constant(0), lst],
                           shape_invariants=[tf.TensorShape([]), tf.TensorShape([])])
    return _stack(lst, [2], dtype=tf.float64)


def test_list_as_while_loop_variable(graph, loop_executor):
    x = tf.placeholder(tf.float64, [2])
    y = _squares_loop(4, x)
    with tf.Session() as sess:
        out = sess.run(y, {x: [1.0, 2.0]})
    np.testing.assert_array_equal(out, np.arange(4)[:, None] * [1.0, 2.0])


def test_push_back_in_while_loop(graph, loop_executor):
    def body(i, lst):
        return i + 1, R.TensorListPushBack(input_handle=lst, tensor=tf.fill([2], i))

    _, lst = tf.while_loop(lambda i, _: i < 3, body,
                           [tf.constant(0), _empty([2], dtype=tf.int32)])
    with tf.Session() as sess:
        out = sess.run(_stack(lst, dtype=tf.int32))
    np.testing.assert_array_equal(out, [[0, 0], [1, 1], [2, 2]])


def test_gradient_through_while_loop_list(graph, loop_executor):
    x = tf.placeholder(tf.float64, [2])
    y = _squares_loop(3, x) ** 2
    g = tf.gradients(y, x)[0]
    with tf.Session() as sess:
        out = sess.run(g, {x: [1.0, 2.0]})
    # d/dx sum_i (i x)^2 = 2 x sum_i i^2
    np.testing.assert_allclose(out, 2 * np.array([1.0, 2.0]) * 5.0)


def test_graph_def_round_trip(graph):
    x = tf.constant(np.arange(6, dtype=np.float32).reshape(3, 2), name="x")
    lst = R.TensorListSetItem(input_handle=_from(x), index=1, item=[7.0, 8.0], name="set")
    lst = R.TensorListPushBack(input_handle=lst, tensor=[9.0, 9.0], name="push")
    _stack(lst, [2], name="out")
    gd = graph.as_graph_def()
    assert {"TensorListFromTensor", "TensorListSetItem", "TensorListPushBack",
            "TensorListStack"} <= {n.op for n in gd.node}
    with tf.Graph().as_default() as g2:
        tf.import_graph_def(gd, name="")
        with tf.Session(graph=g2) as sess:
            out = sess.run("out:0")
    np.testing.assert_array_equal(out, [[0, 1], [7, 8], [4, 5], [9, 9]])


def test_raw_ops_keywords_and_output_structure(graph):
    pop = R.TensorListPopBack(input_handle=_reserve(), element_shape=-1, element_dtype=F32)
    assert pop._fields == ("output_handle", "tensor")
    assert pop.tensor.dtype is F32 and pop.output_handle.dtype is tf.variant
    with pytest.raises(TypeError, match="only takes keyword args"):
        R.TensorListLength(_reserve())


def test_graph_def_written_by_tf_with_tf_gradients(graph):
    # tests/fixtures/tf1/make_tensor_list_fixture.py wrote it; the literals are TF's values
    from google.protobuf import text_format
    from tensorboard.compat.proto import graph_pb2
    path = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "tf1",
                        "tensor_list_ops.pbtxt")
    with open(path) as f:
        gd = text_format.Parse(f.read(), graph_pb2.GraphDef())
    assert {"TensorListConcatLists", "TensorListPopBack", "TensorListGetItem",
            "TensorListScatterIntoExistingList"} <= {n.op for n in gd.node}
    tf.import_graph_def(gd, name="")
    with tf.Session() as sess:
        out, gx = sess.run(["out:0", "gx:0"])
    np.testing.assert_array_equal(out, [[0, 1], [7, 8], [4, 5], [9, 9], [0, 0], [1, 1]])
    np.testing.assert_array_equal(gx, [[0, 2], [0, 0], [8, 10]])
