"""The README's Debugging section: each example program in examples/debugging/ runs
and prints what the section shows."""
import os
import subprocess
import sys

EXAMPLES = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "examples",
                                        "debugging"))


def _run(name: str, **env):
    path = os.path.join(EXAMPLES, name)
    out = subprocess.run([sys.executable, path], capture_output=True, text=True,
                         timeout=120, env=dict(os.environ, **env))
    return path, out


def _line_of(path: str, fragment: str) -> int:
    with open(path) as f:
        return next(n for n, text in enumerate(f, 1) if fragment in text)


def test_nan_in_loop_is_found_with_its_iteration_and_inputs():
    path, out = _run("nan_in_loop.py")
    assert out.returncode == 0, out.stderr
    log_line = _line_of(path, "tf.log(remaining)")
    assert out.stdout == (
        "The tensor 'accumulate/Log:0' (output 0 of op 'accumulate/Log' of type Log) has a "
        "non-finite value: float32[4]: 1 -Inf, finite min 0.693147 max 1.609438\n"
        "\t [[node accumulate/Log (defined at %s:%d) ]]\n"
        "\t in while/body at iteration 3 of loop \"accumulate\"\n"
        "\t input 0 'accumulate/sub:0': float32[4]: min 0 max 5\n"
        "first non-finite: accumulate/Log:0 at iteration 3 of accumulate\n"
        "its inputs at that iteration: [2. 3. 0. 5.]\n" % (path, log_line))


def test_shape_error_names_op_line_and_iteration_17():
    path, out = _run("shape_error_at_iteration.py")
    assert out.returncode == 0, out.stderr
    assert out.stdout == (
        "InvalidArgumentError\n"
        "Input to reshape is a tensor with 6 values, but the requested shape requires a "
        "multiple of 4\n"
        "\t [[node rnn/while/Reshape (defined at %s:%d) ]]\n"
        "\t in while/body at iteration 17 of loop \"rnn/while\"\n"
        % (path, _line_of(path, "tf.reshape(")))


def test_cond_side_effect_is_warned_and_really_runs():
    path, out = _run("cond_side_effect.py")
    assert out.returncode == 0, out.stderr
    assert out.stdout == ("value: -1\n"
                          "counter after the false branch: 1\n"
                          "counter after the fixed cond's false branch: 1\n")
    created, used = _line_of(path, "increment = "), _line_of(path, "lambda: increment")
    assert out.stderr.startswith(
        "%s:%d: CondSideEffectWarning: tf.cond \"cond\": the op 'AssignAdd/update' "
        "(AssignAddVariableOp, created at %s:%d) is used only in the true branch (by "
        "'cond/Switch_1' at %s:%d), but it runs whatever the predicate is"
        % (path, used, path, created, path, used))
    assert out.stderr.count("CondSideEffectWarning") == 1  # the fixed cond is silent


def test_cond_side_effect_as_an_error():
    path, out = _run("cond_side_effect.py", TW_COND_SIDE_EFFECTS="error")
    assert out.returncode == 1
    assert "ValueError: tf.cond \"cond\": the op 'AssignAdd/update'" in out.stderr
