"""State mirroring and the warm pool, end to end: a real user kernel, real sandbox kernels, real
litellm calls to the scripted server. The user kernel calls `jupyter_fixloop.fix(...,
namespace=globals())`, which is what `%%fixloop` does with the kernel's namespace."""

import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest
from kernel import UserKernel

from jupyter_fixloop import fix
from jupyter_fixloop.kernel.snapshot import ram_root
from jupyter_fixloop.loop.run import sandbox_settings
from jupyter_fixloop.loop.verdict import judge
from jupyter_fixloop.options import LoopOptions
from jupyter_fixloop.sandbox import leftovers, pool as pool_mod, runtime
from jupyter_fixloop.sandbox.leftovers import owner_tag, sandboxes_root
from jupyter_fixloop.sandbox.manager import Sandbox, SandboxSettings
from jupyter_fixloop.sandbox.pool import pool_for

EARLIER_CELLS = [
    "import pandas as pd",
    "sales = pd.DataFrame({'Region': ['n', 's', 'n', 'e'], 'amount': [3, 4, 5, 1]})",
    "def total_by(frame, key):\n    return frame.groupby(key)['amount'].sum()",
    "class Report:\n    def __init__(self, frame):\n        self.frame = frame\n"
    "    def best(self):\n        return total_by(self.frame, 'region').idxmax()",
]
FAILING_CELL = "best = Report(sales).best()\n"


@pytest.fixture(scope="module")
def kernel():
    k = UserKernel()
    assert k.run("import os; os.environ['OPENAI_API_KEY'] = 'sk-test-not-a-real-key'").ok
    yield k
    k.close()


def fix_in(kernel, cell: str, checks, server, max_rounds: int = 3) -> dict:
    """Run the loop from inside the user kernel on its own globals; return what it found."""
    code = (
        "import json, jupyter_fixloop\n"
        f"_r = jupyter_fixloop.fix({cell!r}, checks={list(checks)!r}, namespace=globals(),\n"
        f"    model='openai/scripted', api_base={server.url!r}, max_rounds={max_rounds})\n"
        "print(json.dumps({'status': _r.status, 'reason': _r.reason, 'patched': _r.patched,\n"
        "    'first': _r.first and {'ename': _r.first.ename, 'evalue': _r.first.evalue, 'text': _r.first.text},\n"
        "    'rounds': [r.receipt.text for r in _r.rounds]}))\n"
    )
    run = kernel.run(code)
    assert run.ok, run.text
    return json.loads(run.text.strip().splitlines()[-1])


def test_cell_using_frame_function_and_class_fails_the_same_way_and_is_fixed(kernel, fake_model):
    for cell in EARLIER_CELLS:
        assert kernel.run(cell).ok
    direct = kernel.run(FAILING_CELL)
    error = next(content for kind, content in direct.outputs if kind == "error")
    server = fake_model("```python\nbest = Report(sales.rename(columns={'Region': 'region'})).best()\n```")
    result = fix_in(kernel, FAILING_CELL, ["best == 'n'"], server)
    assert (
        (result["first"]["ename"], result["first"]["evalue"])
        == (error["ename"], error["evalue"])
        == ("KeyError", "'region'")
    )
    assert result["status"] == "fixed", result["reason"]
    assert "KeyError" in server.prompt(0)
    assert "NameError" in kernel.run("best").text  # the fix ran in the sandbox only


def test_candidates_changing_mirrored_variables_change_neither_the_user_nor_the_next_round(kernel, fake_model):
    assert kernel.run("rows = [1, 2, 3]\nlookup = {'a': 1}\nimport pandas as pd\n"
                      "table = pd.DataFrame({'x': [1.0, 2.0], 'y': [3, 4]})").ok
    vandal = "rows.append(99)\ndel lookup\ntable['x'] = 0.0\ndel table['y']\nstate = 'vandalized'\n"
    probe = "state = (len(rows), 'lookup' in globals(), table['x'].sum(), list(table.columns))\n"
    server = fake_model(f"```python\n{vandal}raise RuntimeError('again')\n```", f"```python\n{probe}```")
    result = fix_in(kernel, vandal + "raise RuntimeError('first')\n", ["state == (3, True, 3.0, ['x', 'y'])"], server)
    assert result["status"] == "fixed", (result["reason"], result["rounds"])
    assert kernel.run("print(len(rows), sorted(lookup), table['x'].sum(), list(table.columns))").text.strip() \
        == "3 ['a'] 3.0 ['x', 'y']"


def test_open_file_is_named_as_not_mirrored_and_the_loop_completes(kernel, fake_model, tmp_path):
    path = str(tmp_path / "log.txt")
    assert kernel.run(f"log = open({path!r}, 'w')\nbase = 41").ok
    # the honest fix keeps the write (the guard rejects deleting the failing line's effect)
    server = fake_model("```python\nimport io\nlog = io.StringIO()\nlog.write('x')\nanswer = base + 1\n```")
    result = fix_in(kernel, "log.write('x')\nanswer = base + 1\n", ["answer == 42"], server)
    assert result["status"] == "fixed", result["reason"]
    assert "not mirrored: log (TextIOWrapper: cannot be pickled" in result["first"]["text"]
    assert "not mirrored: log (TextIOWrapper" in server.prompt(0)  # the model is told
    assert kernel.run("print(log.closed, base)").text.strip() == "False 41"


def test_a_name_only_a_candidate_reads_is_shared_by_what_it_is_or_by_name(fake_model):
    """Finding 7, under each share policy: with "named" the candidate does not decide what is mirrored
    (`share` adds a part before it runs); with "data" (the default) a data value it reads is mirrored,
    and the receipt says so."""
    ns = {"first": [1, 2], "second": [3, 4]}
    server = fake_model("```python\ntotal = sum(first) + sum(second)\n```")
    named = dict(checks=["total == 10"], namespace=ns, model="openai/scripted", api_base=server.url, max_rounds=1)
    result = fix("total = sum(first)\n", share_policy="named", **named)
    assert result.first.kind == "check_failed"
    assert result.status != "fixed"
    assert (
        "`second` is in your namespace but not shared with the sandbox; add --share second"
        in result.rounds[0].receipt.text
    )
    result = fix("total = sum(first)\n", share_policy="named", share=("second",), **named)
    assert result.status == "fixed", result.reason
    result = fix("total = sum(first)\n", **named)
    assert result.status == "fixed", result.reason
    assert "second (list len 2) shared: the candidate reads it" in result.rounds[0].receipt.text


def test_idle_kernels_import_the_packages_snapshots_needed():
    import pandas as pd

    settings = sandbox_settings(LoopOptions().resolved())
    result = fix("n = len(frame)\n", checks=["n == 2"], namespace={"frame": pd.DataFrame({"a": [1, 2]})})
    assert result.status == "passed"

    async def probe():
        from jupyter_fixloop.kernel.snapshot import EMPTY

        pool = pool_for(settings, 2)
        assert "pandas" in pool.modules
        box = await pool.acquire(EMPTY)
        try:
            return judge(await box.run("import sys\nloaded = 'pandas' in sys.modules\n", ["loaded"], 60))
        finally:
            pool.discard(box)

    receipt = runtime.run_sync(probe())
    assert receipt.ok, receipt.text


# ---------------------------------------------------------------- no sandbox outlives its user


def _processes() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, state) of every process, from /proc."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        table[int(entry)] = (int(fields[1]), fields[0])
    return table


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def sandboxes_of(pid: int) -> dict[int, str]:
    """Live sandbox kernels started (directly or not) by process `pid`: pid -> sandbox dir."""
    table, found, todo = _processes(), {}, [pid]
    while todo:
        parent = todo.pop()
        for child, (ppid, state) in table.items():
            if ppid == parent and state != "Z":
                todo.append(child)
                cmd = _cmdline(child)
                if "fixloop-sandbox-" in cmd and "start.kernel" in cmd:
                    found[child] = os.path.dirname(cmd.split(" -f ", 1)[1].split()[0])
    return found


def _ancestry(pid: int) -> list[str]:
    """`pid state cmd` of a process and its ancestors: says which link of a sandbox's chain survived."""
    table, chain = _processes(), []
    while pid in table and pid > 1 and len(chain) < 8:
        ppid, state = table[pid]
        chain.append(f"{pid} {state} {_cmdline(pid)[:60]}")
        pid = ppid
    return chain


def alive(pid: int) -> bool:
    entry = _processes().get(pid)
    return entry is not None and entry[1] != "Z"  # a zombie has exited; only its parent has not reaped it


def wait_until(predicate, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return predicate()


@pytest.mark.parametrize("confinement", ["none", "auto"])
def test_killing_the_user_kernel_leaves_no_sandbox_process(confinement):
    k = UserKernel()
    try:
        run = k.run("import jupyter_fixloop\n"
                    "_r = jupyter_fixloop.fix('x = 1', checks=['x == 1'], "
                    f"confinement={confinement!r})\nprint(_r.status)")
        assert run.text.strip() == "passed", run.text
        assert wait_until(lambda: len(sandboxes_of(k.pid())) >= 1)  # the pool keeps one warm
        before = sandboxes_of(k.pid())
        tag = owner_tag(k.pid())
        left = glob.glob(os.path.join(sandboxes_root(), f"fixloop-sandbox-{tag}-*"))
        assert left  # its sandboxes' directories, listed while it lives (another process may sweep them after)
        os.kill(k.pid(), signal.SIGKILL)
        wait_until(lambda: not any(alive(pid) for pid in before))
        after = {pid: _ancestry(pid) for pid in before if alive(pid)}
        assert len(before) >= 1 and after == {}
        leftovers.sweep()  # a killed kernel cannot clean up: its directories stay until a sweep
        assert not any(os.path.exists(p) for p in left)
    finally:
        k.kc.stop_channels()
        process = k.km.provisioner.process if k.km.provisioner else None
        if process is not None:
            process.wait(timeout=30)  # reap the killed kernel (else Popen.__del__ warns later)
        k.km.cleanup_resources()


@pytest.mark.parametrize("confinement", ["none", "auto"])
def test_a_sandbox_exits_when_its_lifeline_frees_though_its_parents_live(confinement):
    """What covers bwrap's start-up gap (its init arms its death signal only after the clone):
    the kernel watches a lock that only the user's process holds, here released by hand."""
    box = runtime.run_sync(Sandbox.start(SandboxSettings(confinement=confinement)))
    try:
        mine = [pid for pid, where in sandboxes_of(os.getpid()).items() if where == box.dir]
        assert mine
        os.close(box._lifeline)
        box._lifeline = None
        assert wait_until(lambda: not any(alive(pid) for pid in mine), timeout=15)
    finally:
        runtime.run_sync(box.close())


def test_a_stopped_fork_of_a_sandbox_kernel_dies_with_the_kernel():
    """A host that stops a kernel's forks (judge, twin) to kill them and is killed in between leaves
    them stopped: no lifeline or pipe reaches a stopped process, its death signal does."""
    box = runtime.run_sync(Sandbox.start(SandboxSettings(confinement="none")))
    try:
        assert runtime.run_sync(box.arm(["x == 1"]))  # forks the run's judge
        kernel = box.km.provisioner.process.pid
        forks = _children(kernel)
        assert forks
        for pid in forks:
            os.kill(pid, signal.SIGSTOP)
        os.kill(kernel, signal.SIGKILL)
        assert wait_until(lambda: not any(alive(pid) for pid in forks), timeout=15), {
            pid: _ancestry(pid) for pid in forks if alive(pid)}
    finally:
        runtime.run_sync(box.close())


def _children(pid: int) -> set[int]:
    return {child for child, (parent, state) in _processes().items() if parent == pid and state != "Z"}


IDLE_SCRIPT = """
import sys, jupyter_fixloop
for _ in range(2):
    print(jupyter_fixloop.fix("x = 1", checks=["x == 1"], pool_idle=2.0).status, flush=True)
    sys.stdin.readline()
"""


def test_idle_kernels_are_closed_after_pool_idle_and_come_back_with_the_next_loop():
    with subprocess.Popen([sys.executable, "-c", IDLE_SCRIPT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True) as proc:
        try:
            assert proc.stdout.readline().strip() == "passed"
            assert wait_until(lambda: len(sandboxes_of(proc.pid)) >= 2)  # the pool of 2, warm
            assert wait_until(lambda: not sandboxes_of(proc.pid), timeout=30), {
                p: _ancestry(p) for p in sandboxes_of(proc.pid)
            }  # 2 s without a loop
            proc.stdin.write("\n")
            proc.stdin.flush()
            assert proc.stdout.readline().strip() == "passed"  # the next loop starts kernels again
            assert wait_until(lambda: len(sandboxes_of(proc.pid)) >= 1)
            proc.stdin.write("\n")
            proc.stdin.flush()
            assert proc.wait(timeout=120) == 0
        finally:
            if proc.poll() is None:
                proc.kill()


FOLDERS_SCRIPT = """
import os, sys, tempfile, jupyter_fixloop
for _ in range(3):  # three folders: three sets of sandbox settings, three pools
    os.chdir(tempfile.mkdtemp())
    print(jupyter_fixloop.fix("x = 1", checks=["x == 1"]).status, flush=True)
sys.stdin.readline()
"""


def test_only_the_two_most_recent_pools_keep_idle_kernels():
    """A batch over many folders (or a test process) once kept two kernels per folder for `pool_idle`."""
    with subprocess.Popen([sys.executable, "-c", FOLDERS_SCRIPT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True) as proc:
        try:
            assert [proc.stdout.readline().strip() for _ in range(3)] == ["passed"] * 3
            def kernels():  # a confined kernel is several processes: one sandbox dir each
                return len(set(sandboxes_of(proc.pid).values()))

            assert wait_until(lambda: kernels() >= 4)  # the two newest pools, warm
            assert wait_until(lambda: kernels() == 4, timeout=30), sandboxes_of(proc.pid)
            time.sleep(3)  # the oldest pool's kernels do not come back
            assert kernels() == 4
            proc.stdin.write("\n")
            proc.stdin.flush()
            assert proc.wait(timeout=120) == 0
        finally:
            if proc.poll() is None:
                proc.kill()


SCRIPT = """
import sys, jupyter_fixloop
result = jupyter_fixloop.fix("x = 1", checks=["x == 1"])
print(result.status, flush=True)
sys.stdin.readline()  # the test looks at the sandboxes, then lets this process exit normally
"""


def test_sandboxes_are_shut_down_at_exit():
    with subprocess.Popen([sys.executable, "-c", SCRIPT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True) as proc:
        try:
            assert proc.stdout.readline().strip() == "passed"
            assert wait_until(lambda: len(sandboxes_of(proc.pid)) >= 1)
            before = sandboxes_of(proc.pid)
            proc.stdin.write("\n")
            proc.stdin.flush()
            assert proc.wait(timeout=120) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
    # closed by the atexit hook, not just orphaned: Sandbox.close removes the sandbox's directory
    assert [d for d in before.values() if os.path.exists(d)] == []
    assert wait_until(lambda: not any(alive(pid) for pid in before))


def test_a_new_pool_sweeps_the_leftovers_of_a_dead_owner_and_keeps_a_live_ones(tmp_path):
    gone = subprocess.run([sys.executable, "-c",
                           "from jupyter_fixloop.sandbox.leftovers import owner_tag; print(owner_tag())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    snapshots = ram_root()
    snapshot_dir = (lambda tag: os.path.join(snapshots, f"loop-{tag}-t")) if snapshots else (
        lambda tag: os.path.join(tempfile.gettempdir(), f"fixloop-loop-{tag}-t"))
    dead = [os.path.join(sandboxes_root(), f"fixloop-sandbox-{gone}-t"), snapshot_dir(gone)]
    live = [os.path.join(sandboxes_root(), f"fixloop-sandbox-{owner_tag()}-t"), snapshot_dir(owner_tag())]
    for path in dead + live:
        os.makedirs(os.path.join(path, "home"))
        with open(os.path.join(path, "snapshot-1.bin"), "w") as f:
            f.write("x")
    try:
        async def start():
            pool_for(SandboxSettings(cwd=str(tmp_path), confinement="none"), 0)

        runtime.run_sync(start())
        assert [os.path.exists(p) for p in dead + live] == [False, False, True, True]
    finally:
        for path in live:
            shutil.rmtree(path, ignore_errors=True)


def _deep_tree(top: str, depth: int = 3000) -> None:
    """`top/d/d/.../d/f` `depth` levels down: deeper than Python's recursion limit, longer than PATH_MAX."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        os.close(os.open("f", os.O_WRONLY | os.O_CREAT, dir_fd=fd))
    finally:
        os.close(fd)


def test_a_3000_deep_tree_left_by_a_dead_owner_is_swept_and_the_sweep_never_raises(tmp_path):
    """L01: such a tree made the sweep raise RecursionError, and with it `%load_ext` and every fix()."""
    gone = subprocess.run([sys.executable, "-c",
                           "from jupyter_fixloop.sandbox.leftovers import owner_tag; print(owner_tag())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    dead = os.path.join(sandboxes_root(), f"fixloop-sandbox-{gone}-deep")
    os.makedirs(os.path.join(dead, "home"))
    _deep_tree(os.path.join(dead, "home"))
    os.symlink(str(tmp_path), os.path.join(dead, "home", "link"))  # never followed
    (tmp_path / "kept.txt").write_text("x")
    try:
        assert leftovers.sweep() >= 1
        assert not os.path.exists(dead)
        assert (tmp_path / "kept.txt").exists()
    finally:
        leftovers.remove_tree(dead)


def test_a_3000_deep_tree_a_candidate_writes_is_removed_with_its_sandbox(tmp_path, fake_model):
    """L01 through fix(): the candidate builds the tree in its home; the loop ends normally, the
    sandbox directory is gone, and the next fix() runs."""
    deep = ("import os\nos.chdir(os.environ['HOME'])\nfor _ in range(3000):\n    os.mkdir('d')\n    os.chdir('d')\n"
            "open('f', 'w').write('x' * 1000)\nn = 1\nx = n + 1\n")
    server = fake_model(f"```python\n{deep}```", f"```python\n{deep}```")
    before = set(glob.glob(os.path.join(sandboxes_root(), f"fixloop-sandbox-{owner_tag()}-*")))
    for confinement in ("none", "bwrap"):
        result = fix("n = 1\nx = n\n", checks=["x == 2"], namespace={},
                     model="openai/scripted", api_base=server.url, max_rounds=1, cwd=str(tmp_path),
                     confinement=confinement, pool_size=0, rules=False)
        assert result.status == "fixed", (confinement, result.reason, [r.receipt.text for r in result.rounds])

    async def settle():
        for pool in list(pool_mod._pools.values()):
            await pool.settle()

    runtime.run_sync(settle())
    assert set(glob.glob(os.path.join(sandboxes_root(), f"fixloop-sandbox-{owner_tag()}-*"))) <= before


def _gone_tag() -> str:
    return subprocess.run([sys.executable, "-c",
                           "from jupyter_fixloop.sandbox.leftovers import owner_tag; print(owner_tag())"],
                          capture_output=True, text=True, check=True).stdout.strip()


def test_the_cgroups_of_a_dead_owner_are_swept():
    """A sandbox's pids and memory cgroups carry its owner's tag: those of a dead owner are removed."""
    from jupyter_fixloop.sandbox import cgroups

    name = f"/fixloop-sandbox-{_gone_tag()}-cg"
    made = cgroups.make(name, 4, 2**30)
    if not made:
        pytest.skip("no cgroup can be made here (root on cgroup v1, or a delegated cgroup v2 memory controller)")
    try:
        assert all(os.path.isdir(p) for p in made)
        leftovers.sweep()
        assert [p for p in made if os.path.exists(p)] == []
    finally:
        cgroups.release(name)


def test_load_ext_sweeps_the_leftovers_of_a_dead_owner(kernel):
    dead = os.path.join(sandboxes_root(), f"fixloop-sandbox-{_gone_tag()}-ext")
    os.makedirs(os.path.join(dead, "home"))
    try:
        assert kernel.run("%reload_ext jupyter_fixloop").ok
        assert not os.path.exists(dead)
    finally:
        shutil.rmtree(dead, ignore_errors=True)
