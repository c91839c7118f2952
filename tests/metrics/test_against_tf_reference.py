"""tf.metrics (streamed over three updates) and tf.losses against values real TF1
computed for the same graph (tests/fixtures/tf1/make_metrics_fixtures.py)."""
import importlib.util
import os

import numpy as np
import pytest

import tensorweave as tf

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf1")


def _load_builder():
    spec = importlib.util.spec_from_file_location(
        "make_metrics_fixtures", os.path.join(FIXTURES, "make_metrics_fixtures.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def ours_and_expected():
    expected = dict(np.load(os.path.join(FIXTURES, "metrics_expected.npz")))
    return _load_builder().build_and_run(tf), expected


def test_same_keys(ours_and_expected):
    ours, expected = ours_and_expected
    assert sorted(ours) == sorted(expected)
    assert len(expected) == 30 * 4 + 11


def test_values_and_dtypes_match_tf(ours_and_expected):
    ours, expected = ours_and_expected
    for key, want in expected.items():
        got = ours[key]
        assert got.dtype == want.dtype, key
        assert got.shape == want.shape, key
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6, err_msg=key)
