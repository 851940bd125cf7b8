"""The official Python MCP SDK (`mcp` on PyPI) against bin/loopback, in its default mode (MCP
2026-07-28, after a server/discover probe) and its legacy mode (the 2025-11-25 initialize
handshake). What a Python agent meets:

- a blocking ask_question that the person answers after 70 s returns their reply: the call sends
  no progress token, so Loopback keeps the stream alive with SSE comment lines (which the SDK
  skips) while it waits;
- an agent killed mid-wait loses nothing: a new client finds the ask with list_open_asks and
  await_reply returns the reply.

The agent uses the token `loopback serve` prints for agents, as a user would.
"""

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest

from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("LOOPBACK_BIN", ROOT / "bin" / "loopback"))
OWNER = "lb_python-e2e-owner-token-0123456789abcdefghij"
MODES = {"default": "auto", "legacy": "legacy"}
# The revision each mode must end up speaking with Loopback.
PROTOCOL = {"default": "2026-07-28", "legacy": "2025-11-25"}


class Server:
    """bin/loopback serve on a free port of 127.0.0.1, in a fresh data folder."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="loopback-py-")
        env = {**os.environ, "LOOPBACK_TOKEN": OWNER}
        ready = Path(self.dir) / "ready.json"  # where it listens, once it does (no token in it)
        self.proc = subprocess.Popen(
            [str(BIN), "serve", "--addr", "127.0.0.1:0", "--data", self.dir, "--progress", "2s", "--ready-file", str(ready)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True,
        )
        deadline = time.time() + 15
        while not ready.exists():
            assert self.proc.poll() is None, f"loopback exited with {self.proc.returncode} before it was ready"
            assert time.time() < deadline, "loopback wrote no ready file within 15 s"
            time.sleep(0.02)
        where = json.loads(ready.read_text())
        self.mcp, self.api = where["mcp"], where["api"]
        # The agent's token is the one the welcome gives for agents, as a person copies it from
        # there; the welcome is whole by the time the ready file exists.
        out = ""
        while "One agent token" not in out:
            line = self.proc.stdout.readline()
            assert line, f"the welcome ended early:\n{out}"
            out += line
        tokens = re.findall(r"Bearer (lb_[A-Za-z0-9_-]+)", out)
        assert tokens and all(t == tokens[0] for t in tokens) and tokens[0] != OWNER, out
        self.agent = tokens[0]

    def api_call(self, method, path, body=None):
        req = urllib.request.Request(self.api + path, method=method, headers={"Authorization": "Bearer " + OWNER})
        if body is not None:
            req.data = json.dumps(body).encode()
            req.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(req, timeout=10) as res:
            return json.loads(res.read())

    def open_ask(self, project, timeout=15):
        deadline = time.time() + timeout
        while time.time() < deadline:
            for a in self.api_call("GET", "/snapshot")["open"]:
                if a["project"] == project and a["waiting"]:
                    return a
            time.sleep(0.05)
        raise AssertionError(f"no ask of {project} with an agent waiting")

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=15)


@pytest.fixture(scope="module")
def server():
    s = Server()
    yield s
    s.stop()


def client(server, mode):
    http = create_mcp_http_client(headers={"Authorization": "Bearer " + server.agent})
    return Client(streamable_http_client(server.mcp, http_client=http), mode=mode)


def reply_of(result):
    assert not result.is_error, result
    return result.structured_content


def test_blocking_call_answered_after_70s(server):
    """Both modes ask at once, with a plain call_tool (no progress callback, so no progress token):
    each gets Loopback's own "no reply yet" naming the askId and await_reply after 50 s (the
    default for such a call, under the official SDKs' 60 s), never a client timeout; the person
    answers each after 70 s; await_reply brings the reply."""

    async def ask(mode):
        async with client(server, MODES[mode]) as c:
            assert c.protocol_version == PROTOCOL[mode], (mode, c.protocol_version)
            started = time.time()
            first = await c.call_tool("ask_question", {"question": f"Deploy now? ({mode})", "project": f"py-slow-{mode}"})
            waited = time.time() - started
            return first, waited

    async def resume(mode, ask_id):
        async with client(server, MODES[mode]) as c:
            return await c.call_tool("await_reply", {"askId": ask_id})

    async def main():
        calls = [asyncio.create_task(ask(m)) for m in MODES]
        asks = {m: await asyncio.to_thread(server.open_ask, f"py-slow-{m}") for m in MODES}
        firsts = await asyncio.gather(*calls)
        await asyncio.sleep(max(0, 70 - max(w for _, w in firsts)))
        for m, a in asks.items():
            server.api_call("POST", f"/asks/{a['id']}/reply", {"outcome": "answered", "selected": [], "text": f"yes ({m})"})
        resumed = await asyncio.gather(*(resume(m, a["id"]) for m, a in asks.items()))
        return asks, firsts, resumed

    start = time.time()
    asks, firsts, resumed = asyncio.run(main())
    assert time.time() - start >= 70
    for (mode, a), (first, waited), result in zip(asks.items(), firsts, resumed):
        words = first.content[0].text
        assert first.is_error and a["id"] in words and "await_reply" in words, (mode, words)
        assert 45 <= waited < 60, (mode, waited)
        tr = reply_of(result)
        assert tr["askId"] == a["id"], mode
        assert tr["reply"] == {"outcome": "answered", "selected": [], "text": f"yes ({mode})"}, mode


AGENT = textwrap.dedent("""
    import asyncio, sys
    from mcp.client import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    async def main():
        http = create_mcp_http_client(headers={"Authorization": "Bearer " + sys.argv[2]})
        async with Client(streamable_http_client(sys.argv[1], http_client=http), mode=sys.argv[3]) as c:
            print("calling", flush=True)
            await c.call_tool("ask_question", {"question": "Killed mid-wait?", "project": sys.argv[4]})
    asyncio.run(main())
""")


@pytest.mark.parametrize("mode", list(MODES))
def test_killed_agent_resumes_with_list_open_asks(server, mode):
    project = f"py-killed-{mode}"
    agent = subprocess.Popen([sys.executable, "-c", AGENT, server.mcp, server.agent, MODES[mode], project],
                             stdout=subprocess.PIPE, text=True)
    try:
        a = server.open_ask(project)
    finally:
        agent.kill()
        agent.wait()

    async def resume():
        async with client(server, MODES[mode]) as c:
            assert c.protocol_version == PROTOCOL[mode], (mode, c.protocol_version)
            listed = reply_of(await c.call_tool("list_open_asks", {"project": project}))
            assert [x["askId"] for x in listed["asks"]] == [a["id"]], listed
            entry = listed["asks"][0]
            assert entry["kind"] == "question" and entry["move"] == "person", entry
            assert entry["title"] == "Killed mid-wait?" and entry["askedAt"] == a["createdAt"], (entry, a)
            waiting = asyncio.create_task(c.call_tool("await_reply", {"askId": listed["asks"][0]["askId"]}))
            await asyncio.to_thread(server.open_ask, project)  # followed again
            server.api_call("POST", f"/asks/{a['id']}/reply", {"outcome": "answered", "selected": [], "text": "found you"})
            return await waiting

    tr = reply_of(asyncio.run(resume()))
    assert tr["askId"] == a["id"]
    assert tr["reply"]["text"] == "found you"
