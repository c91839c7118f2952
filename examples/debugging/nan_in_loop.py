"""A NaN hunt: a while_loop takes the log of a countdown that reaches zero.

tensorweave.debug.watch(..., when=has_inf_or_nan) stops at the first op producing a
non-finite value and names it, with its loop iteration and the range of its inputs; the
values of every iteration are dumped and can be reopened with DebugDumpDir.
"""
import shutil
import tempfile

import tensorweave as tf
import tensorweave.debug as twdbg

x = tf.placeholder(tf.float32, [4], name="x")


def body(i, total):
    remaining = x - tf.cast(i, tf.float32)
    return i + 1, total + tf.log(remaining)  # log(0) when remaining reaches 0


_, total = tf.while_loop(lambda i, t: i < 5, body, [tf.constant(0), tf.zeros([4])],
                         name="accumulate")

dump_root = tempfile.mkdtemp(prefix="nan_in_loop_")
sess = twdbg.watch(tf.Session(), dump_root=dump_root, when=twdbg.has_inf_or_nan)
try:
    sess.run(total, {x: [5.0, 6.0, 3.0, 8.0]})
except twdbg.FilterMatchedError as e:
    print(e)

dump = twdbg.DebugDumpDir(dump_root)
first = dump.find(twdbg.has_inf_or_nan, first_n=1)[0]
print("first non-finite: %s at iteration %d of %s" % (first.tensor_name, first.iteration,
                                                      first.frame_name))
print("its inputs at that iteration:",
      dump.watch_key_to_data("accumulate/sub:0")[first.iteration].get_tensor())
sess.close()
shutil.rmtree(dump_root)
