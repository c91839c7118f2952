"""Per-image augmentation in a tf.map_fn body, side by side with TensorFlow: the time
per image of mapping each of a batch of 128 CIFAR-sized float32 images (32x32x3) through
one function of tf.image (random_crop to 24x24, random_flip_left_right,
random_brightness, per_image_standardization), and through `img * 1.0` for the cost of
the loop itself. The step sums the mapped batch, so every image is computed; the
per_image_standardization result is checked against NumPy's formula.

Each implementation runs in its own interpreter (the shared instrument's import_impl,
time_loop and summarize; medians of REPS blocks of 8 steps); ratios tensorweave /
TensorFlow (lower is better).

Usage: [TF_PYTHON=...] python benchmarks/image_map_fn.py [OUT_JSON]
"""
import os
import sys

# benchmarks/results.py (this script's folder)
from results import run_side_by_side

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH_DIR = os.path.join(HERE, "..", "..", "shared", "bench")
SRC = os.path.join(HERE, "..", "src")
REPS, IMAGES = 5, 128

_CHILD = r"""  # after results.CHILD_PREAMBLE
images = np.random.RandomState(0).rand(P["images"], 32, 32, 3).astype(np.float32)
functions = {
    "identity_us": lambda img: img * 1.0,
    "random_crop_us": lambda img: tf.image.random_crop(img, [24, 24, 3], seed=1),
    "random_flip_us": lambda img: tf.image.random_flip_left_right(img, seed=1),
    "random_brightness_us": lambda img: tf.image.random_brightness(img, 0.2, seed=1),
    "per_image_standardization_us": tf.image.per_image_standardization,
}
for key, fn in functions.items():
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(0)
        x = tf.placeholder(tf.float32, [P["images"], 32, 32, 3])
        mapped = tf.map_fn(fn, x)
        total = tf.reduce_sum(mapped)
        with tf.Session(graph=g) as sess:
            if key == "per_image_standardization_us":
                got = sess.run(mapped, {x: images})
                mean = images.mean(axis=(1, 2, 3), keepdims=True)
                std = np.maximum(images.std(axis=(1, 2, 3), keepdims=True),
                                 1.0 / np.sqrt(32 * 32 * 3))
                bench.check(np.allclose(got, (images - mean) / std, rtol=1e-4, atol=1e-5),
                            "per_image_standardization against NumPy")
            res = bench.summarize(bench.time_loop(lambda: sess.run(total, {x: images}),
                                                  8 * P["reps"], 3), "s", blocks=P["reps"])
            out[key] = res["median"] / P["images"] * 1e6
print("@@" + json.dumps(out))
"""

ROWS = [("identity_us", "img * 1.0 (the loop alone)"),
        ("random_crop_us", "random_crop to 24x24x3"),
        ("random_flip_us", "random_flip_left_right"),
        ("random_brightness_us", "random_brightness(0.2)"),
        ("per_image_standardization_us", "per_image_standardization")]


def main(argv) -> None:
    out_path = argv[1] if len(argv) > 1 else None
    params = {"bench": BENCH_DIR, "src": SRC, "reps": REPS, "images": IMAGES}
    run_side_by_side(
        _CHILD, params, "tf.map_fn over %d float32 images of 32x32x3, us per image "
        "(medians of %d blocks of 8 steps)" % (IMAGES, REPS), ROWS,
        "Per-image augmentation in a tf.map_fn body, side by side with TensorFlow",
        "TF_PYTHON=~/.cache/tensorweave-bench-tf/bin/python python "
        "benchmarks/image_map_fn.py benchmarks/out/extra_image_map_fn.json", out_path,
        unit="us")


if __name__ == "__main__":
    main(sys.argv)
