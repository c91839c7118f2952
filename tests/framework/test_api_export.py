"""The export tables (framework/api_export.py): how names reach tf.* and the modules of
lazily imported namespaces."""


def test_lazy_namespaces_offer_their_names_to_imports_in_a_fresh_process():
    # `from tensorweave.<lazy namespace> import name` before `tf.<namespace>` is touched
    import os
    import subprocess
    import sys
    code = ("from tensorweave.distributions import Normal\n"
            "from tensorweave.data.experimental import group_by_window\n"
            "from tensorweave.feature_column import crossed_column\n"
            "from tensorweave.saved_model import simple_save\n"
            "import tensorweave as tf\n"
            "assert tf.distributions.Normal is Normal\n"
            "assert tf.data.experimental.group_by_window is group_by_window\n")
    src = os.path.join(os.path.dirname(__file__), "..", "..", "src")
    env = dict(os.environ, PYTHONPATH=os.path.abspath(src))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_loading_a_lazy_namespace_keeps_a_users_replacement_of_a_tf_name():
    # Programs and test harnesses wrap tf functions (tf.X = wrapper); touching tf.layers
    # later must not put the original back, as in TF (found running a real program).
    import os
    import subprocess
    import sys
    code = ("import tensorweave as tf\n"
            "orig = tf.global_variables_initializer\n"
            "def wrapper():\n"
            "    return orig()\n"
            "tf.global_variables_initializer = wrapper\n"
            "tf.layers.dense, tf.losses.mean_squared_error, tf.metrics.accuracy\n"
            "assert tf.global_variables_initializer is wrapper\n"
            "assert tf.layers.dense is not None and tf.nn.relu is not None\n")
    src = os.path.join(os.path.dirname(__file__), "..", "..", "src")
    env = dict(os.environ, PYTHONPATH=os.path.abspath(src))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
