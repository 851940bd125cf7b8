#!/usr/bin/env python3
"""bench/replypath: a person's answer → the agent's call returns, Loopback beside its peers.

One driver, the official Python MCP SDK (`mcp`, pinned in requirements.txt), is the agent for
every system; the person answers through each product's own interface:

- Loopback (`bin/loopback serve`, SQLite): the agent's blocking `ask_question` over streamable
  HTTP; the person's reply as the inbox sends it: on the event socket it holds open (an
  "ask.reply" frame, answered with "ask.replied", contract revision 8) when the server writes
  revision 8 or later, else `POST /api/v1/asks/{id}/reply`, with a person's (the owner's) token.
  `--loopback-reply http` (and `--compare-reply`) sends every reply over HTTP instead.
- mcp-feedback-enhanced (PyPI, over stdio as its users run it): the agent's blocking
  `interactive_feedback`; the person's browser tab is a WebSocket to its web UI (`/ws`), kept
  open across asks as the tab is, and the answer is its `submit_feedback` message.
- AgentRQ (built from its public repository, SQLite): the agent's `createTask`, then the person's
  `POST /api/v1/workspaces/{w}/tasks/{t}/reply` with the session cookie its root login gives; the
  agent hears the reply as a `notifications/claude/channel` notification on its MCP session.

The person is a process of its own (as a person's browser is not the agent's process), with one
HTTP client for everything it sends; the agent's SDK runs in the driver's process. Both read the
same clock (CLOCK_MONOTONIC), so an interval may start in one and end in the other.

Each round asks each system once, in an order that rotates from round to round, and times one
bare HTTP round trip (`GET /` on a server that answers every request with the same 2 bytes) and
one `GET /api/v1/whoami` to Loopback, from the same HTTP client the person uses, each after the
same pause as an answer (a request after an idle spell is slower than one right after another).
Every figure is also given as a ratio to the bare round trip's p50. A system's ask is answered
300 ms after it is seen waiting (--think; a person is never faster, and mcp-feedback-enhanced starts its wait 200 ms
after it has told the tab of a new ask), and the clock runs from just before the answer is sent
to the moment the agent's SDK hands back the result (or, for AgentRQ, the notification).

Run it with bench/replypath/run (which makes the venv and builds what is missing), or by hand:

    bench/replypath/.venv/bin/python bench/replypath/replypath.py --loopback bin/loopback \
        --agentrq /tmp/agentrq-server --agentrq-config /path/to/agentrq/backend/cmd/server/_config \
        --asks 200
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2
import websockets
from mcp.client import Client
from mcp.client import session as mcp_session
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

OWNER = "lb_replypath-bench-owner-0123456789abcdefghij"
THINK = 0.3  # how long after an ask is seen waiting the person answers (--think)
now = time.monotonic  # CLOCK_MONOTONIC: the same clock in the driver and the person's process


_ports: set[int] = set()


def free_port() -> int:
    """A port free now and not handed out before in this run: mcp-feedback-enhanced binds its
    port only at its first ask, after the other systems have started."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in _ports:
            _ports.add(port)
            return port


async def wait_for(pred, timeout: float, what: str, every: float = 0.005):
    deadline = now() + timeout
    while True:
        got = await pred()
        if got:
            return got
        if now() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        await asyncio.sleep(every)


# AgentRQ tells the agent of a reply with a notification the SDK has no type for
# ("notifications/claude/channel"); the SDK drops such a notification after its dispatcher has
# read it. The hook below sees every notification there first, with the time it arrived.
_notify_hooks: list = []
_orig_on_notify = mcp_session.ClientSession._on_notify


async def _on_notify(self, dctx, method, params):
    t = now()
    for hook in _notify_hooks:
        hook(method, params, t)
    return await _orig_on_notify(self, dctx, method, params)


mcp_session.ClientSession._on_notify = _on_notify


BARE_SERVER = r"""
import asyncio, sys
RES = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok"
class P(asyncio.Protocol):
    def connection_made(self, t): self.t, self.buf = t, b""
    def data_received(self, d):
        self.buf += d
        while b"\r\n\r\n" in self.buf:
            _, self.buf = self.buf.split(b"\r\n\r\n", 1)
            self.t.write(RES)
async def main():
    s = await asyncio.get_running_loop().create_server(P, "127.0.0.1", int(sys.argv[1]))
    print("ready", flush=True)
    await s.serve_forever()
asyncio.run(main())
"""


class Bare:
    """A server that answers every request at once: the floor an HTTP round trip has here."""

    async def start(self, stack: contextlib.AsyncExitStack):
        self.port = free_port()
        self.proc = subprocess.Popen([sys.executable, "-c", BARE_SERVER, str(self.port)], stdout=subprocess.PIPE, text=True)
        stack.callback(self.proc.kill)
        assert self.proc.stdout.readline().strip() == "ready"
        self.url = f"http://127.0.0.1:{self.port}/"



class Person:
    """The person: a process of its own with one HTTP client (and, for mcp-feedback-enhanced, the
    browser tab's WebSocket), told what to answer over a pipe. Every time it reports is now()."""

    def __init__(self):
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=person_main, args=(child,), daemon=True)
        self.proc.start()

    async def __call__(self, *cmd):
        def call():
            self.conn.send(cmd)
            return self.conn.recv()

        ok, res = await asyncio.get_running_loop().run_in_executor(None, call)
        if not ok:
            raise RuntimeError(f"the person's {cmd[0]}: {res}")
        return res

    def close(self):
        with contextlib.suppress(Exception):
            self.conn.send(("quit",))
        self.proc.join(10)
        self.proc.kill()


def person_main(conn):
    asyncio.run(_person(conn))


async def _person(conn):
    loop = asyncio.get_running_loop()
    http = httpx2.AsyncClient(timeout=30)
    tab = {}  # mcp-feedback-enhanced's tab: its WebSocket and what it has been sent

    async def get(url, headers=None, think=0):
        await asyncio.sleep(think)
        t0 = now()
        r = await http.get(url, headers=headers)
        t1 = now()
        r.raise_for_status()
        return t1 - t0

    async def lb_waiting(api, auth, project):
        """The id of the project's ask once an agent waits on it, as the inbox shows it."""
        async def waiting():
            r = await http.get(api + "/snapshot", headers=auth)
            for a in r.json()["open"]:
                if a["project"] == project and a.get("waiting"):
                    return a["id"]
            return None

        return await wait_for(waiting, 30, "the ask to be waiting")

    async def lb_reply(api, auth, project, think, text):
        ask_id = await lb_waiting(api, auth, project)
        await asyncio.sleep(think)
        t0 = now()
        r = await http.post(f"{api}/asks/{ask_id}/reply", headers=auth, json={"outcome": "answered", "selected": [], "text": text})
        t1 = now()
        if r.status_code != 200:
            raise RuntimeError(r.text)
        return t0, t1

    async def lb_socket_reply(api, auth, project, think, text):
        """The reply as the inbox sends it on its event socket (contract revision 8): one frame on
        the socket it holds open, timed to the frame that answers it."""
        key = "loopback " + api
        if key not in tab:
            # The inbox's socket: a browser offers a one-time ticket; a program its bearer token.
            url = api.replace("http", "ws", 1) + "/events"
            tab[key] = await websockets.connect(url, subprotocols=["loopback.v1"], additional_headers=auth, max_size=None)
            assert json.loads(await tab[key].recv())["type"] == "snapshot"
        sock = tab[key]
        ask_id = await lb_waiting(api, auth, project)
        await asyncio.sleep(think)
        ref = f"r{project}"
        t0 = now()
        await sock.send(json.dumps({"type": "ask.reply", "ref": ref, "askId": ask_id, "reply": {"outcome": "answered", "selected": [], "text": text}}))
        while True:
            m = json.loads(await sock.recv())
            if m.get("ref") == ref and m["type"] in ("ask.replied", "request.failed"):
                break
        t1 = now()
        if m["type"] != "ask.replied":
            raise RuntimeError(m)
        return t0, t1

    async def arq_reply(url, cookie, think, text):
        await asyncio.sleep(think)
        t0 = now()
        r = await http.post(url, headers=cookie, json={"reply": {"text": text}})
        t1 = now()
        if r.status_code != 200:
            raise RuntimeError(r.text)
        return t0, t1

    async def mfe_reply(port, think, text):
        if "ws" not in tab:
            # The first ask starts the web UI; the person opens it once and keeps the tab.
            async def connect():
                try:
                    return await websockets.connect(f"ws://127.0.0.1:{port}/ws")
                except (OSError, websockets.exceptions.InvalidStatus):
                    return None

            tab["ws"] = await wait_for(connect, 60, "mcp-feedback-enhanced's web UI", every=0.05)
            want = "connection_established"
        else:
            want = "session_updated"  # the tab hears of the next ask
        while json.loads(await asyncio.wait_for(tab["ws"].recv(), 30)).get("type") != want:
            pass
        await asyncio.sleep(think)
        t0 = now()
        await tab["ws"].send(json.dumps({"type": "submit_feedback", "feedback": text, "images": [], "settings": {}}))
        return t0, None

    cmds = {"get": get, "lb_reply": lb_reply, "lb_socket_reply": lb_socket_reply, "arq_reply": arq_reply, "mfe_reply": mfe_reply}
    while True:
        cmd = await loop.run_in_executor(None, conn.recv)
        if cmd[0] == "quit":
            break
        try:
            conn.send((True, await cmds[cmd[0]](*cmd[1:])))
        except Exception as e:  # noqa: BLE001: reported to the driver, which stops
            conn.send((False, repr(e)))
    for ws in tab.values():
        await ws.close()
    await http.aclose()

class Loopback:
    def __init__(self, args, person: Person, bin: str = "", name: str = "loopback", reply: str = "inbox"):
        self.bin, self.mode, self.person, self.name, self.reply = bin or args.loopback, args.mode, person, name, reply
        self.serve_flags = args.loopback_flags.split()

    async def start(self, stack):
        self.dir = tempfile.mkdtemp(prefix="replypath-lb-")
        stack.callback(shutil.rmtree, self.dir, True)
        ready = Path(self.dir) / "ready.json"
        self.proc = subprocess.Popen(
            [self.bin, "serve", "--addr", "127.0.0.1:0", "--data", self.dir, "--ready-file", str(ready), *self.serve_flags],
            stdout=subprocess.DEVNULL, stderr=open(Path(self.dir) / "server.log", "w"), env={**os.environ, "LOOPBACK_TOKEN": OWNER},
        )
        stack.callback(self.stop)

        async def is_ready():
            assert self.proc.poll() is None, "loopback exited"
            return ready.exists()

        await wait_for(is_ready, 30, "loopback's ready file")
        where = json.loads(ready.read_text())
        self.api = where["api"]
        # As the inbox does: the socket takes replies from revision 8 on.
        revision = int(httpx2.get(self.api + "/whoami", headers={"Authorization": "Bearer " + OWNER}).headers["Loopback-Revision"])
        self.via = "socket" if self.reply == "socket" or (self.reply == "inbox" and revision >= 8) else "http"
        agent = (Path(self.dir) / "agent.token").read_text().strip()
        self.auth = {"Authorization": "Bearer " + OWNER}
        http = create_mcp_http_client(headers={"Authorization": "Bearer " + agent})
        self.agent = await stack.enter_async_context(Client(streamable_http_client(where["mcp"], http_client=http), mode=self.mode))

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(10)
        self.proc.kill()
        self.held = held_in_log(Path(self.dir) / "server.log")

    async def whoami(self) -> float:
        return await self.person("get", self.api + "/whoami", self.auth, THINK)

    async def one(self, i: int):
        project = f"replypath-{i}"
        got = {}

        async def call():
            r = await self.agent.call_tool("ask_question", {"question": f"Go ahead with step {i}?", "project": project})
            got["t"] = now()
            got["r"] = r

        task = asyncio.create_task(call())
        t0, t1 = await self.person("lb_socket_reply" if self.via == "socket" else "lb_reply", self.api, self.auth, project, THINK, f"yes {i}")
        await task
        res = got["r"]
        assert not res.is_error and f"yes {i}" in json.dumps(res.structured_content), res
        return got["t"] - t0, t1 - t0


def held_in_log(path: Path) -> dict[str, list[float]]:
    """How long Loopback held each reply and whoami request by its own request log (`ms=`, from
    the request's arrival at its API handler to the handler's return), in seconds, in order."""
    held: dict[str, list[float]] = {"reply": [], "whoami": []}
    with contextlib.suppress(FileNotFoundError):
        for line in path.read_text().splitlines():
            m = re.search(r" path=/api/v1/(asks/\S+/reply|whoami) status=200 .*? ms=([0-9.]+)", line)
            if m:
                held["whoami" if m.group(1) == "whoami" else "reply"].append(float(m.group(2)) / 1e3)
            # A reply on the event socket (contract revision 8): its own line, from the frame read to
            # its answer made.
            m = re.search(r" msg=socket frame=ask\.reply .*?status=200 .*?ms=([0-9.]+)", line)
            if m:
                held["reply"].append(float(m.group(1)) / 1e3)
    return held


class FeedbackEnhanced:
    name = "mcp-feedback-enhanced"

    def __init__(self, args, person):
        self.cmd, self.mode, self.person = args.feedback_enhanced, args.mode, person

    async def start(self, stack):
        self.port = free_port()
        self.home = tempfile.mkdtemp(prefix="replypath-mfe-")
        stack.callback(shutil.rmtree, self.home, True)
        env = {"MCP_WEB_HOST": "127.0.0.1", "MCP_WEB_PORT": str(self.port), "HOME": self.home, "MCP_DEBUG": "false"}
        params = StdioServerParameters(command=self.cmd, env=env, cwd=self.home)
        self.errlog = open(Path(self.home) / "stderr.log", "w")
        self.agent = await stack.enter_async_context(Client(stdio_client(params, errlog=self.errlog), mode=self.mode))

    async def one(self, i: int):
        got = {}

        async def call():
            r = await self.agent.call_tool("interactive_feedback", {"project_directory": self.home, "summary": f"Step {i} done. Go ahead?", "timeout": 600})
            got["t"] = now()
            got["r"] = r

        task = asyncio.create_task(call())
        t0, _ = await self.person("mfe_reply", self.port, THINK, f"yes {i}")
        await task
        res = got["r"]
        assert not res.is_error and f"yes {i}" in str(res.content), res
        return got["t"] - t0, None


class AgentRQ:
    name = "agentrq"

    def __init__(self, args, person):
        self.bin, self.config, self.person = args.agentrq, args.agentrq_config, person
        self.setup = httpx2.AsyncClient(timeout=30)  # the person's login and workspace, not timed

    async def start(self, stack):
        self.dir = tempfile.mkdtemp(prefix="replypath-arq-")
        stack.callback(shutil.rmtree, self.dir, True)
        shutil.copytree(self.config, Path(self.dir) / "_config")
        (Path(self.dir) / "_storage").mkdir()
        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        env = {
            **os.environ, "ENV": "development", "PORT": str(port), "AGENTRQ_BASE_URL": self.base, "AGENTRQ_DOMAIN": "localhost",
            "AGENTRQ_SQLITE_DSN": "./_storage/agentrq.db", "AGENTRQ_AUTH_ROOT_LOGIN_ENABLED": "true",
            "AGENTRQ_AUTH_ROOT_ACCESS_TOKEN": "replypath-root", "AGENTRQ_AUTH_JWT_SECRET": "replypath-jwt-secret-0123456789abcdef",
            "AGENTRQ_SMTP_ENABLED": "false",
            # Its per-IP request limits would refuse a benchmark's requests, all from 127.0.0.1.
            "AGENTRQ_DDOS_ENABLED": "false", "AGENTRQ_RATELIMIT_ENABLED": "false",
        }
        self.proc = subprocess.Popen([self.bin], cwd=self.dir, env=env, stdout=subprocess.DEVNULL, stderr=open(Path(self.dir) / "server.log", "w"))
        stack.callback(self.stop)
        stack.push_async_callback(self.setup.aclose)

        async def login():
            assert self.proc.poll() is None, "agentrq exited"
            try:
                r = await self.setup.post(self.base + "/api/v1/auth/root/login", json={"rootToken": "replypath-root"})
            except httpx2.TransportError:
                return None
            r.raise_for_status()
            return r.cookies["at"]

        self.cookie = {"Cookie": "at=" + await wait_for(login, 30, "agentrq to listen", every=0.05)}
        r = await self.setup.post(self.base + "/api/v1/workspaces", headers=self.cookie, json={"workspace": {"name": "replypath", "description": "bench"}})
        r.raise_for_status()
        self.ws_id = r.json()["workspace"]["id"]
        r = await self.setup.get(f"{self.base}/api/v1/workspaces/{self.ws_id}/token", headers=self.cookie)
        r.raise_for_status()
        url = f"{self.base}/mcp/{self.ws_id}?token={r.json()['token']}"
        self.heard: dict[str, float] = {}
        self.event = asyncio.Event()

        def hook(method, params, t):
            if method == "notifications/claude/channel":
                self.heard[params["meta"]["chat_id"]] = t
                self.event.set()

        _notify_hooks.append(hook)
        # AgentRQ speaks MCP 2025-11-25 (the official Go SDK): the notification comes on the
        # session's GET stream, which only the handshake-era session has.
        self.agent = await stack.enter_async_context(Client(streamable_http_client(url), mode="legacy"))

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(10)
        self.proc.kill()

    async def one(self, i: int):
        r = await self.agent.call_tool("createTask", {"title": f"Step {i}", "body": f"Go ahead with step {i}?"})
        m = re.search(r"id=(\w+)", r.content[0].text)
        assert m, r
        task_id = m.group(1)
        self.event.clear()
        url = f"{self.base}/api/v1/workspaces/{self.ws_id}/tasks/{task_id}/reply"
        t0, t1 = await self.person("arq_reply", url, self.cookie, THINK, f"yes {i}")
        while task_id not in self.heard:
            await asyncio.wait_for(self.event.wait(), 30)
            self.event.clear()
        return self.heard.pop(task_id) - t0, t1 - t0


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(p / 100 * len(xs)) - 1))]


def load():
    return os.getloadavg()


async def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loopback", default="bin/loopback", help="the loopback binary")
    ap.add_argument("--compare", default="", help="another loopback binary (such as main's build) to run beside it as a fourth system, \"loopback (compared)\"")
    ap.add_argument("--loopback-reply", default="inbox", choices=["inbox", "socket", "http"], help="how the person replies to Loopback: as the inbox does (on the event socket from revision 8, else over HTTP), or always one way")
    ap.add_argument("--compare-reply", default="inbox", choices=["inbox", "socket", "http"], help="the same, for --compare")
    ap.add_argument("--loopback-flags", default="", help="more flags for `loopback serve`, space-separated")
    ap.add_argument("--feedback-enhanced", default=str(Path(sys.executable).parent / "mcp-feedback-enhanced"), help="mcp-feedback-enhanced's command ('' leaves it out)")
    ap.add_argument("--agentrq", default="", help="AgentRQ's server binary, built from its repository ('' leaves it out)")
    ap.add_argument("--agentrq-config", default="", help="AgentRQ's backend/cmd/server/_config folder")
    ap.add_argument("--asks", type=int, default=200, help="asks timed per system")
    ap.add_argument("--warmup", type=int, default=5, help="rounds run first and not counted")
    ap.add_argument("--mode", default="auto", help="the SDK's mode for Loopback and mcp-feedback-enhanced: auto (MCP 2026-07-28 where offered) or legacy")
    ap.add_argument("--think", type=float, default=0.3, help="seconds between an ask seen waiting and the person's answer")
    ap.add_argument("--json", default="", help="also write every sample to this file")
    args = ap.parse_args()
    global THINK
    THINK = args.think

    person = Person()
    try:
        async with contextlib.AsyncExitStack() as stack:
            bare = Bare()
            await bare.start(stack)
            lb = Loopback(args, person, reply=args.loopback_reply)
            systems = [lb]
            if args.compare:
                systems.append(Loopback(args, person, args.compare, "loopback (compared)", reply=args.compare_reply))
            if args.feedback_enhanced:
                systems.append(FeedbackEnhanced(args, person))
            if args.agentrq:
                systems.append(AgentRQ(args, person))
            for s in systems:
                await s.start(stack)
            samples = {s.name: {"answer": [], "request": []} for s in systems}
            samples["bare"] = {"answer": [], "request": []}
            samples["whoami"] = {"answer": [], "request": []}
            load_before = load()
            started = time.time()
            for rnd in range(args.warmup + args.asks):
                k = rnd % len(systems)
                order = systems[k:] + systems[:k]
                count = rnd >= args.warmup
                for s in order:
                    answer, request = await s.one(rnd)
                    if count:
                        samples[s.name]["answer"].append(answer)
                        if request is not None:
                            samples[s.name]["request"].append(request)
                # The floors, timed as the answers are: each after the person's pause (a request
                # after an idle spell is slower than one right after another, here about 2.1 ms
                # against 1.3 ms for whoami).
                b = await person("get", bare.url, None, THINK)
                w = await lb.whoami()
                if count:
                    samples["bare"]["request"].append(b)
                    samples["whoami"]["request"].append(w)
            took = time.time() - started
    finally:
        person.close()

    floor = statistics.median(samples["bare"]["request"])
    print(f"{args.asks} asks per system (+{args.warmup} warm-up rounds), rotating order, in {took:.0f} s; "
          f"load average before {load_before[0]:.2f}, after {load()[0]:.2f}")
    print(f"bare HTTP round trip p50 {floor * 1e3:.2f} ms (the ratios' unit)\n")
    print(f"| {'system':<24} | {'answer → call returns p50':>26} | {'p99':>9} | {'p99/p50':>7} | {'reply request p50':>17} | {'p99':>9} |")
    print(f"|{'-' * 26}|{'-' * 28}|{'-' * 11}|{'-' * 9}|{'-' * 19}|{'-' * 11}|")
    for name, d in samples.items():
        a, r = d["answer"], d["request"]
        fa = f"{pct(a, 50) * 1e3:.2f} ms ({pct(a, 50) / floor:.2f}×)" if a else "-"
        fa99 = f"{pct(a, 99) * 1e3:.2f} ms" if a else "-"
        ratio = f"{pct(a, 99) / pct(a, 50):.2f}" if a else "-"
        fr = f"{pct(r, 50) * 1e3:.2f} ms ({pct(r, 50) / floor:.2f}×)" if r else "-"
        fr99 = f"{pct(r, 99) * 1e3:.2f} ms" if r else "-"
        print(f"| {name:<24} | {fa:>26} | {fa99:>9} | {ratio:>7} | {fr:>17} | {fr99:>9} |")
    rq, wh = samples["loopback"]["request"], samples["whoami"]["request"]
    for s in systems:
        if isinstance(s, Loopback):
            print(f"{s.name} replied {'on its event socket (a frame and its answer)' if s.via == 'socket' else 'with POST /api/v1/asks/{id}/reply'}")
    print(f"\nLoopback's reply request / whoami, p50: {pct(rq, 50) / pct(wh, 50):.2f}×")
    # The server's own share: the counted rounds are the last ones in its log.
    hr, hw = lb.held["reply"][-args.asks:], lb.held["whoami"][-args.asks:]
    if hr and hw:
        print(f"held by Loopback itself (its request log), p50: reply {pct(hr, 50) * 1e3:.2f} ms of the "
              f"{pct(rq, 50) * 1e3:.2f} ms the person waits, whoami {pct(hw, 50) * 1e3:.2f} ms of {pct(wh, 50) * 1e3:.2f} ms")
    names = [s.name for s in systems]
    for i, x in enumerate(names):
        for y in names[i + 1:]:
            paired = [p / q for p, q in zip(samples[x]["answer"], samples[y]["answer"])]
            print(f"paired per round, {x} / {y}: median {statistics.median(paired):.2f}×")
    if args.json:
        Path(args.json).write_text(json.dumps(samples))


if __name__ == "__main__":
    asyncio.run(main())
