"""`validate_args=True` and the dtype checks of tf.distributions, case by case as TF 2.15
behaves (checked there by hand): a failing check on values known at build time raises
InvalidArgumentError while the graph is built, on placeholders when it runs; without
`validate_args` nothing is checked. The error classes are TF's conventions; the values
the valid cases give are checked against closed forms."""
import math

import numpy as np
import pytest

import tensorweave as tf

d = tf.distributions
V = dict(validate_args=True)
IAE = tf.errors.InvalidArgumentError


# --- constant arguments: the error comes at build time --------------------------------
BUILD_TIME_FAILURES = {
    "normal scale": lambda: d.Normal(0.0, -1.0, **V),
    "normal zero scale": lambda: d.Normal(0.0, [1.0, 0.0], **V),
    "laplace scale": lambda: d.Laplace(0.0, -1.0, **V),
    "gamma concentration": lambda: d.Gamma(-1.0, 1.0, **V),
    "gamma rate": lambda: d.Gamma(1.0, 0.0, **V),
    "exponential rate": lambda: d.Exponential(-1.0, **V),
    "beta concentration1": lambda: d.Beta(-1.0, 1.0, **V),
    "beta concentration0": lambda: d.Beta(1.0, -1.0, **V),
    "studentt df": lambda: d.StudentT(-1.0, 0.0, 1.0, **V),
    "uniform low >= high": lambda: d.Uniform(1.0, 1.0, **V),
    "dirichlet concentration": lambda: d.Dirichlet([1.0, -1.0], **V),
    "bernoulli probs > 1": lambda: d.Bernoulli(probs=1.5, **V),
    "bernoulli probs < 0": lambda: d.Bernoulli(probs=-0.1, **V),
    "categorical probs < 0": lambda: d.Categorical(probs=[-0.1, 1.1], **V),
    "multinomial total_count fraction": lambda: d.Multinomial(2.5, probs=[0.5, 0.5], **V),
    "multinomial total_count < 0": lambda: d.Multinomial(-1.0, probs=[0.5, 0.5], **V),
    "dirichletmultinomial concentration": lambda: d.DirichletMultinomial(
        2.0, [1.0, -1.0], **V),
    # values outside the support, where TF checks them
    "gamma log_prob x < 0": lambda: d.Gamma(1.0, 1.0, **V).log_prob(-1.0),
    "gamma log_prob x = 0": lambda: d.Gamma(1.0, 1.0, **V).log_prob(0.0),
    "gamma cdf x < 0": lambda: d.Gamma(1.0, 1.0, **V).cdf(-1.0),
    "exponential log_survival x < 0": lambda: d.Exponential(
        1.0, **V).log_survival_function(-1.0),
    "beta log_prob x > 1": lambda: d.Beta(1.0, 1.0, **V).log_prob(1.5),
    "beta prob x = 1": lambda: d.Beta(1.0, 1.0, **V).prob(1.0),
    "beta log_prob x = 0": lambda: d.Beta(1.0, 1.0, **V).log_prob(0.0),
    "dirichlet log_prob x = 0": lambda: d.Dirichlet([1.0, 2.0], **V).log_prob([0.0, 1.0]),
    "bernoulli log_prob 2": lambda: d.Bernoulli(probs=0.5, **V).log_prob(2),
    "bernoulli log_prob -1": lambda: d.Bernoulli(probs=0.5, **V).log_prob(-1),
    "bernoulli log_prob 0.5": lambda: d.Bernoulli(probs=0.5, **V).log_prob(0.5),
    "categorical log_prob -1": lambda: d.Categorical(probs=[0.2, 0.8], **V).log_prob(-1),
    "categorical log_prob 1.5": lambda: d.Categorical(probs=[0.2, 0.8], **V).log_prob(1.5),
    "categorical cdf -1": lambda: d.Categorical(probs=[0.2, 0.8], **V).cdf(-1),
    "multinomial counts fraction": lambda: d.Multinomial(
        2.0, probs=[0.5, 0.5], **V).log_prob([1.5, 0.5]),
    "multinomial counts < 0": lambda: d.Multinomial(
        2.0, probs=[0.5, 0.5], **V).log_prob([-1.0, 3.0]),
    "dirichletmultinomial counts fraction": lambda: d.DirichletMultinomial(
        2.0, [1.0, 1.0], **V).log_prob([1.5, 0.5]),
}


@pytest.mark.parametrize("build", list(BUILD_TIME_FAILURES.values()),
                         ids=list(BUILD_TIME_FAILURES))
def test_constant_invalid_arguments_fail_at_build_time(graph, build):
    with pytest.raises(IAE):
        build()


def test_messages_name_the_check(graph):
    with pytest.raises(IAE, match="uniform not defined when low >= high"):
        d.Uniform(1.0, 0.0, **V)
    with pytest.raises(IAE, match="Concentration parameter must be positive"):
        d.Beta(-1.0, 1.0, **V)
    with pytest.raises(IAE, match="sample must be less than `1`"):
        d.Beta(1.0, 1.0, **V).log_prob(1.5)
    with pytest.raises(IAE, match="probs has components greater than 1"):
        d.Bernoulli(probs=1.5, **V)
    with pytest.raises(IAE, match="Elements cannot exceed 1"):
        d.Bernoulli(probs=0.5, **V).log_prob(2)


# --- placeholders: the graph builds, running it fails (and valid feeds pass) ----------
def _ph(shape=None, dtype=tf.float32):
    return tf.placeholder(dtype, shape)


RUN_TIME_FAILURES = {
    # name: (build(placeholder) -> fetch, placeholder shape, dtype, bad feed, good feed)
    "normal scale": (lambda p: d.Normal(0.0, p, **V).log_prob(1.0), [], tf.float32,
                     -1.0, 2.0),
    "normal scale guards loc": (lambda p: d.Normal(0.0, p, **V).loc, [], tf.float32,
                                -1.0, 2.0),
    "laplace scale": (lambda p: d.Laplace(0.0, p, **V).stddev(), [], tf.float32, -1.0, 2.0),
    "gamma rate": (lambda p: d.Gamma(1.0, p, **V).mean(), [], tf.float32, -1.0, 2.0),
    "gamma log_prob x": (lambda p: d.Gamma(1.0, 1.0, **V).log_prob(p), [], tf.float32,
                         -1.0, 2.0),
    "beta concentration": (lambda p: d.Beta(p, 1.0, **V).mean(), [], tf.float32, -1.0, 2.0),
    "beta log_prob x": (lambda p: d.Beta(1.0, 1.0, **V).log_prob(p), [], tf.float32,
                        1.5, 0.5),
    "studentt df": (lambda p: d.StudentT(p, 0.0, 1.0, **V).mode(), [], tf.float32,
                    -1.0, 2.0),
    "uniform low >= high": (lambda p: d.Uniform(p, 0.0, **V).mean(), [], tf.float32,
                            1.0, -1.0),
    "dirichlet concentration": (lambda p: d.Dirichlet(p, **V).mean(), [2], tf.float32,
                                [1.0, -1.0], [1.0, 2.0]),
    "dirichlet one class": (lambda p: d.Dirichlet(p, **V).mean(), [None], tf.float32,
                            [1.0], [1.0, 2.0]),
    "dirichlet log_prob sum": (lambda p: d.Dirichlet([1.0, 2.0], **V).log_prob(p), [2],
                               tf.float32, [0.5, 0.6], [0.4, 0.6]),
    "bernoulli probs": (lambda p: d.Bernoulli(probs=p, **V).mean(), [], tf.float32,
                        1.5, 0.5),
    "bernoulli log_prob": (lambda p: d.Bernoulli(probs=0.5, **V).log_prob(p), [], tf.int32,
                           2, 1),
    "categorical probs sum": (lambda p: d.Categorical(probs=p, **V).entropy(), [2],
                              tf.float32, [0.5, 0.6], [0.4, 0.6]),
    "categorical one class": (lambda p: d.Categorical(logits=p, **V).entropy(), [None],
                              tf.float32, [1.0], [1.0, 2.0]),
    "categorical log_prob": (lambda p: d.Categorical(probs=[0.2, 0.8], **V).log_prob(p),
                             [], tf.int32, -1, 1),
    "multinomial probs sum": (lambda p: d.Multinomial(2.0, probs=p, **V).mean(), [2],
                              tf.float32, [0.5, 0.6], [0.4, 0.6]),
    "multinomial total_count": (lambda p: d.Multinomial(p, probs=[0.5, 0.5], **V).mean(),
                                [], tf.float32, 2.5, 2.0),
    "multinomial counts sum": (lambda p: d.Multinomial(2.0, probs=[0.5, 0.5],
                                                       **V).log_prob(p),
                               [2], tf.float32, [1.0, 0.0], [1.0, 1.0]),
    "dirichletmultinomial counts sum": (lambda p: d.DirichletMultinomial(
        2.0, [1.0, 1.0], **V).log_prob(p), [2], tf.float32, [1.0, 0.0], [2.0, 0.0]),
    "dirichletmultinomial total_count": (lambda p: d.DirichletMultinomial(
        p, [1.0, 1.0], **V).mean(), [], tf.float32, 2.5, 2.0),
}


@pytest.mark.parametrize("build,shape,dtype,bad,good", list(RUN_TIME_FAILURES.values()),
                         ids=list(RUN_TIME_FAILURES))
def test_fed_invalid_arguments_fail_at_run_time(graph, build, shape, dtype, bad, good):
    p = _ph(shape, dtype)
    fetch = build(p)
    with tf.Session() as sess:
        with pytest.raises(IAE):
            sess.run(fetch, {p: bad})
        assert np.all(np.isfinite(sess.run(fetch, {p: good})))


def test_without_validate_args_nothing_is_checked(graph):
    with tf.Session() as sess:
        mean, lp, ber, cat = sess.run([
            d.Normal(0.0, -1.0).mean(), d.Gamma(2.0, 1.0).log_prob(-1.0),
            d.Bernoulli(probs=0.5).log_prob(2), d.Dirichlet([1.0, 2.0]).log_prob([0.5, 0.6])])
    assert mean == 0.0 and np.isnan(lp)
    assert ber == pytest.approx(math.log(0.5))  # the sigmoid cross entropy of label 2
    assert cat == pytest.approx(math.log(2.0) + math.log(0.6))  # log(2 x2), unnormalized


def test_valid_values_pass_the_checks(graph):
    with tf.Session() as sess:
        got = sess.run([
            d.Normal(0.0, 1.0, **V).log_prob(3.0),
            d.Gamma(2.0, 1.0, **V).log_prob(1.0),
            d.Beta(2.0, 2.0, **V).log_prob(0.5),
            d.Bernoulli(probs=0.3, **V).log_prob(1.0),
            d.Categorical(probs=[0.2, 0.8], **V).log_prob(1.0),
            d.Dirichlet([1.0, 2.0], **V).log_prob([0.4, 0.6]),
            d.Multinomial(2.0, probs=[0.5, 0.5], **V).log_prob([1.0, 1.0]),
            d.DirichletMultinomial(2.0, [1.0, 1.0], **V).log_prob([1.0, 1.0])])
    want = [-4.5 - 0.5 * math.log(2 * math.pi), -1.0, math.log(1.5), math.log(0.3),
            math.log(0.8), math.log(2 * 0.6), math.log(0.5), math.log(1.0 / 3.0)]
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_static_shape_checks_are_value_errors(graph):
    # TF: at least 2 classes, checked on the static shape
    with pytest.raises(ValueError, match="at least 2 events"):
        d.Categorical(probs=[1.0], **V)
    with pytest.raises(ValueError, match="at least 2 events"):
        d.DirichletMultinomial(2.0, [1.0], **V)
    with pytest.raises(ValueError, match=">=1 dimensions"):
        d.Dirichlet(1.0, **V)


# --- dtypes -----------------------------------------------------------------------------
F64 = lambda v: tf.constant(v, tf.float64)  # noqa: E731

DTYPE_ERRORS = {
    # TF's assert_same_float_dtype: integer or mixed parameters are ValueErrors
    "normal int": (lambda: d.Normal(0, 1), ValueError),
    "normal float64 and float": (lambda: d.Normal(F64(0.0), 1.0), ValueError),
    "normal float and float64": (lambda: d.Normal(0.0, F64(1.0)), ValueError),
    "gamma int": (lambda: d.Gamma(1, 1), ValueError),
    "uniform mixed": (lambda: d.Uniform(F64(0.0), 1.0), ValueError),
    "beta mixed": (lambda: d.Beta(F64(1.0), 1.0), ValueError),
    "studentt mixed": (lambda: d.StudentT(F64(1.0), 0.0, 1.0), ValueError),
    "exponential int": (lambda: d.Exponential(1), ValueError),
    # a value Tensor of another dtype reaches the formulas: the op's TypeError
    "normal log_prob int": (lambda: d.Normal(0.0, 1.0).log_prob(tf.constant(1)), TypeError),
    "normal cdf float64": (lambda: d.Normal(0.0, 1.0).cdf(F64(1.0)), TypeError),
    "uniform prob int": (lambda: d.Uniform(0.0, 1.0).prob(tf.constant(1)), TypeError),
    "dirichlet log_prob int": (lambda: d.Dirichlet([1.0, 1.0]).log_prob(
        tf.constant([1, 0])), TypeError),
    # ... except Gamma's, which checks it (ValueError)
    "gamma log_prob int": (lambda: d.Gamma(1.0, 1.0).log_prob(tf.constant(1)), ValueError),
    # logits / probs must be floating; total_count of the probabilities' dtype
    "bernoulli int probs": (lambda: d.Bernoulli(probs=1), TypeError),
    "categorical int logits": (lambda: d.Categorical(logits=[1, 1]), TypeError),
    "multinomial int probs": (lambda: d.Multinomial(2.0, probs=[1, 1]), TypeError),
    "multinomial float64 total_count": (lambda: d.Multinomial(F64(2.0), probs=[0.5, 0.5]),
                                        TypeError),
    # Betainc's shapes: [3] concentrations and x of shape [3, 1]
    "beta cdf shapes": (lambda: d.Beta([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]).cdf(
        [[0.1], [0.2], [0.3]]), ValueError),
}


@pytest.mark.parametrize("build,error", list(DTYPE_ERRORS.values()), ids=list(DTYPE_ERRORS))
def test_dtype_and_shape_errors(graph, build, error):
    with pytest.raises(error):
        build()


def test_python_numbers_and_arrays_take_the_distribution_dtype(graph):
    n64 = d.Normal(F64(0.0), F64(1.0))
    with tf.Session() as sess:
        a, b, c = sess.run([d.Normal(0.0, 1.0).log_prob(1),
                            d.Normal(0.0, 1.0).log_prob(np.array([1.0, 2.0])),
                            n64.log_prob(0.5)])
    assert a.dtype == np.float32 and b.dtype == np.float32 and c.dtype == np.float64
    assert c == pytest.approx(-0.125 - 0.5 * math.log(2 * math.pi), rel=1e-12)
    # a DirichletMultinomial's total_count may differ in dtype until the two meet
    dm = d.DirichletMultinomial(2, [1.0, 1.0])
    assert dm.dtype == tf.float32
