"""Two developer machines (two client homes, each with its own clone and its own local store) whose
hooks point at one ``memory-substrate serve --transport http`` with a token for the project's
namespace: what a session on one machine found reaches the next session on the other. With that
server down, each machine's sessions still complete normally: the hooks fall back to the local
store, and never block the client."""

from __future__ import annotations

from pathlib import Path

from tests.agents import anthropic_stub as an
from tests.agents.clients import require
from tests.e2e.e2e_support import OPEN, Machine, Server, episodes, namespace_of, spans

ORIGIN = "git@example.com:acme/shop.git"
FILES = {"README.md": "# shop\n", "CODEOWNERS": "/services/billing/ @dana\n"}
FOUND = "From CODEOWNERS: Dana owns the billing service, so she reviews billing changes."


def test_two_homes_share_a_projects_memory_through_one_server(tmp_path: Path) -> None:
    require("claude-code")
    alice, bob = Machine(tmp_path / "alice"), Machine(tmp_path / "bob")
    shop_a = alice.project("shop", FILES, ORIGIN)
    shop_b = bob.project("shop", FILES, ORIGIN)
    namespace = namespace_of(shop_a)
    assert namespace_of(shop_b) == namespace  # clones of one repository are one project
    alice.setup_claude(shop_a)
    bob.setup_claude(shop_b)

    team = Machine(tmp_path / "team")
    token = team.cli("token", "create", "--namespace", namespace, "--label", "shop").stdout.strip()
    server = Server(team.root, team.env())
    try:
        warm = {"MEMORY_SUBSTRATE_HOOK_URL": server.url, "MEMORY_SUBSTRATE_HOOK_TOKEN": token}
        first = alice.claude(
            shop_a,
            "Who owns billing? I need a reviewer.",
            [[an.bash("cat CODEOWNERS")], an.text(FOUND)],
            env=warm,
        )
        first.run.check()
        # Captured on the team server, not in Alice's local store.
        assert f"claude-code:{first.run.session_id}" in episodes(team.root, namespace)
        assert not episodes(alice.root, namespace)

        later = bob.claude(
            shop_b, "I changed invoice rounding. Who should review it?", [an.text("Dana.")], env=warm
        )
        later.run.check()
        assert any("Dana owns the billing service" in s for s in spans(later.first)), later.first[-2000:]
        assert set(episodes(team.root, namespace)) == {
            f"claude-code:{first.run.session_id}",
            f"claude-code:{later.run.session_id}",
        }
    finally:
        server.stop()

    # The server is down: both machines' sessions run to the end, and are kept in the local store.
    for dev, shop in ((alice, shop_a), (bob, shop_b)):
        down = dev.claude(
            shop, "Add a line to the README.", [[an.bash("cat README.md")], an.text("Added.")], env=warm
        )
        down.run.check()
        assert down.run.result == "Added." and len(down.requests) == 2
        assert OPEN not in down.first  # the local store holds nothing yet: no context, no stall
        assert f"claude-code:{down.run.session_id}" in episodes(dev.root, namespace)
