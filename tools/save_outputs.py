"""Give real notebooks the outputs their authors saw: run each once, errors allowed, under the
Python that runs this script (a side venv with the notebook's own era of pandas), images stripped.

    python -m venv /tmp/oldpd
    /tmp/oldpd/bin/pip install "pandas==1.5.3" "numpy<2" matplotlib ipykernel nbclient nbformat
    /tmp/oldpd/bin/python tools/save_outputs.py ../shared/real-notebooks /tmp/savednb

Every notebook under SRC is run in a scratch copy of SRC, with its own folder as the working directory
(so `examples/` resolves and what it writes is thrown away), and written to the same place under
DEST; the other files of SRC are copied beside it.
"""

import shutil
import sys
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient

IMAGES = ("image/png", "image/jpeg", "image/svg+xml")


def strip_images(nb) -> None:
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        kept = []
        for out in cell.get("outputs", []):
            data = out.get("data")
            if data is not None:
                for mime in IMAGES:
                    data.pop(mime, None)
                if not data:
                    continue
            kept.append(out)
        cell.outputs = kept


def main(src: str, dest: str) -> int:
    src_dir, dest_dir = Path(src).resolve(), Path(dest).resolve()
    for path in sorted(src_dir.rglob("*")):  # the other files (no dirs_exist_ok: Python 3.7 runs this too)
        rel = path.relative_to(src_dir)
        if path.is_file() and path.suffix != ".ipynb" and not any(p.startswith(".") for p in rel.parts):
            (dest_dir / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest_dir / rel)
    for path in sorted(src_dir.rglob("*.ipynb")):
        rel = path.relative_to(src_dir)
        if any(part.startswith(".") for part in rel.parts):
            continue
        out = dest_dir / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        nb = nbformat.read(path, as_version=4)
        with tempfile.TemporaryDirectory(prefix="save-outputs-") as scratch:
            work = Path(shutil.copytree(src_dir, Path(scratch) / "src"))
            client = NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True,
                                    resources={"metadata": {"path": str((work / rel).parent)}})
            client.execute()
        strip_images(nb)
        nbformat.write(nb, out)
        errors = sum(any(o.get("output_type") == "error" for o in c.get("outputs", [])) for c in nb.cells
                     if c.cell_type == "code")
        print(f"{out}: {errors} cells raised", flush=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
