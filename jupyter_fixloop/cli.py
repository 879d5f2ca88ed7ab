"""`jupyter-fixloop` (also `jupyter fixloop`): one entry point, one module per subcommand."""

from __future__ import annotations

import importlib
import sys

COMMANDS = {
    "demo": ("jupyter_fixloop.batch.demo", "run a demo notebook headless and print what fixloop fixed"),
    "run": ("jupyter_fixloop.batch.cli", "repair a whole notebook and write the patched copy and a report"),
    "bench": ("jupyter_fixloop.bench.fixrate", "measure the fix rate on a set of broken cells"),
    "speed": ("jupyter_fixloop.bench.speed", "measure sandbox round overhead, snapshot speed and import time"),
    "receipts": ("jupyter_fixloop.bench.receipts",
                 "measure receipt size against raw tracebacks, and what receipts keep"),
}


def usage() -> str:
    lines = ["usage: jupyter-fixloop COMMAND [options]", "", "commands:"]
    width = max(map(len, COMMANDS))
    lines += [f"  {name:<{width}}  {help_}" for name, (_, help_) in COMMANDS.items()]
    lines += ["", "`jupyter-fixloop COMMAND --help` for a command's options."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(usage())
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"jupyter-fixloop: unknown command {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[name][0])
    return int(module.main(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
