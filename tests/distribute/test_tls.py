"""TLS between tasks and clients (TW_TLS_CERT/TW_TLS_KEY/TW_TLS_CA): a self-signed
certificate for localhost made with the openssl command (skipped without it)."""
import shutil
import subprocess

import pytest

import tensorweave as tf

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None,
                                reason="needs the openssl command")


@pytest.fixture
def certificate(tmp_path):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days",
                    "1", "-subj", "/CN=localhost", "-addext",
                    "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", str(key),
                    "-out", str(cert)], check=True, capture_output=True, timeout=60)
    return str(cert), str(key)


def test_a_cluster_speaking_tls(make_cluster, certificate, monkeypatch):
    cert, key = certificate
    c = make_cluster({"ps": 1, "worker": 1},
                     env={"TW_TLS_CERT": cert, "TW_TLS_KEY": key})
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(2.0, name="v")
        with tf.device("/job:worker/task:0"):
            y = v * 3.0
    # a client without the certificate cannot talk to the tasks
    monkeypatch.delenv("TW_TLS_CA", raising=False)
    monkeypatch.delenv("TW_TLS_CERT", raising=False)
    with pytest.raises(tf.errors.UnavailableError):
        tf.Session(c.target(), graph=g,
                   config=tf.ConfigProto(operation_timeout_in_ms=1500))
    monkeypatch.setenv("TW_TLS_CA", cert)
    with tf.Session(c.target(), graph=g) as sess:
        sess.run(v.initializer)
        assert sess.run(y) == 6.0  # worker and ps talk TLS between them too
