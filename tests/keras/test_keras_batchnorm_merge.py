"""tf.keras BatchNormalization (learning phase, updates in `layer.updates` only, the fused
path's Bessel-corrected moving variance for 4-D and 5-D inputs) and the merge layers,
against NumPy and TF 2.15's names and messages."""
import numpy as np
import pytest

import tensorweave as tf

K = tf.keras
L = tf.keras.layers


def _normalize(x, axes, gamma=1.0, beta=0.0, eps=1e-3):
    mean, var = x.mean(axis=axes), x.var(axis=axes)
    return gamma * (x - mean) / np.sqrt(var + eps) + beta, mean, var


def test_batchnorm_names_and_learning_phase(sess):
    xv = np.random.rand(8, 3).astype(np.float32)
    x = tf.constant(xv)
    bn = L.BatchNormalization()
    y = bn(x)
    assert [v.name for v in bn.weights] == [
        "batch_normalization/gamma:0", "batch_normalization/beta:0",
        "batch_normalization/moving_mean:0", "batch_normalization/moving_variance:0"]
    assert [v.name for v in bn.trainable_weights] == ["batch_normalization/gamma:0",
                                                      "batch_normalization/beta:0"]
    assert [u.name for u in bn.updates] == ["batch_normalization/cond_2/Merge",
                                            "batch_normalization/cond_3/Merge"]
    assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []
    assert [v.name for v in tf.moving_average_variables()] == []
    sess.run(tf.global_variables_initializer())
    np.testing.assert_allclose(sess.run(y), xv / np.sqrt(1 + 1e-3), rtol=1e-5)  # inference
    phase = K.backend.learning_phase()
    np.testing.assert_allclose(sess.run(y, {phase: True}), _normalize(xv, 0)[0], rtol=1e-4,
                               atol=1e-5)
    sess.run(bn.updates)  # learning phase False: the updates leave the averages alone
    np.testing.assert_allclose(sess.run(bn.moving_mean), 0.0)
    sess.run(bn.updates, {phase: True})
    np.testing.assert_allclose(sess.run(bn.moving_mean), 0.01 * xv.mean(0), rtol=1e-5)
    assert L.BatchNormalization()(x, training=False).op.type != "Merge"
    assert bn(x, training=False) is not None and len(bn.updates) == 2  # no new updates


@pytest.mark.parametrize("shape,axis,fused", [((8, 3), -1, False), ((4, 3, 3, 2), -1, True),
                                              ((4, 2, 3, 3), 1, True),
                                              ((4, 3, 3, 2), 2, False),
                                              ((2, 3, 2, 2, 2), -1, True)])
def test_batchnorm_training_and_moving_averages(sess, shape, axis, fused):
    xv = np.random.rand(*shape).astype(np.float32)
    bn = L.BatchNormalization(axis=axis, momentum=0.5, gamma_initializer="ones",
                              beta_initializer=tf.constant_initializer(0.5))
    y = bn(tf.constant(xv), training=True)
    assert bn.fused is fused
    assert [u.type for u in bn.updates] == ["AssignSubVariableOp"] * 2
    sess.run(tf.global_variables_initializer())
    axis = axis % len(shape)
    axes = tuple(i for i in range(len(shape)) if i != axis)
    mean, var = xv.mean(axis=axes), xv.var(axis=axes)
    mean_b = xv.mean(axis=axes, keepdims=True)
    var_b = xv.var(axis=axes, keepdims=True)
    expected = (xv - mean_b) / np.sqrt(var_b + 1e-3) + 0.5
    np.testing.assert_allclose(sess.run(y), expected, rtol=1e-4, atol=1e-4)
    sess.run(bn.updates)
    n = xv.size / shape[axis]
    update_var = var * n / (n - 1) if fused else var  # fused: Bessel-corrected, as TF
    np.testing.assert_allclose(sess.run(bn.moving_mean), 0.5 * mean, rtol=1e-5)
    np.testing.assert_allclose(sess.run(bn.moving_variance), 0.5 + 0.5 * update_var,
                               rtol=1e-5)


def test_batchnorm_training_tensor_and_errors(sess):
    xv = np.random.rand(6, 4).astype(np.float32)
    training = tf.placeholder(tf.bool, [])
    bn = L.BatchNormalization(fused=True)  # ignored for 2-D inputs, as TF's v1 Keras
    y = bn(tf.constant(xv), training=training)
    assert not bn.fused and [u.type for u in bn.updates] == ["Merge", "Merge"]
    sess.run(tf.global_variables_initializer())
    np.testing.assert_allclose(sess.run(y, {training: True}), _normalize(xv, 0)[0],
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(sess.run(y, {training: False}), xv / np.sqrt(1 + 1e-3),
                               rtol=1e-5)
    with pytest.raises(TypeError, match="Expected an int or a list/tuple of ints for the "
                                        "argument 'axis'"):
        L.BatchNormalization(axis="x")
    with pytest.raises(NotImplementedError, match="renorm"):
        L.BatchNormalization(renorm=True)
    with pytest.raises(ValueError, match="Invalid value for `axis` argument"):
        L.BatchNormalization(axis=3)(tf.constant(xv))
    with pytest.raises(ValueError, match="Input has undefined `axis` dimension"):
        L.BatchNormalization()(tf.placeholder(tf.float32, [None, None]))


def test_merge_layers(sess):
    a = np.random.rand(4, 3).astype(np.float32)
    b = np.random.rand(4, 3).astype(np.float32)
    x, y = tf.constant(a), tf.constant(b)
    outputs = {
        "add": L.Add()([x, y]), "sub": L.Subtract()([x, y]), "mul": L.multiply([x, y, y]),
        "avg": L.average([x, y]), "max": L.maximum([x, y]), "min": L.minimum([x, y]),
        "cat": L.Concatenate()([x, y]), "cat0": L.concatenate([x, y], axis=0),
        "rank": L.add([x, tf.constant(b[:, :1].reshape(4, 1))]),
        "expand": L.add([tf.constant(a.reshape(4, 1, 3)), y]),
    }
    assert outputs["add"].op.name == "add/add" and outputs["mul"].op.name == "multiply/mul_1"
    assert outputs["cat"].op.name == "concatenate/concat"
    assert outputs["cat"].shape.as_list() == [4, 6]
    assert outputs["expand"].shape.as_list() == [4, 1, 3]  # y gets an axis after the batch
    got = sess.run(outputs)
    expected = {"add": a + b, "sub": a - b, "mul": a * b * b, "avg": (a + b) / 2,
                "max": np.maximum(a, b), "min": np.minimum(a, b),
                "cat": np.concatenate([a, b], 1), "cat0": np.concatenate([a, b], 0),
                "rank": a + b[:, :1], "expand": a.reshape(4, 1, 3) + b.reshape(4, 1, 3)}
    for key, value in expected.items():
        np.testing.assert_allclose(got[key], value, rtol=1e-6, err_msg=key)
    assert L.Add()([x]) is x  # one input: returned as it is, as TF's


def test_merge_errors(graph):
    x = tf.placeholder(tf.float32, [None, 3])
    with pytest.raises(ValueError, match=r"A `Concatenate` layer requires inputs with matching "
                                         r"shapes except for the concatenation axis. Received: "
                                         r"input_shape=\[\(None, 3\), \(None, 8, 8, 3\)\]"):
        L.Concatenate()([x, tf.placeholder(tf.float32, [None, 8, 8, 3])])
    with pytest.raises(ValueError, match=r"Inputs have incompatible shapes. Received shapes "
                                         r"\(3,\) and \(4,\)"):
        L.Add()([x, tf.placeholder(tf.float32, [None, 4])])
    with pytest.raises(ValueError, match=r"A merge layer should be called on a list of inputs. "
                                         r"Received: input_shape=\(None, 3\) \(not a list of "
                                         r"shapes\)"):
        L.Add()(x)
    with pytest.raises(ValueError, match="A `Subtract` layer should be called on exactly 2 "
                                         "inputs"):
        L.Subtract()([x, x, x])
    with pytest.raises(ValueError, match="Cannot merge tensors with different batch sizes"):
        L.Add()([tf.placeholder(tf.float32, [2, 3]), tf.placeholder(tf.float32, [3, 3])])
