"""tf.distributions' Distribution API as TF1 has it: Categorical's cdf and entropy of
given probabilities, StudentT with a negative scale, Uniform at NaN, static sample shapes
when the sample shape is fed, is_scalar_* as Tensors, param_shapes /
param_static_shapes. References are closed forms and NumPy sums."""
import math

import numpy as np
import pytest

import tensorweave as tf

d = tf.distributions


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


# --- values ---------------------------------------------------------------------------
def test_studentt_cdf_with_a_negative_scale(graph):
    # df = 3 in closed form: F(t) = 1/2 + (t / (sqrt(3) (1 + t^2 / 3)) + atan(t / sqrt(3)))
    # / pi; loc + scale T is symmetric about loc, so the sign of the scale does not matter
    def cdf3(t):
        return 0.5 + (t / (math.sqrt(3) * (1 + t * t / 3)) + math.atan(t / math.sqrt(3))) \
            / math.pi
    x = [1.0, -1.0, 0.0, 5.0]
    neg, pos = _run([d.StudentT(3.0, 0.0, -2.0).cdf(x), d.StudentT(3.0, 0.0, 2.0).cdf(x)])
    want = [cdf3(v / 2.0) for v in x]
    np.testing.assert_allclose(neg, want, rtol=1e-6)
    np.testing.assert_allclose(pos, want, rtol=1e-6)
    assert neg[0] == pytest.approx(0.674276, rel=1e-6)


def test_categorical_entropy_uses_the_given_probs(graph):
    probs = np.array([[1.0, 1.0, 2.0], [0.2, 0.3, 0.5]])
    got = _run(d.Categorical(probs=probs.astype(np.float32)).entropy())
    # TF's formula -sum(log_softmax(log p) * p): p is not normalized in the product
    norm = probs / probs.sum(-1, keepdims=True)
    want = -(np.log(norm) * probs).sum(-1)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert got[0] == pytest.approx(2 * math.log(4.0) + 2 * math.log(2.0), rel=1e-6)


def test_categorical_cdf(graph):
    probs = np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]], np.float32)
    logits = np.array([0.0, 1.0, 2.0], np.float32)
    k = np.array([[0, 1], [2, 3], [-1, 5]])
    cat = d.Categorical(probs=probs)
    got, got_vec, got_logits, got_float = _run([
        cat.cdf(k), d.Categorical(probs=probs[0]).cdf([0, 1, 2, 3, -1]),
        d.Categorical(logits=logits).cdf([0, 1, 2, 3]),
        d.Categorical(probs=probs[0]).cdf([0.0, 1.0, 2.0])])

    def below(p, j):  # TF's convention: the probability of the classes < j
        return float(np.sum(p[:max(j, 0)]))
    np.testing.assert_allclose(got, [[below(probs[b], j) for b, j in enumerate(row)]
                                     for row in k], rtol=1e-6)
    np.testing.assert_allclose(got_vec, [0.0, 0.2, 0.5, 1.0, 0.0], rtol=1e-6)
    softmax = np.exp(logits) / np.exp(logits).sum()
    np.testing.assert_allclose(got_logits, [below(softmax, j) for j in range(4)],
                               rtol=1e-6)
    np.testing.assert_allclose(got_float, [0.0, 0.2, 0.5], rtol=1e-6)
    assert cat.cdf([[0, 1]]).shape.as_list() == [1, 2]


def test_uniform_at_nan(graph):
    u = d.Uniform(0.0, 1.0)
    prob, log_prob, cdf, batch = _run([u.prob([np.nan, 0.5, 2.0]),
                                       u.log_prob([np.nan, 0.5, 2.0]),
                                       u.cdf([np.nan, 0.5, 2.0]),
                                       d.Uniform([0.0, 1.0], 2.0).prob(np.nan)])
    assert np.isnan(prob[0]) and prob[1:].tolist() == [1.0, 0.0]
    assert np.isnan(log_prob[0]) and log_prob[1] == 0.0 and log_prob[2] == -np.inf
    assert np.isnan(cdf[0]) and cdf[1:].tolist() == [0.5, 1.0]
    assert np.isnan(batch).all() and batch.shape == (2,)


# --- shapes -----------------------------------------------------------------------------
def test_sample_static_shape_with_a_fed_sample_shape(graph):
    n = d.Normal([0.0, 1.0], 1.0)
    scalar = tf.placeholder(tf.int32, [])
    vector = tf.placeholder(tf.int32, [2])
    unknown = tf.placeholder(tf.int32, None)
    assert n.sample(scalar).shape.as_list() == [None, 2]
    assert n.sample(vector).shape.as_list() == [None, None, 2]
    assert n.sample(unknown).shape.ndims is None
    assert d.Dirichlet([[1.0, 2.0, 3.0]]).sample(scalar).shape.as_list() == [None, 1, 3]
    assert d.Categorical(logits=[[1.0, 2.0]]).sample(scalar).shape.as_list() == [None, 1]
    assert d.Multinomial(3.0, logits=[[1.0, 2.0, 3.0]]).sample(
        vector).shape.as_list() == [None, None, 1, 3]
    assert d.Normal(tf.placeholder(tf.float32, [None, 3]), 1.0).sample(
        5).shape.as_list() == [5, None, 3]
    with tf.Session() as sess:
        assert sess.run(tf.shape(n.sample(scalar)), {scalar: 3}).tolist() == [3, 2]
        assert sess.run(tf.shape(n.sample(vector)), {vector: [3, 4]}).tolist() == [3, 4, 2]
        assert sess.run(tf.shape(n.sample(unknown)), {unknown: 3}).tolist() == [3, 2]
    with pytest.raises(ValueError, match="neither scalar nor vector"):
        n.sample([[2]])


def test_is_scalar_batch_and_event_are_tensors(graph):
    p = tf.placeholder(tf.float32, None)
    flags = [d.Normal(0.0, 1.0).is_scalar_batch(), d.Normal([0.0], 1.0).is_scalar_batch(),
             d.Normal([0.0], 1.0).is_scalar_event(), d.Dirichlet([1.0, 2.0]).is_scalar_event()]
    for f in flags:
        assert isinstance(f, tf.Tensor) and f.dtype == tf.bool
    assert flags[0].name == "Normal/is_scalar_batch/is_scalar_batch:0"
    assert _run(flags) == [True, False, True, False]
    unknown = d.Normal(p, 1.0).is_scalar_batch()
    assert _run(unknown, {p: 1.0}) and not _run(unknown, {p: [1.0, 2.0]})
    assert d.Dirichlet(p).event_shape.ndims is None  # unknown rank: unknown event shape


def test_param_shapes(graph):
    shapes = d.Normal.param_shapes([2, 3])
    assert sorted(shapes) == ["loc", "scale"]
    assert _run(shapes["loc"]).tolist() == [2, 3]
    static = d.Normal.param_static_shapes(tf.TensorShape([2, 3]))
    assert {k: v.as_list() for k, v in static.items()} == {"loc": [2, 3], "scale": [2, 3]}
    assert list(d.Exponential.param_static_shapes([4])) == ["rate"]
    assert list(d.Bernoulli.param_static_shapes([4])) == ["logits"]
    assert sorted(d.StudentT.param_static_shapes([4])) == ["df", "loc", "scale"]
    # parameters of those shapes give samples of that shape
    params = {k: tf.ones(v.as_list()) for k, v in d.Gamma.param_static_shapes([2, 3]).items()}
    assert d.Gamma(**params).sample().shape.as_list() == [2, 3]
    with pytest.raises(ValueError, match="must be fully defined"):
        d.Normal.param_static_shapes(tf.TensorShape([2, None]))
    with pytest.raises(ValueError, match="fully-defined TensorShape or list"):
        d.Normal.param_static_shapes(tf.placeholder(tf.int32, [2]))
    with pytest.raises(NotImplementedError, match="_param_shapes not implemented"):
        d.Categorical.param_static_shapes([2])


def test_derived_methods_and_their_errors(graph):
    # survival functions from the cdf where a distribution has no formula of its own
    g = d.Gamma(2.0, 1.0)
    sf, log_sf = _run([g.survival_function(1.0), g.log_survival_function(1.0)])
    assert sf == pytest.approx(2.0 * math.exp(-1.0), rel=1e-6)  # (1 + x) e^-x
    assert log_sf == pytest.approx(math.log(2.0) - 1.0, rel=1e-6)
    with pytest.raises(NotImplementedError, match="cdf is not implemented: Bernoulli"):
        d.Bernoulli(probs=0.5).cdf(1)
    with pytest.raises(NotImplementedError,
                       match="survival_function is not implemented: Bernoulli"):
        d.Bernoulli(probs=0.5).survival_function(1)
    with pytest.raises(NotImplementedError, match="quantile is not implemented: Gamma"):
        g.quantile(0.5)
