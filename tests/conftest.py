import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from fake_model import FakeModelServer  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def scratch_history(tmp_path_factory):
    """Loop history (jupyter_fixloop/notebook/history.py) goes to a scratch folder, never the user's Jupyter
    data dir; kernels started by tests inherit it."""
    before = os.environ.get("FIXLOOP_DATA_DIR")
    path = tmp_path_factory.mktemp("fixloop-history")
    os.environ["FIXLOOP_DATA_DIR"] = str(path)
    yield path
    if before is None:
        os.environ.pop("FIXLOOP_DATA_DIR", None)
    else:
        os.environ["FIXLOOP_DATA_DIR"] = before


@pytest.fixture
def fake_model(monkeypatch):
    """Start a scripted OpenAI-compatible server; returns a factory taking the script."""
    servers = []
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")

    def start(*script):
        server = FakeModelServer(script).__enter__()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.__exit__(None, None, None)
