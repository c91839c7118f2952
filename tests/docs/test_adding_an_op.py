"""docs/adding_an_op.md stays true: its Python blocks, run in order in a fresh
interpreter, declare an op, its kernel, gradient and builder, and check them."""
import os
import re
import subprocess
import sys

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "adding_an_op.md")


def _python_blocks(text: str) -> list:
    return re.findall(r"```python\n(.*?)```", text, re.S)


def test_the_worked_example_runs():
    blocks = _python_blocks(open(DOC).read())
    assert len(blocks) >= 5  # declaration, kernel, gradient, builder, test
    code = "import tensorweave\n" + "\n".join(blocks) + "\nprint('example ok')\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("example ok")


def test_the_guide_names_files_that_exist():
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    text = open(DOC).read()
    paths = set(re.findall(r"`((?:ops|framework|tests)/[\w/]+\.py)", text))
    assert paths
    for p in paths:
        full = os.path.join(root, p) if p.startswith("tests/") else \
            os.path.join(root, "src", "tensorweave", p)
        assert os.path.exists(full), p
