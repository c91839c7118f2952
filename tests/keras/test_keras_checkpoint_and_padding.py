"""tf.keras.callbacks.ModelCheckpoint in Model.fit (graph mode) as TF 2.15's Keras runs
it: file names formatted with the 1-based epoch and the logs, save_best_only with
monitor/mode, weights-only files, save_freq in batches, the deprecated `period`, the
verbose lines and the warnings; and tf.keras.preprocessing.sequence.pad_sequences (also
tf.keras.utils.pad_sequences) against hand-written arrays."""
import logging
import os

import numpy as np
import pytest

import tensorweave as tf

K = tf.keras
L = tf.keras.layers
C = tf.keras.callbacks
pad_sequences = tf.keras.preprocessing.sequence.pad_sequences

X = np.array([[1.0, 2.0], [0.5, -1.0], [2.0, 0.0], [-1.0, 1.0], [0.0, 0.5], [1.5, 1.5],
              [0.2, 0.3], [-0.5, 2.0]], np.float32)
Y = np.array([[1.0], [0.0], [2.0], [-1.0], [0.5], [1.0], [0.3], [0.1]], np.float32)
XV = np.array([[1.0, 1.0], [-1.0, 0.0], [0.5, 0.5]], np.float32)
YV = np.array([[5.0], [-3.0], [2.0]], np.float32)


def _model(lr=0.1):
    model = K.Sequential([L.Dense(1, input_shape=(2,))])
    model.set_weights([np.array([[0.5], [-0.5]], np.float32), np.zeros(1, np.float32)])
    model.compile(K.optimizers.SGD(lr), "mse")
    return model


class _Weights(C.Callback):
    """The model's weights and the logs at the end of each epoch."""

    def __init__(self):
        super().__init__()
        self.weights, self.logs = [], []

    def on_epoch_end(self, epoch, logs=None):
        self.weights.append(self.model.get_weights())
        self.logs.append(dict(logs))


def _assert_weights(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=0, atol=0)


@pytest.mark.usefixtures("keras_graph")
class TestModelCheckpoint:

    def test_exported(self):
        assert C.ModelCheckpoint is tf.keras.callbacks.ModelCheckpoint
        cb = C.ModelCheckpoint("m.h5")
        assert (cb.monitor, cb.save_best_only, cb.save_weights_only, cb.save_freq,
                cb.period) == ("val_loss", False, False, "epoch", 1)
        assert not cb._implements_train_batch_hooks()
        assert C.ModelCheckpoint("m.h5", save_freq=2)._implements_train_batch_hooks()

    @pytest.mark.parametrize("monitor,mode,op,best", [
        ("val_loss", "auto", np.less, np.inf), ("val_acc", "auto", np.greater, -np.inf),
        ("accuracy", "auto", np.greater, -np.inf), ("fmeasure", "auto", np.greater, -np.inf),
        ("val_auc", "auto", np.less, np.inf), ("loss", "max", np.greater, -np.inf),
        ("val_acc", "min", np.less, np.inf), ("mae", "bogus", np.less, np.inf)])
    def test_mode(self, monitor, mode, op, best):
        cb = C.ModelCheckpoint("m.h5", monitor=monitor, mode=mode)
        assert cb.monitor_op is op and cb.best == best

    def test_initial_value_threshold_and_bad_save_freq(self, caplog):
        assert C.ModelCheckpoint("m.h5", initial_value_threshold=0.5).best == 0.5
        with pytest.raises(ValueError, match='Unrecognized save_freq: bad. Expected '
                           'save_freq are "epoch" or integer'):
            C.ModelCheckpoint("m.h5", save_freq="bad")
        with caplog.at_level(logging.WARNING):
            C.ModelCheckpoint("m.h5", mode="bogus")
        assert "ModelCheckpoint mode bogus is unknown, fallback to auto mode." in caplog.text

    def test_every_epoch_formatted_names(self, tmp_path, capsys):
        model = _model()
        rec = _Weights()
        pattern = str(tmp_path / "m-{epoch:02d}-{val_loss:.2f}.h5")
        model.fit(X, Y, batch_size=4, epochs=3, validation_data=(XV, YV), verbose=0,
                  callbacks=[C.ModelCheckpoint(pattern, verbose=1), rec])
        names = ["m-%02d-%.2f.h5" % (i + 1, logs["val_loss"]) for i, logs in
                 enumerate(rec.logs)]
        assert sorted(os.listdir(tmp_path)) == sorted(names)
        out = capsys.readouterr().out
        assert out == "".join("\nEpoch %d: saving model to %s\n" % (i + 1, tmp_path / n)
                              for i, n in enumerate(names))
        for name, weights in zip(names, rec.weights):
            loaded = K.models.load_model(str(tmp_path / name))
            _assert_weights(loaded.get_weights(), weights)

    def test_save_best_only(self, tmp_path, capsys):
        # the validation targets are far from the training ones: val_loss goes down,
        # then up, so some epochs do not improve
        model = _model(lr=0.3)
        rec = _Weights()
        path = str(tmp_path / "best.h5")
        model.fit(X, Y, batch_size=8, epochs=6, validation_data=(XV, -YV), verbose=0,
                  callbacks=[C.ModelCheckpoint(path, verbose=1, save_best_only=True), rec])
        losses = [logs["val_loss"] for logs in rec.logs]
        best = int(np.argmin(losses))
        assert 0 < len(set(np.minimum.accumulate(losses))) < len(losses)  # some did not improve
        assert os.listdir(tmp_path) == ["best.h5"]
        _assert_weights(K.models.load_model(path).get_weights(), rec.weights[best])
        lines, prev = [], np.inf
        for i, loss in enumerate(losses):
            if loss < prev:
                lines.append("\nEpoch %d: val_loss improved from %.5f to %.5f, saving model "
                             "to %s\n" % (i + 1, prev, loss, path))
                prev = loss
            else:
                lines.append("\nEpoch %d: val_loss did not improve from %.5f\n" % (i + 1, prev))
        assert capsys.readouterr().out == "".join(lines)

    def test_best_only_max_mode_keeps_each_improving_file(self, tmp_path):
        model = _model()
        rec = _Weights()
        pattern = str(tmp_path / "w{epoch}.h5")
        # mode max on the training loss (which falls): only the first epoch improves
        model.fit(X, Y, batch_size=4, epochs=3, verbose=0, callbacks=[
            C.ModelCheckpoint(pattern, monitor="loss", mode="max", save_best_only=True), rec])
        assert os.listdir(tmp_path) == ["w1.h5"]
        _assert_weights(K.models.load_model(str(tmp_path / "w1.h5")).get_weights(),
                        rec.weights[0])

    def test_missing_monitor_warns_and_skips(self, tmp_path, caplog):
        model = _model()
        with caplog.at_level(logging.WARNING):
            model.fit(X, Y, batch_size=4, epochs=2, verbose=0, callbacks=[
                C.ModelCheckpoint(str(tmp_path / "m.h5"), save_best_only=True)])
        assert os.listdir(tmp_path) == []
        assert caplog.text.count("Can save best model only with val_loss available, "
                                 "skipping.") == 2

    @pytest.mark.parametrize("suffix", ["", ".h5"])
    def test_weights_only_loadable(self, tmp_path, suffix):
        model = _model()
        rec = _Weights()
        pattern = str(tmp_path / ("ckpt-{epoch}" + suffix))
        model.fit(X, Y, batch_size=4, epochs=2, verbose=0, callbacks=[
            C.ModelCheckpoint(pattern, save_weights_only=True), rec])
        files = os.listdir(tmp_path)
        if suffix:
            assert sorted(files) == ["ckpt-1.h5", "ckpt-2.h5"]
        else:
            assert {"ckpt-1.index", "ckpt-2.index"} <= set(files)
        for epoch in (1, 2):
            fresh = _model()
            fresh.load_weights(str(tmp_path / ("ckpt-%d%s" % (epoch, suffix))))
            _assert_weights(fresh.get_weights(), rec.weights[epoch - 1])

    def test_save_freq_batches(self, tmp_path, capsys):
        # 8 samples in batches of 2: 4 batches an epoch; every 3 batches saves after
        # batch index 2 of epoch 1 and index 1 of epoch 2 ('batch' of the logs, 0-based)
        model = _model()
        seen = []

        class Batches(C.Callback):
            def on_train_batch_end(self, batch, logs=None):
                seen.append(((batch, self.model.get_weights())))

        pattern = str(tmp_path / "b-{epoch}-{batch}.h5")
        model.fit(X, Y, batch_size=2, epochs=2, verbose=0, shuffle=False, callbacks=[
            C.ModelCheckpoint(pattern, save_freq=3, save_weights_only=True, verbose=1),
            Batches()])
        assert sorted(os.listdir(tmp_path)) == ["b-1-2.h5", "b-2-1.h5"]
        assert capsys.readouterr().out == (
            "\nEpoch 1: saving model to %s\n\nEpoch 2: saving model to %s\n"
            % (tmp_path / "b-1-2.h5", tmp_path / "b-2-1.h5"))
        for name, step in (("b-1-2.h5", 2), ("b-2-1.h5", 5)):
            fresh = _model()
            fresh.load_weights(str(tmp_path / name))
            _assert_weights(fresh.get_weights(), seen[step][1])

    def test_period(self, tmp_path, caplog):
        model = _model()
        with caplog.at_level(logging.WARNING):
            cb = C.ModelCheckpoint(str(tmp_path / "p-{epoch}.h5"), period=2)
        assert cb.period == 2
        assert "`period` argument is deprecated. Please use `save_freq` to specify the " \
            "frequency in number of batches seen." in caplog.text
        model.fit(X, Y, batch_size=4, epochs=5, verbose=0, callbacks=[cb])
        assert sorted(os.listdir(tmp_path)) == ["p-2.h5", "p-4.h5"]

    def test_makes_directories_and_bad_placeholder(self, tmp_path):
        model = _model()
        path = tmp_path / "sub" / "dir" / "m.h5"
        model.fit(X, Y, epochs=1, verbose=0, callbacks=[C.ModelCheckpoint(str(path))])
        assert path.exists()
        with pytest.raises(KeyError, match="Failed to format this callback filepath"):
            model.fit(X, Y, epochs=1, verbose=0, callbacks=[
                C.ModelCheckpoint(str(tmp_path / "{foo}.h5"))])

    def test_pathlike_filepath(self, tmp_path):
        model = _model()
        model.fit(X, Y, epochs=2, verbose=0, callbacks=[
            C.ModelCheckpoint(tmp_path / "e{epoch}.h5", save_weights_only=True)])
        assert sorted(os.listdir(tmp_path)) == ["e1.h5", "e2.h5"]


class TestPadSequences:

    def test_namespaces(self):
        assert tf.keras.utils.pad_sequences is pad_sequences
        from tensorweave.keras.preprocessing.sequence import pad_sequences as direct
        assert direct is pad_sequences

    def test_defaults(self):
        got = pad_sequences([[1], [2, 3], [4, 5, 6]])
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, [[0, 0, 1], [0, 2, 3], [4, 5, 6]])

    def test_value_padding_truncating(self):
        seqs = [[1], [2, 3], [4, 5, 6]]
        np.testing.assert_array_equal(pad_sequences(seqs, value=-1),
                                      [[-1, -1, 1], [-1, 2, 3], [4, 5, 6]])
        np.testing.assert_array_equal(pad_sequences(seqs, padding="post"),
                                      [[1, 0, 0], [2, 3, 0], [4, 5, 6]])
        np.testing.assert_array_equal(pad_sequences(seqs, maxlen=2), [[0, 1], [2, 3], [5, 6]])
        np.testing.assert_array_equal(
            pad_sequences(seqs, maxlen=2, truncating="post", padding="post"),
            [[1, 0], [2, 3], [4, 5]])
        np.testing.assert_array_equal(pad_sequences(seqs, maxlen=4, padding="post"),
                                      [[1, 0, 0, 0], [2, 3, 0, 0], [4, 5, 6, 0]])

    def test_dtypes(self):
        got = pad_sequences([[], [1.5, 2]], dtype="float32", value=-1)
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, [[-1.0, -1.0], [1.5, 2.0]])
        got = pad_sequences([["a"], ["bb", "c"]], dtype=object, value="z")
        assert got.dtype == object and got.tolist() == [["z", "a"], ["bb", "c"]]
        got = pad_sequences([["a"], ["bb", "c"]], dtype="<U2", value="z")
        assert got.dtype == np.dtype("<U2") and got.tolist() == [["z", "a"], ["bb", "c"]]
        got = pad_sequences([np.array([1, 2], np.int64), (3,)], dtype="int64")
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, [[1, 2], [0, 3]])

    def test_sample_shape(self):
        got = pad_sequences([[[1, 2]], [[3, 4], [5, 6]]])
        assert got.shape == (2, 2, 2)
        np.testing.assert_array_equal(got, [[[0, 0], [1, 2]], [[3, 4], [5, 6]]])

    def test_errors(self):
        with pytest.raises(ValueError, match='Padding type "x" not understood'):
            pad_sequences([[1], [2, 3]], padding="x")
        with pytest.raises(ValueError, match='Truncating type "x" not understood'):
            pad_sequences([[1], [2, 3]], truncating="x", maxlen=1)
        with pytest.raises(ValueError, match=r"Shape of sample \(3,\) of sequence at "
                           r"position 1 is different from expected shape \(2,\)"):
            pad_sequences([[[1, 2]], [[3, 4, 5]]])
        with pytest.raises(ValueError, match="`sequences` must be a list of iterables. "
                           "Found non-iterable: 1"):
            pad_sequences([1, 2])
        with pytest.raises(ValueError, match="`sequences` must be iterable."):
            pad_sequences(5)
        with pytest.raises(ValueError, match="`dtype` int32 is not compatible with "
                           "`value`'s type: <class 'str'>\nYou should set `dtype=object` "
                           "for variable length strings."):
            pad_sequences([["a"]], value="z")
