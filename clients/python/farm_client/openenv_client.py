"""Farm devices as OpenEnv environments, from Python with the standard library only.

A worker started with ``--openenv-port P`` speaks OpenEnv's server protocol (meta-pytorch/OpenEnv 0.2.x):
``GET /health``, ``GET /metadata``, ``GET /schema`` and one session per WebSocket at ``/ws``, with the messages
``{"type": "reset", "data": {...}}``, ``{"type": "step", "data": {action}}``, ``{"type": "state"}`` and
``{"type": "close"}``, answered by ``{"type": "observation", "data": {"observation", "reward", "done"}}``,
``{"type": "state", "data": {...}}`` or ``{"type": "error", "data": {"message", "code"}}``.

OpenEnv's own ``GenericEnvClient(base_url="http://host:P")`` works against it unchanged (dict actions); this
module is the same conversation without any dependency (a small RFC 6455 client)::

    from farm_client.openenv_client import OpenEnvClient
    with OpenEnvClient("http://127.0.0.1:8430") as env:
        r = env.reset(task="todo_note_create", seed=3)
        print(r.observation["goal"], len(r.observation["elements"]))
        r = env.step({"action_type": "click", "index": 0})
        print(r.reward, r.done, env.state()["step_count"])
"""

import base64
import hashlib
import json
import os
import socket
import struct
import urllib.parse
import urllib.request

__all__ = ["OpenEnvClient", "OpenEnvError", "StepResult"]

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class OpenEnvError(RuntimeError):
    """An ``{"type": "error"}`` answer (``code``: OpenEnv's WSErrorCode), or the connection failing."""

    def __init__(self, message, code="CONNECTION", data=None):
        super().__init__("%s (code: %s)" % (message, code))
        self.code = code
        self.data = data or {}


class StepResult:
    """What reset and step return, as OpenEnv's StepResult: observation (a dict), reward, done."""

    __slots__ = ("observation", "reward", "done")

    def __init__(self, observation, reward, done):
        self.observation = observation
        self.reward = reward
        self.done = done

    def __repr__(self):
        return "StepResult(reward=%r, done=%r)" % (self.reward, self.done)


class _WebSocket:
    """A blocking RFC 6455 client: masked text frames out; text, ping and close frames in."""

    def __init__(self, url, headers, timeout, max_message_bytes):
        u = urllib.parse.urlsplit(url)
        if u.scheme != "ws":
            raise ValueError("only ws:// URLs (no TLS in this client): %r" % url)
        host, port = u.hostname, u.port or 80
        self.max = max_message_bytes
        self.sock = socket.create_connection((host, port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        path = (u.path or "/") + (("?" + u.query) if u.query else "")
        lines = ["GET %s HTTP/1.1" % path, "Host: %s:%d" % (host, port), "Upgrade: websocket", "Connection: Upgrade",
                 "Sec-WebSocket-Key: " + key, "Sec-WebSocket-Version: 13"]
        lines += ["%s: %s" % kv for kv in headers.items()]
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise OpenEnvError("the server closed the connection during the handshake")
            head += chunk
            if len(head) > 65536:
                raise OpenEnvError("handshake answer too long")
        head, self.buf = head.split(b"\r\n\r\n", 1)
        status = head.split(b"\r\n", 1)[0].decode("latin-1")
        if " 101 " not in status + " ":
            raise OpenEnvError("WebSocket upgrade refused: %s" % status, "HANDSHAKE")

        want = base64.b64encode(hashlib.sha1(key.encode() + _GUID).digest()).decode()
        fields = {}
        for line in head.split(b"\r\n")[1:]:
            k, _, v = line.decode("latin-1").partition(":")
            fields[k.strip().lower()] = v.strip()
        if fields.get("sec-websocket-accept") != want:
            raise OpenEnvError("bad Sec-WebSocket-Accept in the handshake", "HANDSHAKE")
        self.closed = False

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(max(65536, n - len(self.buf)))
            if not chunk:
                self.closed = True
                raise OpenEnvError("the server closed the connection")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def _send_frame(self, opcode, payload):
        head = bytes([0x80 | opcode])
        n = len(payload)
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 65536:
            head += bytes([0x80 | 126]) + struct.pack("!H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack("!Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload)) if n < 4096 else _xor(payload, mask)
        self.sock.sendall(head + mask + masked)

    def send_text(self, text):
        self._send_frame(0x1, text.encode("utf-8"))

    def recv_text(self):
        parts, total = [], 0
        while True:
            b0, b1 = self._read(2)
            fin, opcode, n = b0 & 0x80, b0 & 0x0F, b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._read(8))[0]
            if b1 & 0x80:
                raise OpenEnvError("the server sent a masked frame")
            total += n
            if total > self.max:
                raise OpenEnvError("a message over %d bytes" % self.max, "MESSAGE_TOO_BIG")
            payload = self._read(n)
            if opcode == 0x9:  # ping
                self._send_frame(0xA, payload)
                continue
            if opcode == 0xA:  # pong
                continue
            if opcode == 0x8:  # close
                self.closed = True
                code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
                try:
                    self._send_frame(0x8, payload[:2])
                except OSError:
                    pass
                raise OpenEnvError("the server closed the session (%d %s)" % (code, payload[2:].decode("utf-8", "replace")), "CLOSED", {"close_code": code})
            parts.append(payload)
            if fin:
                return b"".join(parts).decode("utf-8")

    def close(self):
        if not self.closed:
            try:
                self._send_frame(0x8, struct.pack("!H", 1000))
            except OSError:
                pass
            self.closed = True
        self.sock.close()


def _xor(payload, mask):
    n = len(payload)
    m = (mask * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(m, "big")).to_bytes(n, "big")


class OpenEnvClient:
    """One OpenEnv session on a farm worker (one device while it is open). ``base_url``: http://host:port or ws://host:port."""

    def __init__(self, base_url, token=None, timeout_s=60.0, max_message_mb=100.0):
        u = base_url.rstrip("/")
        self.http_url = "http" + u[2:] if u.startswith("ws") else u
        self.ws_url = "ws" + u[4:] + "/ws" if u.startswith("http") else u + "/ws"
        self.token = token
        self.timeout = timeout_s
        self.max_bytes = int(max_message_mb * 1024 * 1024)
        self._ws = None

    # --- HTTP (no session) ---
    def _get(self, path):
        req = urllib.request.Request(self.http_url + path)
        with urllib.request.urlopen(req, timeout=self.timeout) as r:
            return json.loads(r.read().decode("utf-8"))

    def health(self):
        return self._get("/health")

    def metadata(self):
        return self._get("/metadata")

    def schema(self):
        return self._get("/schema")

    # --- the session ---
    def connect(self):
        if self._ws is None:
            headers = {"Authorization": "Bearer " + self.token} if self.token else {}
            self._ws = _WebSocket(self.ws_url, headers, self.timeout, self.max_bytes)
        return self

    def _call(self, message):
        self.connect()
        self._ws.send_text(json.dumps(message))
        answer = json.loads(self._ws.recv_text())
        if answer.get("type") == "error":
            data = answer.get("data", {})
            raise OpenEnvError(data.get("message", "unknown error"), data.get("code", "UNKNOWN"), data)
        return answer

    def reset(self, **kwargs):
        """Starts an episode: ``task`` (id), and optionally ``seed``, ``episode_id``, ``params``, ``goal``,
        ``max_episode_steps``, ``max_episode_sec``, ``screenshot`` ("png", "jpeg:80@540x960", "none"), ``elements``."""
        d = self._call({"type": "reset", "data": kwargs})["data"]
        return StepResult(d.get("observation", {}), d.get("reward"), d.get("done", False))

    def step(self, action):
        """One action: an AndroidWorld JSON action dict, or {"action_type": "TOUCH", "touch_position": [x, y]}."""
        d = self._call({"type": "step", "data": action})["data"]
        return StepResult(d.get("observation", {}), d.get("reward"), d.get("done", False))

    def state(self):
        return self._call({"type": "state"})["data"]

    def close(self):
        """Ends the session (the device goes back to the farm's pool)."""
        if self._ws is not None:
            try:
                self._ws.send_text(json.dumps({"type": "close"}))
            except OSError:
                pass
            self._ws.close()
            self._ws = None

    def __enter__(self):
        return self.connect()

    def __exit__(self, *exc):
        self.close()
