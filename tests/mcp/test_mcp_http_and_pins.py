"""The MCP proxy over streamable HTTP (a real SDK server over HTTP behind ``overseer mcp proxy --upstream``, real
SDK clients over HTTP in front), its bearer token beyond loopback, and tool pins kept in the audit store across
sessions (``overseer mcp pins`` / ``accept``)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP proxy needs the mcp extra")

import anyio
import httpx
from mcp import Client, StdioServerParameters

from overseer.store import AuditStore

SERVER = Path(__file__).with_name("mail_server.py")
OVERSEER = Path(sys.executable).with_name("overseer")
PINNING = """version: 1
name: rules-and-pins
scorers: {rules: {type: rules}}
rules:
  - name: withhold-changed-tools
    when: {kind: tool_change}
    action: block
  - name: block-values-from-tool-output
    when: {kind: tool_call, args_from: {kind: observation, args: [to, recipient, url]}}
    action: block
"""
BENIGN = [("read_file", {"path": "notes.txt"}), ("write_file", {"path": "todo.txt", "content": "call Bob"}),
          ("read_file", {"path": "todo.txt"}), ("read_file", {"path": "missing.txt"})]  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(url: str, proc: subprocess.Popen[str], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"exited with {proc.returncode}: {proc.stderr.read() if proc.stderr else ''}")
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.2)
    raise AssertionError(f"nothing listens at {url}")


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[str]:
    """The mail server over streamable HTTP, its injected e-mail in the inbox; its log at tmp_path/server.log."""
    port = free_port()
    env = dict(os.environ, MAIL_SERVER_LOG=str(tmp_path / "server.log"), MAIL_SERVER_POISON="1")
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "--http", str(port)], env=env, stderr=subprocess.PIPE, text=True
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        wait_for(url, proc)
        yield url
    finally:
        stop(proc)


def stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=60)
    finally:
        if proc.stderr is not None:
            proc.stderr.close()


def start_proxy(tmp_path: Path, *options: str) -> tuple[subprocess.Popen[str], str]:
    """``overseer mcp proxy ...`` in the background; the URL it announces on stderr."""
    proc = subprocess.Popen([str(OVERSEER), "mcp", "proxy", *options], stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    assert proc.stderr is not None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if "serving http" in line:
            return proc, line.split("serving ", 1)[1].strip()
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise AssertionError(f"the proxy did not start: {proc.stderr.read()}")


def received(tmp_path: Path) -> list[dict[str, Any]]:
    log = tmp_path / "server.log"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_http_in_front_of_an_http_server(tmp_path: Path, http_server: str) -> None:
    """Two HTTP clients (the handshake era and the 2026-07-28 protocol) through the proxy: benign calls pass byte
    for byte, the planted recipient never reaches the server, and each client session is its own trajectory."""

    async def calls(server: Any) -> list[str]:
        async with Client(server, read_timeout_seconds=60) as client:
            return [(await client.call_tool(name, args)).model_dump_json() for name, args in BENIGN]

    direct = StdioServerParameters(command=sys.executable, args=[str(SERVER)], env=dict(os.environ))
    expected = anyio.run(calls, direct)  # the same server's answers, over stdio
    policy = tmp_path / "pins.yaml"
    policy.write_text(PINNING)
    store = f"sqlite:///{tmp_path / 'audit.db'}"
    proxy, url = start_proxy(tmp_path, "--upstream", http_server, "--listen", "127.0.0.1:0", "--policy", str(policy),
                             "--store", store)  # fmt: skip
    try:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")

        async def hijacked(mode: str) -> tuple[list[str], Any, Any]:
            async with Client(url, mode=mode, read_timeout_seconds=60) as client:  # type: ignore[arg-type]
                listed = [t.name for t in (await client.list_tools(cache_mode="refresh")).tools]
                inbox = await client.call_tool("read_inbox", {})
                send = await client.call_tool("send_email", {"to": "hr-backup@quick-share.app", "body": "payroll"})
                return listed, inbox, send

        got = anyio.run(calls, url)
        listed, inbox, send = anyio.run(hijacked, "legacy")
        listed_modern, _, send_modern = anyio.run(hijacked, "auto")
    finally:
        stop(proxy)
    assert got == expected
    # the first session pinned the tools; the server's weather description changed after it
    assert "send_email" in listed and "weather" not in listed and "weather" not in listed_modern
    assert not inbox.is_error and "quick-share" in inbox.content[0].text  # not cut: no detector in this policy
    for refused in (send, send_modern):
        assert refused.is_error and "block-values-from-tool-output" in refused.content[0].text
    reached = [r["tool"] for r in received(tmp_path)]
    assert reached == [*(name for name, _ in BENIGN), "read_inbox", "read_inbox"]

    with AuditStore(store) as audit:
        trajectories = audit.list_trajectories()
        kinds = [[s.kind for s in audit.get_trajectory(t.id)[1]] for t in trajectories]  # type: ignore[index]
    assert len(trajectories) == 3  # one per client session
    hijacked = [k for k in kinds if "tool_call" in k and k.count("tool_call") == 2]  # read_inbox, send_email
    assert len(hijacked) == 2 and all(k.count("tool_change") == 1 for k in hijacked)
    assert all(t.status == "completed" for t in trajectories)


def test_beyond_loopback_every_client_needs_the_token(tmp_path: Path, http_server: str) -> None:
    token = "a-token-of-twenty-chars"
    port = free_port()
    proxy, url = start_proxy(
        tmp_path, "--upstream", http_server, "--listen", f"0.0.0.0:{port}", "--token", token, "--no-store",
        "--policy", "permissive",
    )  # fmt: skip
    try:
        local = url.replace("0.0.0.0", "127.0.0.1")
        refused = httpx.post(local, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=10)
        wrong = httpx.post(local, json={}, headers={"Authorization": "Bearer not-the-token-at-all"}, timeout=10)

        async def listed() -> list[str]:
            from mcp.client.streamable_http import streamable_http_client

            client = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
            async with client, Client(streamable_http_client(local, http_client=client)) as mcp_client:
                return [t.name for t in (await mcp_client.list_tools()).tools]

        names = anyio.run(listed)
    finally:
        stop(proxy)
    assert refused.status_code == 401 and wrong.status_code == 401
    assert "read_inbox" in names


def test_pins_outlive_the_session_and_a_person_accepts_a_change(tmp_path: Path) -> None:
    """Session 1 pins the tools; the server is updated; session 2 withholds the changed tool at its first listing;
    `overseer mcp pins` shows both versions; after `overseer mcp accept`, session 3 lists it again."""
    policy = tmp_path / "pins.yaml"
    policy.write_text(PINNING)
    store = f"sqlite:///{tmp_path / 'audit.db'}"

    def listed(version: str) -> tuple[list[str], str]:
        env = dict(os.environ, MAIL_SERVER_VERSION=version)
        args = ["mcp", "proxy", "--store", store, "--policy", str(policy), "--", sys.executable, str(SERVER)]
        params = StdioServerParameters(command=str(OVERSEER), args=args, env=env)

        async def run() -> tuple[list[str], str]:
            async with Client(params, read_timeout_seconds=60) as client:
                names = [t.name for t in (await client.list_tools()).tools]
                call = await client.call_tool("weather", {"city": "Oslo"})
                return names, call.content[0].text

        return anyio.run(run)

    first, _ = listed("1")
    second, refused = listed("2")
    assert "weather" in first and "weather" not in second and "since it was last accepted" in refused

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(OVERSEER), "mcp", *args, "--store", store], capture_output=True, text=True, timeout=120
        )

    pins = [json.loads(line) for line in cli("pins", "--tool", "weather", "--json").stdout.splitlines()]
    assert [p["status"] for p in pins] == ["accepted", "refused"] and "IMPORTANT" in pins[1]["description"]
    assert cli("pins").returncode == 0
    missing = cli("accept", "read_inbox", "--server", "mail-files")
    assert missing.returncode != 0 and "no refused tool 'read_inbox'" in missing.stderr
    assert cli("accept", "weather", "--server", "mail-files").returncode == 0

    third, answer = listed("2")
    assert "weather" in third and answer == "Sunny in Oslo, 21 C."
    with AuditStore(store) as audit:
        changes = [s.step for s in audit.list_steps(limit=500) if s.kind == "tool_change"]
    assert len(changes) == 1 and changes[0].since == "store"  # type: ignore[union-attr]
