"""The stub model: an OpenAI- and Anthropic-compatible server playing a scripted trajectory,
with wire faults on demand."""

from __future__ import annotations

from replay.harness.stub.app import Served, StubConfig, StubModel, StubReset, make_stub_app
from replay.harness.stub.faults import FAULT_KINDS, Fault, FaultInjector, FaultKind
from replay.harness.stub.script import Action, Script, Step, ToolCall, load_script, next_action

__all__ = [
    "FAULT_KINDS",
    "Action",
    "Fault",
    "FaultInjector",
    "FaultKind",
    "Script",
    "Served",
    "Step",
    "StubConfig",
    "StubModel",
    "StubReset",
    "ToolCall",
    "load_script",
    "make_stub_app",
    "next_action",
]
