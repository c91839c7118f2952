"""TensorBoard, for real: train the Figure 1 demo for a few steps with summaries, start
TensorBoard on the log directory, and look at it in headless Chromium.

Checks TensorBoard's own JSON endpoints (the loss curve's tag and values, the graph's
nodes) and takes screenshots of the scalars and graphs pages (kept under the test's
tmp_path; their paths are printed), which must show TensorBoard with the loss curve
and the graph drawn (check_screenshot). Not in the default run:
`.venv/bin/python -m pytest -m tensorboard_browser tests/summary`.
Needs /usr/bin/chromium (Debian: `apt-get install chromium`), scikit-learn and tqdm.
"""
import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import numpy as np
import pytest

import tensorweave as tf

pytestmark = pytest.mark.tensorboard_browser

CHROMIUM = "/usr/bin/chromium"
DEMO = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "figure1_mlp.py")
STEPS = 30
WINDOW = (1280, 900)
TENSORBOARD_ORANGE = (245, 124, 0)   # the color of TensorBoard's top bar


def load_demo():
    pytest.importorskip("sklearn")
    pytest.importorskip("tqdm")
    spec = importlib.util.spec_from_file_location("figure1_mlp", DEMO)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def train_with_summaries(logdir: str):
    """The demo's model, trained STEPS steps, writing the loss and a histogram of W each
    step and the graph once. Returns the losses."""
    from sklearn.datasets import load_digits
    demo = load_demo()
    digits = load_digits()
    data = (digits.data / 16.0).astype(np.float32)
    labels_all = digits.target.astype(np.int64)
    losses = []
    with tf.Graph().as_default() as graph:
        tf.set_random_seed(0)
        x, labels, loss, _ = demo.build_model()
        train_op = tf.train.AdagradOptimizer(0.1).minimize(loss)
        tf.summary.scalar("loss", loss)
        tf.summary.histogram("W", tf.trainable_variables()[0])
        merged = tf.summary.merge_all()
        rng = np.random.RandomState(0)
        with tf.Session() as sess, tf.summary.FileWriter(logdir, graph) as writer:
            sess.run(tf.global_variables_initializer())
            for step in range(STEPS):
                idx = rng.randint(0, len(data), demo.BATCH)
                _, summary, loss_value = sess.run(
                    [train_op, merged, loss], {x: data[idx], labels: labels_all[idx]})
                writer.add_summary(summary, step)
                losses.append(float(loss_value))
    return losses


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read()


def wait_for_tags(base: str, proc, limit_s: float = 90.0) -> dict:
    """Polls the scalars plugin until TensorBoard has loaded the "loss" tag (bounded)."""
    deadline = time.monotonic() + limit_s
    last = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail("TensorBoard exited with status %s" % proc.returncode)
        try:
            last = json.loads(fetch(base + "/data/plugin/scalars/tags"))
            if "loss" in last.get(".", {}):
                return last
        except (urllib.error.URLError, ConnectionError, ValueError):
            pass
        time.sleep(0.5)
    pytest.fail("TensorBoard did not show the loss tag within %.0f s (last answer: %r)"
                % (limit_s, last))


def screenshot(url: str, path: str, profile: str) -> None:
    subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--hide-scrollbars", "--user-data-dir=" + profile,
         "--window-size=%d,%d" % WINDOW, "--virtual-time-budget=20000",
         "--screenshot=" + path, url],
        check=True, timeout=180, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def check_screenshot(path: str, page: str) -> np.ndarray:
    """The screenshot shows TensorBoard with data: its orange top bar holding the
    dashboards' tabs (an empty TensorBoard shows none), and on the scalars page the
    loss curve (pixels of the run's red-orange in the chart area), on the graphs page
    the graph's colored nodes. Calibrated against screenshots of an empty TensorBoard,
    which fail every check but the first."""
    from PIL import Image
    image = np.asarray(Image.open(path).convert("RGB")).astype(np.int32)
    assert image.shape == (WINDOW[1], WINDOW[0], 3)
    bar = np.abs(image[5:60, :, :] - TENSORBOARD_ORANGE).sum(axis=-1) < 30
    assert bar.mean() > 0.5, "%s: no TensorBoard top bar" % path
    tabs = np.abs(image[20:45, 170:700] - TENSORBOARD_ORANGE).sum(axis=-1) > 60
    assert tabs.mean() > 0.05, "%s: no dashboard tabs (no data loaded)" % path
    body = image[80:, 330:]
    if page == "scalars":
        curve = (body[..., 0] > 200) & (body[..., 1] < 170) & (body[..., 2] < 140)
        assert curve.sum() > 200, "%s: no loss curve drawn" % path
    else:
        saturation = body.max(axis=-1) - body.min(axis=-1)
        nodes = (saturation > 20) & (saturation < 100)
        assert nodes.sum() > 8000, "%s: no graph nodes drawn" % path
    return image


@pytest.fixture
def chromium():
    if not os.path.exists(CHROMIUM):
        pytest.skip("headless Chromium is missing (%s): apt-get install chromium" % CHROMIUM)
    return CHROMIUM


def test_tensorboard_shows_the_demos_loss_and_graph(tmp_path, chromium):
    logdir = str(tmp_path / "logs")
    losses = train_with_summaries(logdir)
    port = free_port()
    base = "http://127.0.0.1:%d" % port
    log = open(tmp_path / "tensorboard.log", "wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tensorboard.main", "--logdir", logdir, "--host", "127.0.0.1",
         "--port", str(port)], stdout=log, stderr=subprocess.STDOUT)
    try:
        tags = wait_for_tags(base, proc)
        assert set(tags) == {"."} and "loss" in tags["."]
        points = json.loads(fetch(base + "/data/plugin/scalars/scalars?run=.&tag=loss"))
        assert [p[1] for p in points] == list(range(STEPS))
        np.testing.assert_allclose([p[2] for p in points], losses, rtol=1e-6)
        assert losses[-1] < losses[0]
        hist_tags = json.loads(fetch(base + "/data/plugin/histograms/tags"))
        assert "W_1" in hist_tags["."]  # the variable took the name "W"
        graph = fetch(base + "/data/plugin/graphs/graph?run=.&conversions=false").decode()
        for node in ('name: "x"', 'name: "W"', 'op: "MatMul"', 'name: "Adagrad'):
            assert node in graph, node

        shots = tmp_path / "screenshots"
        shots.mkdir()
        pages = {"scalars": base + "/#scalars", "graphs": base + "/#graphs"}
        images = {}
        for page, url in pages.items():
            path = str(shots / ("%s.png" % page))
            screenshot(url, path, str(tmp_path / "chromium-profile"))
            print("TensorBoard %s page: %s" % (page, path))
            images[page] = check_screenshot(path, page)
        assert np.abs(images["scalars"] - images["graphs"]).sum() > 0
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
