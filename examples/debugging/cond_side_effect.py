"""tf.cond's classic surprise: an assign created outside the branch functions runs
whatever the predicate. tensorweave warns at graph build time, naming both lines;
TW_COND_SIDE_EFFECTS=error makes it a ValueError."""
import warnings

import tensorweave as tf

warnings.simplefilter("always")  # show every warning (Python shows each line once)

counter = tf.Variable(0, name="counter")
use_it = tf.placeholder(tf.bool, [], name="use_it")
increment = tf.assign_add(counter, 1)  # created outside the branches...
value = tf.cond(use_it, lambda: increment, lambda: tf.constant(-1))  # ...used in one

fixed = tf.cond(use_it, lambda: tf.assign_add(counter, 1), lambda: tf.constant(-1))

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print("value:", sess.run(value, {use_it: False}))
    print("counter after the false branch:", sess.run(counter.read_value()))
    sess.run(fixed, {use_it: False})
    print("counter after the fixed cond's false branch:", sess.run(counter.read_value()))
