"""tf.resource_loader: data files beside the calling file."""
import os

import pytest

import tensorweave as tf

HERE = os.path.dirname(os.path.abspath(__file__))


def test_paths_are_relative_to_the_callers_file(tmp_path):
    assert tf.resource_loader.get_data_files_path() == HERE
    assert tf.resource_loader.get_path_to_datafile("x/y.txt") == os.path.join(HERE, "x/y.txt")
    assert tf.resource_loader.readahead_file_path("/a/b", "16M") == "/a/b"
    with open(__file__, "rb") as f:
        assert tf.resource_loader.load_resource(os.path.basename(__file__)) == f.read()
    with pytest.raises(IOError):
        tf.resource_loader.load_resource("no-such-file.bin")


def test_root_dir_is_below_a_runfiles_directory(tmp_path):
    deep = tmp_path / "prog.runfiles" / "repo" / "pkg"
    deep.mkdir(parents=True)
    script = deep / "m.py"
    script.write_text("import tensorweave as tf\n"
                      "ROOT = tf.resource_loader.get_root_dir_with_all_resources()\n")
    scope = {}
    exec(compile(script.read_text(), str(script), "exec"), scope)
    assert scope["ROOT"] == str(tmp_path / "prog.runfiles" / "repo")
    assert tf.resource_loader.get_root_dir_with_all_resources() == HERE
