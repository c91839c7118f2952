"""The README's demo: Figure 1 trained on the digits, checkpointed and restored."""
import os
import subprocess
import sys

import pytest

DEMO = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "figure1_mlp.py")


def test_figure1_demo_trains_saves_and_restores():
    pytest.importorskip("sklearn")
    pytest.importorskip("tqdm")
    out = subprocess.run([sys.executable, DEMO], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    accuracy = float(next(l for l in lines if l.startswith("test accuracy:")).split()[-1])
    restored = float(next(l for l in lines if l.startswith("restored accuracy:")).split()[-1])
    assert accuracy > 0.90 and restored == accuracy
    assert lines[-1] == "OK"
