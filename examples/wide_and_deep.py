"""A TF1 wide & deep classifier on tf.Example records, run unchanged by tensorweave.

The input pipeline TF1 programs use with feature columns: synthetic census-like records
(age, hours per week, education, occupation, a label that depends on crosses of them)
are written as TFRecords of tf.train.Example, read back by
tf.data.experimental.make_batched_features_dataset with the parse spec of the columns
(tf.feature_column.make_parse_example_spec), and fed to a wide part
(tf.feature_column.linear_model over bucketized, vocabulary, hashed and crossed columns)
and a deep part (tf.feature_column.input_layer of numeric, embedding and indicator
columns, then two dense layers). Trained with Adam on the summed logits; the test
records' accuracy is printed at the end.

The only TensorFlow-specific line is the import: replace it by
`import tensorflow.compat.v1 as tf; tf.disable_v2_behavior()` to run it on TensorFlow.

Run: python examples/wide_and_deep.py --data_dir=/tmp/wide_and_deep --steps=300
"""
import os

import numpy as np

import tensorweave as tf

flags = tf.flags
flags.DEFINE_string("data_dir", "/tmp/wide_and_deep", "Where the TFRecord files go.")
flags.DEFINE_integer("steps", 300, "Training steps.")
flags.DEFINE_integer("batch_size", 64, "Examples per step.")
flags.DEFINE_float("learning_rate", 0.02, "Adam learning rate.")
FLAGS = flags.FLAGS

EDUCATION = ["Bachelors", "HS-grad", "Masters", "Doctorate", "Some-college"]
OCCUPATIONS = ["Tech-support", "Craft-repair", "Sales", "Exec-managerial",
               "Prof-specialty", "Machine-op-inspct", "Farming-fishing"]


def make_records(rng, n):
    """n synthetic people and their label: the label depends on age, hours, and the
    education x occupation cross, so the crossed column has something to learn."""
    age = rng.randint(18, 70, n)
    hours = rng.randint(10, 70, n)
    edu = rng.randint(len(EDUCATION), size=n)
    occ = rng.randint(len(OCCUPATIONS), size=n)
    score = (age - 40) / 10.0 + (hours - 40) / 15.0 + np.where((edu >= 2) & (occ >= 3), 2.0,
                                                                -0.5)
    label = (score + rng.randn(n) * 0.5 > 0).astype(np.int64)
    return age, hours, edu, occ, label


def write_tfrecords(path, rng, n):
    age, hours, edu, occ, label = make_records(rng, n)
    with tf.io.TFRecordWriter(path) as w:
        for i in range(n):
            feature = {
                "age": tf.train.Feature(float_list=tf.train.FloatList(value=[age[i]])),
                "hours": tf.train.Feature(float_list=tf.train.FloatList(value=[hours[i]])),
                "education": tf.train.Feature(bytes_list=tf.train.BytesList(
                    value=[EDUCATION[edu[i]].encode()])),
                "occupation": tf.train.Feature(bytes_list=tf.train.BytesList(
                    value=[OCCUPATIONS[occ[i]].encode()])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label[i]])),
            }
            w.write(tf.train.Example(features=tf.train.Features(
                feature=feature)).SerializeToString())


def columns():
    fc = tf.feature_column
    age = fc.numeric_column("age")
    hours = fc.numeric_column("hours")
    age_buckets = fc.bucketized_column(age, [25, 30, 35, 40, 45, 50, 55, 60, 65])
    education = fc.categorical_column_with_vocabulary_list("education", EDUCATION)
    occupation = fc.categorical_column_with_hash_bucket("occupation", 50)
    wide = [age_buckets, education, occupation,
            fc.crossed_column(["education", "occupation"], 100)]
    deep = [fc.numeric_column("age", normalizer_fn=lambda x: (x - 40.0) / 15.0),
            fc.numeric_column("hours", normalizer_fn=lambda x: (x - 40.0) / 15.0),
            fc.indicator_column(education), fc.embedding_column(occupation, 4)]
    return wide, deep, hours


def dense(x, units, name, activation=None):
    # get_variable rather than tf.layers.dense, which TF 2.21 drops with Keras 3
    with tf.variable_scope(name):
        w = tf.get_variable("kernel", [x.shape[1], units],
                            initializer=tf.glorot_uniform_initializer())
        b = tf.get_variable("bias", [units], initializer=tf.zeros_initializer())
        y = tf.matmul(x, w) + b
    return activation(y) if activation else y


def model(features, wide, deep):
    wide_logits = tf.feature_column.linear_model(features, wide)
    net = tf.feature_column.input_layer(features, deep)
    for k, units in enumerate((16, 8)):
        net = dense(net, units, "hidden%d" % k, tf.nn.relu)
    deep_logits = dense(net, 1, "logits")
    return tf.squeeze(wide_logits + deep_logits, 1)


def main(_):
    tf.gfile.MakeDirs(FLAGS.data_dir)
    rng = np.random.RandomState(0)
    train_file = os.path.join(FLAGS.data_dir, "train.tfrecord")
    test_file = os.path.join(FLAGS.data_dir, "test.tfrecord")
    write_tfrecords(train_file, rng, 2000)
    write_tfrecords(test_file, rng, 500)
    tf.set_random_seed(1)
    wide, deep, _ = columns()
    spec = tf.feature_column.make_parse_example_spec(wide + deep)
    spec["label"] = tf.io.FixedLenFeature([], tf.int64)

    train = tf.data.experimental.make_batched_features_dataset(
        train_file, FLAGS.batch_size, spec, label_key="label", shuffle_seed=1)
    features, labels = tf.data.make_one_shot_iterator(train).get_next()
    with tf.variable_scope("model"):
        logits = model(features, wide, deep)
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(
        labels=tf.cast(labels, tf.float32), logits=logits))
    step = tf.train.AdamOptimizer(FLAGS.learning_rate).minimize(
        loss, global_step=tf.train.get_or_create_global_step())

    test = tf.data.experimental.make_batched_features_dataset(
        test_file, 500, spec, label_key="label", num_epochs=1, shuffle=False)
    test_features, test_labels = tf.data.make_one_shot_iterator(test).get_next()
    with tf.variable_scope("model", reuse=True):
        test_logits = model(test_features, wide, deep)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(
        tf.cast(test_logits > 0, tf.int64), test_labels), tf.float32))

    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
        for i in range(1, FLAGS.steps + 1):
            value, _ = sess.run([loss, step])
            if i == 1 or i % 50 == 0:
                tf.logging.info("step %d loss %.4f", i, value)
        tf.logging.info("Test accuracy after %d steps: %.3f", FLAGS.steps,
                        sess.run(accuracy))


if __name__ == "__main__":
    tf.logging.set_verbosity(tf.logging.INFO)
    tf.app.run(main)
