"""Sandboxes on a real Jupyter Kernel Gateway (`jupyter kernelgateway` on 127.0.0.1): the kernel
protocol over its REST and WebSocket API, no shared filesystem needed, no local sandbox process."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from jupyter_fixloop import fix

pytest.importorskip("kernel_gateway", reason="jupyter-kernel-gateway is in the [test] extra")
pytest.importorskip("jupyter_server.gateway.managers")

# jupyter_server's gateway client leaves its WebSocket and HTTP sockets to the garbage collector
# (not ours to close); their ResourceWarnings may surface in whichever test runs next
pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning", "ignore::pytest.PytestUnraisableExceptionWarning")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def kernels(url: str) -> list[dict]:
    with urllib.request.urlopen(f"{url}/api/kernels", timeout=10) as r:
        return json.load(r)


def wait_until(predicate, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return predicate()


@pytest.fixture(scope="module")
def gateway(tmp_path_factory):
    """A gateway with an environment of its own (no key of ours reaches its kernels)."""
    with running_gateway(tmp_path_factory.mktemp("gateway-home")) as url:
        yield url


@contextlib.contextmanager
def running_gateway(home, *options: str):
    port = free_port()
    exe = shutil.which("jupyter-kernelgateway") or shutil.which("jupyter")
    argv = [exe] if exe.endswith("kernelgateway") else [exe, "kernelgateway"]
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen([*argv, "--KernelGatewayApp.ip=127.0.0.1", f"--KernelGatewayApp.port={port}",
                             "--JupyterWebsocketPersonality.list_kernels=True", *options], env=env, cwd=str(home),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"

    def up():
        try:
            urllib.request.urlopen(f"{url}/api", timeout=10).close()
            return True
        except urllib.error.HTTPError:  # it answers (401 without the token)
            return True
        except OSError:
            return False

    try:
        assert wait_until(up, 60), "the kernel gateway did not start"
        yield url
    finally:
        proc.terminate()
        proc.wait(30)


def local_sandboxes() -> set[int]:
    """Local sandbox kernels (they start through our lifeline launcher) among this process's
    descendants; the gateway's kernels are stock ipykernels."""
    parents = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                parents[int(pid)] = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    found, todo = set(), [os.getpid()]
    while todo:
        parent = todo.pop()
        for child, ppid in parents.items():
            if ppid == parent:
                todo.append(child)
                try:
                    with open(f"/proc/{child}/cmdline", "rb") as f:
                        if b"watch_lifeline" in f.read():
                            found.add(child)
                except OSError:
                    pass
    return found


def test_a_live_state_repair_runs_on_the_gateway(gateway, monkeypatch):
    pd = pytest.importorskip("pandas")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary-never-sent")
    before = local_sandboxes()
    seen = []

    def on_event(kind, info):
        if kind == "running":
            seen.append(len(kernels(gateway)))

    result = fix("total = df['Price'].sum()\n", namespace={"df": pd.DataFrame({"price": [1.5, 2.5]})},
                 checks=["total == 4.0"], gateway_url=gateway, pool_size=0, on_event=on_event)
    assert result.status == "fixed", result.reason
    assert "df['price']" in result.patched
    assert "near matches for 'Price': 'price'" in result.first.text  # the frame was mirrored there
    assert result.notes[0].startswith(f"sandbox: gateway ({gateway})")
    assert seen and max(seen) >= 1  # the gateway listed the sandbox kernels while the loop ran
    assert local_sandboxes() <= before  # and none started here
    assert wait_until(lambda: kernels(gateway) == [], 60), kernels(gateway)  # none left there


def test_timeout_and_crash_come_back_as_typed_receipts(gateway):
    slow = fix("while True:\n    pass\n", timeout=2, max_rounds=0, gateway_url=gateway, pool_size=0)
    assert slow.first.kind == "timeout" and "stopped at line" in slow.first.text
    dead = fix("import os\nos._exit(3)\n", timeout=10, max_rounds=0, gateway_url=gateway, pool_size=0)
    assert dead.first.kind == "crash" and "died on the gateway" in dead.first.text
    assert wait_until(lambda: kernels(gateway) == [], 60), kernels(gateway)


def test_the_environment_of_the_user_does_not_reach_the_gateway_kernel(gateway, monkeypatch):
    monkeypatch.setenv("FIXLOOP_CANARY_SECRET", "canary-7d1f")
    monkeypatch.setenv("KERNEL_CANARY", "canary-kernel-var")  # jupyter_server forwards KERNEL_* by default
    result = fix("import os\nseen = os.environ.get('FIXLOOP_CANARY_SECRET', '') + os.environ.get('KERNEL_CANARY', '')\n",
                 checks=["seen == ''"], max_rounds=0, gateway_url=gateway, pool_size=0)
    assert result.status == "passed", result.first.text


def test_a_snapshot_over_the_upload_cap_is_a_clear_error(gateway):
    result = fix("n = len(blob)\n", namespace={"blob": b"x" * 3_000_000}, max_rounds=0, gateway_url=gateway,
                 gateway_upload_cap=1_000_000, pool_size=0)
    assert result.status == "error" and "FixLoop.gateway_upload_cap" in result.reason


def test_an_unreachable_gateway_is_one_clear_line():
    url = f"http://127.0.0.1:{free_port()}"
    started = time.monotonic()
    result = fix("x = 1\n", gateway_url=url, pool_size=0, max_rounds=0)
    assert result.status == "error"
    assert url in result.reason and "gateway" in result.reason and "\n" not in result.reason
    assert time.monotonic() - started < 60


def test_the_runner_needs_no_fixloop_install_on_the_gateway_side():
    """What a gateway kernel is sent: the in-kernel modules, loadable in an interpreter without us."""
    from jupyter_fixloop.sandbox.gateway import install_code

    code = install_code() + "import jupyter_fixloop.kernel.runner as r\nprint(r.__file__)\n"
    out = subprocess.run([sys.executable, "-I", "-"], input=code, capture_output=True, text=True, timeout=60,
                         env={"PATH": os.environ["PATH"]}, cwd="/")  # stdin: the code outgrew one argument (128 KiB)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "<fixloop:jupyter_fixloop.kernel.runner>"


def test_a_gateway_that_wants_a_token_gets_it_on_every_request(tmp_path):
    """REST and WebSocket alike: the loop runs with FixLoop.gateway_token, and without it fails in one line."""
    with running_gateway(tmp_path, "--KernelGatewayApp.auth_token=gw-secret-1") as url:
        result = fix("total = sum(values)\n", namespace={"values": [1, 2, 3]}, checks=["total == 6"], max_rounds=0,
                     gateway_url=url, gateway_token="gw-secret-1", pool_size=0)
        assert result.status == "passed", result.reason + "\n" + (result.first.text if result.first else "")
        refused = fix("x = 1\n", max_rounds=0, gateway_url=url, pool_size=0)
        assert refused.status == "error" and url in refused.reason and "\n" not in refused.reason, refused.reason
        assert "check FixLoop.gateway_token" in refused.reason, refused.reason
