"""tf.logging: TF1's functions on Python logging, logger "tensorflow"."""
import logging
import subprocess
import sys
import textwrap

import pytest

import tensorweave as tf


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []
        self.flushes = 0

    def emit(self, record):
        self.records.append(record)

    def flush(self):
        self.flushes += 1


@pytest.fixture
def records():
    logger = logging.getLogger("tensorflow")
    old = tf.logging.get_verbosity()
    handler = _Records()
    logger.addHandler(handler)
    tf.logging.set_verbosity(tf.logging.DEBUG)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(old)


def test_names_and_levels():
    names = ["DEBUG", "ERROR", "FATAL", "INFO", "TaskLevelStatusMessage", "WARN", "debug",
             "error", "fatal", "flush", "get_verbosity", "info", "log", "log_every_n",
             "log_first_n", "log_if", "set_verbosity", "vlog", "warn", "warning"]
    assert sorted(n for n in dir(tf.logging) if not n.startswith("_")) == names
    assert (tf.logging.DEBUG, tf.logging.INFO, tf.logging.WARN, tf.logging.ERROR,
            tf.logging.FATAL) == (10, 20, 30, 40, 50)


def test_verbosity(records):
    tf.logging.set_verbosity(tf.logging.ERROR)
    assert tf.logging.get_verbosity() == 40
    assert logging.getLogger("tensorflow").level == 40
    tf.logging.warning("hidden")
    tf.logging.error("shown")
    assert [r.getMessage() for r in records.records] == ["shown"]


def test_each_function_logs_at_its_level_from_the_callers_line(records):
    tf.logging.debug("d %d", 1)
    tf.logging.info("i %s", "x")
    tf.logging.warn("w")
    tf.logging.warning("w2")
    tf.logging.error("e")
    tf.logging.fatal("f")
    tf.logging.log(tf.logging.INFO, "l %d", 2)
    tf.logging.vlog(tf.logging.WARN, "v")
    tf.logging.TaskLevelStatusMessage("status")
    got = [(r.name, r.levelno, r.getMessage()) for r in records.records]
    assert got == [("tensorflow", 10, "d 1"), ("tensorflow", 20, "i x"),
                   ("tensorflow", 30, "w"), ("tensorflow", 30, "w2"),
                   ("tensorflow", 40, "e"), ("tensorflow", 50, "f"),
                   ("tensorflow", 20, "l 2"), ("tensorflow", 30, "v"),
                   ("tensorflow", 40, "status")]
    assert {r.filename for r in records.records} == {"test_logging.py"}
    assert {r.funcName for r in records.records} == \
        {"test_each_function_logs_at_its_level_from_the_callers_line"}


def test_log_every_n_first_n_and_if(records):
    for i in range(7):
        tf.logging.log_every_n(tf.logging.INFO, "every %d", 3, i)
    for i in range(5):
        tf.logging.log_first_n(tf.logging.INFO, "first %d", 2, i)
    for i in range(2):   # another call site counts on its own
        tf.logging.log_first_n(tf.logging.INFO, "other %d", 1, i)
    tf.logging.log_if(tf.logging.INFO, "yes %d", True, 1)
    tf.logging.log_if(tf.logging.INFO, "no", False)
    assert [r.getMessage() for r in records.records] == [
        "every 0", "every 3", "every 6", "first 0", "first 1", "other 0", "yes 1"]
    assert {r.funcName for r in records.records} == {"test_log_every_n_first_n_and_if"}


def test_flush_flushes_the_handlers(records):
    tf.logging.flush()
    assert records.flushes >= 1


def _run(code):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=120)


def test_default_output_is_tf1s():
    out = _run("""
        import tensorweave as tf
        print(tf.logging.get_verbosity())
        tf.logging.info("not shown")
        tf.logging.warning("careful %d", 3)
        tf.logging.set_verbosity(tf.logging.INFO)
        tf.logging.info("now shown")
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "30"
    assert out.stderr.splitlines() == ["WARNING:tensorflow:careful 3",
                                       "INFO:tensorflow:now shown"]


def test_a_configured_root_logger_gets_the_records_alone():
    out = _run("""
        import logging, sys
        logging.basicConfig(stream=sys.stdout, format="root|%(name)s|%(message)s")
        import tensorweave as tf
        tf.logging.error("once")
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["root|tensorflow|once"]
    assert out.stderr == ""


def test_under_app_run_records_print_in_both_formats():
    # the handler attached at import stays; absl's (on the root, added by app.run)
    # prints the record again in its own format, as under TF
    out = _run("""
        import tensorweave as tf

        def main(_):
            tf.logging.set_verbosity(tf.logging.INFO)
            tf.logging.info("hello %d", 3)

        tf.app.run(main)
    """)
    assert out.returncode == 0, out.stderr
    lines = out.stderr.splitlines()
    assert "INFO:tensorflow:hello 3" in lines
    assert any(line.startswith("I") and line.endswith("] hello 3") for line in lines)
