"""The project's exceptions.

One root, :class:`ReplayError`; subclasses name problems a user can fix. Dependencies'
exceptions are translated where they enter (``raise ... from exc``); only the CLI turns
these into messages and exit codes.
"""

from __future__ import annotations

from pathlib import Path


class ReplayError(Exception):
    """Root of every error the project raises on purpose."""


class InputError(ReplayError):
    """A file a user gave us is wrong: malformed, incomplete, or inconsistent.

    The message is one line: ``<file>: <field>: <problem>``. The CLI prints it as is and
    exits with status 2.
    """

    def __init__(self, path: Path | str, problem: str, field: str | None = None) -> None:
        self.path = Path(path)
        self.field = field
        self.problem = " ".join(problem.split())
        where = f"{self.path}: {field}: " if field else f"{self.path}: "
        super().__init__(where + self.problem)


class UsageError(ReplayError):
    """A name the user gave on the command line or in a candidate is not one the project knows
    (a harness, a stub trajectory, an attack): the message names it, the closest known one
    ("did you mean") and the known ones. The CLI exits with status 2, as for any usage error.
    """


class SnapshotError(InputError):
    """A snapshot directory is missing a part, or a part does not match its recorded hash."""


class CaseError(InputError):
    """A case file is malformed or does not fit the snapshot it names."""


class SourcesError(InputError):
    """The sources a snapshot is generated from are malformed."""


class ToolError(ReplayError):
    """An external program the project drives (git, docker) failed."""
