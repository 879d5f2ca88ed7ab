import os
import sys
import tempfile

import pytest

# Loop history (jupyter_fixloop/history.py) goes to a scratch folder, never the user's Jupyter data
# dir; kernels started by tests inherit this.
os.environ["FIXLOOP_DATA_DIR"] = tempfile.mkdtemp(prefix="fixloop-test-history-")

sys.path.insert(0, os.path.dirname(__file__))

from fake_model import FakeModelServer  # noqa: E402


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
