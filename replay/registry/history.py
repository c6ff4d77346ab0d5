"""A project's history on an index: which files it held at T, and how we know.

An index says when each file was uploaded, and a file uploaded at or before T was there at T:
that is enough on its own. The converse fails. A maintainer who deletes a project loses its
files, and PyPI never takes a deleted filename back from an upload (pypa/packaging-problems#74,
pypi/warehouse#18671), so the same files reappear only when PyPI's admins restore them, with
the restore's time as their upload time. atomicwrites is the case in point
(untitaker/python-atomicwrites#61): its maintainer deleted it on 2022-07-08 and uploaded 1.4.1;
the next morning all seventeen older versions were back, every file uploaded within fifteen
minutes. pytest required ``atomicwrites>=1.0`` on every platform from 3.6 (May 2018) to
5.2.4 (5.3.0, of 2019-11-19, made it Windows-only): read by upload time alone, nothing that
uses pytest installs as of a T in those eighteen months.

So a file uploaded after T still counts as on the index at T when all of these hold:

- it was **built before T**, by its own stamps (:mod:`replay.registry.buildtime`). A file
  cannot have been published before it was built, so a file built after T was not there:
  this is what refuses a project first published after T. Built before T alone is not
  enough (a file can wait years before its first upload), hence
- the project **shows that it existed before these uploads**: either the file came in a
  burst of many versions uploaded together (:class:`Burst`: a restore, or a re-upload of a
  project's past, not how releases arrive), or a **dependent**, a file uploaded before T,
  requires the project (:class:`Dependent`: pip installing it at T needed some version of
  the project from the index).

Other sources were weighed and not used. The project's release list (PEP 700's ``versions``,
the JSON API's ``releases``) carries the same upload times, or none. A mirror's record would
date a file independently, but none is reachable from where cases are recorded, and a mirror
notes when it synced, not when the file was published.

Such a file is recorded with its build time as its upload time, the earliest the index can
have had it: the registry at T serves it and uv's ``--exclude-newer`` T keeps it.
``chosen_because`` says which evidence placed it there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from packaging.requirements import Requirement

from replay.registry.buildtime import BuildTime
from replay.registry.choice import Candidate, Choice, Chooser, names_prerelease, python_ok

BURST_GAP = timedelta(days=1)
"""Uploads further apart than this are not one burst."""
BURST_SPAN = timedelta(days=2)
"""A burst lasts at most this long: a restore or a scripted re-upload, not a release series."""
MIN_BURST_VERSIONS = 3
"""A burst holds files of at least this many versions (atomicwrites' restore: 18 in 10 hours)."""


def _day(when: datetime) -> str:
    return when.date().isoformat()


def _duration(span: timedelta) -> str:
    minutes = max(1, round(span.total_seconds() / 60))
    if minutes < 120:
        return f"{minutes} minutes"
    if minutes < 48 * 60:
        return f"{round(minutes / 60)} hours"
    return f"{round(minutes / 1440)} days"


@dataclass(frozen=True)
class Burst:
    """Files of many versions uploaded after T within a short time."""

    versions: int
    first: datetime
    last: datetime

    def text(self) -> str:
        return (
            f"with the files of {self.versions} versions within "
            f"{_duration(self.last - self.first)} (a re-upload)"
        )


@dataclass(frozen=True)
class Dependent:
    """A file uploaded before T whose metadata requires the project."""

    name: str
    """``pytest 5.2.2``."""
    uploaded: datetime
    requirement: str

    def text(self) -> str:
        return f"{self.name} (uploaded {_day(self.uploaded)}, before T) requires {self.requirement}"


def dependent(
    name: str, files: list[Candidate], req: Requirement, at: datetime
) -> Dependent | None:
    """``name``'s files as evidence for ``req``: only a file uploaded at or before T counts
    (a dependent placed at T by evidence itself would make a chain of guesses)."""
    times = [c.upload_time for c in files if c.upload_time <= at]
    return Dependent(name, min(times), str(req)) if times else None


@dataclass(frozen=True)
class Evidence:
    """Why a file uploaded after T counts as on the index at T."""

    available: datetime
    """Its build time: recorded as its upload time."""
    text: str


@dataclass
class History:
    """A project's files on the index, on both sides of T."""

    project: str
    at: datetime
    files: list[Candidate]
    _bursts: dict[str, Burst] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        later = sorted(self.later, key=lambda c: c.upload_time)
        groups: list[list[Candidate]] = []
        for c in later:
            if groups and c.upload_time - groups[-1][-1].upload_time <= BURST_GAP:
                groups[-1].append(c)
            else:
                groups.append([c])
        for group in groups:
            first, last = group[0].upload_time, group[-1].upload_time
            versions = len({c.version for c in group})
            if versions >= MIN_BURST_VERSIONS and last - first <= BURST_SPAN:
                burst = Burst(versions, first, last)
                self._bursts.update((c.sha256, burst) for c in group)

    @property
    def at_t(self) -> list[Candidate]:
        """The files uploaded at or before T."""
        return [c for c in self.files if c.upload_time <= self.at]

    @property
    def later(self) -> list[Candidate]:
        return [c for c in self.files if c.upload_time > self.at]

    def burst_of(self, c: Candidate) -> Burst | None:
        return self._bursts.get(c.sha256)

    def justify(
        self, c: Candidate, built: BuildTime | None, by: Dependent | None
    ) -> Evidence | None:
        """Evidence that ``c``, uploaded after T, was on the index at T, or None."""
        burst = self.burst_of(c)
        if built is None or built.latest > self.at or (burst is None and by is None):
            return None
        parts = [f"uploaded {_day(c.upload_time)}" + (f" {burst.text()}" if burst else "")]
        parts.append(f"built {_day(built.when)} ({built.source}), before T")
        if by is not None:
            parts.append(by.text())
        return Evidence(built.when, "on the index at T by evidence: " + "; ".join(parts))


def fits(chooser: Chooser, req: Requirement, c: Candidate) -> bool:
    """Whether pip could take ``c`` for ``req`` on the target, wherever T falls."""
    return (
        chooser.tags_ok(c)
        and python_ok(c.requires_python, chooser.python)
        and req.specifier.contains(c.version, prereleases=True)
    )


BuildTimeOf = Callable[[Candidate], BuildTime | None]


@dataclass
class Outcome:
    """pip's choice at T with the evidence for what was uploaded after T."""

    choice: Choice | None
    evidence: dict[str, Evidence]
    """By sha256, for each chosen file uploaded after T."""
    checked: list[tuple[Candidate, BuildTime | None]]
    """Files uploaded after T whose build time was read, newest version first."""

    def evidence_for(self, files: list[Candidate]) -> dict[str, Evidence]:
        return {c.sha256: self.evidence[c.sha256] for c in files if c.sha256 in self.evidence}

    def because(self, files: list[Candidate]) -> str:
        """The choice's reason, with the evidence for each of ``files`` uploaded after T."""
        assert self.choice is not None
        texts = dict.fromkeys(e.text for e in self.evidence_for(files).values())
        return "; ".join([self.choice.reason, *texts])


def choose_at_t(
    history: History, req: Requirement, chooser: Chooser, built: BuildTimeOf, by: Dependent | None
) -> Outcome:
    """pip's choice for ``req`` among the files the index held at T, evidence included.

    Files uploaded after T are examined only where they can change the answer and the
    project shows it existed before them: versions newer than the choice by upload time
    that came in a :class:`Burst`, or, when nothing uploaded by T fits, any version when a
    dependent requires the project. Their build times are read newest version first, and
    the first version pip would take with its justified files is the choice.
    """
    pool = history.at_t
    choice = chooser.choose(req, pool)
    later = [c for c in history.later if fits(chooser, req, c)]
    if choice is not None:
        later = [c for c in later if c.version > choice.version and history.burst_of(c)]
        if not names_prerelease(req):
            later = [c for c in later if not c.version.is_prerelease]
    elif by is None:
        later = [c for c in later if history.burst_of(c)]
    checked: list[tuple[Candidate, BuildTime | None]] = []
    for version in sorted({c.version for c in later}, reverse=True):
        justified: dict[str, Evidence] = {}
        for c in (c for c in later if c.version == version):
            stamp = built(c)
            checked.append((c, stamp))
            evidence = history.justify(c, stamp, by)
            if evidence is not None:
                justified[c.sha256] = evidence
        if not justified:
            continue
        trial = chooser.choose(req, pool + [c for c in later if c.sha256 in justified])
        if trial is not None and trial.version == version:
            taken = {c.sha256: justified[c.sha256] for c in trial.files if c.sha256 in justified}
            return Outcome(trial, taken, checked)
    return Outcome(choice, {}, checked)


def refusal(
    history: History,
    req: Requirement,
    chooser: Chooser,
    outcome: Outcome,
    by: Dependent | None,
    direct: bool,
) -> str | None:
    """Why nothing fits ``req`` at T though files uploaded after T would, in the project's
    terms, and the one change that lets the case be recorded; None when nothing on the
    index fits at any time (then the target is the problem, not T). ``direct``: ``req``
    was asked for, not wanted by a dependency."""
    later = [c for c in history.later if fits(chooser, req, c)]
    if not later:
        return None
    first = min(later, key=lambda c: c.upload_time)
    name = history.project
    text = f"no version uploaded at or before T ({history.at.isoformat()})"
    if history.at_t:
        text += f": the versions of {name} that fit came later, from {_day(first.upload_time)}"
    else:
        since = _day(min(c.upload_time for c in history.files))
        n = len(history.files)
        files = "its only file was" if n == 1 else f"all {n} of its files were"
        text += f": {name} had no file on the index at T, {files} uploaded after T, from {since}"
    bursts = {b for c in later if (b := history.burst_of(c)) is not None}
    if bursts:
        text += f", {max(bursts, key=lambda b: b.versions).text()}"
    if outcome.checked:
        c, stamp = outcome.checked[0]
        if stamp is None:
            text += (
                f"; but no build time shows any of them there at T ({c.filename} carries one "
                "date throughout, a reproducible build's, or none)"
            )
        else:
            text += (
                f"; none that fits was built before T ({c.filename}: built {_day(stamp.when)}, "
                f"{stamp.source})"
            )
            if not bursts:
                text += ": it was first published after T"
    elif not bursts and by is None:
        text += (
            "; not a re-upload and no dependent at T requires it: as far as the index shows, "
            "first published after T"
        )
    if by is not None:
        text += f" (though {by.text()})"
    fitting_at_t = [
        c
        for c in history.at_t
        if chooser.tags_ok(c) and python_ok(c.requires_python, chooser.python)
    ]
    if direct and fitting_at_t:
        newest = max(c.version for c in fitting_at_t)
        return f"{text}; change {req} to what the index had at T (its newest then: {newest})"
    return f"{text}; change T (--at) to {_earliest(history, later, outcome, by)} or later"


def _earliest(
    history: History, later: list[Candidate], outcome: Outcome, by: Dependent | None
) -> str:
    """The earliest T at which some file that fits counts as on the index: its upload time,
    or, for a file that the same evidence would place there, the latest its build can be."""
    times = [c.upload_time for c in later]
    times += [
        stamp.latest
        for c, stamp in outcome.checked
        if stamp is not None and (history.burst_of(c) is not None or by is not None)
    ]
    when = min(times)
    if when.microsecond:
        when = when.replace(microsecond=0) + timedelta(seconds=1)
    return when.isoformat()


__all__ = [
    "BURST_GAP",
    "BURST_SPAN",
    "MIN_BURST_VERSIONS",
    "Burst",
    "Dependent",
    "Evidence",
    "History",
    "Outcome",
    "choose_at_t",
    "dependent",
    "fits",
    "refusal",
]
