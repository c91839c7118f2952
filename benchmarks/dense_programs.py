"""Whole TF1 training programs of dense layers and embeddings, end to end, side by side
with TensorFlow (issue 18's held-out real programs; the convolutional ones are
benchmarks/cnn_program.py, whose figures and harness these share).

"gan" is the TF1 GAN of the tutorials of its day on MNIST-sized data: a generator
100 -> 256 -> 784 (LeakyReLU 0.2, tanh) and a discriminator 784 -> 256 -> 1 (LeakyReLU
0.2) from tf.get_variable under variable scopes reused for the real and the generated
batch, sigmoid cross entropies, and two Adam optimizers (2e-4, beta1 0.5) over the two
variable lists, both run in one session.run; batches of 64 fed from NumPy.
"word2vec" is TF1's word2vec_basic: a 50,000 x 128 embedding, nce_loss with 64
log-uniform sampled classes, GradientDescent at 1.0 (sparse updates of the embedding
and of the NCE weights); skip-gram batches of 128 fed from NumPy.
"ftrl" is a TF1 logistic regression over sparse features: 20 ids of 100,000 per example
through embedding_lookup_sparse (sum), sigmoid cross entropy, FtrlOptimizer with L1;
batches of 256 fed.
"autoencoder" is a TF1 MNIST-sized autoencoder 784-256-64-256-784 of sigmoid dense
layers, mean squared error and RMSPropOptimizer (1e-3); batches of 128 fed.

Figures: the median training step, and the program's wall time from process start, as
tensorweave / TensorFlow.

Usage: [TF_PYTHON=...] python benchmarks/dense_programs.py [OUT_JSON]
"""
import sys

from cnn_program import STEPS, run_programs  # this script's folder

_GAN = r"""  # after results.CHILD_PREAMBLE (the implementation is imported)
rs = np.random.RandomState(0)
N, B = 2048, 64
real_images = rs.rand(N, 784).astype(np.float32)
noise = rs.randn(N, 100).astype(np.float32)
tf.set_random_seed(1)
z = tf.placeholder(tf.float32, [None, 100])
real = tf.placeholder(tf.float32, [None, 784])


def generator(z):
    with tf.variable_scope("G", reuse=tf.AUTO_REUSE):
        h = tf.nn.leaky_relu(tf.matmul(z, tf.get_variable("w1", [100, 256])) +
                             tf.get_variable("b1", [256], initializer=tf.zeros_initializer()),
                             0.2)
        return tf.nn.tanh(tf.matmul(h, tf.get_variable("w2", [256, 784])))


def discriminator(x):
    with tf.variable_scope("D", reuse=tf.AUTO_REUSE):
        h = tf.nn.leaky_relu(tf.matmul(x, tf.get_variable("w1", [784, 256])) +
                             tf.get_variable("b1", [256], initializer=tf.zeros_initializer()),
                             0.2)
        return tf.matmul(h, tf.get_variable("w2", [256, 1]))


fake = generator(z)
d_real, d_fake = discriminator(real), discriminator(fake)
xent = tf.nn.sigmoid_cross_entropy_with_logits
d_loss = tf.reduce_mean(xent(labels=tf.ones_like(d_real), logits=d_real)) + \
    tf.reduce_mean(xent(labels=tf.zeros_like(d_fake), logits=d_fake))
g_loss = tf.reduce_mean(xent(labels=tf.ones_like(d_fake), logits=d_fake))
d_vars = [v for v in tf.trainable_variables() if v.name.startswith("D/")]
g_vars = [v for v in tf.trainable_variables() if v.name.startswith("G/")]
train = [tf.train.AdamOptimizer(2e-4, 0.5).minimize(d_loss, var_list=d_vars),
         tf.train.AdamOptimizer(2e-4, 0.5).minimize(g_loss, var_list=g_vars)]
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    timed_steps(sess, train, lambda j: {z: noise[j:j + B], real: real_images[j:j + B]}, N)
    out["losses"] = [float(v) for v in sess.run([d_loss, g_loss],
                                                 {z: noise[:B], real: real_images[:B]})]
"""

_WORD2VEC = r"""  # after results.CHILD_PREAMBLE (the implementation is imported)
rs = np.random.RandomState(0)
V, D, B, SAMPLED = 50000, 128, 128, 64
words = np.minimum(rs.zipf(1.3, 200000), V) - 1   # a Zipf-distributed corpus
centre = np.repeat(words[1:-1], 2)
context = np.stack([words[:-2], words[2:]], 1).ravel()
tf.set_random_seed(1)
inputs = tf.placeholder(tf.int32, [B])
labels = tf.placeholder(tf.int64, [B, 1])
embeddings = tf.Variable(tf.random_uniform([V, D], -1.0, 1.0))
nce_weights = tf.Variable(tf.truncated_normal([V, D], stddev=1.0 / np.sqrt(D)))
nce_biases = tf.Variable(tf.zeros([V]))
embed = tf.nn.embedding_lookup(embeddings, inputs)
loss = tf.reduce_mean(tf.nn.nce_loss(weights=nce_weights, biases=nce_biases,
                                     labels=labels, inputs=embed, num_sampled=SAMPLED,
                                     num_classes=V))
train = tf.train.GradientDescentOptimizer(1.0).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    timed_steps(sess, train, lambda j: {inputs: centre[j:j + B],
                                        labels: context[j:j + B, None]}, centre.size - B)
    out["loss"] = float(sess.run(loss, {inputs: centre[:B], labels: context[:B, None]}))
"""

_FTRL = r"""  # after results.CHILD_PREAMBLE (the implementation is imported)
rs = np.random.RandomState(0)
V, B, K = 100000, 256, 20
N = 4096
all_ids = rs.randint(0, V, (N, K)).astype(np.int64)
all_labels = rs.randint(0, 2, N).astype(np.float32)
tf.set_random_seed(1)
ids = tf.placeholder(tf.int64, [B * K])
labels = tf.placeholder(tf.float32, [B])
w = tf.get_variable("w", [V, 1], initializer=tf.zeros_initializer())
b = tf.get_variable("b", [], initializer=tf.zeros_initializer())
coords = np.stack([np.repeat(np.arange(B), K), np.tile(np.arange(K), B)], 1)
features = tf.SparseTensor(indices=coords.astype(np.int64), values=ids, dense_shape=[B, K])
logits = tf.reshape(tf.nn.embedding_lookup_sparse(w, features, None, combiner="sum"),
                    [B]) + b
loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=labels,
                                                              logits=logits))
train = tf.train.FtrlOptimizer(0.1, l1_regularization_strength=0.01).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    timed_steps(sess, train, lambda j: {ids: all_ids[j:j + B].ravel(),
                                        labels: all_labels[j:j + B]}, N - B)
    out["loss"] = float(sess.run(loss, {ids: all_ids[:B].ravel(), labels: all_labels[:B]}))
"""

_AUTOENCODER = r"""  # after results.CHILD_PREAMBLE (the implementation is imported)
rs = np.random.RandomState(0)
N, B = 2048, 128
images = rs.rand(N, 784).astype(np.float32)
tf.set_random_seed(1)
x = tf.placeholder(tf.float32, [None, 784])


def dense(v, n, name):
    w = tf.get_variable(name, [int(v.shape[-1]), n],
                        initializer=tf.random_normal_initializer(stddev=0.05))
    b = tf.get_variable(name + "_b", [n], initializer=tf.zeros_initializer())
    return tf.nn.sigmoid(tf.matmul(v, w) + b)


code = dense(dense(x, 256, "enc1"), 64, "enc2")
reconstruction = dense(dense(code, 256, "dec1"), 784, "dec2")
loss = tf.reduce_mean(tf.square(reconstruction - x))
train = tf.train.RMSPropOptimizer(1e-3).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    timed_steps(sess, train, lambda j: {x: images[j:j + B]}, N)
    out["loss"] = float(sess.run(loss, {x: images[:B]}))
"""

PROGRAMS = {"gan": _GAN, "word2vec": _WORD2VEC, "ftrl": _FTRL, "autoencoder": _AUTOENCODER}


def main(argv) -> None:
    run_programs(PROGRAMS, "TF1 training programs of dense layers and embeddings, side by "
                 "side with TensorFlow",
                 "TF_PYTHON=~/.cache/tensorweave-bench-tf/bin/python python "
                 "benchmarks/dense_programs.py benchmarks/out/extra_dense_programs.json",
                 "%d training steps each (gan: batch 64, two Adams; word2vec: batch 128, "
                 "nce_loss of 64 samples; ftrl: batch 256 of 20 sparse ids; autoencoder: "
                 "batch 128, RMSProp); the step is a median, the wall time is from "
                 "process start" % STEPS, argv)


if __name__ == "__main__":
    main(sys.argv)
