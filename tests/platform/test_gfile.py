"""tf.gfile / tf.io.gfile on a local directory and on fsspec's memory:// filesystem.

Expected values and error classes/messages were checked against TensorFlow 2.21's
tf.compat.v1.gfile on a local directory.
"""
import io
import os
import time
import uuid

import pytest

import tensorweave as tf
from tensorweave.platform import file_io, gfile


@pytest.fixture(params=["local", "memory"])
def root(request, tmp_path):
    if request.param == "local":
        yield str(tmp_path)
        return
    url = "memory://gfile-test-%s" % uuid.uuid4().hex
    tf.gfile.MakeDirs(url)
    yield url
    tf.gfile.DeleteRecursively(url)


def _write(path, data=b"x"):
    with tf.gfile.GFile(path, "wb") as f:
        f.write(data)


def test_namespaces_hold_the_tf1_names():
    v1 = ["Copy", "DeleteRecursively", "Exists", "FastGFile", "GFile", "Glob", "IsDirectory",
          "ListDirectory", "MakeDirs", "MkDir", "Open", "Remove", "Rename", "Stat", "Walk"]
    io_names = ["GFile", "copy", "exists", "get_registered_schemes", "glob", "isdir", "join",
                "listdir", "makedirs", "mkdir", "remove", "rename", "rmtree", "stat", "walk"]
    assert sorted(n for n in dir(tf.gfile) if not n.startswith("_")) == v1
    assert sorted(n for n in dir(tf.io.gfile) if not n.startswith("_")) == io_names
    assert tf.gfile.Open is tf.gfile.GFile is tf.io.gfile.GFile
    assert issubclass(tf.gfile.FastGFile, tf.gfile.GFile)
    assert tf.compat.v1.gfile is tf.gfile


def test_text_and_binary_reads(root):
    p = tf.io.gfile.join(root, "a.txt")
    with tf.gfile.GFile(p, "w") as f:
        f.write("h\u00e9llo\nworld\n")
        f.write(b"bytes\n")
        assert f.tell() == 19
    assert tf.gfile.GFile(p).read() == "h\u00e9llo\nworld\nbytes\n"
    assert tf.gfile.GFile(p, "rb").read() == b"h\xc3\xa9llo\nworld\nbytes\n"
    assert tf.gfile.GFile(p).read(3) == "h\u00e9"
    f = tf.gfile.GFile(p)
    assert f.readline() == "h\u00e9llo\n"
    assert f.readlines() == ["world\n", "bytes\n"]
    assert f.readline() == ""
    assert list(tf.gfile.GFile(p, "rb")) == [b"h\xc3\xa9llo\n", b"world\n", b"bytes\n"]
    assert [type(x) for x in tf.gfile.GFile(p)] == [str, str, str]
    assert tf.gfile.GFile(p).size() == 19
    assert tf.gfile.FastGFile(p, "rb").read() == b"h\xc3\xa9llo\nworld\nbytes\n"


def test_read_n_seek_tell_and_reopen_after_close(root):
    p = tf.io.gfile.join(root, "b.bin")
    _write(p, b"0123456789")
    f = tf.gfile.GFile(p, "rb")
    assert f.tell() == 0
    assert f.read(0) == b""
    assert f.read(4) == b"0123"
    assert f.tell() == 4
    f.seek(2)
    assert f.read(2) == b"23"
    f.seek(1, 1)
    assert f.read(2) == b"56"
    f.seek(-2, 2)
    assert f.read() == b"89"
    f.seek(position=7)
    assert f.read() == b"789"
    assert f.read() == b""
    f.close()
    assert f.read(3) == b"012"   # as TF: a closed GFile opens again on the next read
    f.close()
    assert (f.name, f.mode) == (p, "rb")


def test_append_and_flush(root):
    p = tf.io.gfile.join(root, "c.txt")
    _write(p, b"abc")
    with tf.gfile.GFile(p, "a") as f:
        f.write("def")
        f.flush()
        assert f.size() == 6
    with tf.gfile.GFile(p, "ab") as f:
        f.write(b"g")
    assert tf.gfile.GFile(p, "rb").read() == b"abcdefg"
    with tf.gfile.GFile(p, "w") as f:
        f.write("new")
    assert tf.gfile.GFile(p).read() == "new"


def test_gfile_errors(root):
    missing = tf.io.gfile.join(root, "nope")
    f = tf.gfile.GFile(missing)          # opened lazily, as in TF
    with pytest.raises(tf.errors.NotFoundError, match="nope; No such file or directory"):
        f.read()
    with pytest.raises(tf.errors.InvalidArgumentError, match="mode is not 'r' or 'w'"):
        tf.gfile.GFile(missing, "x")
    p = tf.io.gfile.join(root, "r.txt")
    _write(p)
    with pytest.raises(tf.errors.PermissionDeniedError, match="isn't open for writing"):
        tf.gfile.GFile(p, "r").write("x")
    with pytest.raises(tf.errors.PermissionDeniedError, match="isn't open for reading"):
        tf.gfile.GFile(tf.io.gfile.join(root, "w.txt"), "w").read()
    with pytest.raises(TypeError, match="Expected binary or unicode string, got 3"):
        tf.gfile.GFile(tf.io.gfile.join(root, "w2.txt"), "w").write(3)


def test_directories(root):
    d = tf.io.gfile.join(root, "x", "y")
    assert not tf.gfile.Exists(d) and not tf.gfile.IsDirectory(d)
    with pytest.raises(tf.errors.NotFoundError):
        tf.gfile.ListDirectory(d)
    tf.gfile.MakeDirs(d)
    tf.gfile.MakeDirs(d)                 # exists already: fine
    assert tf.gfile.Exists(d) and tf.gfile.IsDirectory(d)
    tf.gfile.MkDir(tf.io.gfile.join(root, "x", "z"))
    tf.gfile.MkDir(tf.io.gfile.join(root, "x", "z"))    # exists already: fine (TF 2.x)
    _write(tf.io.gfile.join(root, "x", "f.txt"))
    assert sorted(tf.gfile.ListDirectory(tf.io.gfile.join(root, "x"))) == ["f.txt", "y", "z"]
    assert not tf.gfile.IsDirectory(tf.io.gfile.join(root, "x", "f.txt"))
    with pytest.raises(tf.errors.NotFoundError, match="Could not find directory"):
        tf.gfile.ListDirectory(tf.io.gfile.join(root, "x", "f.txt"))
    with pytest.raises(tf.errors.FailedPreconditionError, match="is not a directory"):
        tf.gfile.MakeDirs(tf.io.gfile.join(root, "x", "f.txt"))
    tf.gfile.DeleteRecursively(tf.io.gfile.join(root, "x"))
    assert not tf.gfile.Exists(tf.io.gfile.join(root, "x"))
    with pytest.raises(tf.errors.NotFoundError, match="not found"):
        tf.gfile.DeleteRecursively(tf.io.gfile.join(root, "x"))


def test_mkdir_needs_its_parent_locally(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="No such file or directory"):
        tf.gfile.MkDir(str(tmp_path / "a" / "b"))


def test_glob_and_walk(root):
    for name in ("a.txt", "b.txt", ".hidden", "c.bin"):
        _write(tf.io.gfile.join(root, name))
    tf.gfile.MakeDirs(tf.io.gfile.join(root, "sub", "deep"))
    _write(tf.io.gfile.join(root, "sub", "s.txt"))
    _write(tf.io.gfile.join(root, "sub", "deep", "d.txt"))

    def names(paths):
        return sorted(p.rstrip("/").rsplit("/", 1)[-1] for p in paths)

    found = tf.gfile.Glob(tf.io.gfile.join(root, "*.txt"))
    assert names(found) == ["a.txt", "b.txt"]
    assert all(tf.gfile.Exists(p) for p in found)
    assert all(p.startswith(root + "/") for p in found)     # the caller's spelling
    assert names(tf.gfile.Glob([tf.io.gfile.join(root, "a*"), tf.io.gfile.join(root, "c*")])
                 ) == ["a.txt", "c.bin"]
    assert names(tf.io.gfile.glob(tf.io.gfile.join(root, "?.bin"))) == ["c.bin"]
    assert ".hidden" in names(tf.gfile.Glob(tf.io.gfile.join(root, "*")))
    assert tf.gfile.Glob(tf.io.gfile.join(root, "*.none")) == []

    def rel(walked):
        out = []
        for top, dirs, files in walked:
            r = top[len(root):].strip("/")
            out.append((r, sorted(dirs), sorted(files)))
        return out

    assert rel(tf.gfile.Walk(root)) == [
        ("", ["sub"], [".hidden", "a.txt", "b.txt", "c.bin"]),
        ("sub", ["deep"], ["s.txt"]), ("sub/deep", [], ["d.txt"])]
    assert [r for r, _, _ in rel(tf.gfile.Walk(root, in_order=False))] == \
        ["sub/deep", "sub", ""]
    assert [r for r, _, _ in rel(tf.io.gfile.walk(root, topdown=False))] == \
        ["sub/deep", "sub", ""]
    assert list(tf.gfile.Walk(tf.io.gfile.join(root, "missing"))) == []


def test_remove_rename_copy(root):
    a, b, c = (tf.io.gfile.join(root, n) for n in ("a", "b", "c"))
    _write(a, b"AAA")
    _write(b, b"BB")
    with pytest.raises(tf.errors.AlreadyExistsError, match="file already exists"):
        tf.gfile.Rename(a, b)
    with pytest.raises(tf.errors.AlreadyExistsError, match="file already exists"):
        tf.gfile.Copy(a, b)
    tf.gfile.Copy(a, c)
    assert tf.gfile.GFile(c, "rb").read() == b"AAA"
    tf.gfile.Copy(b, c, overwrite=True)
    assert tf.gfile.GFile(c, "rb").read() == b"BB"
    tf.gfile.Rename(a, b, overwrite=True)
    assert not tf.gfile.Exists(a) and tf.gfile.GFile(b, "rb").read() == b"AAA"
    tf.io.gfile.rename(b, a)
    tf.io.gfile.copy(a, b)
    assert tf.gfile.GFile(b, "rb").read() == b"AAA"
    with pytest.raises(tf.errors.NotFoundError, match="No such file or directory"):
        tf.gfile.Rename(tf.io.gfile.join(root, "nope"), tf.io.gfile.join(root, "d"))
    with pytest.raises(tf.errors.NotFoundError, match="No such file or directory"):
        tf.gfile.Copy(tf.io.gfile.join(root, "nope"), tf.io.gfile.join(root, "d"))
    tf.gfile.Remove(a)
    tf.io.gfile.remove(b)
    assert not tf.gfile.Exists(a) and not tf.io.gfile.exists(b)
    with pytest.raises(tf.errors.NotFoundError, match="No such file or directory"):
        tf.gfile.Remove(a)


def test_stat(root):
    before = time.time_ns()
    p = tf.io.gfile.join(root, "s.bin")
    _write(p, b"12345")
    st = tf.gfile.Stat(p)
    assert type(st).__name__ == "FileStatistics"
    assert (st.length, st.is_directory) == (5, False)
    assert isinstance(st.mtime_nsec, int)
    assert before - 5 * 10**9 <= st.mtime_nsec <= time.time_ns() + 5 * 10**9
    assert tf.io.gfile.stat(root).is_directory is True
    with pytest.raises(tf.errors.NotFoundError, match="No such file or directory"):
        tf.gfile.Stat(tf.io.gfile.join(root, "nope"))


def test_path_like_and_bytes_paths(tmp_path):
    p = tmp_path / "p.txt"
    _write(p, b"x")
    assert tf.gfile.Exists(p) and tf.gfile.Exists(os.fsencode(str(p)))
    assert tf.gfile.GFile(p).read() == "x"
    assert tf.gfile.Exists("file://" + str(p))


def test_join_and_schemes():
    assert tf.io.gfile.join("a", "b", "c") == "a/b/c"
    assert tf.io.gfile.join("gs://b", "x") == "gs://b/x"
    assert tf.io.gfile.join("gs://b/", "x", "y") == "gs://b/x/y"
    schemes = tf.io.gfile.get_registered_schemes()
    assert {"", "file", "memory", "gs", "s3"} <= set(schemes)


def test_unknown_scheme_is_unimplemented():
    with pytest.raises(tf.errors.UnimplementedError, match="scheme 'nosuchfs' not impl"):
        tf.gfile.Exists("nosuchfs://bucket/x")
    with pytest.raises(tf.errors.UnimplementedError):
        tf.gfile.GFile("nosuchfs://bucket/x").read()


def test_os_errors_become_tf_errors():
    cases = [(FileNotFoundError(2, "No such file"), tf.errors.NotFoundError),
             (PermissionError(13, "Permission denied"), tf.errors.PermissionDeniedError),
             (FileExistsError(17, "File exists"), tf.errors.AlreadyExistsError),
             (NotADirectoryError(20, "Not a directory"), tf.errors.FailedPreconditionError),
             (OSError(5, "I/O error"), tf.errors.UnknownError)]
    for exc, cls in cases:
        err = gfile._tf_error(exc, "/some/path")
        assert type(err) is cls and err.message.startswith("/some/path; ")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root reads any file")
def test_permission_denied(tmp_path):
    p = tmp_path / "secret"
    p.write_bytes(b"x")
    p.chmod(0)
    with pytest.raises(tf.errors.PermissionDeniedError):
        tf.gfile.GFile(str(p), "rb").read()


def test_local_paths_take_the_builtin_fast_path(tmp_path):
    with file_io.open_file(str(tmp_path / "f"), "wb") as f:
        assert isinstance(f, io.BufferedWriter)
    with file_io.open_file("file://" + str(tmp_path / "f"), "rb") as f:
        assert isinstance(f, io.BufferedReader)
    assert file_io.is_local("/a/b") and file_io.is_local("file:///a")
    assert not file_io.is_local("memory://a") and not file_io.is_local("s3://b/k")


def test_plus_modes(tmp_path):
    p = str(tmp_path / "rw.bin")
    _write(p, b"abcdef")
    with tf.gfile.GFile(p, "rb+") as f:
        assert f.read(2) == b"ab"
        f.seek(0)
        f.write(b"XY")
    assert tf.gfile.GFile(p, "rb").read() == b"XYcdef"
    with pytest.raises(tf.errors.UnimplementedError, match="not supported"):
        tf.gfile.GFile("memory://plus-mode/x", "r+").read()


# --- behaviours checked against TF 2.21 (probe of tf.gfile, values as TF gave them) --------
def test_seek_and_read_argument_errors(root):
    p = tf.io.gfile.join(root, "f")
    _write(p, b"abc")
    f = tf.gfile.GFile(p, "rb")
    for args, position in (((-1,), -1), ((-5, 1), -5), ((-5, 2), -2)):
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            f.seek(*args)
        assert info.value.message == "Seeking to a negative position: %d" % position
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        f.seek(0, 3)
    assert info.value.message == "Invalid whence argument: 3. Valid values are 0, 1, or 2."
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        f.read(-2)
    assert info.value.message == "Can't read a negative number of bytes: -2"


def test_reading_past_the_end_is_out_of_range(root):
    p = tf.io.gfile.join(root, "f")
    _write(p, b"abc")
    f = tf.gfile.GFile(p, "rb")
    f.seek(3)                              # at the end: reads give nothing
    assert (f.read(), f.read(1), f.readline(), f.tell()) == (b"", b"", b"", 3)
    f.seek(4)
    assert f.tell() == 4
    with pytest.raises(tf.errors.OutOfRangeError, match="reached end of file"):
        f.read(1)
    with pytest.raises(tf.errors.OutOfRangeError, match="reached end of file"):
        f.readline()


@pytest.mark.parametrize("mode", ["r", "rb"])
def test_lines_drop_carriage_returns(root, mode):
    # TF's line reader drops every "\r"; read() keeps them
    p = tf.io.gfile.join(root, "f")
    _write(p, b"a\r\nb\rc\nd\r")
    lines = [b"a\n", b"bc\n", b"d"] if mode == "rb" else ["a\n", "bc\n", "d"]
    assert tf.gfile.GFile(p, mode).readlines() == lines
    assert list(tf.gfile.GFile(p, mode)) == lines
    f = tf.gfile.GFile(p, mode)
    assert [f.readline(), f.readline(), f.readline(), f.readline()] == lines + [lines[0][:0]]
    assert tf.gfile.GFile(p, "rb").read() == b"a\r\nb\rc\nd\r"


def test_relative_glob_from_the_working_directory(tmp_path, monkeypatch):
    # TF searches a pattern whose first component has a wildcard from ".", and names
    # the matches from there; a pattern with a fixed directory keeps it as written
    (tmp_path / "sub").mkdir()
    for name in ("sub/zz1", "top.txt"):
        _write(str(tmp_path / name))
    monkeypatch.chdir(tmp_path)
    assert tf.gfile.Glob("t*") == ["./top.txt"]
    assert tf.gfile.Glob("*/zz1") == ["./sub/zz1"]
    assert tf.gfile.Glob("./s*") == ["./sub"]
    assert tf.gfile.Glob("sub/zz*") == ["sub/zz1"]
    assert tf.gfile.Glob("sub") == ["sub"]
    assert tf.gfile.Glob("sub/../sub/zz1") == ["sub/../sub/zz1"]


def test_make_dirs_names_the_file_in_the_way(tmp_path):
    blocker = str(tmp_path / "f")
    _write(blocker)
    for path in (blocker, os.path.join(blocker, "x"), os.path.join(blocker, "x", "y")):
        with pytest.raises(tf.errors.FailedPreconditionError) as info:
            tf.gfile.MakeDirs(path)
        assert info.value.message == "%s is not a directory" % blocker


def test_errors_by_errno_and_the_path_that_failed(tmp_path):
    src = str(tmp_path / "sd")
    os.makedirs(os.path.join(src, "x"))
    os.makedirs(str(tmp_path / "full" / "y"))
    with pytest.raises(tf.errors.FailedPreconditionError) as info:    # ENOTEMPTY
        tf.gfile.Rename(src, str(tmp_path / "full"), overwrite=True)
    assert info.value.message == "%s; Directory not empty" % src
    f = str(tmp_path / "f")
    _write(f)
    target = str(tmp_path / "no" / "g")
    with pytest.raises(tf.errors.NotFoundError) as info:             # the target's dir
        tf.gfile.Copy(f, target)
    assert info.value.message == "%s; No such file or directory" % target
    cases = [(OSError(39, "Directory not empty"), tf.errors.FailedPreconditionError),
             (OSError(21, "Is a directory"), tf.errors.FailedPreconditionError),
             (OSError(22, "Invalid argument"), tf.errors.InvalidArgumentError),
             (OSError(28, "No space left on device"), tf.errors.ResourceExhaustedError),
             (OSError(27, "File too large"), tf.errors.OutOfRangeError),
             (OSError(30, "Read-only file system"), tf.errors.PermissionDeniedError),
             (OSError(18, "Invalid cross-device link"), tf.errors.UnimplementedError),
             (FileNotFoundError("memory://a/b"), tf.errors.NotFoundError)]
    for exc, cls in cases:
        err = gfile.os_error_to_tf(exc, "/p")
        assert type(err) is cls
        assert err.message == "/p; %s" % (exc.strerror or "No such file or directory")


def test_delete_recursively_below_a_file_is_not_found(tmp_path):
    f = str(tmp_path / "f")
    _write(f)
    with pytest.raises(tf.errors.NotFoundError) as info:
        tf.gfile.DeleteRecursively(os.path.join(f, "x"))
    assert info.value.message == "%s not found" % os.path.join(f, "x")


def test_unknown_scheme_message():
    with pytest.raises(tf.errors.UnimplementedError) as info:
        tf.gfile.Exists("zzz://a/b")
    assert info.value.message == "File system scheme 'zzz' not implemented (file: 'zzz://a/b')"


def test_ram_scheme_is_the_in_memory_file_system():
    # TF's "ram://" file system, served by fsspec's memory filesystem
    assert "ram" in tf.io.gfile.get_registered_schemes()
    top = "ram://gfile-test-%s" % uuid.uuid4().hex
    tf.gfile.MakeDirs(top + "/b")
    _write(top + "/b/f", b"x")
    assert tf.gfile.Glob(top + "/*") == [top + "/b"]
    assert tf.gfile.ListDirectory(top) == ["b"]
    assert tf.gfile.GFile(top + "/b/f", "rb").read() == b"x"
    assert list(tf.gfile.Walk(top)) == [(top, ["b"], []), (top + "/b", [], ["f"])]
    tf.gfile.DeleteRecursively(top)
    assert not tf.gfile.Exists(top)


def test_local_paths_are_cleaned_as_tf_cleans_them(tmp_path, sess):
    # TF cleans every local path lexically: a trailing slash, "//", "." and ".." (even
    # through a directory that does not exist)
    d = str(tmp_path)
    f = os.path.join(d, "f")
    _write(f, b"abc")
    assert tf.gfile.Exists(f + "/") and not tf.gfile.IsDirectory(f + "/")
    assert tf.gfile.Exists(d + "/x/../f") and tf.gfile.Exists(d + "//f")
    assert tf.gfile.Stat(f + "/").length == 3
    assert tf.gfile.GFile(f + "/", "rb").read() == b"abc"
    assert sess.run(tf.read_file(f + "/")) == b"abc"
    tf.gfile.Copy(f + "/", os.path.join(d, "g") + "/")
    tf.gfile.Rename(os.path.join(d, "g") + "/", os.path.join(d, "h"))
    tf.gfile.MakeDirs(d + "/x/../s")
    _write(os.path.join(d, "s", "a"))
    assert tf.gfile.ListDirectory(d + "/x/../s") == ["a"]
    assert sorted(os.listdir(d)) == ["f", "h", "s"]
    with pytest.raises(tf.errors.NotFoundError) as info:   # the message keeps the spelling
        tf.gfile.Remove(os.path.join(d, "n") + "/")
    assert info.value.message == "%s/n/; No such file or directory" % d


def test_glob_with_a_trailing_slash_after_a_wildcard(tmp_path, monkeypatch):
    # as TF 2.21: "d/*/" matches d's entries, files too, named without the slash
    os.makedirs(str(tmp_path / "d" / "a" / "b"))
    for name in ("d/f1", "d/a/f2"):
        (tmp_path / name).write_bytes(b"x")
    monkeypatch.chdir(tmp_path)
    assert sorted(tf.gfile.Glob("d/*/")) == ["d/a", "d/f1"]
    assert sorted(tf.gfile.Glob("d/a/*/")) == ["d/a/b", "d/a/f2"]
    assert sorted(tf.io.gfile.glob("./d/*/")) == ["./d/a", "./d/f1"]
    assert sorted(tf.gfile.Glob(str(tmp_path) + "/d/*/")) == [
        str(tmp_path) + "/d/a", str(tmp_path) + "/d/f1"]
    # no wildcard: the path as given when its cleaned form exists ("f1/" is the file f1)
    assert tf.gfile.Glob("d/a/") == ["d/a/"]
    assert tf.gfile.Glob("d/f1/") == ["d/f1/"]
    assert tf.gfile.Glob("d//a") == ["d//a"]
    assert tf.gfile.Glob("d/a/../f1") == ["d/a/../f1"]
    assert tf.gfile.Glob("d/nosuch/") == [] and tf.gfile.Glob("") == []


def test_walk_reports_a_missing_top_to_onerror(tmp_path):
    # TF documents onerror for a failed listing; without onerror nothing is yielded
    missing = str(tmp_path / "nosuch")
    seen = []
    assert list(tf.io.gfile.walk(missing, onerror=seen.append)) == []
    assert [type(e) for e in seen] == [tf.errors.NotFoundError]
    assert list(tf.io.gfile.walk(missing)) == []
    seen.clear()
    (tmp_path / "d").mkdir()
    assert list(tf.io.gfile.walk(str(tmp_path / "d"), onerror=seen.append)) == [
        (str(tmp_path / "d"), [], [])]
    assert seen == []
