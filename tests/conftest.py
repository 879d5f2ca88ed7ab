import os
import sys
from pathlib import Path

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


# ---------------------------------------------------------------- two tiers: `-m "not kernel"` is the fast one

# a call of one of these names starts a kernel, a sandbox, a notebook or model server, or a process
STARTERS = {
    "fix", "afix", "verify", "fix_notebook", "run_plainly", "plain_errors", "UserKernel", "KernelManager", "Sandbox",
    "SandboxPool", "pool_for", "NotebookKernel", "NotebookClient", "FakeModelServer", "FakeLab", "main", "run_cell",
    "InteractiveShell", "instance", "Popen", "subprocess.run", "check_output", "Sandbox.start", "start_kernel",
}


def _calls(node) -> set[str]:
    import ast

    found = set()
    for call in (c for c in ast.walk(node) if isinstance(c, ast.Call)):
        if isinstance(call.func, ast.Name):
            found.add(call.func.id)
        elif isinstance(call.func, ast.Attribute):
            base = call.func.value
            found |= {call.func.attr, *([f"{base.id}.{call.func.attr}"] if isinstance(base, ast.Name) else [])}
    return found


def _starters(path: str) -> set[str]:
    """The names of `path`'s module-level functions (fixtures and helpers too) that start a kernel or a
    server, themselves or through another function of the module that does."""
    import ast

    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    calls = {n.name: _calls(n) for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    starting = {name for name, called in calls.items() if called & STARTERS}
    while True:
        more = {name for name, called in calls.items() if called & starting} - starting
        if not more:
            return starting
        starting |= more


def pytest_collection_modifyitems(config, items):
    """Mark `kernel` each test that starts a kernel or a server: by what it calls, or a fixture or helper of
    its module or of conftest.py that does (a name of STARTERS, followed through the module's functions)."""
    known = {__file__: _starters(__file__)}
    for item in items:
        path = str(item.path)
        if path not in known:
            known[path] = _starters(path)
        own = getattr(item, "originalname", item.name)
        if own in known[path] or set(item.fixturenames) & (known[path] | known[__file__]):
            item.add_marker(pytest.mark.kernel)
