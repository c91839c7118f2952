"""train_and_evaluate on a real cluster: a ps, a chief, a worker and an evaluator, one
process each on 127.0.0.1, started by the local launcher with TF_CONFIG as a scheduler
would."""
import glob
import json
import os
import re
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tensorweave as tf

# y = x . [1, -2, 0.5] + 0.3: between-graph replicated SGD must find these weights
TRUE_W, TRUE_B = [1.0, -2.0, 0.5], 0.3

PROGRAM = textwrap.dedent("""\
    import json, sys
    import numpy as np
    import tensorweave as tf

    model_dir = sys.argv[1]
    rs = np.random.RandomState(0)
    X = rs.rand(100, 3).astype(np.float32)
    Y = (X @ np.array(%(w)r, np.float32) + %(b)r)[:, None].astype(np.float32)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(10)

    def eval_input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(25)

    def model_fn(features, labels, mode):
        w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
        b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
        pred = tf.matmul(features["x"], w) + b
        loss = tf.losses.mean_squared_error(labels, pred)
        # 0.15: at 0.3 (stable for one replica) a gradient one step stale, which two
        # interleaving replicas often apply, makes the largest-curvature direction
        # diverge (lr * 3.6 > 1); at 0.15 SGD converges with staleness up to 3 steps
        train_op = tf.train.GradientDescentOptimizer(0.15).minimize(
            loss, global_step=tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    config = tf.estimator.RunConfig(model_dir=model_dir, save_checkpoints_steps=50,
                                    experimental_max_worker_delay_secs=0)
    print("config", json.dumps([config.task_type, config.task_id, config.is_chief,
                                config.num_ps_replicas, config.num_worker_replicas]),
          flush=True)
    est = tf.estimator.Estimator(model_fn, config=config)
    tf.estimator.train_and_evaluate(
        est, tf.estimator.TrainSpec(input_fn, max_steps=200),
        tf.estimator.EvalSpec(eval_input_fn, steps=None, start_delay_secs=0,
                              throttle_secs=1))
    if config.is_chief:
        print("result", json.dumps({
            "w": est.get_variable_value("w").ravel().tolist(),
            "b": float(est.get_variable_value("b")[0]),
            "global_step": int(est.get_variable_value("global_step")),
            "loss": float(est.evaluate(eval_input_fn)["loss"])}), flush=True)
    """) % {"w": TRUE_W, "b": TRUE_B}


@pytest.mark.timeout(120)
def test_train_and_evaluate_with_a_ps_a_chief_a_worker_and_an_evaluator(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(PROGRAM)
    model_dir = tmp_path / "model"
    env = dict(os.environ, TW_DISABLE_GPU="1")
    # --timeout: every task must also exit by itself when its program returns (a task
    # whose server held a stream from another task used to wait for it forever). The
    # launcher and its tasks get a process group of their own, stopped whatever happens.
    out_path, err_path = tmp_path / "stdout", tmp_path / "stderr"
    with open(out_path, "w") as out, open(err_path, "w") as err:
        launcher = subprocess.Popen(
            [sys.executable, "-m", "tensorweave.distribute.launch", "--ps", "1",
             "--workers", "1", "--chief", "--evaluator", "--timeout", "90", str(script),
             str(model_dir)], env=env, stdout=out, stderr=err, start_new_session=True)
        try:
            returncode = launcher.wait(timeout=100)
        except subprocess.TimeoutExpired:
            returncode = "no exit within 100 s"
        finally:
            try:
                os.killpg(launcher.pid, signal.SIGKILL)  # the tasks too, if any is left
            except ProcessLookupError:
                pass
            launcher.wait()
    stdout, stderr = out_path.read_text(), err_path.read_text()
    assert returncode == 0, stderr[-4000:]
    assert "[launch] evaluator:0 exited with status 0; " in stderr
    assert "[launch] the chief chief:0 exited with status 0; " in stderr
    lines = stdout.splitlines()

    def printed(task, what):
        prefix = "[%s] %s " % (task, what)
        return [json.loads(line[len(prefix):]) for line in lines if line.startswith(prefix)]

    # RunConfig read each task from TF_CONFIG (the chief counts as a worker replica)
    assert printed("chief:0", "config") == [["chief", 0, True, 1, 2]]
    assert printed("worker:0", "config") == [["worker", 0, False, 1, 2]]
    assert printed("ps:0", "config") == [["ps", 0, False, 1, 2]]
    # the evaluator is outside the cluster: no ps or worker replicas of its own
    assert printed("evaluator:0", "config") == [["evaluator", 0, False, 0, 0]]
    [result] = printed("chief:0", "result")
    # two replicas share the global step; a worker's last step may land after the
    # chief's 200th
    assert 200 <= result["global_step"] <= 202
    # asynchronous SGD: the replicas' updates interleave differently from run to run;
    # 200 steps of one replica leave the weights 0.023 from the truth, stale gradients
    # (simulated with 0-3 steps of staleness) up to 0.025
    np.testing.assert_allclose(result["w"], TRUE_W, atol=0.1)
    assert abs(result["b"] - TRUE_B) < 0.1
    assert result["loss"] < 1e-2  # from 0.48 at the zero initial weights
    # the chief wrote the checkpoints (on its own file system, as TF's chief does)
    state = (model_dir / "checkpoint").read_text()
    latest = int(re.search(r'^model_checkpoint_path: "model.ckpt-(\d+)"', state).group(1))
    # the file is named by the step read just before saving: another replica's step may
    # land in between (TF's Saver has the same race)
    assert 200 <= latest <= result["global_step"]
    # the evaluator's last evaluation is of the final checkpoint, in model_dir/eval
    evals = {}
    for path in glob.glob(str(model_dir / "eval" / "events.out.tfevents.*")):
        for event in tf.train.summary_iterator(path):
            for value in event.summary.value:
                if value.tag == "loss":
                    evals[event.step] = value.simple_value
    assert max(evals) == result["global_step"]
    np.testing.assert_allclose(evals[max(evals)], result["loss"], rtol=1e-4)
