"""tf.estimator.experimental.KMeans (estimator/canned/kmeans.py) and its training graph
(kmeans_graph.py): against TF 2.15's numbers and a NumPy k-means written here."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.estimator.canned import kmeans_graph

_RNG = np.random.RandomState(0)
POINTS = np.concatenate([_RNG.randn(6, 2) + [4, 4], _RNG.randn(6, 2) - [4, 0],
                         _RNG.randn(6, 2) + [0, -5]]).astype(np.float32)
INIT = POINTS[[0, 1, 2]].copy()

# TF 2.15.1 + tensorflow-estimator, 3 training steps from INIT on the whole of POINTS
TF_FULL_BATCH = {
    "centers": [[5.119618892669678, 3.920529365539551], [4.5613884925842285, 5.847580909729004],
                [-1.6590800285339355, -2.6925771236419678]],
    "score": 165.08847045898438,
    "index": [0, 1, 0, 0, 0, 1] + [2] * 12,
    "transform0": [0.8033281564712524, 1.8818711042404175, 10.266925811767578]}
TF_COSINE_FULL_BATCH = {
    "centers": [[0.7366843819618225, 0.6762367486953735],
                [-0.9986609220504761, -0.051732901483774185],
                [0.09774302691221237, -0.9952116012573242]],
    "score": 0.25659215450286865,
    "index": [0] * 6 + [1] * 6 + [2] * 6,
    "transform0": [0.004104435443878174, 1.8251926898956299, 1.526186227798462]}
# mini-batch, steps per iteration 1: TF's graph lets the read of the counts race with
# their update; this run read them after the update in steps 1 and 3 (see
# test_tf_mini_batch_numbers_are_one_order_of_the_reference)
TF_MINI_BATCH_CENTERS = [[5.217644691467285, 4.071404457092285],
                         [4.678247928619385, 5.9577107429504395],
                         [0.05210423469543457, -1.3932017087936401]]


# --- NumPy k-means ------------------------------------------------------------------------
def _normalize(x):
    return x / np.sqrt(np.maximum((x * x).sum(1, keepdims=True), 1e-12))


def _distances(points, centers, metric):
    if metric == "cosine":
        return 1 - _normalize(points) @ _normalize(centers).T
    return ((points[:, None, :] - centers[None]) ** 2).sum(-1)


def _lloyd(points, centers, steps, metric="squared_euclidean"):
    points = _normalize(points) if metric == "cosine" else points
    centers = centers.astype(np.float64)
    for _ in range(steps):
        index = _distances(points, centers, metric).argmin(1)
        sums = np.zeros_like(centers)
        np.add.at(sums, index, points)
        counts = np.bincount(index, minlength=len(centers))[:, None]
        centers = sums / (counts + 1e-6)
        centers = _normalize(centers) if metric == "cosine" else centers
    return centers


def _mini_batch(points, centers, steps, steps_per_iteration=1, counts_read_late=None):
    """Mini-batch k-means on the whole batch each step; `counts_read_late[s]` makes step
    s read the counts after adding the batch's (TF's race), as TF did once."""
    assign_with, updated = centers.astype(np.float64), centers.astype(np.float64)
    counts = np.full(len(centers), 1 if steps_per_iteration == 1 else 0)
    to_sync = steps_per_iteration
    for s in range(steps):
        if steps_per_iteration > 1:
            if to_sync <= 0:
                assign_with, counts, to_sync = updated.copy(), counts * 0, steps_per_iteration - 1
            else:
                to_sync -= 1
        index = _distances(points, assign_with, "squared_euclidean").argmin(1)
        for j in np.unique(index):
            members = points[index == j]
            n = len(members)
            old = counts[j] + (n if counts_read_late and counts_read_late[s] else 0)
            updated[j] += (members.sum(0) - n * updated[j]) / (old + n)
            counts[j] += n
        if steps_per_iteration == 1:
            assign_with = updated
    return assign_with, updated


# --- the estimator ------------------------------------------------------------------------
def _train_fn():
    return tf.data.Dataset.from_tensors(POINTS).repeat()


def _eval_fn():
    return tf.data.Dataset.from_tensors(POINTS)


def _trained(tmp_path, steps=3, **kwargs):
    kmeans = tf.estimator.experimental.KMeans(3, model_dir=str(tmp_path), **kwargs)
    kmeans.train(_train_fn, steps=steps)
    return kmeans


@pytest.mark.parametrize("metric,expected", [("squared_euclidean", TF_FULL_BATCH),
                                             ("cosine", TF_COSINE_FULL_BATCH)])
def test_full_batch_matches_tf_and_lloyd(tmp_path, metric, expected):
    kmeans = _trained(tmp_path, initial_clusters=INIT, distance_metric=metric,
                      use_mini_batch=False)
    centers = kmeans.cluster_centers()
    np.testing.assert_allclose(centers, expected["centers"], atol=2e-6)
    np.testing.assert_allclose(centers, _lloyd(POINTS, INIT, 3, metric), atol=2e-6)
    np.testing.assert_allclose(kmeans.score(_eval_fn), expected["score"], rtol=2e-6)
    assert [int(i) for i in kmeans.predict_cluster_index(_eval_fn)] == expected["index"]
    np.testing.assert_allclose(next(kmeans.transform(_eval_fn)), expected["transform0"],
                               rtol=1e-5, atol=1e-6)
    names = dict(tf.train.list_variables(str(tmp_path)))
    assert names == {"clusters": [3, 2], "global_step": [], "initialized": []}


def test_score_and_transform_are_those_of_the_centers(tmp_path):
    kmeans = _trained(tmp_path, steps=2, initial_clusters=INIT, use_mini_batch=False)
    distances = _distances(POINTS, kmeans.cluster_centers().astype(np.float64),
                           "squared_euclidean")
    np.testing.assert_allclose(kmeans.score(_eval_fn), distances.min(1).sum(), rtol=1e-5)
    np.testing.assert_allclose(np.stack(list(kmeans.transform(_eval_fn))),
                               np.sqrt(distances), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("steps_per_iteration", [1, 2])
def test_mini_batch_matches_the_reference(tmp_path, steps_per_iteration):
    kmeans = _trained(tmp_path, steps=4, initial_clusters=INIT,
                      mini_batch_steps_per_iteration=steps_per_iteration)
    centers, updated = _mini_batch(POINTS, INIT, 4, steps_per_iteration)
    np.testing.assert_allclose(kmeans.cluster_centers(), centers, atol=1e-5)
    names = dict(tf.train.list_variables(str(tmp_path)))
    if steps_per_iteration == 1:
        assert names == {"Variable": [3], "clusters": [3, 2], "global_step": [],
                         "initialized": []}
    else:
        assert names == {"Variable": [3], "clusters": [3, 2], "clusters_updated": [3, 2],
                         "global_step": [], "initialized": [], "update_in_steps": []}
        np.testing.assert_allclose(kmeans.get_variable_value("clusters_updated"), updated,
                                   atol=1e-5)


def test_tf_mini_batch_numbers_are_one_order_of_the_reference():
    """TF's recorded run is the reference with the counts read late in steps 1 and 3:
    the update rule is TF's; only the order of that read is fixed here (early)."""
    centers, _ = _mini_batch(POINTS, INIT, 3, counts_read_late=[True, False, True])
    np.testing.assert_allclose(centers, TF_MINI_BATCH_CENTERS, atol=1e-5)


def test_cosine_mini_batch_keeps_unnormalized_centers(tmp_path):
    kmeans = _trained(tmp_path, steps=2, initial_clusters=INIT, distance_metric="cosine")
    centers = kmeans.cluster_centers()
    assert not np.allclose(np.linalg.norm(centers, axis=1), 1.0)
    index = [int(i) for i in kmeans.predict_cluster_index(_eval_fn)]
    assert index == list(_distances(POINTS, centers, "cosine").argmin(1))


@pytest.mark.parametrize("init", ["kmeans_plus_plus", "random"])
def test_sampled_initial_centers_are_distinct_points(tmp_path, init):
    runs = []
    for run in range(2):
        kmeans = _trained(tmp_path / str(run), steps=1, initial_clusters=init, seed=7,
                          use_mini_batch=False,
                          config=tf.estimator.RunConfig(tf_random_seed=11))
        runs.append(kmeans.cluster_centers())
    np.testing.assert_array_equal(runs[0], runs[1])  # a fixed seed: one result
    assert runs[0].shape == (3, 2) and np.isfinite(runs[0]).all()


def test_kmeans_plus_plus_chooses_rows_of_the_data():
    for init in ("kmeans_plus_plus",):
        with tf.Graph().as_default():
            tf.set_random_seed(3)
            graph = kmeans_graph.KMeans(tf.constant(POINTS), 3, initial_clusters=init,
                                        kmeans_plus_plus_num_retries=-1,
                                        kmc2_chain_length=5)
            _, _, _, initialized, init_op, _ = graph.training_graph()
            centers = [v for v in tf.global_variables() if v.op.name == "clusters"][0]
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                for _ in range(5):
                    if sess.run(initialized):
                        break
                    sess.run(init_op)
                assert sess.run(initialized)
                chosen = sess.run(centers)
        rows = [int(np.flatnonzero((POINTS == c).all(1))[0]) for c in chosen]
        assert len(set(rows)) == 3, (init, rows)


def test_callable_initial_clusters_get_the_inputs_and_count(tmp_path):
    seen = []

    def first_rows(inputs, k):
        seen.append(k)
        return inputs[0][:3]

    kmeans = _trained(tmp_path, steps=1, initial_clusters=first_rows, use_mini_batch=False)
    np.testing.assert_allclose(kmeans.cluster_centers(), _lloyd(POINTS, INIT, 1), atol=2e-6)
    assert len(seen) == 1


def test_relative_tolerance_stops_training(tmp_path):
    kmeans = _trained(tmp_path, steps=20, initial_clusters=INIT, use_mini_batch=False,
                      relative_tolerance=1e-3)
    assert kmeans.get_variable_value("global_step") < 20


def test_features_dict_columns_in_key_order(tmp_path):
    def train_fn():
        return tf.data.Dataset.from_tensors({"b": POINTS[:, 1:], "a": POINTS[:, :1]}).repeat()

    kmeans = tf.estimator.experimental.KMeans(3, model_dir=str(tmp_path),
                                              initial_clusters=INIT, use_mini_batch=False)
    kmeans.train(train_fn, steps=3)
    np.testing.assert_allclose(kmeans.cluster_centers(), TF_FULL_BATCH["centers"], atol=2e-6)


def test_errors_are_tfs():
    with pytest.raises(ValueError, match="Unsupported initialization algorithm 'kmc2'"):
        tf.estimator.experimental.KMeans(3, initial_clusters="kmc2")
    with pytest.raises(ValueError, match="Unsupported distance metric 'manhattan'"):
        tf.estimator.experimental.KMeans(3, distance_metric="manhattan")
    with pytest.raises(ValueError, match="Unsupported initialization algorithm `foo`"):
        kmeans_graph.KMeans(tf.zeros([4, 2]), 2, initial_clusters="foo")
    with pytest.raises(ValueError, match="Unsupported distance metric `l1`"):
        kmeans_graph.KMeans(tf.zeros([4, 2]), 2, distance_metric="l1")
    with pytest.raises(NotImplementedError, match="kmc2"):
        kmeans_graph.KMeans(tf.zeros([4, 2]), 2, initial_clusters="kmc2")
    assert tf.estimator.experimental.KMeans.CLUSTER_CENTERS_VAR_NAME == "clusters"


def test_kmeans_plus_plus_needs_a_batch_of_num_clusters_points(tmp_path):
    kmeans = tf.estimator.experimental.KMeans(
        30, model_dir=str(tmp_path), initial_clusters="kmeans_plus_plus", seed=1)
    with pytest.raises(tf.errors.InvalidArgumentError):
        kmeans.train(_train_fn, steps=1)
