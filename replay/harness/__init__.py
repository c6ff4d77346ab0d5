"""Harnesses: how a candidate agent is launched, and the stub model that calibrates the
pipeline."""

from __future__ import annotations

from replay.harness.stub import (
    Action,
    Fault,
    FaultKind,
    Script,
    Step,
    StubConfig,
    StubModel,
    ToolCall,
    load_script,
    make_stub_app,
)

__all__ = [
    "Action",
    "Fault",
    "FaultKind",
    "Script",
    "Step",
    "StubConfig",
    "StubModel",
    "ToolCall",
    "load_script",
    "make_stub_app",
]
