"""Jupyter server configuration for the Galata UI tests (never use it elsewhere).

Opens JupyterLab on 127.0.0.1 without token in a temporary root directory.
"""
import os
import tempfile

from jupyterlab.galata import configure_jupyter_server

# the kernels' loop history goes to a scratch folder, never the machine's Jupyter data dir
os.environ.setdefault("FIXLOOP_DATA_DIR", tempfile.mkdtemp(prefix="fixloop-ui-history-"))

configure_jupyter_server(c)  # noqa: F821
c.ServerApp.ip = "127.0.0.1"  # noqa: F821
c.ServerApp.port = int(os.environ.get("FIXLOOP_UI_PORT", "8899"))  # noqa: F821
c.LabApp.news_url = None  # noqa: F821
c.LabApp.check_for_updates_class = "jupyterlab.NeverCheckForUpdate"  # noqa: F821
c.ServerApp.allow_root = True  # noqa: F821  (CI machines run as root)
