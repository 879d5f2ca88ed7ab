"""Inside a gateway kernel: a snapshot file arriving in chunks over the kernel protocol.

There is no shared filesystem with a gateway, so the user's side sends each snapshot part as
base64 chunks of execute requests; the file is written to the kernel's own temporary directory,
loaded (copy-on-write map), and unlinked.
"""

from __future__ import annotations

import base64
import os
import tempfile


def begin() -> str:
    """A new empty file for one snapshot part; its path is what `append` and the loader take."""
    fd, path = tempfile.mkstemp(prefix="fixloop-snapshot-", suffix=".bin")
    os.close(fd)
    return path


def append(path: str, chunk: str) -> None:
    with open(path, "ab") as f:
        f.write(base64.b64decode(chunk))


def size(path: str) -> int:
    return os.path.getsize(path)


def discard(path: str) -> None:
    """Unlink a loaded part (its map stays valid) or a partial one."""
    try:
        os.unlink(path)
    except OSError:
        pass
