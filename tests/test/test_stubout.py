"""tf.test.StubOutForTesting, tf.test.disable_with_predicate,
tf.test.is_cpu_target_available and tf.test.test_src_dir_path, as TF 2.21's."""
import os
import platform
import types
import unittest

import pytest

import tensorweave as tf


class Base:
    def method(self):
        return "base"

    @staticmethod
    def static():
        return "static"

    @classmethod
    def klass(cls):
        return "class"


class Derived(Base):
    pass


def test_set_and_unset_all():
    module = types.ModuleType("m")
    module.f = lambda: 1
    stubs = tf.test.StubOutForTesting()
    stubs.Set(module, "f", lambda: 2)
    stubs.Set(module, "f", lambda: 3)  # set twice: the first original comes back
    assert module.f() == 3
    stubs.UnsetAll()
    assert module.f() == 1
    stubs.UnsetAll()  # again: nothing to undo
    assert module.f() == 1


def test_set_keeps_staticmethods_and_classmethods():
    with tf.test.StubOutForTesting() as stubs:
        stubs.Set(Base, "static", staticmethod(lambda: "stub"))
        stubs.Set(Base, "klass", classmethod(lambda cls: "stub"))
        assert Base.static() == "stub" and Base().klass() == "stub"
    assert Base.static() == "static" and Base().static() == "static"
    assert Base.klass() == "class"


def test_smart_set_stubs_where_the_lookup_finds_it():
    obj = Derived()
    stubs = tf.test.StubOutForTesting()
    stubs.SmartSet(obj, "method", lambda self: "stub")
    # an instance without the attribute of its own: its class is stubbed
    assert "method" in Derived.__dict__ and obj.method() == "stub"
    assert Derived().method() == "stub" and Base().method() == "base"
    stubs.SmartUnsetAll()
    assert Derived().method() == "base"
    # an instance holding the attribute itself is stubbed itself
    obj.own = 1
    stubs.SmartSet(obj, "own", 2)
    assert obj.own == 2 and not hasattr(Derived, "own")
    stubs.CleanUp()
    assert obj.own == 1
    module = types.ModuleType("m")
    module.x = 5
    stubs.SmartSet(module, "x", 6)
    assert module.x == 6
    stubs.CleanUp()
    assert module.x == 5
    with pytest.raises(AttributeError, match="Attribute not found"):
        stubs.SmartSet(Derived, "nope", 1)


def test_smart_set_of_a_staticmethod_is_restored_as_one():
    stubs = tf.test.StubOutForTesting()
    stubs.SmartSet(Base, "static", staticmethod(lambda: "stub"))
    assert Base().static() == "stub"
    stubs.CleanUp()
    assert Base().static() == "static"


def test_os_path_exists_as_in_the_docstring():
    stubs = tf.test.StubOutForTesting()
    stubs.Set(os.path, "exists", lambda x: 1)
    assert os.path.exists("/no/such/file") == 1
    stubs.CleanUp()
    assert not os.path.exists("/no/such/file")


def test_disable_with_predicate():
    state = {"skip": True}

    class Case(unittest.TestCase):
        @tf.test.disable_with_predicate(lambda: state["skip"], "skipped because")
        def test_it(self):
            state["ran"] = True

    result = unittest.TestResult()
    Case("test_it").run(result)
    assert result.skipped[0][1] == "skipped because" and "ran" not in state
    state["skip"] = False
    result = unittest.TestResult()
    Case("test_it").run(result)
    assert not result.skipped and state["ran"]
    assert Case.test_it.__name__ == "test_it"  # functools.wraps


def test_is_cpu_target_available():
    machine = platform.machine().lower()
    on_x86 = machine in ("x86_64", "amd64", "i386", "i686")
    assert tf.test.is_cpu_target_available("x86") is on_x86
    assert tf.test.is_cpu_target_available("x86_64") is on_x86
    assert tf.test.is_cpu_target_available("aarch64") is (machine in ("aarch64", "arm64"))
    for target in ("arm", "powerpc", "ppc64le", "s390x"):
        assert isinstance(tf.test.is_cpu_target_available(target), bool)
    with pytest.raises(AssertionError, match="Unknown CPU target: X86"):
        tf.test.is_cpu_target_available("X86")


def test_test_src_dir_path(monkeypatch):
    monkeypatch.delenv("TEST_SRCDIR", raising=False)
    with pytest.raises(KeyError):
        tf.test.test_src_dir_path("core")
    monkeypatch.setenv("TEST_SRCDIR", "/a")
    monkeypatch.setenv("TEST_WORKSPACE", "ws")
    assert tf.test.test_src_dir_path("core/platform") == "/a/ws/tensorflow/core/platform"


def test_tf_test_mock_is_unittest_mock_loaded_on_first_use():
    # TF1 programs patch with tf.test.mock.patch(...); importing tensorweave does not
    # load unittest.mock (it loads asyncio)
    import subprocess
    import sys
    code = ("import unittest.mock as m, tensorweave as tf; "
            "print(tf.test.mock is m and 'same', 'mock' in dir(tf.test) and 'listed')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120).stdout.split()
    assert out == ["same", "listed"]
    fresh = subprocess.run([sys.executable, "-c", "import sys, tensorweave; "
                            "print('unittest.mock' in sys.modules)"],
                           capture_output=True, text=True, check=True, timeout=120)
    assert fresh.stdout.strip() == "False"
