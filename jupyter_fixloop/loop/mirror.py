"""The user's namespace as a loop reads it and shares it with its sandboxes.

The namespace lives in the user's kernel (where the loop runs: it is asked of itself, through the wire's
`namespace.*` entries, `wire.local`) or in batch mode's notebook kernel (a `Snapshot`, which brings what
that kernel read of it). `Mirror` writes the names a loop shares as a snapshot for its sandboxes.
"""

from __future__ import annotations

import os
import types

from ..kernel import snapshot as snapshots, wire
from ..kernel.snapshot import Snapshot
from ..model.variables import Variable, variables_from_json
from ..sandbox.leftovers import owner_tag


def shared(namespace, **share) -> frozenset[str]:
    """The user's variables a loop shares with its sandboxes (kernel/sharing.py `shared_names`, its keywords
    in `share`): never a candidate's choice."""
    if not isinstance(namespace, dict):
        return frozenset()
    return wire.local("namespace.shared", namespace, **share)


def readable(namespace, variables: tuple[Variable, ...], policy: str) -> dict[str, Variable]:
    """The user's values a candidate may read, each shared the first time one does (share_policy "data"):
    the data `variables` describes whose functions read no withheld global."""
    if policy != "data" or not isinstance(namespace, dict):
        return {}
    described = {v.name: v for v in variables}
    return {name: v for name, v in described.items()
            if all(n in described for n in snapshots.reachable({name}, namespace))}


def unshared_note(name: str) -> str:
    """The receipt line for a candidate that reads a name the loop does not share: the name, never its value."""
    return (f"`{name}` is in your namespace but not shared with the sandbox; add --share {name} "
            "(fix(share=...), c.FixLoop.share)")


def variables(namespace, policy: str, shared: frozenset[str]) -> tuple[Variable, ...]:
    """What the model is told of the user's values: every data value ("data"), or the shared ones ("named");
    from batch mode's notebook kernel, what its snapshot carries."""
    if isinstance(namespace, Snapshot):
        return variables_from_json(namespace.variables)  # typed, or as JSON from a notebook kernel
    if not isinstance(namespace, dict):
        return ()
    return variables_from_json(wire.local("namespace.describe", namespace, None if policy == "data" else shared))


def secrets(namespace) -> tuple[str, ...]:
    """The texts of the user's secrets, replaced wherever a model would read them (model/scrub.py): every
    secret of the namespace, shared with a sandbox or not (a cell may spell one out, a candidate print one).
    Batch mode's namespace lives in the notebook's kernel: its snapshot brings them."""
    if isinstance(namespace, Snapshot):
        return tuple(namespace.secrets)
    return tuple(wire.local("namespace.secrets", namespace, list(namespace))) if isinstance(namespace, dict) else ()


def namespace_names(namespace) -> frozenset[str]:
    """The names of the user's variables (mirrored or not)."""
    if isinstance(namespace, Snapshot):
        return frozenset(namespace.names) | frozenset(namespace.modules) | frozenset(namespace.skipped)
    if isinstance(namespace, dict):
        return frozenset(k for k in namespace if isinstance(k, str))
    return frozenset()


def collections(variables) -> frozenset[str]:
    """The names whose values are collections of data (a frame, a series, an array or index, a list, dict,
    tuple or set), by the form their description gives; not single values."""
    return frozenset(v.name for v in variables if v.form in ("frame", "series", "array", "collection"))


def module_names(namespace) -> frozenset[str]:
    """Those of the user's names that are modules (`pd`, `np`)."""
    if isinstance(namespace, Snapshot):
        return frozenset(namespace.modules)
    if isinstance(namespace, dict):
        return frozenset(k for k, v in namespace.items() if isinstance(k, str) and isinstance(v, types.ModuleType))
    return frozenset()


class Mirror:
    """The snapshot of the names a loop shares, written before any candidate runs: one part for the
    cell, and one more when the original run's typo shares a close match. A candidate that reads a
    name of the user's namespace outside the set gets a receipt line naming it, not its value. Every
    part is taken from the namespace as it is: the user's kernel is blocked on the magic for the
    whole loop, so all parts show the state at the moment the magic ran."""

    def __init__(self, namespace, size_cap: int, shared: frozenset[str], readable: dict[str, Variable] | None = None):
        self.ns = namespace
        self.workdir = snapshots.scratch_dir(f"loop-{owner_tag()}-")
        self.size_cap = size_cap
        self.shared = shared
        self.readable = readable or {}
        self.current: Snapshot = snapshots.EMPTY
        self.names: frozenset[str] = frozenset()
        self.count = 0

    def share(self, names: frozenset[str]) -> None:
        self.shared |= names

    def share_read(self, code: str, checks: tuple[str, ...]) -> tuple[str, ...]:
        """Share the data values `code` reads that are not shared yet (share_policy "data"); a receipt
        line for each: `euro12 (DataFrame 16×35) shared: the candidate reads it`."""
        wanted = snapshots.free_names(code)
        for check in checks:
            wanted |= snapshots.free_names(check)
        new = sorted(n for n in wanted if n in self.readable and n not in self.shared)
        self.shared |= frozenset(new)
        return tuple(f"{self.readable[n].line()} shared: the candidate reads it" for n in new)

    def snapshot(self) -> Snapshot:
        if isinstance(self.ns, Snapshot):
            return self.ns
        if not isinstance(self.ns, dict):
            return snapshots.EMPTY
        new = frozenset(n for n in self.shared if n in self.ns) - self.names
        if not new and self.count:
            return self.current
        self.count += 1
        path = os.path.join(self.workdir, f"snapshot-{self.count}.bin")
        self.current = snapshots.write_snapshot(self.ns, new, path, self.size_cap, base=self.current)
        self.names |= new
        return self.current

    def modules(self) -> dict[str, str]:
        """The names the user's namespace binds to modules (`{"pd": "pandas"}`), all shared."""
        return dict((self.ns if isinstance(self.ns, Snapshot) else self.current).modules)

    def unshared_notes(self, code: str, checks: tuple[str, ...]) -> tuple[str, ...]:
        """One line per name `code` reads that the user has but the loop does not share."""
        if isinstance(self.ns, Snapshot):
            held = frozenset(self.ns.unshared)
        elif isinstance(self.ns, dict):
            held = frozenset(n for n in self.ns if isinstance(n, str)) - self.shared
        else:
            return ()
        wanted = snapshots.free_names(code)
        for check in checks:
            wanted |= snapshots.free_names(check)
        # the sandbox kernel has its own `In`, `Out`, `get_ipython`: those are not the user's to share
        held -= set(self.current.names) | set(self.current.modules) | set(self.current.skipped) | snapshots.IGNORED
        return tuple(unshared_note(n) for n in sorted(wanted & held))

    def cleanup(self) -> None:
        snapshots.remove_scratch(self.workdir)
