"""tf.keras.losses.binary_focal_crossentropy / categorical_focal_crossentropy and their
classes (BinaryFocalCrossentropy, CategoricalFocalCrossentropy): values against NumPy
formulas and against TF 2.15 (literals recorded from `tf.keras.losses.<fn>(...)` in a
compat.v1 session), sample weights and reductions, configs, bad arguments."""
import warnings

import numpy as np
import pytest

import tensorweave as tf

L = tf.keras.losses
EPS = 1e-7
YT = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1], [0, 1, 0]], np.float32)
YP = np.array([[0.1, 0.7, 0.2], [0.5, 0.3, 0.2], [0.2, 0.2, 0.6], [0.6, 0.3, 0.1]],
              np.float32)
LOGITS = np.array([[1.0, -2.0, 0.5], [0.3, 2.0, -1.0], [-0.5, 0.1, 1.5],
                   [2.0, 0.0, -1.0]], np.float32)
SW = np.array([1.0, 0.5, 2.0, 0.0], np.float32)


def np_binary_focal(t, p, balance=False, alpha=0.25, gamma=2.0, logits=False, smooth=0.0,
                    axis=-1):
    t = t * (1 - smooth) + 0.5 * smooth
    p = 1 / (1 + np.exp(-p)) if logits else np.clip(p, EPS, 1 - EPS)
    bce = -(t * np.log(p) + (1 - t) * np.log(1 - p))
    p_t = t * p + (1 - t) * (1 - p)
    focal = (1 - p_t) ** gamma * bce
    if balance:
        focal = (t * alpha + (1 - t) * (1 - alpha)) * focal
    return focal.mean(axis=axis)


def np_categorical_focal(t, p, alpha=0.25, gamma=2.0, logits=False, smooth=0.0):
    t = t * (1 - smooth) + smooth / t.shape[-1]
    if logits:
        p = np.exp(p) / np.exp(p).sum(-1, keepdims=True)
    p = np.clip(p / p.sum(-1, keepdims=True), EPS, 1 - EPS)
    return (alpha * (1 - p) ** gamma * -t * np.log(p)).sum(-1)


def _run(*tensors):
    with tf.Session() as sess:
        return sess.run(list(tensors))


def test_functions_match_numpy_and_tf():
    with tf.Graph().as_default():
        got = _run(
            L.binary_focal_crossentropy(YT, YP),
            L.binary_focal_crossentropy(YT, YP, apply_class_balancing=True, alpha=0.4,
                                        gamma=1.5, label_smoothing=0.1),
            L.binary_focal_crossentropy(YT, LOGITS, from_logits=True, gamma=3.0, axis=0),
            L.categorical_focal_crossentropy(YT, YP),
            L.categorical_focal_crossentropy(YT, YP, alpha=0.5, gamma=1.0,
                                             label_smoothing=0.2),
            L.categorical_focal_crossentropy(YT, LOGITS, from_logits=True))
    expected_np = [
        np_binary_focal(YT, YP),
        np_binary_focal(YT, YP, True, 0.4, 1.5, smooth=0.1),
        np_binary_focal(YT, LOGITS, gamma=3.0, logits=True, axis=0),
        np_categorical_focal(YT, YP),
        np_categorical_focal(YT, YP, 0.5, 1.0, smooth=0.2),
        np_categorical_focal(YT, LOGITS, logits=True)]
    expected_tf = [  # TF 2.15, the same calls
        [0.01402669120579958, 0.07143773883581161, 0.03319450840353966, 0.30695492029190063],
        [0.018433524295687675, 0.054042477160692215, 0.03174388036131859,
         0.17109601199626923],
        [0.5086814761161804, 0.7752788662910461, 0.06208338961005211],
        [0.008025187067687511, 0.043321698904037476, 0.02043301984667778,
         0.14748665690422058],
        [0.15836365520954132, 0.22119294106960297, 0.17437979578971863, 0.4410936236381531],
        [0.8242686986923218, 0.34625813364982605, 0.0061771804466843605, 0.4256424605846405]]
    for i, (a, b, c) in enumerate(zip(got, expected_np, expected_tf)):
        np.testing.assert_allclose(a, b, rtol=1e-5, err_msg="case %d" % i)
        np.testing.assert_allclose(a, c, rtol=1e-6, err_msg="case %d" % i)


def test_classes_reduce_and_weigh_as_tf():
    binary = L.BinaryFocalCrossentropy(apply_class_balancing=True, from_logits=True)
    categorical = L.CategoricalFocalCrossentropy(gamma=1.0, label_smoothing=0.1)
    with tf.Graph().as_default():
        got = _run(binary(YT, LOGITS, sample_weight=SW),
                   L.BinaryFocalCrossentropy(reduction="sum")(YT, YP),
                   categorical(YT, YP, sample_weight=SW),
                   L.CategoricalFocalCrossentropy(reduction="none")(YT, YP))
    # TF 2.15, the same calls
    np.testing.assert_allclose(got[0], 0.18952114880084991, rtol=1e-6)
    np.testing.assert_allclose(got[1], 0.4256138801574707, rtol=1e-6)
    np.testing.assert_allclose(got[2], 0.06013716012239456, rtol=1e-6)
    np.testing.assert_allclose(got[3], np_categorical_focal(YT, YP), rtol=1e-5)
    # NumPy: sum over the batch of weight * loss, over the batch size
    np.testing.assert_allclose(
        got[0], (SW * np_binary_focal(YT, LOGITS, True, logits=True)).sum() / 4, rtol=1e-5)


def test_configs_get_and_errors():
    binary = L.BinaryFocalCrossentropy(apply_class_balancing=True, from_logits=True)
    assert binary.get_config() == {  # TF 2.15
        "reduction": "auto", "name": "binary_focal_crossentropy",
        "apply_class_balancing": True, "alpha": 0.25, "gamma": 2.0, "from_logits": True,
        "label_smoothing": 0.0, "axis": -1, "fn": "binary_focal_crossentropy"}
    categorical = L.CategoricalFocalCrossentropy(0.5, 1.0)
    config = categorical.get_config()
    assert config == {"reduction": "auto", "name": "categorical_focal_crossentropy",
                      "alpha": 0.5, "gamma": 1.0, "from_logits": False,
                      "label_smoothing": 0.0, "axis": -1,
                      "fn": "categorical_focal_crossentropy"}
    restored = L.deserialize(L.serialize(categorical))
    assert type(restored) is L.CategoricalFocalCrossentropy
    assert restored.get_config() == config
    assert L.get("binary_focal_crossentropy") is L.binary_focal_crossentropy
    assert L.get("categorical_focal_crossentropy") is L.categorical_focal_crossentropy
    assert tf.keras.metrics.binary_focal_crossentropy is L.binary_focal_crossentropy
    with pytest.raises(ValueError, match="`axis` must be of type `int`. Received: axis=True"):
        L.categorical_focal_crossentropy(YT, YP, axis=True)
    with pytest.raises(TypeError, match=r"BinaryFocalCrossentropy.__init__\(\) got an "
                       "unexpected keyword argument 'foo'"):
        L.BinaryFocalCrossentropy(foo=1)
    with tf.Graph().as_default(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        L.categorical_focal_crossentropy(YT[:, :1], YP[:, :1])
    assert any(issubclass(w.category, SyntaxWarning) for w in caught)
