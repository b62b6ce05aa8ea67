"""A namespace per project: the git root of the working directory (worktrees are their
repository, submodules their own project), else the directory; named for people to read, with a
hash that keeps apart two projects named alike and joins the clones of one repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_substrate.errors import ValidationError
from memory_substrate.hooks.config import HookConfig, load
from memory_substrate.hooks.project import excluded, project_namespace, project_root
from memory_substrate.validation import is_namespace


def _repo(path: Path, origin: str | None = None) -> Path:
    (path / ".git").mkdir(parents=True)
    if origin:
        (path / ".git" / "config").write_text(
            f'[core]\n\tbare = false\n[remote "upstream"]\n\turl = https://example.org/other.git\n'
            f'[remote "origin"]\n\turl = {origin}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n',
            encoding="utf-8",
        )
    return path


def _config(tmp_path: Path, **kw: object) -> HookConfig:
    return HookConfig(root=tmp_path / "store", **kw)  # type: ignore[arg-type]


def test_the_git_root_names_the_project(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "shop")
    (repo / "src" / "api").mkdir(parents=True)
    config = _config(tmp_path)
    name = project_namespace(repo / "src" / "api", config)
    assert name == project_namespace(repo, config) and name.startswith("shop-") and is_namespace(name)
    assert project_root(repo / "src" / "api") == repo.resolve()


def test_a_folder_outside_git_is_its_own_project(tmp_path: Path) -> None:
    (tmp_path / "a" / "notes").mkdir(parents=True)
    (tmp_path / "b" / "notes").mkdir(parents=True)
    config = _config(tmp_path)
    a, b = (project_namespace(tmp_path / x / "notes", config) for x in "ab")
    assert a != b and a.startswith("notes-") and b.startswith("notes-")
    assert project_namespace(tmp_path / "a" / "notes", config) == a  # stable


def test_clones_of_one_repository_share_a_namespace(tmp_path: Path) -> None:
    config = _config(tmp_path)
    one = _repo(tmp_path / "laptop" / "shop", "git@github.com:Acme/Shop.git")
    two = _repo(tmp_path / "desktop" / "shop", "https://github.com/acme/shop")
    three = _repo(tmp_path / "fork" / "shop", "https://github.com/someone/shop.git")
    assert project_namespace(one, config) == project_namespace(two, config)
    assert project_namespace(one, config) != project_namespace(three, config)


def test_worktrees_are_their_repository_and_submodules_their_own(tmp_path: Path) -> None:
    main = _repo(tmp_path / "shop")
    gitdir = main / ".git" / "worktrees" / "feature"
    gitdir.mkdir(parents=True)
    (gitdir / "commondir").write_text("../..\n", encoding="utf-8")
    wt = tmp_path / "shop-feature"
    wt.mkdir()
    (wt / ".git").write_text(f"gitdir: {gitdir}\n", encoding="utf-8")
    config = _config(tmp_path)
    assert project_root(wt) == main.resolve()
    assert project_namespace(wt, config) == project_namespace(main, config)

    sub = main / "vendor" / "lib"
    sub.mkdir(parents=True)
    (main / ".git" / "modules" / "lib").mkdir(parents=True)
    (sub / ".git").write_text("gitdir: ../../.git/modules/lib\n", encoding="utf-8")
    assert project_root(sub / ".") == sub.resolve()
    assert project_namespace(sub, config) != project_namespace(main, config)


@pytest.mark.parametrize("name", ["my project (copy)", "ünïcödé", "...", "a" * 250, "x.y-z_1@2"])
def test_any_folder_name_gives_a_valid_namespace(tmp_path: Path, name: str) -> None:
    folder = tmp_path / name
    folder.mkdir()
    assert is_namespace(project_namespace(folder, _config(tmp_path)))


def test_overrides(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "shop")
    other = _repo(tmp_path / "garden")
    root = tmp_path / "store"
    (root / "hooks").mkdir(parents=True)
    (root / "hooks" / "config.toml").write_text(f'[projects]\n"{repo}" = "team-shop"\n', encoding="utf-8")
    config = load(root, {})
    assert project_namespace(repo / ".", config) == "team-shop"
    assert project_namespace(other, config).startswith("garden-")
    everything = load(root, {"MEMORY_SUBSTRATE_HOOK_NAMESPACE": "all-of-it"})
    assert project_namespace(other, everything) == "all-of-it"
    with pytest.raises(ValidationError):
        project_namespace(other, load(root, {"MEMORY_SUBSTRATE_HOOK_NAMESPACE": "no spaces please"}))


def test_a_repository_cannot_choose_its_namespace(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "cloned")
    (repo / ".memory-substrate-namespace").write_text("default\n", encoding="utf-8")
    (repo / ".memory-substrate.toml").write_text('namespace = "default"\n', encoding="utf-8")
    assert project_namespace(repo, _config(tmp_path)).startswith("cloned-")


def test_excluded_projects(tmp_path: Path) -> None:
    client = _repo(tmp_path / "clients" / "acme")
    (client / "src").mkdir()
    mine = _repo(tmp_path / "mine")
    config = _config(tmp_path, exclude=(str(tmp_path / "clients"),))
    assert excluded(client / "src", config) and excluded(client, config)
    assert not excluded(mine, config)
    assert excluded(mine, _config(tmp_path, exclude=("*/mine",)))
    assert not excluded(mine, _config(tmp_path))


def test_config_values_are_checked(tmp_path: Path) -> None:
    from memory_substrate.hooks.config import ConfigError

    assert load(tmp_path, {}).prompt_budget == 1000 and load(tmp_path, {}).session_budget == 800
    assert load(tmp_path, {"MEMORY_SUBSTRATE_HOOK_PROMPT_BUDGET": "0"}).prompt_budget == 0  # off
    assert load(tmp_path, {"MEMORY_SUBSTRATE_HOOK_TIMEOUT_S": "2.5"}).timeout("Stop") == 2.5
    assert load(tmp_path, {}).timeout("SessionEnd") < 1.5  # under Claude Code's exit budget
    for env in (
        {"MEMORY_SUBSTRATE_HOOK_PROMPT_BUDGET": "12"},
        {"MEMORY_SUBSTRATE_HOOK_TIMEOUT_S": "-1"},
        {"MEMORY_SUBSTRATE_HOOK_INJECT": "maybe"},
    ):
        with pytest.raises(ConfigError):
            load(tmp_path, env)


def test_the_hooks_name_the_store_as_the_settings_do(tmp_path: Path) -> None:
    """The hooks find the root and the store file without importing the settings (a hook must
    start fast): the names must stay the settings' own."""
    from memory_substrate.hooks import config, events
    from memory_substrate.settings import Settings, default_root

    assert config.default_root() == default_root()
    assert Settings(root=tmp_path).sqlite_path == tmp_path / events.SQLITE_FILE
