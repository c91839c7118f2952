"""tf.estimator.Exporter kinds, run with a fake estimator that records its
export_saved_model calls and makes the export directories. Expected messages, exports
kept and best results are what TensorFlow 2.15 (tensorflow-estimator 2.15) gave for the
same calls."""
import os

import pytest

import tensorweave as tf


class FakeEstimator:
    """Records export_saved_model calls; each makes <base>/<next timestamp>."""

    def __init__(self, model_dir):
        self.model_dir = model_dir
        self.calls = []
        self.stamp = 1500000000

    def export_saved_model(self, export_dir_base, serving_input_receiver_fn,
                           assets_extra=None, as_text=False, checkpoint_path=None):
        self.calls.append(dict(base=export_dir_base, fn=serving_input_receiver_fn,
                               assets_extra=assets_extra, as_text=as_text,
                               checkpoint_path=checkpoint_path))
        self.stamp += 1
        path = os.path.join(export_dir_base, str(self.stamp))
        os.makedirs(path)
        return path.encode()


def receiver_fn():
    raise AssertionError("the fake estimator does not call it")


def test_constructor_checks_are_tfs():
    with pytest.raises(ValueError) as e:
        tf.estimator.LatestExporter("l", receiver_fn, exports_to_keep=0)
    assert str(e.value) == "`exports_to_keep`, if provided, must be positive number"
    with pytest.raises(ValueError) as e:
        tf.estimator.BestExporter(exports_to_keep=-1)
    assert str(e.value) == "`exports_to_keep`, if provided, must be a positive number. Got -1"
    with pytest.raises(ValueError, match="^`compare_fn` must not be None.$"):
        tf.estimator.BestExporter(compare_fn=None)

    def one_arg(best_eval_result):
        pass

    def three_args(best_eval_result, current_eval_result, other):
        pass
    with pytest.raises(ValueError) as e:
        tf.estimator.BestExporter(compare_fn=one_arg)
    assert str(e.value) == "compare_fn (%s) must include current_eval_result argument." \
        % one_arg
    with pytest.raises(ValueError) as e:
        tf.estimator.BestExporter(compare_fn=three_args)
    assert str(e.value) == "compare_fn (%s) has following not expected args: ['other']" \
        % three_args
    assert tf.estimator.BestExporter().name == "best_exporter"
    assert issubclass(tf.estimator.BestExporter, tf.estimator.Exporter)


def test_latest_exporter_passes_its_arguments_and_keeps_the_newest(tmp_path):
    est = FakeEstimator(str(tmp_path))
    base = str(tmp_path / "export" / "latest")
    os.makedirs(os.path.join(base, "temp-1"))  # not an export: never collected
    exporter = tf.estimator.LatestExporter("latest", receiver_fn, assets_extra={"a": "/b"},
                                           as_text=True, exports_to_keep=2)
    assert exporter.name == "latest"
    results = [exporter.export(est, base, "ckpt-%d" % i, {"loss": 1.0}, False)
               for i in range(3)]
    assert results == [os.path.join(base, str(1500000001 + i)).encode() for i in range(3)]
    assert est.calls[0] == dict(base=base, fn=receiver_fn, assets_extra={"a": "/b"},
                                as_text=True, checkpoint_path="ckpt-0")
    assert sorted(os.listdir(base)) == ["1500000002", "1500000003", "temp-1"]


def test_final_exporter_exports_only_at_the_end(tmp_path):
    est = FakeEstimator(str(tmp_path))
    exporter = tf.estimator.FinalExporter("final", receiver_fn)
    assert exporter.export(est, str(tmp_path), "c", {}, False) is None
    assert est.calls == []
    assert exporter.export(est, str(tmp_path), "c", {}, True) == \
        os.path.join(str(tmp_path), "1500000001").encode()


def _write_eval_events(model_dir):
    writer = tf.summary.FileWriter(os.path.join(model_dir, "eval"))
    for step, values in ((10, {"loss": 0.5, "acc": 0.9}), (20, {"loss": 0.3}),
                         (30, {"loss": 0.7})):
        writer.add_summary(tf.Summary(value=[
            tf.Summary.Value(tag=k, simple_value=v) for k, v in values.items()]), step)
    writer.close()


def test_best_exporter_reads_the_best_result_from_the_eval_events(tmp_path):
    _write_eval_events(str(tmp_path))
    calls = []

    def compare(best_eval_result, current_eval_result):
        calls.append((dict(best_eval_result), dict(current_eval_result)))
        return best_eval_result["loss"] > current_eval_result["loss"]
    exporter = tf.estimator.BestExporter(serving_input_receiver_fn=receiver_fn,
                                         compare_fn=compare)
    best = exporter._get_best_eval_result(str(tmp_path / "eval" / "*.tfevents.*"))
    # TF 2.15: the float32 simple values, compared in file order
    assert best == {"loss": 0.30000001192092896}
    assert calls == [({"loss": 0.5, "acc": 0.8999999761581421},
                      {"loss": 0.30000001192092896}),
                     ({"loss": 0.30000001192092896}, {"loss": 0.699999988079071})]


def test_best_exporter_exports_improvements_and_collects_old_exports(tmp_path):
    model_dir = str(tmp_path)
    _write_eval_events(model_dir)
    est = FakeEstimator(model_dir)
    base = os.path.join(model_dir, "export", "best")
    os.makedirs(os.path.join(base, "temp-1"))
    os.makedirs(os.path.join(base, "123"))  # not 10 digits: not an export
    exporter = tf.estimator.BestExporter(serving_input_receiver_fn=receiver_fn,
                                         exports_to_keep=2)
    seen = []
    for loss in (0.4, 0.2, 0.25, 0.1, 0.05):
        result = exporter.export(est, base, "ckpt-%s" % loss, {"loss": loss}, False)
        seen.append((result, dict(exporter._best_eval_result), sorted(os.listdir(base))))
    # TF 2.15: the first export always happens (even though the events hold a better
    # 0.3); 0.25 is no improvement on 0.2; two exports are kept
    b = base.encode()
    assert seen == [
        (os.path.join(b, b"1500000001"), {"loss": 0.4}, ["123", "1500000001", "temp-1"]),
        (os.path.join(b, b"1500000002"), {"loss": 0.2},
         ["123", "1500000001", "1500000002", "temp-1"]),
        (None, {"loss": 0.2}, ["123", "1500000001", "1500000002", "temp-1"]),
        (os.path.join(b, b"1500000003"), {"loss": 0.1},
         ["123", "1500000002", "1500000003", "temp-1"]),
        (os.path.join(b, b"1500000004"), {"loss": 0.05},
         ["123", "1500000003", "1500000004", "temp-1"])]
    assert [c["checkpoint_path"] for c in est.calls] == [
        "ckpt-0.4", "ckpt-0.2", "ckpt-0.1", "ckpt-0.05"]


def test_default_compare_needs_losses():
    from tensorweave.estimator.exporter import _loss_smaller
    with pytest.raises(ValueError, match="^best_eval_result cannot be empty or no loss is "
                       "found in it.$"):
        _loss_smaller({}, {"loss": 1})
    with pytest.raises(ValueError, match="^current_eval_result cannot be empty or no loss "
                       "is found in it.$"):
        _loss_smaller({"loss": 1}, {"x": 1})
    assert _loss_smaller({"loss": 2}, {"loss": 1}) and not _loss_smaller({"loss": 1},
                                                                         {"loss": 1})


def test_exporter_base_needs_name_and_export():
    base = tf.estimator.Exporter()
    with pytest.raises(NotImplementedError):
        base.name
    with pytest.raises(NotImplementedError):
        base.export(None, "p", "c", {}, False)


def test_compare_fn_may_take_extra_keyword_arguments():
    """TF reads compare_fn's positional arguments only (function_utils.fn_args)."""
    def compare(best_eval_result, current_eval_result, **kwargs):
        return current_eval_result["loss"] < best_eval_result["loss"]
    tf.estimator.BestExporter(compare_fn=compare, serving_input_receiver_fn=lambda: None)
    with pytest.raises(ValueError, match="not expected args: \\['other'\\]"):
        tf.estimator.BestExporter(
            compare_fn=lambda best_eval_result, current_eval_result, other: True,
            serving_input_receiver_fn=lambda: None)
