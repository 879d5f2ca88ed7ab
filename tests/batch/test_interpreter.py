"""Batch mode judges a repair in the notebook kernel's own Python: its sandboxes run the kernelspec's
interpreter when it imports fixloop's kernel wire, and the run says so when it does not."""

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

from jupyter_fixloop.batch import cli as batch_cli
from jupyter_fixloop.batch.run import judged_in, kernel_python

# the kernel needs its spec's environment to import fixloop: the sandboxes' (an allow-list) lacks it
BLOCKER = ("import os, sys; exec(\"class _Block:\\n def find_spec(self, name, path=None, target=None):\\n"
           "  if name.split('.')[0] == 'jupyter_fixloop': raise ImportError('blocked here')\\n"
           "sys.meta_path.insert(0, _Block())\") if not os.environ.get('FIXLOOP_TEST_KERNEL_ENV') else None\n")


def make_kernel(tmp_path, monkeypatch, name: str, files: dict, env: dict | None = None) -> str:
    """A venv over this Python (it sees fixloop and pandas) with `files` in its own site-packages, and a
    kernelspec `name` for it in a JUPYTER_PATH of its own; returns the venv's python."""
    venv = tmp_path / name
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert site.startswith(str(venv)) and site != sysconfig.get_paths()["purelib"]
    for file, text in files.items():
        Path(site, file).write_text(text)
    spec = tmp_path / "share" / "kernels" / name
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"], "display_name": name,
        "language": "python", **({"env": env} if env else {})}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "share"))
    return python


def write_notebook(path, *cells) -> str:
    nb = new_notebook(cells=[new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(path))
    return str(path)


def test_a_repair_is_judged_in_the_kernels_own_python(tmp_path, monkeypatch, capsys):
    python = make_kernel(tmp_path, monkeypatch, "markervenv",
                         {"fixmarker.py": "import sys\n\ndef where():\n    return 'marker in ' + sys.prefix\n"})
    assert kernel_python("markervenv") == python
    assert judged_in("markervenv") == (python, "")
    folder = tmp_path / "nb"
    folder.mkdir()
    src = write_notebook(folder / "marker.ipynb",
                         "import pandas as pd\ns = pd.Series([1, 2], index=['a', 'b'])",
                         "import fixmarker\nprint(fixmarker.where())\nfor k, v in s.iteritems():\n    print(k, v)")
    out, report = str(folder / "marker.out.ipynb"), str(folder / "marker.md")

    code = batch_cli.main([src, "-o", out, "--report", report, "--kernel", "markervenv"])

    printed = capsys.readouterr()
    assert code == 3, printed  # runs, unverified: no check, no saved output
    cell = nbformat.read(out, as_version=4).cells[1]
    assert "s.items()" in cell.source
    record = cell.metadata["fixloop"]
    assert record["status"] == "unverified" and record["decision"] == "accepted"
    receipt = record["rounds"][0]["receipt"]
    assert receipt["kind"] == "ok", receipt  # before: ModuleNotFoundError in fixloop's Python
    assert f"marker in {tmp_path / 'markervenv'}" in json.dumps(receipt), receipt  # judged in the kernel's
    assert "repairs were judged in" not in printed.out + Path(report).read_text()


def test_a_kernel_whose_python_cannot_judge_keeps_fixloops_and_says_so(tmp_path, monkeypatch, capsys):
    python = make_kernel(tmp_path, monkeypatch, "plainvenv", {"zz_block.pth": BLOCKER},
                         env={"FIXLOOP_TEST_KERNEL_ENV": "1"})
    said = (f"repairs were judged in fixloop's Python ({sys.executable}), not in the kernel's ({python}): "
            "install jupyter-fixloop in the kernel's environment to judge them there")
    assert judged_in("plainvenv") == ("", said)
    folder = tmp_path / "nb"
    folder.mkdir()
    src = write_notebook(folder / "plain.ipynb", "import pandas as pd\ns = pd.Series([1, 2], index=['a', 'b'])",
                         "for k, v in s.iteritems():\n    print(k, v)")
    out, report = str(folder / "plain.out.ipynb"), str(folder / "plain.md")

    code = batch_cli.main([src, "-o", out, "--report", report, "--kernel", "plainvenv"])

    printed = capsys.readouterr()
    assert code == 3, printed  # it still runs: the repair judged here, and said so once
    assert "s.items()" in nbformat.read(out, as_version=4).cells[1].source
    assert printed.out.count(said) == 1, printed.out
    assert f"- {said}" in Path(report).read_text()


def test_a_kernel_that_is_not_a_python_or_is_this_one_changes_nothing(tmp_path, monkeypatch):
    spec = tmp_path / "share" / "kernels"
    for name, argv, language in (("this", ["python3", "-m", "ipykernel_launcher"], "python"),
                                 ("other", ["/bin/sh", "-c", "exit 1"], "sh")):
        (spec / name).mkdir(parents=True)
        (spec / name / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": name,
                                                             "language": language}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "share"))
    assert kernel_python("this") == sys.executable and judged_in("this") == ("", "")
    assert kernel_python("other") is None and judged_in("other") == ("", "")
    assert kernel_python("missing") is None and judged_in("missing") == ("", "")
    assert os.path.isfile(sys.executable)
