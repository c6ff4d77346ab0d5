"""The error codes each Slack method declares (``METHODS[...].errors``, held to Slack's spec
by ``replay.contract.evidence.slack_spec``) are the ones its code can raise.

Read from the source, not from runs: every ``SlackError("<code>")`` (and ``missing_scope``,
``invalid_arguments``, ``decode_*cursor``) reachable from a method's handler lambda, through
the backend's methods and helpers and the argument parsers it calls. A code the fake can
raise but does not declare would escape the spec check; a declared code it cannot raise
would be checked for nothing.
"""

from __future__ import annotations

import ast
from pathlib import Path

from fakes.slack.errors import EVERY_CALL
from fakes.slack.routes import METHODS

HERE = Path(__file__).resolve().parents[3] / "fakes" / "slack"

NAMED = {
    "missing_scope": "missing_scope",
    "invalid_arguments": "invalid_arguments",
    "ratelimited": "ratelimited",
    "decode_cursor": "invalid_cursor",
    "decode_ts_cursor": "invalid_cursor",
}
"""Functions that raise one code."""


def _methods(path: Path, cls: str) -> dict[str, ast.FunctionDef]:
    tree = ast.parse(path.read_text())
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            return {f.name: f for f in node.body if isinstance(f, ast.FunctionDef)}
    raise AssertionError(f"{cls} not in {path}")


def _codes(fn: ast.AST, on: str, methods: dict[str, ast.FunctionDef], seen: set[str]) -> set[str]:
    """Codes raised by ``fn`` and the ``<on>.<method>`` (or, inside them, ``self.<method>``)
    calls it makes, transitively."""
    out: set[str] = set()
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name):
            if func.id == "SlackError" and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    out.add(arg.value)
            out |= {NAMED[func.id]} if func.id in NAMED else set()
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if func.value.id not in (on, "self") or func.attr not in methods:
                continue
            if func.attr == "_message" and node.args:  # the code to answer is its last argument
                last = node.args[-1]
                if isinstance(last, ast.Constant) and isinstance(last.value, str):
                    out.add(last.value)
            if func.attr == "ts" and node.args:  # Params.ts: f"invalid_ts_{name}"
                name = node.args[0]
                if isinstance(name, ast.Constant) and isinstance(name.value, str):
                    out.add(f"invalid_ts_{name.value}")
            if func.attr not in seen:
                out |= _codes(methods[func.attr], on, methods, seen | {func.attr})
    return out


def _handlers() -> dict[str, ast.Lambda]:
    tree = ast.parse((HERE / "routes.py").read_text())
    for node in tree.body:
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == "METHODS"
            and isinstance(node.value, ast.Dict)
        ):
            out: dict[str, ast.Lambda] = {}
            for key, value in zip(node.value.keys, node.value.values, strict=True):
                assert isinstance(key, ast.Constant) and isinstance(value, ast.Call)
                handler = value.args[0]
                assert isinstance(handler, ast.Lambda), key.value
                out[str(key.value)] = handler
            return out
    raise AssertionError("METHODS not found in routes.py")


def reachable(name: str) -> set[str]:
    """Every code the handler of method ``name`` can raise (backend and argument parsing)."""
    handler = _handlers()[name]
    backend = _methods(HERE / "backend.py", "SlackBackend")
    params = _methods(HERE / "routes.py", "Params")
    codes = _codes(handler, "b", backend, set()) | _codes(handler, "p", params, set())
    return codes


def test_every_method_declares_the_codes_its_code_can_raise() -> None:
    for name, method in METHODS.items():
        if method.public:
            continue
        codes = reachable(name)
        undeclared = codes - method.all_errors()
        assert not undeclared, f"{name} can raise {sorted(undeclared)} but does not declare them"
        unreachable = set(method.errors) - codes
        assert not unreachable, f"{name} declares {sorted(unreachable)} it cannot raise"


def test_the_reader_finds_codes_through_helpers_and_parsers() -> None:
    """Self-test: codes only reachable through a helper (``_channel``, ``_message``,
    ``_reaction_target``) or an argument parser (``window``, ``blocks``) are found."""
    assert {"channel_not_found", "message_not_found", "bad_timestamp"} <= reachable("reactions.add")
    assert {"invalid_ts_oldest", "invalid_ts_latest", "invalid_cursor"} <= reachable(
        "conversations.history"
    )
    assert {"invalid_blocks", "invalid_blocks_format", "invalid_arguments"} <= reachable(
        "chat.postMessage"
    )
    assert "missing_scope" in reachable("conversations.info")
    assert set(EVERY_CALL) >= {"not_authed", "invalid_auth", "ratelimited"}
