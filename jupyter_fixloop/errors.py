"""One error family: the library raises these; the magic and the CLI format them at the edge."""


class FixloopError(Exception):
    """Base of every error jupyter-fixloop raises on purpose."""


class UsageError(FixloopError):
    """The caller asked for something that cannot be done; the message says what to do instead."""


class SandboxError(FixloopError):
    """A sandbox kernel could not be started or talked to."""


class ModelError(FixloopError):
    """The model could not be reached or answered with an error (auth, quota, network)."""
