"""One error family: the library raises these; the magic and the CLI format them at the edge."""


class FixloopError(Exception):
    """Base of every error jupyter-fixloop raises on purpose."""


class UsageError(FixloopError):
    """The caller asked for something that cannot be done; the message says what to do instead."""


class SandboxError(FixloopError):
    """A sandbox kernel could not be started or talked to."""


class ModelError(FixloopError):
    """The model could not be reached or answered with an error (auth, quota, network)."""


class KernelError(FixloopError):
    """Batch mode: the notebook's kernel could not be started, or cannot import jupyter_fixloop."""


class KernelDied(KernelError):
    """Batch mode: the notebook's kernel died while running a cell (a crash, os._exit, out of memory)."""


class HelperFailed(KernelError):
    """Batch mode: one of fixloop's helpers raised in the notebook's kernel (not an import: the kernel runs
    them): the cell it was for is left as plain Jupyter leaves it, and the run goes on."""


class Stopped(FixloopError):
    """A run ended on a signal (SIGINT, SIGTERM) before its work was done; the message names the signal."""
