"""tf.data pipelines in graph mode, side by side with TensorFlow: the time of one
`get_next` of a batch of 100 rows (64 float32 features) from `from_tensor_slices`,
without and with a per-element `map` (x * 2 + 1), and from a TFRecordDataset with
`parse_single_example` (a 64-float feature and a label) in its `map`; and of a batch of
32 images decoded from 256x256 JPEGs, resized to 224x224 and flipped at random, mapped
one at a time and with num_parallel_calls=AUTOTUNE.

Each implementation runs in its own interpreter (the shared instrument's import_impl,
time_loop and summarize; medians of REPS blocks); ratios tensorweave / TensorFlow (lower
is better). The JPEG files are written once, by Pillow, for both.

Usage: [TF_PYTHON=...] python benchmarks/data_pipeline.py [OUT_JSON]
"""
import os
import sys

# benchmarks/results.py (this script's folder)
from results import run_side_by_side

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH_DIR = os.path.join(HERE, "..", "..", "shared", "bench")
SRC = os.path.join(HERE, "..", "src")
REPS = 5

_CHILD = r"""  # after results.CHILD_PREAMBLE
xs = np.random.RandomState(0).rand(10000, 64).astype(np.float32)
path = os.path.join(tempfile.mkdtemp(), "data.tfrecord")
with tf.python_io.TFRecordWriter(path) as w:
    for i in range(2000):
        ex = tf.train.Example(features=tf.train.Features(feature={
            "x": tf.train.Feature(float_list=tf.train.FloatList(value=xs[i])),
            "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 10]))}))
        w.write(ex.SerializeToString())
spec = {"x": tf.FixedLenFeature([64], tf.float32), "y": tf.FixedLenFeature([], tf.int64)}
jpegs = np.array([open(os.path.join(P["jpeg_dir"], f), "rb").read()
                  for f in sorted(os.listdir(P["jpeg_dir"]))], dtype=object)


def image(x):
    im = tf.image.convert_image_dtype(tf.image.decode_jpeg(x, channels=3), tf.float32)
    return tf.image.random_flip_left_right(tf.image.resize_images(im, [224, 224]), seed=1)


pipelines = {
    "slices_batch_ms": lambda: tf.data.Dataset.from_tensor_slices(xs).repeat().batch(100),
    "slices_map_batch_ms": lambda: tf.data.Dataset.from_tensor_slices(xs).map(
        lambda v: v * 2.0 + 1.0).repeat().batch(100),
    "tfrecord_parse_batch_ms": lambda: tf.data.TFRecordDataset(path).map(
        lambda s: tf.parse_single_example(s, spec)).repeat().batch(100),
    "jpeg_map_batch_ms": lambda: tf.data.Dataset.from_tensor_slices(jpegs).repeat().map(
        image).batch(32),
    "jpeg_parallel_map_batch_ms": lambda: tf.data.Dataset.from_tensor_slices(
        jpegs).repeat().map(image, num_parallel_calls=tf.data.experimental.AUTOTUNE).batch(32),
}
for key, make in pipelines.items():
    g = tf.Graph()
    with g.as_default():
        nxt = make().make_one_shot_iterator().get_next()
        with tf.Session(graph=g) as sess:
            sess.run(nxt)
            res = bench.summarize(bench.time_loop(lambda: sess.run(nxt), 20 * P["reps"], 2),
                                  "ms", blocks=P["reps"])
            out[key] = res["median"]
print("@@" + json.dumps(out))
"""


def _write_jpegs(count: int = 256) -> str:
    """A directory of `count` 256x256 RGB JPEGs of noise (quality 90)."""
    import tempfile
    import numpy as np
    from PIL import Image
    directory = tempfile.mkdtemp(prefix="tw-bench-jpegs-")
    rng = np.random.RandomState(0)
    for i in range(count):
        pixels = (rng.rand(256, 256, 3) * 255).astype(np.uint8)
        Image.fromarray(pixels).save(os.path.join(directory, "%03d.jpg" % i), quality=90)
    return directory


def main(argv) -> None:
    run_side_by_side(
        _CHILD, {"bench": BENCH_DIR, "src": SRC, "reps": REPS, "jpeg_dir": _write_jpegs()},
        "get_next of a batch of 100 rows of 64 float32 features, or of 32 images; medians "
        "of %d blocks of 20" % REPS, [
            ("slices_batch_ms", "from_tensor_slices, batch"),
            ("slices_map_batch_ms", "from_tensor_slices, map(x * 2 + 1), batch"),
            ("tfrecord_parse_batch_ms", "TFRecordDataset, map(parse_single_example), batch"),
            ("jpeg_map_batch_ms", "JPEG decode, resize, flip: map, batch of 32"),
            ("jpeg_parallel_map_batch_ms", "the same, map(num_parallel_calls=AUTOTUNE)"),
        ], "tf.data pipelines, side by side with TensorFlow",
        "TF_PYTHON=~/.cache/tensorweave-bench-tf/bin/python python "
        "benchmarks/data_pipeline.py benchmarks/out/extra_data_pipeline.json",
        argv[1] if len(argv) > 1 else None)


if __name__ == "__main__":
    main(sys.argv)
