"""Slack's fake held to the response samples of Slack's Java SDK (``slackapi/java-slack-sdk``,
``json-logs/samples/api/<method>.json``): for each Web API method, the union of every
response the SDK's integration runs have seen, with placeholder values (``""`` for strings,
``12345`` for numbers, ``false`` for booleans, lists holding example elements, objects
merged). Newer than the 2021 OpenAPI spec (:mod:`replay.contract.evidence.slack_spec`), and
made from real answers rather than written by hand, so it knows keys Slack added since.

The same exchanges the spec family checks (every response of the Slack contract scenarios,
run against a fresh fake: :func:`replay.contract.evidence.slack_spec.observe`) are held to
their method's sample. Two reports, one check per exchange:

* **SDK sample keys**: every key the fake answers is one the SDK has seen for that method at
  the same place in the object tree (``$.message.blocks[0].type``); a key it never saw is the
  fake's invention. Elements of an array are compared with the sample's elements merged.
* **SDK sample types**: each value's JSON type (string, number, boolean, object, array) is
  the type of the sample's placeholder there. A ``null`` in a sample says nothing and is
  skipped; so is a ``null`` the fake answers, since placeholders show no nullability (the
  spec family holds nulls to the spec), and so is an element of an array the sample leaves
  empty.

The recorder that writes them (``slack-api-client/src/test/java/util/sample_json_generation/
JsonDataRecorder.java``) also fills in some objects from the SDK's own model classes
(``util/ObjectInitializer.java``'s ``initProperties``: placeholders such as ``123``), so a
key in a sample is one the SDK saw or models.

The samples are unions of successes and errors (``error``, ``needed``, ``provided`` sit
beside ``channel``), so an ``ok: false`` answer is held to the same sample. Keys Slack sends
only as ``null`` (``parent_conversation``) never reach a sample: the recorder's Gson drops
nulls.

Known gaps live in ``contract_tests/evidence/java-slack-sdk/gaps.json``; a gap whose problem
pattern says ``has not seen`` belongs to the keys report, any other to the types report.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from replay.contract.evidence import (
    EVIDENCE,
    Check,
    KnownGap,
    Report,
    Service,
    Source,
    apply_gaps,
    json_kind,
    load_gaps,
    load_source,
    vendored_bytes,
)
from replay.contract.evidence.slack_spec import Observed, Seen, observe
from replay.contract.targets import ContractSetupError, Wrap

DIRECTORY = EVIDENCE / "java-slack-sdk"
"""The vendored samples, the SDK's license, ``SOURCE.json`` and ``gaps.json``."""
SAMPLES = "json-logs/samples/api"
"""Where the samples are in the vendor repository (and under :data:`DIRECTORY`)."""
SERVICE: Service = "slack"
KEYS = "SDK sample keys"
TYPES = "SDK sample types"
UNSEEN = "a key the SDK has not seen"
"""The end of every keys problem (``$.message.foo: a key the SDK has not seen``)."""


@dataclass(frozen=True)
class Shape:
    """What a sample shows at one place of the tree, its array elements merged."""

    kinds: frozenset[str]
    """The JSON types of the placeholders there (empty: only ``null``, unknown)."""
    keys: Mapping[str, Shape] | None = None
    """For an object: each key seen, merged over every object there."""
    item: Shape | None = None
    """For an array: its elements merged (None: every array there was empty)."""


def shape(value: Any) -> Shape:
    """The shape of a sample value (arrays' elements merged)."""
    k = json_kind(value)
    if k == "null":
        return Shape(frozenset())
    if k == "object":
        return Shape(frozenset({k}), keys={key: shape(v) for key, v in value.items()})
    if k == "array":
        item: Shape | None = None
        for v in value:
            item = shape(v) if item is None else merge(item, shape(v))
        return Shape(frozenset({k}), item=item)
    return Shape(frozenset({k}))


def merge(a: Shape, b: Shape) -> Shape:
    """Two shapes of one place: the union of their types, keys and elements."""
    keys: dict[str, Shape] | None = None
    if a.keys is not None or b.keys is not None:
        keys = dict(a.keys or {})
        for key, s in (b.keys or {}).items():
            keys[key] = merge(keys[key], s) if key in keys else s
    item = a.item if b.item is None else b.item if a.item is None else merge(a.item, b.item)
    return Shape(a.kinds | b.kinds, keys, item)


@cache
def load_samples() -> dict[str, Shape]:
    """The vendored samples' shapes by method name (read once)."""
    out: dict[str, Shape] = {}
    for path in sorted(load_source(DIRECTORY).files):
        name = path.removeprefix(f"{SAMPLES}/").removesuffix(".json")
        try:
            out[name] = shape(json.loads(vendored_bytes(DIRECTORY, path)))
        except (OSError, ValueError) as exc:
            raise ContractSetupError(f"{path}: cannot read the SDK's sample: {exc}") from exc
    if not out:
        raise ContractSetupError(f"{DIRECTORY / SAMPLES}: no samples")
    return out


def compare(sample: Shape, value: Any, where: str = "$") -> Iterator[tuple[str, str]]:
    """Every way ``value`` departs from ``sample``, as (report, ``<json path>: <problem>``):
    keys the sample lacks (:data:`KEYS`) and types it does not have (:data:`TYPES`)."""
    k = json_kind(value)
    if k == "null":
        return
    if sample.kinds and k not in sample.kinds:
        said = " or ".join(sorted(sample.kinds))
        yield TYPES, f"{where}: {k}, the SDK's sample has {said}"
        return
    if isinstance(value, dict) and sample.keys is not None:
        for key, v in value.items():
            below = sample.keys.get(key)
            if below is None:
                yield KEYS, f"{where}.{key}: {UNSEEN}"
            else:
                yield from compare(below, v, f"{where}.{key}")
    elif isinstance(value, list) and sample.item is not None:
        for i, v in enumerate(value):
            yield from compare(sample.item, v, f"{where}[{i}]")


def checks(samples: Mapping[str, Shape], seen: Seen) -> tuple[Check, Check]:
    """One exchange against its method's sample: its keys check and its types check."""
    sample = samples.get(seen.method)
    if sample is None:
        missing = (f"{seen.method}: no sample in {SAMPLES}",)
        return Check(seen.subject, missing), Check(seen.subject, missing)
    found: dict[str, list[str]] = {KEYS: [], TYPES: []}
    for report, problem in compare(sample, seen.body):
        found[report].append(problem)
    return Check(seen.subject, tuple(found[KEYS])), Check(seen.subject, tuple(found[TYPES]))


def build(
    observed: Observed,
    source: Source,
    samples: Mapping[str, Shape],
    gaps_dir: Path = DIRECTORY,
) -> list[Report]:
    """Both reports from observed responses (tests feed doctored ones), with the known gaps
    of ``gaps_dir`` applied. A scenario that stopped is a failure of the keys report, as its
    remaining steps went unchecked."""
    gaps = load_gaps(gaps_dir)
    keys: list[Check] = []
    types: list[Check] = []
    for seen in observed.seen:
        k, t = checks(samples, seen)
        keys.append(k)
        types.append(t)
    keys += observed.stopped
    return [
        apply_gaps(SERVICE, KEYS, source, keys, _for(gaps, True)),
        apply_gaps(SERVICE, TYPES, source, types, _for(gaps, False)),
    ]


def _for(gaps: list[KnownGap], keys_report: bool) -> list[KnownGap]:
    """The gaps of one report: a keys gap's problem pattern says ``has not seen``."""
    return [g for g in gaps if ("has not seen" in g.problem) == keys_report]


def reports(wrap: Wrap | None = None) -> list[Report]:
    """The Slack fake against the Java SDK's samples: keys and types."""
    source = load_source(DIRECTORY)
    return build(observe(wrap), source, load_samples())
