"""Every example runs offline, as a user would run it, and does what it says."""

import subprocess
import sys
from pathlib import Path

import pytest

from overseer import AuditStore

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

EXPECTED = {
    "create_agent_middleware.py": ["stopped by the strict policy", "transfers made: []"],
    "custom_state_graph.py": ["block-destructive-commands", "commands run: ['rm -r build/out']"],
    "human_in_the_loop.py": [
        "paused for review: delete_customer",
        "deleted so far: []",
        "deleted: ['C-1042-dup']",
        "review by dana: edit",
    ],
    "mcp_tools_in_langchain.py": [
        "Blocked by the oversight policy (block-values-from-detected-injection)",
        "sent to dana@example.com (the server has now sent 1 e-mail(s))",  # the planted send never reached it
    ],
    "observe_only.py": ["2: tool_call   block  block-values-from-detected-injection"],
}


def test_every_example_is_checked() -> None:
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_runs(name: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    for marker in EXPECTED[name]:
        assert marker in done.stdout, done.stdout
    with AuditStore(f"sqlite:///{tmp_path / '.overseer' / 'examples.db'}") as store:
        assert store.count("steps") > 0
