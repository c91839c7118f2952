"""A TF1 premade-estimator program, run unchanged by tensorweave.

The shape of TensorFlow's own premade_estimator.py tutorial: flowers described by four
measurements belong to one of three species (here drawn from three Gaussian clusters
with a fixed seed, so the program needs no download). A tf.estimator.DNNClassifier over
numeric feature columns trains from a tf.data input_fn, is evaluated on held-out
flowers, predicts the species of new ones, and exports a SavedModel whose serving
signature parses tf.Example records; the SavedModel is then loaded in a fresh graph
and serves one record.

The only TensorFlow-specific line is the import: replace it by
`import tensorflow.compat.v1 as tf; tf.disable_v2_behavior()` to run it on TensorFlow
1.x or 2.x up to 2.15 (later releases ship no tf.estimator).

Run: python examples/premade_estimator.py --model_dir=/tmp/premade --steps=1000
"""
import numpy as np

import tensorweave as tf

flags = tf.flags
flags.DEFINE_string("model_dir", "/tmp/premade_estimator", "Checkpoints and exports.")
flags.DEFINE_integer("steps", 1000, "Training steps.")
flags.DEFINE_integer("batch_size", 32, "Flowers per step.")
FLAGS = flags.FLAGS

FEATURES = ["SepalLength", "SepalWidth", "PetalLength", "PetalWidth"]
SPECIES = ["Setosa", "Versicolor", "Virginica"]
# the mean measurements of each species, in centimetres (like Fisher's Iris data)
MEANS = np.array([[5.0, 3.4, 1.5, 0.2], [5.9, 2.8, 4.3, 1.3], [6.6, 3.0, 5.6, 2.0]])


def load_data(rng, n):
    """n flowers: a dict of the four measurements and the species ids."""
    species = rng.randint(0, 3, n)
    x = MEANS[species] + rng.normal(0, 0.3, (n, 4))
    return {name: x[:, i].astype(np.float32) for i, name in enumerate(FEATURES)}, \
        species.astype(np.int64)


def train_input_fn(features, labels, batch_size):
    dataset = tf.data.Dataset.from_tensor_slices((dict(features), labels))
    return dataset.shuffle(1000, seed=1).repeat().batch(batch_size)


def eval_input_fn(features, labels, batch_size):
    inputs = dict(features) if labels is None else (dict(features), labels)
    return tf.data.Dataset.from_tensor_slices(inputs).batch(batch_size)


def main(_):
    rng = np.random.RandomState(0)
    train_x, train_y = load_data(rng, 600)
    test_x, test_y = load_data(rng, 150)
    columns = [tf.feature_column.numeric_column(name) for name in FEATURES]
    classifier = tf.estimator.DNNClassifier(
        feature_columns=columns, hidden_units=[10, 10], n_classes=3,
        model_dir=FLAGS.model_dir, config=tf.estimator.RunConfig(tf_random_seed=1))

    classifier.train(lambda: train_input_fn(train_x, train_y, FLAGS.batch_size),
                     steps=FLAGS.steps)
    result = classifier.evaluate(lambda: eval_input_fn(test_x, test_y, FLAGS.batch_size))
    tf.logging.info("Test set accuracy: %.3f", result["accuracy"])

    expected = ["Setosa", "Versicolor", "Virginica"]
    predict_x = {"SepalLength": [5.1, 5.9, 6.9], "SepalWidth": [3.3, 3.0, 3.1],
                 "PetalLength": [1.7, 4.2, 5.4], "PetalWidth": [0.5, 1.5, 2.1]}
    predictions = classifier.predict(lambda: eval_input_fn(
        {k: np.array(v, np.float32) for k, v in predict_x.items()}, None, FLAGS.batch_size))
    for prediction, want in zip(predictions, expected):
        class_id = int(prediction["class_ids"][0])
        tf.logging.info('Prediction is "%s" (%.1f%%), expected "%s"', SPECIES[class_id],
                        100 * prediction["probabilities"][class_id], want)

    spec = tf.feature_column.make_parse_example_spec(columns)
    export_dir = classifier.export_saved_model(
        FLAGS.model_dir + "/export",
        tf.estimator.export.build_parsing_serving_input_receiver_fn(spec))
    example = tf.train.Example(features=tf.train.Features(feature={
        name: tf.train.Feature(float_list=tf.train.FloatList(value=[predict_x[name][2]]))
        for name in FEATURES}))
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], export_dir)
        signature = meta.signature_def["predict"]
        probabilities = sess.run(signature.outputs["probabilities"].name, {
            signature.inputs["examples"].name: [example.SerializeToString()]})
    tf.logging.info("The SavedModel says %s (%.1f%%)", SPECIES[int(probabilities[0].argmax())],
                    100 * probabilities[0].max())


if __name__ == "__main__":
    tf.logging.set_verbosity(tf.logging.INFO)
    tf.app.run(main)
