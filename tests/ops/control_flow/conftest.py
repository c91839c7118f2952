import pytest


@pytest.fixture(params=["structured", "tagged"])
def executor(request, monkeypatch):
    """Runs a test on both executors of runtime/ (frames.py's structured one and the
    tagged token-passing one); plan.py picks the tagged one when TW_EXECUTOR=tagged."""
    if request.param == "tagged":
        monkeypatch.setenv("TW_EXECUTOR", "tagged")
    else:
        monkeypatch.delenv("TW_EXECUTOR", raising=False)
    return request.param
