"""Training steps of convolutional blocks, side by side with TensorFlow (issue 18's
compute-bound kernels: the oneDNN path of ops/onednn.py and the remapped Conv2D+bias+Relu).

The programs, each a full training step (forward, gradients, GradientDescent):
- "mobilenet block": a 3x3 depthwise convolution (multiplier 2) of [32, 56, 56, 32], ReLU,
  a 1x1 convolution to 64 channels, ReLU;
- "vgg block": two 3x3 convolutions of [16, 56, 56, 64] with biases and ReLU, then a 2x2
  max pool (Grappler and tensorweave fuse each Conv2D, bias and Relu);
- "video block": a 3x3x3 Conv3D of [4, 16, 32, 32, 8] to 16 channels with a bias, ReLU,
  and a 2x2x2 average pool.
Medians over REPS steps after WARMUP; ratios tensorweave / TensorFlow (lower is better).
`TW_ONEDNN=0` runs tensorweave on its NumPy kernels.

Usage: [TF_PYTHON=...] python benchmarks/cnn_blocks.py [OUT_JSON]
"""
import os
import sys

# benchmarks/results.py (this script's folder)
from results import run_side_by_side

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH_DIR = os.path.join(HERE, "..", "..", "shared", "bench")
SRC = os.path.join(HERE, "..", "src")
REPS, WARMUP = 15, 3

_CHILD = r"""  # after results.CHILD_PREAMBLE
rs = np.random.RandomState(0)

def var(*shape, scale=0.1):
    return tf.Variable(rs.standard_normal(shape).astype(np.float32) * scale)

def mobilenet(x):
    h = tf.nn.relu(tf.nn.depthwise_conv2d(x, var(3, 3, 32, 2), [1, 1, 1, 1], "SAME"))
    return tf.nn.relu(tf.nn.conv2d(h, var(1, 1, 64, 64), 1, "SAME"))

def vgg(x):
    h = tf.nn.relu(tf.nn.conv2d(x, var(3, 3, 64, 64, scale=0.05), 1, "SAME") + var(64))
    h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(h, var(3, 3, 64, 64, scale=0.05), 1, "SAME"),
                                  var(64)))
    return tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")

def video(x):
    h = tf.nn.relu(tf.nn.conv3d(x, var(3, 3, 3, 8, 16), [1] * 5, "SAME") + var(16))
    return tf.nn.avg_pool3d(h, [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "SAME")

for name, shape, block in (("mobilenet", [32, 56, 56, 32], mobilenet),
                           ("vgg", [16, 56, 56, 64], vgg),
                           ("video", [4, 16, 32, 32, 8], video)):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, shape)
        loss = tf.reduce_mean(tf.square(block(x)))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            fd = {x: rs.rand(*shape).astype(np.float32)}
            runs = bench.time_loop(lambda: sess.run(train, fd), P["reps"], P["warmup"])
            out[name] = bench.summarize(runs, "ms")["median"]
print("@@" + json.dumps(out))
"""


def main(argv) -> None:
    run_side_by_side(
        _CHILD, {"bench": BENCH_DIR, "src": SRC, "reps": REPS, "warmup": WARMUP},
        "training steps (forward, gradients, GradientDescent); medians of %d steps" % REPS, [
            ("mobilenet", "mobilenet block: depthwise 3x3 x2 + 1x1 conv, [32, 56, 56, 32]"),
            ("vgg", "vgg block: two 3x3 convs + bias + ReLU, max pool, [16, 56, 56, 64]"),
            ("video", "video block: Conv3D 3x3x3 + bias + ReLU, avg pool, [4, 16, 32, 32, 8]"),
        ], "Training steps of convolutional blocks, side by side with TensorFlow",
        "TF_PYTHON=~/.cache/tensorweave-bench-tf/bin/python python benchmarks/cnn_blocks.py "
        "benchmarks/out/extra_cnn_blocks.json",
        argv[1] if len(argv) > 1 else None)


if __name__ == "__main__":
    main(sys.argv)
