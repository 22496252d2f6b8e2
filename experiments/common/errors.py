"""The errors the experiments' run folders and checkpoints share, one class per failure, so that
``except RunFolderError`` catches it from any command."""


class RunFolderError(ValueError):
    """A run folder that cannot be started or resumed: not a run of this command, a run already,
    a run with other settings, unreadable records."""


class CheckpointError(ValueError):
    """A checkpoint that cannot be read or continued: unreadable, another program's, another
    format version or another observation/action layout."""


__all__ = ["CheckpointError", "RunFolderError"]
