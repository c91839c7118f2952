"""SDCA ops (train/sdca_ops.py): SdcaOptimizer / SdcaOptimizerV2, SdcaFprint and
SdcaShrinkL1 against the outputs TF 2.15.1 gave for the same inputs (probe scripts run
under both implementations), hand-computed updates, TF's static shapes and errors."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.train import sdca_ops

LOSSES = ["logistic_loss", "squared_loss", "hinge_loss", "smooth_hinge_loss", "poisson_loss"]


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


# --- SdcaFprint ---------------------------------------------------------------------------
def test_fprint_matches_tf():
    with tf.Graph().as_default():
        f = tf.train.sdca_fprint(tf.constant(["", "a", "abc", "example_17"]))
        assert f.shape.as_list() == [4, 2] and f.dtype == tf.int64
        np.testing.assert_array_equal(_run(f), [  # TF 2.15.1
            [4463240938071824939, 4374473821787594281],
            [7969074168056553668, 5955762262185338209],
            [4143508125394299908, -6879828354153669051],
            [-3138409097321243959, 2659704133428243488]])


def test_fprint_shapes_and_errors():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.string)
        f = tf.train.sdca_fprint(p)
        assert f.shape.as_list() == [None, 2]
        assert _run(f, {p: np.array([], object)}).shape == (0, 2)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"Input must be a vector, "
                           r"got shape \[1,1\]"):
            _run(f, {p: [["a"]]})
        with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 0"):
            tf.train.sdca_fprint(tf.constant("a"))


# --- SdcaOptimizer: one example (any order gives the same result) -------------------------
def _single(loss, l1, label, dual, adaptative=True, op=None):
    builder = op or tf.train.sdca_optimizer
    kwargs = {"adaptative": adaptative} if op is None else {"adaptive": adaptative}
    with tf.Graph().as_default():
        res = builder(
            sparse_example_indices=[tf.constant([0, 0], tf.int64), tf.constant([0], tf.int64)],
            sparse_feature_indices=[tf.constant([3, 1], tf.int64), tf.constant([7], tf.int64)],
            sparse_feature_values=[tf.constant([0.5, -1.5])],
            dense_features=[tf.constant([[1.0, 2.0, -0.5]]), tf.constant([[1.0]])],
            example_weights=tf.constant([2.0]), example_labels=tf.constant([label]),
            sparse_indices=[tf.constant([1, 3, 5], tf.int64), tf.constant([7], tf.int64)],
            sparse_weights=[tf.constant([0.3, -0.2, 0.9]), tf.constant([0.05])],
            dense_weights=[tf.constant([0.1, -0.4, 0.25]), tf.constant([0.2])],
            example_state_data=tf.constant([[dual, 0.0, 0.0, 0.0]]),
            loss_type=loss, l1=l1, l2=1.5, num_loss_partitions=1, num_inner_iterations=1,
            **kwargs)
        return _run(res)


# (loss, l1, label, dual) -> TF's (state row, sparse deltas, dense deltas[0])
SINGLE_TF = {
    ("logistic_loss", 0.2, 1.0, 0.5): (
        [0.5475151538848877, 2.353715658187866, -1.3862943649291992, 2.0],
        [-0.09503035992383957, 0.03167678788304329, 0.0, 0.06335357576608658],
        [0.06335357576608658, 0.12670715153217316, -0.03167678788304329]),
    ("squared_loss", 0.2, 1.0, 0.25): (
        [0.3613095283508301, 3.2700693607330322, -0.4375, 2.0],
        [-0.22261904180049896, 0.07420634478330612, 0.0, 0.14841268956661224],
        [0.14841268956661224, 0.2968253791332245, -0.07420634478330612]),
    ("hinge_loss", 0.2, 1.0, 0.5): (
        [0.639102578163147, 3.616666555404663, -1.0, 2.0],
        [-0.27820512652397156, 0.09273504465818405, 0.0, 0.1854700893163681],
        [0.1854700893163681, 0.3709401786327362, -0.09273504465818405]),
    ("smooth_hinge_loss", 0.2, 1.0, 0.5): (
        [0.5934523940086365, 2.616666555404663, -0.75, 2.0],
        [-0.18690475821495056, 0.06230158731341362, 0.0, 0.12460317462682724],
        [0.12460317462682724, 0.24920634925365448, -0.06230158731341362]),
    ("poisson_loss", 0.2, 3.0, 0.25): (
        [0.38609078526496887, 5.741199970245361, 0.06380501389503479, 2.0],
        [-0.27218157052993774, 0.09072718769311905, 0.0, 0.1814543753862381],
        [0.1814543753862381, 0.3629087507724762, -0.09072718769311905]),
    ("logistic_loss", 0.0, 0.0, -0.3): (
        [-0.2844301462173462, 0.5623002648353577, -1.2217286825180054, 2.0],
        [-0.031139755621552467, 0.010379918850958347, 0.0, 0.020759837701916695],
        [0.020759837701916695, 0.04151967540383339, -0.010379918850958347]),
    ("squared_loss", 0.0, -2.0, 0.0): (
        [-0.0625, 0.765625, 0.0, 2.0],
        [0.125, -0.0416666679084301, 0.0, -0.0833333358168602],
        [-0.0833333358168602, -0.1666666716337204, 0.0416666679084301]),
    ("poisson_loss", 0.0, 0.0, 0.0): (
        [-0.09473995864391327, 0.6493049263954163, 0.0, 2.0],
        [0.18947991728782654, -0.06315997242927551, 0.0, -0.12631994485855103],
        [-0.12631994485855103, -0.25263988971710205, 0.06315997242927551]),
    ("hinge_loss", 0.0, 0.0, 0.0): (
        [0.0, 0.0, 0.0, 2.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0]),
}


@pytest.mark.parametrize("case", sorted(SINGLE_TF), ids=lambda c: "%s-l1=%g" % c[:2])
def test_single_example_matches_tf(case):
    state, sparse, dense = SINGLE_TF[case]
    for adaptative in (True, False):
        out_state, out_sparse, out_dense = _single(*case, adaptative=adaptative)
        np.testing.assert_allclose(out_state, [state], rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(np.concatenate(out_sparse), sparse, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(out_dense[0], dense, rtol=1e-6, atol=1e-7)
        # the bias group's delta is the step itself (its feature is 1)
        np.testing.assert_allclose(out_dense[1], [sparse[3]], rtol=1e-6, atol=1e-7)


def test_squared_loss_single_update_by_hand():
    # no l1: wx = x.w = 0.5*-0.2 - 1.5*0.3 + 0.05 + (0.1 - 0.8 - 0.125) + 0.2 = -1.125;
    # |x|^2 = 0.25 + 2.25 + 1 + 5.25 + 1 = 9.75, normalized by l2 = 1.5: 6.5;
    # new dual = a + (y - a - wx) / (1 + 6.5 * weight) = 0.25 + 1.875 / 14
    state, sparse, dense = _single("squared_loss", 0.0, 1.0, 0.25)
    new_dual = 0.25 + 1.875 / 14
    step = (new_dual - 0.25) * 2.0 / 1.5
    np.testing.assert_allclose(state[0], [new_dual, 0.5 * 2.125 ** 2 * 2, 0.25 * (0.125 - 1) * 2,
                                          2.0], rtol=1e-6)
    np.testing.assert_allclose(sparse[0], [-1.5 * step, 0.5 * step, 0.0], rtol=1e-6)
    np.testing.assert_allclose(dense[0], [step, 2 * step, -0.5 * step], rtol=1e-6)


def test_v2_op_is_the_same_kernel():
    with tf.Graph().as_default():
        st, _, _ = sdca_ops.sdca_optimizer_v2(
            [], [], [], [tf.constant([[1.0]])], tf.constant([1.0]), tf.constant([1.0]),
            [], [], [tf.constant([0.0])], tf.zeros([1, 4]), loss_type="squared_loss",
            l1=0.0, l2=1.0, num_loss_partitions=1, num_inner_iterations=1)
        assert st.op.type == "SdcaOptimizerV2" and st.op.get_attr("adaptive") is False
    v1 = _single("smooth_hinge_loss", 0.2, 1.0, 0.5)
    v2 = _single("smooth_hinge_loss", 0.2, 1.0, 0.5, op=sdca_ops.sdca_optimizer_v2)
    for a, b in zip(v1, v2):
        np.testing.assert_allclose(np.concatenate([np.ravel(x) for x in a]),
                                   np.concatenate([np.ravel(x) for x in b]), rtol=1e-7)


# --- several examples that share no feature: order-independent ----------------------------
def _disjoint(loss, nlp):
    labels = {"poisson_loss": [1.0, 0.0, 4.0, 2.0], "squared_loss": [1.5, -0.5, 2.0, 0.0]}
    with tf.Graph().as_default():
        res = tf.train.sdca_optimizer(
            [tf.constant([0, 1, 1, 2, 3], tf.int64), tf.constant([0, 2, 3], tf.int64)],
            [tf.constant([0, 1, 2, 3, 4], tf.int64), tf.constant([10, 12, 13], tf.int64)],
            [tf.constant([1.0, 0.5, 2.0, -1.0, 1.5])], [],
            tf.constant([1.0, 2.0, 0.5, 1.0]),
            tf.constant(labels.get(loss, [1.0, 0.0, 1.0, 0.0])),
            [tf.constant([0, 1, 2, 3, 4], tf.int64), tf.constant([10, 12, 13], tf.int64)],
            [tf.constant([0.1, 0.2, -0.1, 0.0, 0.3]), tf.constant([0.0, 0.5, -0.5])], [],
            tf.zeros([4, 4]), loss_type=loss, l1=0.0, l2=1.0, num_loss_partitions=nlp,
            num_inner_iterations=1, adaptative=False)
        return _run(res)


DISJOINT_TF = {  # (loss, num_loss_partitions) -> TF's duals, primal losses, sparse deltas
    ("logistic_loss", 3): (
        [0.2070913463830948, -0.08784996718168259, 0.23212221264839172, -0.16281408071517944],
        [0.6443966627120972, 1.2887933254241943, 0.2370384931564331, 0.6684596538543701],
        [0.2070913463830948, -0.08784996718168259, -0.35139986872673035, -0.11606110632419586,
         -0.24422112107276917, 0.2070913463830948, 0.11606110632419586, -0.16281408071517944]),
    ("poisson_loss", 1): (
        [-0.033516477793455124, -0.1860726922750473, 0.6953350901603699, 0.19679023325443268],
        [1.0051709413528442, 1.809674859046936, -0.17563936114311218, 1.0512293577194214],
        [-0.033516477793455124, -0.1860726922750473, -0.7442907691001892,
         -0.34766754508018494, 0.2951853573322296, -0.033516477793455124,
         0.34766754508018494, 0.19679023325443268]),
    ("smooth_hinge_loss", 3): (
        [0.12857142090797424, -0.03396226465702057, 0.125, -0.08837209641933441],
        [0.4050000011920929, 0.8100000023841858, 0.0625, 0.45125001668930054],
        [0.12857142090797424, -0.03396226465702057, -0.13584905862808228, -0.0625,
         -0.13255813717842102, 0.12857142090797424, 0.0625, -0.08837209641933441]),
    ("squared_loss", 1): (
        [0.46666666865348816, -0.042105261236429214, 0.75, 0.011764701455831528],
        [0.9800000190734863, 0.1599999964237213, 0.5625, 0.00124999915715307],
        [0.46666666865348816, -0.042105261236429214, -0.16842104494571686, -0.375,
         0.01764705218374729, 0.46666666865348816, 0.375, 0.011764701455831528]),
}


@pytest.mark.parametrize("case", sorted(DISJOINT_TF), ids=lambda c: "%s-%d" % c)
def test_examples_without_shared_features_match_tf(case):
    duals, primal, deltas = DISJOINT_TF[case]
    state, sparse, dense = _disjoint(*case)
    assert dense == []
    np.testing.assert_allclose(state[:, 0], duals, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(state[:, 1], primal, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(state[:, 3], [1.0, 2.0, 0.5, 1.0])
    np.testing.assert_allclose(np.concatenate(sparse), deltas, rtol=1e-6, atol=1e-7)


# --- shared features: one pass depends on the order, repeated passes converge to TF's ----
def _converge(loss, steps, l1, l2=0.5, adaptative=False, config=None):
    rng = np.random.RandomState(0)
    n = 12
    x = rng.randn(n, 3).astype(np.float32)
    if loss == "squared_loss":
        y = (x @ np.array([1.0, -2.0, 0.5]) + 0.3).astype(np.float32)
    else:
        y = (x[:, 0] > 0).astype(np.float32)
    with tf.Graph().as_default():
        dw, bw = tf.placeholder(tf.float32, [3]), tf.placeholder(tf.float32, [1])
        sw, st = tf.placeholder(tf.float32, [4]), tf.placeholder(tf.float32, [n, 4])
        res = tf.train.sdca_optimizer(
            [tf.constant(np.arange(n, dtype=np.int64))],
            [tf.constant(np.arange(n, dtype=np.int64) % 4)], [],
            [tf.constant(x), tf.ones([n, 1])],
            tf.constant(np.linspace(0.5, 1.5, n).astype(np.float32)), tf.constant(y),
            [tf.constant(np.arange(4, dtype=np.int64))], [sw], [dw, bw], st,
            loss_type=loss, l1=l1, l2=l2, num_loss_partitions=1, num_inner_iterations=1,
            adaptative=adaptative)
        v = [np.zeros(3, np.float32), np.zeros(1, np.float32), np.zeros(4, np.float32),
             np.zeros((n, 4), np.float32)]
        with tf.Session(config=config) as sess:
            for _ in range(steps):
                state, (d_sw,), (d_dw, d_bw) = sess.run(
                    res, {dw: v[0], bw: v[1], sw: v[2], st: v[3]})
                v = [v[0] + d_dw, v[1] + d_bw, v[2] + d_sw, state]
    shrink = l1 / l2
    return [np.sign(w) * np.maximum(np.abs(w) - shrink, 0) for w in v[:3]] + [v[3][:, 0]]


def test_shared_features_converge_to_tf_optimum():
    dw, bw, sw, duals = _converge("squared_loss", 300, 0.0)
    np.testing.assert_allclose(dw, [0.9285485744476318, -1.782077670097351,
                                    0.42846187949180603], atol=2e-6)
    np.testing.assert_allclose(bw, [0.20975300669670105], atol=2e-6)
    np.testing.assert_allclose(sw, [0.3014514446258545, -0.16356581449508667,
                                    0.05054699257016182, 0.021320266649127007], atol=2e-6)
    np.testing.assert_allclose(duals[:4], [-0.10234668850898743, -0.06296740472316742,
                                           0.13318508863449097, 0.17091017961502075],
                               atol=2e-6)
    dw, bw, sw, _ = _converge("logistic_loss", 300, 0.05)
    np.testing.assert_allclose(dw, [1.5904872417449951, -0.013272300362586975,
                                    -0.7656834125518799], atol=2e-6)
    np.testing.assert_allclose(bw, [0.7587539553642273], atol=2e-6)
    np.testing.assert_allclose(sw, [0.20927348732948303, -0.21504941582679749,
                                    0.36411455273628235, 0.30041491985321045], atol=2e-6)


def test_adaptive_order_converges_too():
    # TF's default for sdca_optimizer: the order is sampled by the duality gaps
    plain = _converge("squared_loss", 300, 0.0)
    adaptive = _converge("squared_loss", 600, 0.0, adaptative=True)
    for a, b in zip(adaptive[:3], plain[:3]):
        np.testing.assert_allclose(a, b, atol=1e-3)


# --- static shapes, attrs, errors ---------------------------------------------------------
def test_static_shapes_and_attrs():
    with tf.Graph().as_default():
        st = tf.placeholder(tf.float32, [None, 4])
        r = tf.train.sdca_optimizer(
            [tf.constant([0], tf.int64)], [tf.constant([0], tf.int64)], [],
            [tf.placeholder(tf.float32, [None, 2])], tf.constant([1.0]), tf.constant([1.0]),
            [tf.constant([0], tf.int64)], [tf.placeholder(tf.float32, [None])],
            [tf.placeholder(tf.float32, [2])], st, loss_type="squared_loss", l1=0.0,
            l2=1.0, num_loss_partitions=1, num_inner_iterations=1)
        assert r[0].shape.as_list() == [None, 4]
        assert [t.shape.as_list() for t in r[1]] == [[None]]
        assert [t.shape.as_list() for t in r[2]] == [[2]]
        op = r[0].op
        assert op.type == "SdcaOptimizer"
        assert op.get_attr("adaptative") is True  # the Python default, as TF's
        assert (op.get_attr("num_sparse_features"), op.get_attr("num_dense_features"),
                op.get_attr("num_sparse_features_with_values")) == (1, 1, 0)


def _bad_run(**overrides):
    args = dict(sparse_example_indices=[tf.constant([0], tf.int64)],
                sparse_feature_indices=[tf.constant([0], tf.int64)],
                sparse_feature_values=[], dense_features=[tf.constant([[1.0]])],
                example_weights=tf.constant([1.0]), example_labels=tf.constant([1.0]),
                sparse_indices=[tf.constant([0], tf.int64)], sparse_weights=[tf.constant([0.0])],
                dense_weights=[tf.constant([0.0])], example_state_data=tf.zeros([1, 4]),
                loss_type="logistic_loss", l1=0.0, l2=1.0, num_loss_partitions=1,
                num_inner_iterations=1)
    args.update({k: v() if callable(v) else v for k, v in overrides.items()})
    return _run(tf.train.sdca_optimizer(**args)[0])


RUN_ERRORS = [  # TF 2.15.1's messages
    ({"example_labels": lambda: tf.constant([0.5])},
     "Only labels of 0.0 or 1.0 are supported right now. Found example with label: 0.5"),
    ({"loss_type": "poisson_loss", "example_labels": lambda: tf.constant([-1.0])},
     "Only non-negative labels can be used with the Poisson log loss. Found example with "
     "label: -1"),
    ({"example_state_data": lambda: tf.zeros([2, 4])},
     "Expected shape [1,4] for example_state_data, got [2,4]"),
    ({"example_state_data": lambda: tf.zeros([4])},
     "example_state_data must be rank 2 but is rank 1"),
    ({"example_labels": lambda: tf.constant([1.0, 0.0])}, "Expected 1 example labels but got 2"),
    ({"sparse_feature_indices": lambda: [tf.constant([5], tf.int64)]},
     "Found sparse feature indices out of valid range: 5"),
    ({"sparse_example_indices": lambda: [tf.constant([0, 0], tf.int64)],
      "sparse_feature_indices": lambda: [tf.constant([0, 0], tf.int64)]},
     "Duplicate index in sparse vector."),
    ({"sparse_example_indices": lambda: [tf.constant([0, 0], tf.int64)]},
     "Found mismatched example_indices and feature_indices"),
    ({"dense_features": lambda: [tf.constant([1.0])]},
     "Dense features at index 0 must be rank 2 but is rank 1"),
    ({"dense_features": lambda: [tf.constant([[1.0, 2.0]])]},
     "More dense features than we have parameters for: 2"),
    ({"sparse_example_indices": [], "sparse_feature_indices": [], "sparse_indices": [],
      "sparse_weights": [], "dense_features": [], "dense_weights": []},
     "Requires at least one feature to train."),
]


@pytest.mark.parametrize("overrides,message", RUN_ERRORS)
def test_run_time_errors(overrides, message):
    with tf.Graph().as_default():
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            _bad_run(**overrides)
        assert message in info.value.message


def test_build_time_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Attr 'loss_type' of 'SdcaOptimizer' Op passed "
                                             "string 'bogus' not in: \"logistic_loss\""):
            _bad_run(loss_type="bogus")
        with pytest.raises(ValueError, match="Attr 'num_loss_partitions' of 'SdcaOptimizer' "
                                             "Op passed 0 less than minimum 1."):
            _bad_run(num_loss_partitions=0)


def test_unsorted_example_indices_are_read_as_tf_reads_them():
    # TF takes each example's run of entries in order: after [1] it never returns to
    # example 0, so the trailing entry is ignored (no delta for feature 2). A uniform
    # order: the adaptive one (the default) may, as TF's, skip example 1 (about 1 run
    # in 20 here)
    with tf.Graph().as_default():
        _, (sparse,), _ = tf.train.sdca_optimizer(
            [tf.constant([1, 0], tf.int64)], [tf.constant([1, 2], tf.int64)], [], [],
            tf.constant([1.0, 1.0]), tf.constant([1.0, 2.0]),
            [tf.constant([1, 2], tf.int64)], [tf.constant([0.0, 0.0])], [],
            tf.zeros([2, 4]), loss_type="squared_loss", l1=0.0, l2=1.0,
            num_loss_partitions=1, num_inner_iterations=1, adaptative=False)
        out = _run(sparse)
    np.testing.assert_allclose(out, [1.0, 0.0])  # example 1: (2 - 0) / (1 + 1)


# --- SdcaShrinkL1 -------------------------------------------------------------------------
def test_shrink_l1_matches_tf():
    with tf.Graph().as_default():
        v1 = tf.Variable([0.5, -0.05, -2.0, 0.1])
        v2 = tf.Variable([[0.3, -0.3]])
        op = tf.train.sdca_shrink_l1([v1, v2], l1=0.2, l2=2.0)
        assert op.type == "SdcaShrinkL1" and op.get_attr("num_features") == 2
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(op)
            a, b = sess.run([v1, v2])
    np.testing.assert_allclose(a, [0.4000000059604645, 0.0, -1.899999976158142, 0.0])
    np.testing.assert_allclose(b, [[0.20000001788139343, -0.20000001788139343]])
    assert np.signbit(a[1])  # sign(-0.05) * 0 = -0, as TF


def test_shrink_l1_needs_variables():
    with tf.Graph().as_default():
        with pytest.raises(TypeError):
            tf.train.sdca_shrink_l1([tf.constant([1.0])], l1=0.1, l2=1.0)


@pytest.mark.parametrize("adaptative", [False, True])
def test_the_deterministic_mode_repeats_the_visiting_order(adaptative):
    """One pass over examples that share features depends on the order the examples are
    visited in, which TF draws from OS entropy (so does the default mode here: five
    sessions give more than one result); the deterministic mode seeds it by the op's
    name, so every session repeats it."""
    config = tf.ConfigProto(experimental={"deterministic": True})
    first, again = (_converge("squared_loss", 1, 0.0, adaptative=adaptative, config=config)
                    for _ in range(2))
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    runs = {tuple(_converge("squared_loss", 1, 0.0, adaptative=adaptative)[0].tolist())
            for _ in range(5)}
    assert len(runs) > 1
