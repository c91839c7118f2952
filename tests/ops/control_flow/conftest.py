import pytest

from tensorweave.runtime import tagged


@pytest.fixture(params=["structured", "tagged"])
def executor(request, monkeypatch):
    """Runs a test on both executors of runtime/ (frames.py's structured one and the
    tagged token-passing one); plan.py picks the tagged one when TW_EXECUTOR=tagged,
    here with its loops' routes written from the first run (routes.py)."""
    if request.param == "tagged":
        monkeypatch.setenv("TW_EXECUTOR", "tagged")
        monkeypatch.setattr(tagged, "ROUTES_AFTER", 0)
    else:
        monkeypatch.delenv("TW_EXECUTOR", raising=False)
    return request.param
