"""What the notebook's author saved, read cell by cell: outputs that can check a fix, errors the author
meant, and pandas' warning that an assignment never reached the frame.

A saved output is a check for a failing cell when the cell's own code can show it again (no random
draws without a seed, no clock, no environment) and what it reads was made here as it was when the
notebook was saved. That is decided per name, as the notebook runs: a cell that ran here without
showing its saved output again, or that draws random numbers unseeded, reads the clock or the
environment, leaves its names in doubt; a cell that reads a name in doubt passes the doubt on to the
names it makes, unless it shows its saved output again; a cell that was not fixed leaves its names in
doubt. One random cell no longer takes the checks of the whole notebook below it.
"""

from __future__ import annotations

import difflib
import re

from ..receipt import saved_check, saved_output, seeds, unrepeatable

MISSING_CUTOFF = 0.6  # how near a misspelt name's repair may be (kernel/sharing.py shares such matches)
CHAINED = re.compile(r"ChainedAssignmentError: ?([^\n]*)")
"""pandas 3's warning that a chained assignment (`df['a'][mask] = v`) never updates the frame."""


class SavedOutputs:
    """The saved outputs of one notebook (`original`, as it was read), and the names whose value may
    differ from the author's run (`doubt`: name -> why)."""

    def __init__(self, original, enabled: bool = True):
        self.original = original
        self.enabled = enabled
        self.doubt: dict[str, str] = {}
        self.seeded = False

    def saved(self, number: int):
        """The text cell `number` showed when the notebook was saved (a SavedOutput), or None."""
        return saved_output(self._outputs(number))

    def check(self, number: int, code: str, reads, missing=()) -> tuple[object | None, str]:
        """(the saved output, "") when it can check a fix of cell `number` running `code`, which reads
        `reads`; else (None, why not, in words). `missing`: names its run found undefined (a typo): a
        repair reads their close matches (as the loop shares them, kernel/sharing.py), so those count too."""
        if not self.enabled:
            return None, "saved outputs not used (--no-saved-outputs)"
        saved = self.saved(number)
        if saved is None:
            return None, "no output was saved in the notebook to check it against"
        if unrepeatable(code):
            return None, f"its saved output is not a check: the cell {unrepeatable(code)}"
        near = {m for typo in missing for m in difflib.get_close_matches(typo, sorted(self.doubt), n=3,
                                                                          cutoff=MISSING_CUTOFF)}
        name = next((n for n in sorted(set(reads) | near) if n in self.doubt), None)
        if name is not None:
            return None, f"its saved output is not a check here: it reads `{name}`, not as saved ({self.doubt[name]})"
        return saved, ""

    def differs(self, number: int, code: str, reads, outputs) -> list[str]:
        """The lines (`-` saved, `+` now, at most 4) where cell `number`, which ran `code` and showed
        `outputs`, shows another output than the one saved, when that saved output is a check for it
        (`check`: asked before `ran` takes the names it defines into doubt); [] when it shows the same,
        or when its saved output cannot tell."""
        saved, _ = self.check(number, code, reads)
        if saved is None:
            return []
        same, _, diff = saved_check(saved_output(outputs) or "", None, saved)
        return [line.strip() for line in diff if line[:1] in "+-"][:4] if same is False else []

    def agrees(self, number: int, code: str, reads, outputs) -> bool:
        """Whether cell `number` shows the output saved in the notebook, where that saved output is a check
        for it (`check`): a later cell that checks the values of what a fix made."""
        saved, _ = self.check(number, code, reads)
        return saved is not None and saved_check(saved_output(outputs) or "", None, saved)[0] is True

    def ran(self, number: int, code: str, reads, defines, outputs, checked: bool = False) -> None:
        """Cell `number` ran `code` in the notebook's kernel and showed `outputs`: are the names it
        `defines` what they were when the notebook was saved? `checked`: its saved output verified it."""
        self.seeded = self.seeded or seeds(code)
        saved = self.saved(number) if self.enabled else None
        shown, detail = (saved_check(saved_output(outputs) or "", None, saved)[:2] if saved is not None
                         else (False, ""))
        why = ""
        if not (checked or shown):
            inherited = next((self.doubt[n] for n in sorted(reads) if n in self.doubt), "")
            if inherited:
                why = inherited
            elif shown is None:
                why = f"cell {number}'s saved output cannot be compared here ({detail})"
            elif saved is not None:
                why = f"cell {number} shows another output than the one saved"
            elif unrepeatable(code, self.seeded):
                why = f"cell {number} {unrepeatable(code, self.seeded)}"
        for name in defines:
            if why:
                self.doubt[name] = why
            else:
                self.doubt.pop(name, None)

    def distrust(self, names, why: str) -> None:
        """These names are not what the author's run made (`why`: "cell 3 was not fixed")."""
        for name in names:
            self.doubt.setdefault(name, why)

    def example(self, number: int, error: str) -> str:
        """The words for a cell whose saved output is the same kind of error as `error` ("KeyError: 'x'"):
        the author's example, left as written; "" when it is not one."""
        if not self.enabled:
            return ""
        ename = error.split(":", 1)[0].strip()
        saved = [o for o in self._outputs(number) if o.get("output_type") == "error"]
        if not ename or not saved or saved[0].get("ename") != ename:
            return ""
        return (f"the saved output shows the same {ename}; left as written (the %%fixloop magic or the Fix button "
                "repairs it on request)")

    def _outputs(self, number: int) -> list:
        cells = self.original.cells
        return cells[number - 1].get("outputs", []) if 0 < number <= len(cells) else []


def chained_warning(outputs) -> str:
    """pandas' ChainedAssignmentError in a cell's outputs ("ChainedAssignmentError: A value is being set
    ..."), or "" when there is none."""
    for out in outputs or ():
        text = out.get("text", "") if out.get("output_type") == "stream" else ""
        m = CHAINED.search("".join(text) if isinstance(text, list) else text)
        if m:
            return f"ChainedAssignmentError: {m.group(1).strip()}"
    return ""
