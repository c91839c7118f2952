"""tf.flags / tf.app.flags: absl-py's flags, with TF1's FLAGS that parses on first read.

Flags defined in these tests go into their own FlagValues, except in the subprocess
programs, which check the process-wide FLAGS as TF1 programs use it.
"""
import subprocess
import sys
import textwrap

import pytest

import tensorweave as tf

TF1_NAMES = [
    "ArgumentParser", "ArgumentSerializer", "BaseListParser", "BooleanFlag",
    "BooleanParser", "CantOpenFlagFileError", "CsvListSerializer", "DEFINE", "DEFINE_alias",
    "DEFINE_bool", "DEFINE_boolean", "DEFINE_enum", "DEFINE_enum_class", "DEFINE_flag",
    "DEFINE_float", "DEFINE_integer", "DEFINE_list", "DEFINE_multi", "DEFINE_multi_enum",
    "DEFINE_multi_enum_class", "DEFINE_multi_float", "DEFINE_multi_integer",
    "DEFINE_multi_string", "DEFINE_spaceseplist", "DEFINE_string", "DuplicateFlagError",
    "EnumClassFlag", "EnumClassListSerializer", "EnumClassParser", "EnumClassSerializer",
    "EnumFlag", "EnumParser", "Error", "FLAGS", "Flag", "FlagHolder",
    "FlagNameConflictsWithMethodError", "FlagValues", "FloatParser",
    "IllegalFlagValueError", "IntegerParser", "ListParser", "ListSerializer",
    "MultiEnumClassFlag", "MultiFlag", "UnparsedFlagAccessError", "UnrecognizedFlagError",
    "ValidationError", "WhitespaceSeparatedListParser", "adopt_module_key_flags",
    "declare_key_flag", "disclaim_key_flags", "doc_to_help", "flag_dict_to_args",
    "get_help_width", "mark_bool_flags_as_mutual_exclusive", "mark_flag_as_required",
    "mark_flags_as_mutual_exclusive", "mark_flags_as_required", "multi_flags_validator",
    "override_value", "register_multi_flags_validator", "register_validator",
    "set_default", "text_wrap", "validator"]


def _run(code, *args):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args],
                          capture_output=True, text=True, timeout=120)


def test_one_module_for_tf_flags_and_tf_app_flags():
    assert tf.flags is tf.app.flags is tf.compat.v1.flags is tf.compat.v1.app.flags
    for name in TF1_NAMES:
        assert getattr(tf.flags, name) is not None, name
    assert set(TF1_NAMES) <= set(dir(tf.flags))
    with pytest.raises(AttributeError):
        tf.flags.no_such_name


def test_define_and_parse_every_kind():
    fv = tf.flags.FlagValues()
    f = tf.flags
    f.DEFINE_string("s", "d", "a string", flag_values=fv)
    f.DEFINE_integer("i", 1, "an int", flag_values=fv)
    f.DEFINE_float("x", 0.5, "a float", flag_values=fv)
    f.DEFINE_boolean("b", False, "a bool", flag_values=fv)
    f.DEFINE_bool("c", True, "a bool", flag_values=fv)
    f.DEFINE_enum("e", "red", ["red", "blue"], "an enum", flag_values=fv)
    f.DEFINE_list("l", "a,b", "a list", flag_values=fv)
    f.DEFINE_spaceseplist("sp", "", "words", flag_values=fv)
    f.DEFINE_multi_string("ms", [], "strings", flag_values=fv)
    f.DEFINE_multi_integer("mi", [], "ints", flag_values=fv)
    f.DEFINE_multi_float("mf", [], "floats", flag_values=fv)
    f.DEFINE_multi_enum("me", [], ["p", "q"], "enums", flag_values=fv)
    rest = fv(["prog", "--s=hello", "--i=7", "--x=2.5", "--b", "--noc", "--e=blue",
               "--l=u,v,w", "--sp=one two", "--ms=a", "--ms=b", "--mi=1", "--mi=2",
               "--mf=0.25", "--me=p", "--me=q", "pos"])
    assert rest == ["prog", "pos"]
    assert fv.s == "hello" and fv.i == 7 and type(fv.i) is int
    assert fv.x == 2.5 and type(fv.x) is float
    assert fv.b is True and fv.c is False
    assert fv.e == "blue" and fv.l == ["u", "v", "w"] and fv.sp == ["one", "two"]
    assert fv.ms == ["a", "b"] and fv.mi == [1, 2] and fv.mf == [0.25]
    assert fv.me == ["p", "q"]


def test_defaults_and_errors():
    fv = tf.flags.FlagValues()
    tf.flags.DEFINE_integer("n", 3, "n", flag_values=fv, lower_bound=0)
    tf.flags.DEFINE_enum("e", "a", ["a", "b"], "e", flag_values=fv)
    with pytest.raises(tf.flags.UnparsedFlagAccessError):
        fv.n
    with pytest.raises(tf.flags.UnrecognizedFlagError, match="Unknown command line flag 'bogus'"):
        fv(["prog", "--bogus=1"])
    with pytest.raises(tf.flags.IllegalFlagValueError):
        fv(["prog", "--n=abc"])
    with pytest.raises(tf.flags.IllegalFlagValueError):
        fv(["prog", "--n=-1"])
    with pytest.raises(tf.flags.IllegalFlagValueError):
        fv(["prog", "--e=c"])
    fv(["prog"])
    assert fv.n == 3 and fv.e == "a"
    with pytest.raises(tf.flags.DuplicateFlagError):
        tf.flags.DEFINE_integer("n", 4, "again", flag_values=fv)
    assert issubclass(tf.flags.UnrecognizedFlagError, tf.flags.Error)


def test_required_flags_and_validators():
    fv = tf.flags.FlagValues()
    tf.flags.DEFINE_string("need", None, "required", flag_values=fv)
    tf.flags.mark_flag_as_required("need", flag_values=fv)
    tf.flags.DEFINE_integer("even", 0, "even", flag_values=fv)
    tf.flags.register_validator("even", lambda v: v % 2 == 0, "must be even", flag_values=fv)
    with pytest.raises(tf.flags.IllegalFlagValueError, match="need"):
        fv(["prog"])
    fv2 = tf.flags.FlagValues()
    tf.flags.DEFINE_integer("even", 0, "even", flag_values=fv2)
    tf.flags.register_validator("even", lambda v: v % 2 == 0, "must be even", flag_values=fv2)
    with pytest.raises(tf.flags.IllegalFlagValueError, match="must be even"):
        fv2(["prog", "--even=3"])


def test_flags_parse_sys_argv_on_first_read():
    out = _run("""
        import tensorweave as tf
        from absl import flags as absl_flags
        tf.flags.DEFINE_integer("steps", 3, "n")
        tf.flags.DEFINE_string("name", "a", "n", flag_values=tf.flags.FLAGS)
        tf.app.flags.DEFINE_multi_string("tag", [], "tags")
        tf.flags.mark_flag_as_required("name", flag_values=tf.flags.FLAGS)
        assert absl_flags.FLAGS["steps"].default == 3
        assert not absl_flags.FLAGS.is_parsed()
        FLAGS = tf.flags.FLAGS
        print(FLAGS.steps, type(FLAGS.steps).__name__, FLAGS.name, FLAGS.tag)
        assert absl_flags.FLAGS.is_parsed()
        FLAGS.steps = 11
        print(absl_flags.FLAGS.steps, "name" in FLAGS)
    """, "--steps=5", "--name=b", "--tag=x", "--tag=y")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["5 int b ['x', 'y']", "11 True"]


def test_reading_flags_with_an_unknown_flag_fails():
    out = _run("""
        import tensorweave as tf
        tf.flags.DEFINE_integer("steps", 3, "n")
        print(tf.flags.FLAGS.steps)
    """, "--steps=5", "--bogus=1")
    assert out.returncode != 0
    assert "UnrecognizedFlagError" in out.stderr
    assert "Unknown command line flag 'bogus'" in out.stderr


def test_flag_values_methods_do_not_parse_argv():
    # a notebook kernel's argv (-f kernel.json) is not ours to parse: TF's wrapper parses
    # only when a flag is read, never for FlagValues' own methods
    out = _run("""
        import tensorweave as tf
        tf.app.flags.DEFINE_integer("n", 3, "n")
        FLAGS = tf.app.flags.FLAGS
        print(FLAGS.is_parsed(), FLAGS.flag_values_dict()["n"], FLAGS.is_parsed())
        print(type(FLAGS._flags()).__name__, "n" in FLAGS._flags())
        FLAGS.mark_as_parsed()
        print(FLAGS.n)
    """, "-f", "kernel.json")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:3] == ["False 3 False", "dict True", "3"]
