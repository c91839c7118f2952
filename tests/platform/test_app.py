"""tf.app.run: flags parsed from the command line, main(argv), exit status."""
import subprocess
import sys
import textwrap

import tensorweave as tf

PROGRAM = textwrap.dedent("""
    import sys
    import tensorweave as tf

    tf.app.flags.DEFINE_integer("steps", 3, "how many steps")
    tf.app.flags.DEFINE_string("mode", "train", "what to do")
    tf.flags.DEFINE_boolean("verbose", False, "talk")
    FLAGS = tf.app.flags.FLAGS


    def main(argv):
        print("argv", argv[1:])
        print("flags", FLAGS.steps, FLAGS.mode, FLAGS.verbose)
        return int(FLAGS.steps == 99) * 3


    if __name__ == "__main__":
        if len(sys.argv) > 1 and sys.argv[1] == "explicit":
            tf.app.run(main=main, argv=["prog", "--steps=42", "left"])
        tf.app.run()
""")


def _run(tmp_path, *args):
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    return subprocess.run([sys.executable, str(script), *args], capture_output=True,
                          text=True, timeout=120)


def test_run_parses_flags_and_calls_main(tmp_path):
    out = _run(tmp_path, "--steps=5", "--mode=eval", "--verbose", "pos1", "--unknown=2")
    assert out.returncode == 0, out.stderr
    # As in TF1, flags nobody defined are left in argv for main, not an error.
    assert out.stdout.splitlines() == ["argv ['pos1', '--unknown=2']", "flags 5 eval True"]


def test_defaults_and_exit_status_from_main(tmp_path):
    out = _run(tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["argv []", "flags 3 train False"]
    out = _run(tmp_path, "--steps=99")
    assert out.returncode == 3
    assert "flags 99 train False" in out.stdout


def test_explicit_main_and_argv(tmp_path):
    out = _run(tmp_path, "explicit")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["argv ['left']", "flags 42 train False"]


def test_bad_flag_value_exits_with_a_usage_error(tmp_path):
    out = _run(tmp_path, "--steps=abc")
    assert out.returncode == 1
    assert "steps" in out.stderr and "abc" in out.stderr


def test_app_namespace():
    assert sorted(n for n in dir(tf.app) if not n.startswith("_")) == ["flags", "run"]
    assert tf.app.flags is tf.flags


def test_import_stays_free_of_absl_and_fsspec():
    out = subprocess.run([sys.executable, "-c", "import sys, tensorweave; print("
                          "sorted(m for m in ('absl', 'fsspec') if m in sys.modules))"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
