"""What the hooks read besides the event: budgets, deadlines, the namespace override and the
excluded projects, from ``MEMORY_SUBSTRATE_HOOK_*`` environment variables and the optional file
``<root>/hooks/config.toml`` (the environment wins).

Read with the standard library only: this runs before anything else in every hook process.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ENV = "MEMORY_SUBSTRATE_HOOK_"
CONFIG_FILE = "config.toml"
# Each event's hard deadline in seconds, under the clients' own limits: Claude Code gives a
# SessionEnd hook 1.5 s at exit unless told otherwise, Codex at most 3 s; the others get
# minutes from either client (``setup`` writes 15 s, 10 s and 30 s), but a prompt must not wait
# long for its context.
DEFAULT_TIMEOUTS: dict[str, float] = {
    "SessionStart": 10.0,
    "UserPromptSubmit": 6.0,
    "Stop": 20.0,
    "PreCompact": 20.0,
    "SubagentStop": 20.0,
    "SessionEnd": 1.3,
}
DEFAULT_TIMEOUT = 8.0  # an event not listed (and reading stdin before the event is known)
SESSION_BUDGET = 800
PROMPT_BUDGET = 1000
MIN_BUDGET = 64  # the context compiler's smallest budget


class ConfigError(ValueError):
    """The config file or a variable cannot be read; the hook then does nothing at all (an
    exclusion it holds might otherwise be ignored)."""


@dataclass(frozen=True)
class HookConfig:
    root: Path
    session_budget: int = SESSION_BUDGET
    prompt_budget: int = PROMPT_BUDGET
    timeouts: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_TIMEOUTS))
    namespace: str | None = None  # one namespace for every project, instead of one each
    projects: Mapping[str, str] = field(default_factory=dict)  # project root -> namespace
    exclude: tuple[str, ...] = ()  # globs of project roots (or working directories) left alone
    capture: bool = True
    inject: bool = True

    def timeout(self, event: str) -> float:
        return float(self.timeouts.get(event, self.timeouts.get("*", DEFAULT_TIMEOUT)))

    @property
    def state_dir(self) -> Path:
        return self.root / "hooks"


def default_root() -> Path:
    # The same default as Settings.root (settings.py), without importing the settings here.
    return Path.home() / "memory-substrate"


def load(root: Path | None = None, environ: Mapping[str, str] | None = None) -> HookConfig:
    """The hooks' configuration for the store at ``root`` (else ``MEMORY_SUBSTRATE_ROOT``, else
    the default root). Raises ``ConfigError`` naming what is wrong."""
    env = os.environ if environ is None else environ
    if root is None:
        root = (
            Path(env["MEMORY_SUBSTRATE_ROOT"]).expanduser()
            if env.get("MEMORY_SUBSTRATE_ROOT")
            else default_root()
        )
    data = _file(root / "hooks" / CONFIG_FILE)
    timeouts = dict(DEFAULT_TIMEOUTS)
    file_timeouts = data.get("timeouts", {})
    if not isinstance(file_timeouts, dict):
        raise ConfigError("timeouts must be a table of event = seconds")
    for event, seconds in file_timeouts.items():
        timeouts[str(event)] = _seconds(seconds, f"timeouts.{event}")
    if env.get(ENV + "TIMEOUT_S"):
        timeouts = {"*": _seconds(env[ENV + "TIMEOUT_S"], ENV + "TIMEOUT_S")}
    projects = data.get("projects", {})
    if not isinstance(projects, dict) or not all(isinstance(v, str) for v in projects.values()):
        raise ConfigError('projects must be a table of "project path" = "namespace"')
    exclude = list(_strings(data.get("exclude", []), "exclude"))
    if env.get(ENV + "EXCLUDE"):
        exclude += [g for g in env[ENV + "EXCLUDE"].split(os.pathsep) if g.strip()]
    return HookConfig(
        root=root,
        session_budget=_budget(
            env.get(ENV + "SESSION_BUDGET", data.get("session_budget", SESSION_BUDGET)), "session_budget"
        ),
        prompt_budget=_budget(
            env.get(ENV + "PROMPT_BUDGET", data.get("prompt_budget", PROMPT_BUDGET)), "prompt_budget"
        ),
        timeouts=timeouts,
        namespace=(env.get(ENV + "NAMESPACE") or data.get("namespace") or None),
        projects={_path_key(k): v for k, v in projects.items()},
        exclude=tuple(exclude),
        capture=_flag(env.get(ENV + "CAPTURE", data.get("capture", True)), "capture"),
        inject=_flag(env.get(ENV + "INJECT", data.get("inject", True)), "inject"),
    )


def _file(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):  # no file, or the root (or hooks/) is a file
        return {}
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    # Imported only for a file that exists: most hooks run with no config file.
    import tomllib

    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None


def _path_key(path: str) -> str:
    return os.path.normcase(os.path.realpath(os.path.expanduser(path)))


def _seconds(value: object, what: str) -> float:
    try:
        if not isinstance(
            value, int | float | str
        ):  # TOML's dates, arrays and tables: float() refuses them too
            raise TypeError
        seconds = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{what}: {value!r} is not a number of seconds") from None
    if not 0 < seconds <= 600:
        raise ConfigError(f"{what}: {value!r} must be more than 0 and at most 600 seconds")
    return seconds


def _budget(value: object, what: str) -> int:
    try:
        if not isinstance(
            value, int | float | str
        ):  # TOML's dates, arrays and tables: int() refuses them too
            raise TypeError
        tokens = int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{what}: {value!r} is not a number of tokens") from None
    if tokens < 0 or 0 < tokens < MIN_BUDGET or tokens > 200_000:
        raise ConfigError(f"{what}: {value!r} must be 0 (off) or {MIN_BUDGET}-200000 tokens")
    return tokens


def _flag(value: object, what: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{what}: {value!r} is not on or off")


def _strings(value: object, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{what} must be a list of strings")
    return value
