"""Files as the working directory spells them: a path the code names with other letter cases than the file has
(a notebook written where the file system ignores case, macOS' or Windows'). Read in the kernel (kernel/facts.py's
fact for a FileNotFoundError) and by the host (batch mode's words for a file not there)."""

from __future__ import annotations

import os


def case_twin(path: str, cwd: str) -> str | None:
    """`path` as it is spelled on this machine when each part of it is there with other letter cases only
    (`../data/diamonds.csv` -> `../Data/diamonds.csv`), or None: not there at all, or there as written."""
    here, parts, spelled = cwd, path.replace("\\", "/").split("/"), []
    if parts and parts[0] == "":
        here, parts, spelled = "/", parts[1:], [""]
    for part in parts:
        if part in ("", ".", "..") or os.path.exists(os.path.join(here, part)):
            found = part
        else:
            try:
                found = next((n for n in sorted(os.listdir(here)) if n.lower() == part.lower()), None)
            except OSError:
                return None
            if found is None:
                return None
        spelled.append(found)
        here = os.path.join(here, found)
    twin = "/".join(spelled)
    return twin if twin != path and os.path.exists(os.path.join(cwd, twin)) else None
