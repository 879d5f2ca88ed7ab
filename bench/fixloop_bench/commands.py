"""The subcommands this distribution adds to `jupyter-fixloop` (entry point group `jupyter_fixloop.commands`,
read by jupyter_fixloop/cli.py): each is (the module whose `main(argv)` runs it, its line of the usage)."""

bench = ("fixloop_bench.fixrate", "measure the fix rate on a set of broken cells")
speed = ("fixloop_bench.speed", "measure sandbox round overhead, snapshot speed and import time")
receipts = ("fixloop_bench.receipts", "measure receipt size against raw tracebacks, and what receipts keep")
