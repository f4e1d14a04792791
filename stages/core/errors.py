"""Errors a user can act on. The CLI prints their message and exits non-zero without a traceback."""


class PipelineError(Exception):
    """Base class: the message says what is wrong and where (file, column or key)."""

    exit_code = 2


class ParamsError(PipelineError):
    """A params file or override has an unknown key or a value of the wrong type."""


class DataValidationError(PipelineError):
    """A dataset failed its expectation suite."""


class MissingSourceError(PipelineError):
    """A raw data source is not installed; the message says how to get it."""


class SpecError(PipelineError):
    """Code and dvc.yaml disagree about a stage (deps, outs or params)."""
