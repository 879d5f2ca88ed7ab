"""Sandboxes on a real Jupyter Kernel Gateway (`jupyter kernelgateway` on 127.0.0.1): the kernel
protocol over its REST and WebSocket API, no shared filesystem needed, no local sandbox process."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from jupyter_fixloop import LoopHooks, fix

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
    for attempt in range(5):
        try:
            with urllib.request.urlopen(f"{url}/api/kernels", timeout=10) as r:
                return json.load(r)
        except urllib.error.HTTPError as exc:  # the gateway answers 500 while a kernel is half shut down
            if exc.code < 500 or attempt == 4:
                raise
            time.sleep(0.5)


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

    def on_run_start(event):
        seen.append(len(kernels(gateway)))

    result = fix("total = df['Price'].sum()\n", namespace={"df": pd.DataFrame({"price": [1.5, 2.5]})},
                 checks=["total == 4.0"], gateway_url=gateway, pool_size=0,
                 hooks=LoopHooks(on_run_start=on_run_start))
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
    result = fix("import os\nseen = os.environ.get('FIXLOOP_CANARY_SECRET', '') + "
                 "os.environ.get('KERNEL_CANARY', '')\n",
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


# ---------------------------------------------------------------- a gateway on the user's host (issue #27)

POISON = """total = sum(prices)
import json, urllib.request, uuid, websocket
URL = {url!r}
ids = [k['id'] for k in json.load(urllib.request.urlopen(URL + '/api/kernels', timeout=10))]
print('KERNELS', len(ids))
code = "import builtins; builtins.POISONED = 'POISONED-BY-ROUND-1'"
for kid in ids:
    ws = websocket.create_connection(URL.replace('http', 'ws', 1) + '/api/kernels/' + kid + '/channels', timeout=10)
    header = {{'msg_id': uuid.uuid4().hex, 'msg_type': 'execute_request', 'session': uuid.uuid4().hex,
              'username': 'x', 'date': '', 'version': '5.3'}}
    ws.send(json.dumps({{'header': header, 'parent_header': {{}}, 'metadata': {{}}, 'channel': 'shell',
                        'content': {{'code': code, 'silent': False, 'store_history': False,
                                    'user_expressions': {{}}, 'allow_stdin': False}}}}))
    ws.close()
raise RuntimeError('not fixed yet')
"""
CLEAN = "import builtins\nassert not hasattr(builtins, 'POISONED'), builtins.POISONED\ntotal = sum(prices)\n"


def test_a_round_cannot_poison_the_next_rounds_kernel_on_a_gateway(gateway, fake_model):
    """G01: round 1's candidate lists the gateway's kernels over its REST API and runs code in each
    of them; with warm kernels, round 2's was among them. On a gateway no kernel is kept warm and one
    exists at a time: round 1 finds only its own, round 2 starts clean."""
    server = fake_model(f"```python\n{POISON.format(url=gateway)}```", f"```python\n{CLEAN}```")
    result = fix("total = sum(prices_list)\n", namespace={"prices": [1, 2]}, checks=["total == 3"],
                 model="openai/scripted", api_base=server.url, max_rounds=2, gateway_url=gateway, pool_size=2,
                 rules=False)
    texts = [r.receipt.text for r in result.rounds]
    assert "KERNELS 1" in texts[0], texts[0]
    assert result.status == "fixed", texts
    assert wait_until(lambda: kernels(gateway) == [], 60), kernels(gateway)


DUMPABLE = """import ctypes, json, sys
from jupyter_fixloop import fix
r = fix("x = 1\\n", max_rounds=0, gateway_url=sys.argv[1], pool_size=0)
print('DUMPABLE', ctypes.CDLL(None).prctl(3, 0, 0, 0, 0), r.status)
"""


def test_the_users_process_is_made_non_dumpable_on_a_gateway(gateway):
    """NBG, the part that holds for any user: as on the local "none" path, a gateway sandbox makes
    the user's process non-dumpable (PR_GET_DUMPABLE 0), so a same-user kernel of a gateway on this
    host cannot open its /proc/<pid>/environ or memory."""
    out = subprocess.run([sys.executable, "-c", DUMPABLE, gateway], capture_output=True, text=True, timeout=180,
                         check=False)
    assert "DUMPABLE 0 passed" in out.stdout, out.stdout + out.stderr[-2000:]


ENVIRON_WALK = r"""import os
found = []
for pid in filter(str.isdigit, os.listdir('/proc')):
    try:
        with open(f'/proc/{pid}/environ', 'rb') as f:
            if b'NBGCANARY' in f.read():
                found.append(pid)
    except OSError:
        pass
assert not found, 'found in ' + ','.join(found)
"""


@pytest.mark.skipif(os.geteuid() == 0, reason="runs as root: the gateway's kernels hold CAP_SYS_PTRACE, which "
                    "non-dumpable does not stop (run the tests as a non-root user to replay NBG)")
def test_a_candidate_on_a_same_host_gateway_cannot_read_the_users_environment(gateway):
    """NBG: a candidate on a gateway of this host walks every /proc/<pid>/environ for the user's
    secret; the user's process (non-dumpable) refuses it."""
    code = ("import os, sys\nfrom jupyter_fixloop import fix\n"
            f"r = fix({ENVIRON_WALK!r}, max_rounds=0, gateway_url=sys.argv[1], pool_size=0)\n"
            "print('STATUS', r.status, r.first.text if r.first else r.reason)\n")
    env = {**os.environ, "NBG_SECRET": "NBGCANARY-user-env"}
    out = subprocess.run([sys.executable, "-c", code, gateway], capture_output=True, text=True, timeout=180,
                         env=env, check=False)
    assert "STATUS passed" in out.stdout, out.stdout + out.stderr[-2000:]


# ---------------------------------------------------------------- floods and the wall time (issue #41, item 6)

FLOOD_USER = """import json, resource, sys
from jupyter_fixloop import fix
from jupyter_fixloop.model import models
models.litellm()
spec = json.loads(sys.argv[1])
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
r = fix(spec["source"], max_rounds=spec["rounds"], gateway_url=spec["url"], pool_size=0, timeout=spec["timeout"],
        wall_time=spec["wall"], rules=False)
print("GROWTH", (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak) // 1024)  # MiB
print("RESULT", json.dumps({"status": r.status, "reason": r.reason, "kind": r.first.kind if r.first else None,
                            "text": r.first.text if r.first else ""}))
"""
RUNNER = "r = __import__('importlib').import_module('jupyter_fix' + 'loop.kernel.runner')\n"
IOPUB_FLOOD = ("from IPython.display import display\n"
               "for i in range(300):\n    display({'text/plain': 'x' * 2**20}, raw=True)\n")
RESULT_FLOOD = RUNNER + "r.last_json = lambda: 'x' * 200_000_000\n"  # one 200 MB reply to the run's request
ENDLESS_FLOOD = "from IPython.display import display\nwhile True:\n    display({'text/plain': 'x' * 2**20}, raw=True)\n"


def flood(gateway: str, source: str, rounds: int = 0, timeout: float = 30, wall: float = 600) -> tuple[int, dict]:
    """`fix(source)` on the gateway in a process of its own: how much it grew (MiB), and its result."""
    spec = {"source": source, "url": gateway, "rounds": rounds, "timeout": timeout, "wall": wall}
    out = subprocess.run([sys.executable, "-c", FLOOD_USER, json.dumps(spec)], capture_output=True, text=True,
                         timeout=600, check=False)
    growth = re.search(r"^GROWTH (\d+)$", out.stdout, re.MULTILINE)
    result = re.search(r"^RESULT (.*)$", out.stdout, re.MULTILINE)
    assert growth and result, out.stdout + out.stderr[-3000:]
    return int(growth.group(1)), json.loads(result.group(1))


def test_an_iopub_flood_on_a_gateway_is_not_held_by_the_users_process(gateway):
    """300 MiB of display output from a gateway kernel: the user's process keeps none of it (it is
    never read; the red team saw +350 MB). Only the kernel's status messages are kept, 8 at most."""
    growth, result = flood(gateway, IOPUB_FLOOD)
    assert result["kind"] in ("ok", "exception", "timeout", "crash"), result
    assert growth < 64, growth


def test_a_huge_result_from_a_gateway_kernel_is_read_through_not_held_and_is_a_crash(gateway):
    """The runner's reply forged to 200 MB: read off the WebSocket in small pieces and dropped (over
    the shell channel's 16 MiB, as a local socket drops it), never held whole (+826 MB before): the
    run has no result, and the user's process stays small. Round four, low: it ended as `timeout` after
    the run's whole timeout; the dropped reply's head names the request it answers, so it is a `crash`
    at once."""
    growth, result = flood(gateway, RESULT_FLOOD, timeout=120)
    assert result["kind"] == "crash" and "dropped unread" in result["text"], result
    assert "over the 16,777,216 read here" in result["text"], result
    assert growth < 64, growth


def test_the_wall_time_bounds_a_run_on_a_gateway(gateway):
    """An endless flood, with a per-run timeout far above the loop's wall time: the loop ends with the
    time-bound reason (before, fix() took 238 s and 378 s against 120 s)."""
    growth, result = flood(gateway, ENDLESS_FLOOD, rounds=1, timeout=600, wall=20)
    assert result["status"] == "gave_up" and result["reason"].startswith("time bound reached (20 s)"), result
    assert growth < 64, growth


def test_the_gateways_error_words_are_cut_after_a_whole_word_never_inside_one():
    from jupyter_fixloop.sandbox.gateway import _why

    long = _why(OSError("connection refused by the gateway " * 12 + "\nsecond line"))
    assert len(long) <= 200 and long.endswith(" …") and long.split()[-2] in {"connection", "refused", "by", "the",
                                                                             "gateway"}
    token = "http://gateway.example/" + "k" * 300  # one token longer than the bound: kept whole
    assert _why(OSError(token)) == f"OSError: {token}"
    assert _why(OSError("")) == "OSError" and _why(ValueError("short")) == "ValueError: short"
