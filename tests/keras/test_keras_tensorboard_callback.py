"""tf.keras.callbacks.TensorBoard in graph-mode fit: the event files it writes (tags,
steps and values as TF 2.15's v1 Keras TensorBoard writes them)."""
import glob
import os

import numpy as np
import pytest

import tensorweave as tf


def _fit(log_dir, epochs=3, **kwargs):
    rng = np.random.RandomState(0)
    x = rng.rand(20, 3).astype("float32")
    y = rng.rand(20, 1).astype("float32")
    tf.reset_default_graph()
    tf.keras.backend.clear_session()
    model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,)),
                                 tf.keras.layers.Dense(1)])
    model.compile("sgd", "mse", metrics=["mae"])
    callback = tf.keras.callbacks.TensorBoard(str(log_dir), **kwargs)
    history = model.fit(x, y, batch_size=8, epochs=epochs, validation_data=(x, y),
                        verbose=0, callbacks=[callback])
    return history


def _events(log_dir):
    files = [f for f in glob.glob(os.path.join(str(log_dir), "*")) if os.path.isfile(f)]
    assert len(files) == 1 and "tfevents" in os.path.basename(files[0])
    rows = []
    for event in tf.train.summary_iterator(files[0]):
        what = event.WhichOneof("what")
        if what == "summary":
            for value in event.summary.value:
                rows.append((event.step, value.tag, value))
        else:
            rows.append((event.step, what, None))
    return rows


def test_epoch_scalars_and_graph(tmp_path):
    history = _fit(tmp_path)
    rows = _events(tmp_path)
    assert [(s, t) for s, t, _ in rows[:3]] == [(0, "file_version"), (0, "graph_def"),
                                                (0, "meta_graph_def")]
    scalars = [(s, t, v.simple_value) for s, t, v in rows[3:]]
    expected = [(epoch, "epoch_" + name, history.history[name][epoch])
                for epoch in range(3)
                for name in ("loss", "mean_absolute_error", "val_loss",
                             "val_mean_absolute_error")]
    assert [(s, t) for s, t, _ in scalars] == [(s, t) for s, t, _ in expected]
    np.testing.assert_allclose([v for *_, v in scalars], [v for *_, v in expected],
                               rtol=1e-6)


def test_no_graph(tmp_path):
    _fit(tmp_path, epochs=1, write_graph=False)
    tags = [t for _, t, _ in _events(tmp_path)]
    assert "graph_def" not in tags and tags[0] == "file_version"
    assert tags[1:] == ["epoch_loss", "epoch_mean_absolute_error", "epoch_val_loss",
                        "epoch_val_mean_absolute_error"]


def test_batch_updates_and_histograms(tmp_path):
    history = _fit(tmp_path, histogram_freq=2, update_freq="batch", write_images=True)
    rows = _events(tmp_path)
    batch = [(s, t) for s, t, _ in rows if t.startswith("batch_")]
    # 3 batches (8, 8, 4 samples) per epoch, step = batches seen
    assert batch == [(b, t) for b in range(9)
                     for t in ("batch_loss", "batch_mean_absolute_error")]
    epoch = [(s, t, v.simple_value) for s, t, v in rows if t.startswith("epoch_")]
    # with update_freq != 'epoch' the step is the number of samples seen
    assert [s for s, t, _ in epoch if t == "epoch_loss"] == [20, 40, 60]
    np.testing.assert_allclose([v for _, t, v in epoch if t == "epoch_val_loss"],
                               history.history["val_loss"], rtol=1e-6)
    histos = [(s, t) for s, t, v in rows if v is not None and v.HasField("histo")]
    per_batch = ["dense/kernel_0", "dense/bias_0", "dense_out", "dense_1/kernel_0",
                 "dense_1/bias_0", "dense_1_out"]
    # epochs 0 and 2 (histogram_freq=2), one per validation batch, counted over runs
    assert histos == [(s, t) for s in range(6) for t in per_batch]
    images = sorted({t for s, t, v in rows if v is not None and v.HasField("image")})
    assert images == ["dense/bias_0_1/image/0", "dense/kernel_0_1/image/0",
                      "dense_1/kernel_0_1/image/0"]


def test_int_update_freq(tmp_path):
    _fit(tmp_path, epochs=2, update_freq=10)
    batch = [s for s, t, _ in _events(tmp_path) if t == "batch_loss"]
    # samples seen 8, 16 (write), 20, 28 (write), 36, 40 (write)
    assert batch == [1, 3, 5]


def test_embeddings_not_supported(tmp_path):
    with pytest.raises(NotImplementedError, match="embeddings_freq"):
        tf.keras.callbacks.TensorBoard(str(tmp_path), embeddings_freq=1)
    callback = tf.compat.v1.keras.callbacks.TensorBoard(profile_batch=0, embeddings_freq=0)
    assert callback.log_dir == "./logs" and callback.update_freq == "epoch"
