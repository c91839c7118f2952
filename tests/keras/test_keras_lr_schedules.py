"""tf.keras.optimizers.schedules: each schedule's values at several steps (recorded from
TF 2.15 / Keras 2.15, `schedule(step)` run in a compat.v1 session with an int64 step),
configs and serialize/deserialize, bad arguments, and a schedule as an optimizer's
learning rate (called with `iterations`, kept in the optimizer's config)."""
import numpy as np
import pytest

import tensorweave as tf

S = tf.keras.optimizers.schedules
STEPS = [0, 1, 5, 10, 25, 60]

# TF 2.15: float(sess.run(schedule(step), {step: s})) for s in STEPS
CASES = [
    (lambda: S.ExponentialDecay(0.1, 10, 0.5),
     [0.10000000149011612, 0.09330330044031143, 0.0707106813788414, 0.05000000074505806,
      0.01767767034471035, 0.0015625000232830644]),
    (lambda: S.ExponentialDecay(0.1, 10, 0.5, staircase=True),
     [0.10000000149011612, 0.10000000149011612, 0.10000000149011612, 0.05000000074505806,
      0.02500000037252903, 0.0015625000232830644]),
    (lambda: S.PiecewiseConstantDecay([5, 20], [1.0, 0.5, 0.1]),
     [1.0, 1.0, 1.0, 0.5, 0.10000000149011612, 0.10000000149011612]),
    (lambda: S.PolynomialDecay(0.1, 20, 0.01, power=2.0),
     [0.10000000149011612, 0.09122499823570251, 0.06062500178813934, 0.032499998807907104,
      0.009999999776482582, 0.009999999776482582]),
    (lambda: S.PolynomialDecay(0.1, 20, 0.01, power=0.5, cycle=True),
     [0.10000000149011612, 0.0977211520075798, 0.08794228732585907, 0.07363960891962051,
      0.06511352211236954, 0.009999999776482582]),
    (lambda: S.InverseTimeDecay(0.1, 10, 0.5),
     [0.10000000149011612, 0.0952381044626236, 0.07999999821186066, 0.06666667014360428,
      0.04444444552063942, 0.02500000037252903]),
    (lambda: S.InverseTimeDecay(0.1, 10, 0.5, staircase=True),
     [0.10000000149011612, 0.10000000149011612, 0.10000000149011612, 0.06666667014360428,
      0.05000000074505806, 0.02500000037252903]),
    (lambda: S.CosineDecay(0.1, 20, alpha=0.1),
     [0.10000000149011612, 0.09944597631692886, 0.08681981265544891, 0.05499999597668648,
      0.010000000707805157, 0.010000000707805157]),
    (lambda: S.CosineDecay(0.0, 20, alpha=0.1, warmup_target=0.2, warmup_steps=10),
     [0.0, 0.020000001415610313, 0.10000000149011612, 0.20000000298023224,
      0.04636039212346077, 0.020000001415610313]),
    (lambda: S.CosineDecayRestarts(0.1, 10, t_mul=2.0, m_mul=0.5, alpha=0.1),
     [0.10000000149011612, 0.09779754281044006, 0.05499999597668648, 0.055000003427267075,
      0.016590097919106483, 0.013295048847794533]),
    (lambda: S.CosineDecayRestarts(0.1, 10, t_mul=1.0, m_mul=0.9),
     [0.10000000149011612, 0.0975528284907341, 0.04999999701976776, 0.08999999612569809,
      0.04049999639391899, 0.05314409360289574]),
]


@pytest.mark.parametrize("make,expected", CASES)
def test_values_at_steps(make, expected):
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int64, [])
        value = make()(step)
        with tf.Session() as sess:
            got = [sess.run(value, {step: s}) for s in STEPS]
    np.testing.assert_allclose(got, expected, rtol=2e-6, atol=1e-9)


@pytest.mark.parametrize("make,expected", CASES)
def test_serialize_round_trip(make, expected):
    schedule = make()
    config = S.serialize(schedule)
    assert config["class_name"] == type(schedule).__name__
    restored = S.deserialize(config)
    assert type(restored) is type(schedule)
    assert restored.get_config() == schedule.get_config()
    with tf.Graph().as_default(), tf.Session() as sess:
        assert sess.run(restored(tf.constant(5, tf.int64))) == pytest.approx(expected[2],
                                                                              rel=2e-6)


def test_configs_as_keras():
    # TF 2.15: tf.keras.optimizers.schedules.serialize(...)
    assert S.serialize(S.CosineDecay(0.1, 20, alpha=0.1)) == {
        "class_name": "CosineDecay",
        "config": {"initial_learning_rate": 0.1, "decay_steps": 20, "alpha": 0.1,
                   "name": None, "warmup_target": None, "warmup_steps": 0}}
    assert S.serialize(S.CosineDecayRestarts(0.1, 10, m_mul=0.5))["config"] == {
        "initial_learning_rate": 0.1, "first_decay_steps": 10, "t_mul": 2.0, "m_mul": 0.5,
        "alpha": 0.0, "name": None}
    assert S.PiecewiseConstantDecay([5, 20], [1.0, 0.5, 0.1]).get_config() == {
        "boundaries": [5, 20], "values": [1.0, 0.5, 0.1], "name": None}


def test_experimental_aliases():
    assert tf.keras.experimental.CosineDecay is S.CosineDecay
    assert tf.keras.experimental.CosineDecayRestarts is S.CosineDecayRestarts


def test_bad_arguments():
    with pytest.raises(ValueError, match="The length of boundaries should be 1 less than "
                       r"the length of values. Received: boundaries=\[1, 2\] of length 2"):
        S.PiecewiseConstantDecay([1, 2], [1.0])
    with pytest.raises(ValueError, match="Unknown decay: 'Foo'"):
        S.deserialize({"class_name": "Foo", "config": {}})


def test_custom_schedule_subclass():
    class Halving(S.LearningRateSchedule):
        def __call__(self, step):
            return 1.0 / (tf.cast(step, tf.float32) + 1.0)

        def get_config(self):
            return {}

    with pytest.raises(NotImplementedError):
        S.LearningRateSchedule()(0)
    restored = S.deserialize({"class_name": "Halving", "config": {}},
                             custom_objects={"Halving": Halving})
    assert isinstance(restored, Halving)


def test_schedule_as_optimizer_learning_rate(keras_graph):
    v = tf.keras.backend.variable([1.0, 2.0])
    loss = tf.reduce_sum(v * v)
    schedule = S.ExponentialDecay(0.1, 2, 0.5)
    opt = tf.keras.optimizers.SGD(learning_rate=schedule)
    assert opt.lr is schedule
    update = opt.get_updates(loss, [v])
    sess = tf.keras.backend.get_session()
    got = []
    for _ in range(4):
        sess.run(update)
        got.append(sess.run(v))
    # TF 2.15: SGD(learning_rate=ExponentialDecay(0.1, 2, 0.5)).get_updates, 4 runs
    np.testing.assert_allclose(got, [[0.800000011920929, 1.600000023841858],
                                     [0.6868629455566406, 1.3737258911132812],
                                     [0.6181766390800476, 1.2363532781600952],
                                     [0.5744649171829224, 1.1489298343658447]], rtol=1e-6)
    # NumPy: w *= 1 - 2 * 0.1 * 0.5 ** (t / 2)
    w = np.array([1.0, 2.0])
    for t in range(4):
        w = w * (1 - 2 * 0.1 * 0.5 ** (t / 2))
    np.testing.assert_allclose(got[-1], w, rtol=1e-5)

    config = opt.get_config()
    assert config["learning_rate"] == {
        "class_name": "ExponentialDecay",
        "config": {"initial_learning_rate": 0.1, "decay_steps": 2, "decay_rate": 0.5,
                   "staircase": False, "name": None}}
    restored = tf.keras.optimizers.SGD.from_config(config)
    assert isinstance(restored.lr, S.ExponentialDecay)
    assert restored.lr.get_config() == schedule.get_config()


def test_schedule_in_model_fit(keras_graph):
    schedule = S.PiecewiseConstantDecay([1], [0.1, 0.0])
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, use_bias=False,
                                                       kernel_initializer="ones",
                                                       input_shape=(1,))])
    model.compile(tf.keras.optimizers.SGD(schedule), "mse")
    x, y = np.ones((1, 1), np.float32), np.zeros((1, 1), np.float32)
    model.fit(x, y, epochs=4, verbose=0)
    # steps 0 and 1 use 0.1 (w -= 0.1 * 2w), later steps 0: w = 0.8 ** 2
    np.testing.assert_allclose(model.get_weights()[0], [[0.64]], rtol=1e-6)
