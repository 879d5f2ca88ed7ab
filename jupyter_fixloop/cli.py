"""`jupyter-fixloop` (also `jupyter fixloop`): one entry point, one module per subcommand.

The product's subcommands are `COMMANDS`; another distribution adds its own through the entry point
group `PLUGINS` (each entry point names a `(module, help)` pair), as the bench does (`bench/`)."""

from __future__ import annotations

import importlib
import sys
from importlib.metadata import entry_points

COMMANDS = {
    "demo": ("jupyter_fixloop.batch.demo", "run a demo notebook headless and print what fixloop fixed"),
    "run": ("jupyter_fixloop.batch.cli", "repair a whole notebook and write the patched copy and a report"),
}
PLUGINS = "jupyter_fixloop.commands"
BENCH = ("bench", "speed", "receipts")  # the bench distribution's, named when it is not installed
GET_BENCH = "the benches are a distribution of their own: `python -m pip install -e bench/` in the repository's clone"


def commands() -> dict[str, tuple[str, str]]:
    """Every subcommand: the product's, then each installed distribution's (entry points of `PLUGINS`)."""
    found = dict(COMMANDS)
    for point in entry_points(group=PLUGINS):
        found.setdefault(point.name, tuple(point.load()))
    return found


def usage(table: dict[str, tuple[str, str]] | None = None) -> str:
    table = commands() if table is None else table
    lines = ["usage: jupyter-fixloop COMMAND [options]", "", "commands:"]
    width = max(map(len, table))
    lines += [f"  {name:<{width}}  {help_}" for name, (_, help_) in table.items()]
    lines += ["", "`jupyter-fixloop COMMAND --help` for a command's options."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    table = commands()
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(usage(table))
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name not in table:
        if name in BENCH:
            print(f"jupyter-fixloop {name}: {GET_BENCH}", file=sys.stderr)
            return 2
        print(f"jupyter-fixloop: unknown command {name!r}\n\n{usage(table)}", file=sys.stderr)
        return 2
    module = importlib.import_module(table[name][0])
    return int(module.main(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
