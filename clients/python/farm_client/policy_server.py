"""A reference policy server for the farm's HTTP policy protocol 2 (libs/policy/PROTOCOL.md).

    python3 -m farm_client.policy_server --port 8000           # serves POST /act and POST /batch

The farm calls it with ``--policy http:http://127.0.0.1:8000/act`` (one request per device step) or
``--policy http-batch:http://127.0.0.1:8000/batch`` (one request per batch of a worker host's steps).
Replace ``RandomAgent`` with your model: ``act_batch`` gets every pending step of a batch at once, so one
forward pass serves a whole host. ``--agent ui-random`` serves ``RandomClickAgent`` instead, a GUI agent that
reads the goal and the screen as elements and answers AndroidWorld JSON actions (clicks by index). ``GET /stats`` returns request and episode counts (used by tests and
the benchmark).
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import sys
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Optional, Sequence

try:  # numpy is optional: pixels become arrays when it is there, raw bytes otherwise
    import numpy as _np
except ImportError:  # pragma: no cover - depends on the machine
    _np = None

PROTOCOL = 2
MAX_BODY_BYTES = 256 * 1024 * 1024


@dataclass
class StepRequest:
    """One device's step: the observation and what a learner needs with it (dm_env's TimeStep)."""

    item_id: str  # "" for single requests; the batch item id otherwise
    step_type: str  # "first" | "mid"
    reward: float
    discount: float
    observation: Dict[str, Any]
    episode: Optional[Dict[str, Any]]
    context: Optional[Dict[str, Any]]

    @property
    def episode_id(self) -> str:
        return str((self.episode or {}).get("id", ""))

    @property
    def goal(self) -> str:
        """The episode's goal text ("" when the task has none)."""
        return str(self.observation.get("goal") or (self.context or {}).get("goal") or "")

    @property
    def elements(self) -> List[Dict[str, Any]]:
        """The screen as elements (AndroidWorld-style fields; ``index`` is what a click points at), when the
        worker read the screen as a tree for this step; [] otherwise."""
        return list(self.observation.get("elements") or [])

    @property
    def previous(self) -> Optional[Dict[str, Any]]:
        """What became of the previous answer: ``{given, resolved?, invalid?}``; None on the first step."""
        return self.observation.get("previous")

    def pixels(self) -> Any:
        """The screen as a [H, W, 3] uint8 numpy array (numpy installed) or (width, height, bytes).

        PNG pixels are returned as the PNG bytes (decode them with your image library); ask the farm for
        ``pixelEncoding: "rgb"`` to get raw RGB.
        """
        p = self.observation.get("pixels")
        if not p:
            return None
        data = base64.b64decode(p["data"])
        if p.get("encoding") == "rgb" and _np is not None:
            return _np.frombuffer(data, dtype=_np.uint8).reshape(p["height"], p["width"], 3)
        return (p["width"], p["height"], data)


@dataclass
class EpisodeEnd:
    """The LAST time step of an episode: its reward and discount and the episode's return."""

    item_id: str
    episode: Optional[Dict[str, Any]]
    reward: float
    discount: float
    episode_return: float
    steps: int
    outcome: str
    cause: str


class Agent:
    """What the server asks. Override ``act_batch`` (or ``act``) and, for learning, ``episode_end``."""

    version = "agent-0"

    def act(self, step: StepRequest) -> Dict[str, Any]:
        raise NotImplementedError

    def act_batch(self, steps: Sequence[StepRequest]) -> List[Any]:
        """One action dict (or an Exception for that device only) per step, in order."""
        out: List[Any] = []
        for s in steps:
            try:
                out.append(self.act(s))
            except Exception as e:  # a failure of one device's step stays with that device
                out.append(e)
        return out

    def episode_end(self, end: EpisodeEnd) -> None:
        pass


class RandomAgent(Agent):
    """Random swipes (TOUCH start, TOUCH end, LIFT), seeded per episode from the episode's seed."""

    version = "random-1"

    def __init__(self) -> None:
        self._rngs: Dict[str, random.Random] = {}
        self._lock = threading.Lock()
        self.returns: List[float] = []
        self.rewards_seen: Dict[str, float] = {}

    def act(self, step: StepRequest) -> Dict[str, Any]:
        key = step.item_id + "/" + step.episode_id
        with self._lock:
            if step.step_type == "first" or key not in self._rngs:
                seed = int((step.episode or {}).get("seed", 0))
                self._rngs[key] = random.Random(seed)
                self.rewards_seen[key] = 0.0
            self.rewards_seen[key] = self.rewards_seen.get(key, 0.0) + float(step.reward)
            rng = self._rngs[key]
            # A swipe over three steps: finger down, finger moved, finger up.
            if step.observation.get("stepIndex", 0) % 3 == 2:
                return {"actionType": "LIFT", "touchPosition": [0, 0]}
            return {"actionType": "TOUCH", "touchPosition": [rng.random(), rng.random()]}

    def episode_end(self, end: EpisodeEnd) -> None:
        with self._lock:
            self.returns.append(float(end.episode_return))
            for key in [k for k in self._rngs if k.endswith("/" + str((end.episode or {}).get("id", "")))]:
                self._rngs.pop(key, None)


class RandomClickAgent(Agent):
    """A GUI agent: a click on a random clickable element by index, seeded per episode; ``navigate_back`` when
    the screen shows nothing clickable. Answers are AndroidWorld JSON actions; the farm carries them out (or
    records them as invalid, told back in the next step's ``previous``)."""

    version = "random-click-1"

    def __init__(self) -> None:
        self._rngs: Dict[str, random.Random] = {}
        self._lock = threading.Lock()
        self.invalid_seen = 0

    def act(self, step: StepRequest) -> Dict[str, Any]:
        key = step.item_id + "/" + step.episode_id
        with self._lock:
            if step.step_type == "first" or key not in self._rngs:
                self._rngs[key] = random.Random(int((step.episode or {}).get("seed", 0)))
            if (step.previous or {}).get("invalid"):
                self.invalid_seen += 1
            rng = self._rngs[key]
            clickable = [e for e in step.elements if e.get("is_clickable")]
            if not clickable:
                return {"action_type": "navigate_back"}
            return {"action_type": "click", "index": int(rng.choice(clickable)["index"])}

    def episode_end(self, end: EpisodeEnd) -> None:
        with self._lock:
            for key in [k for k in self._rngs if k.endswith("/" + str((end.episode or {}).get("id", "")))]:
                self._rngs.pop(key, None)


AGENTS = {"random": RandomAgent, "ui-random": RandomClickAgent}


def _step_of(msg: Dict[str, Any], item_id: str) -> StepRequest:
    return StepRequest(
        item_id=item_id,
        step_type=str(msg.get("stepType", "first" if msg["observation"].get("stepIndex", 0) == 0 else "mid")),
        reward=float(msg.get("reward", 0.0)),
        discount=float(msg.get("discount", 1.0)),
        observation=msg["observation"],
        episode=msg.get("episode"),
        context=msg.get("context"),
    )


def _end_of(msg: Dict[str, Any], item_id: str) -> EpisodeEnd:
    return EpisodeEnd(
        item_id=item_id,
        episode=msg.get("episode"),
        reward=float(msg.get("reward", 0.0)),
        discount=float(msg.get("discount", 1.0)),
        episode_return=float(msg.get("episodeReturn", 0.0)),
        steps=int(msg.get("steps", 0)),
        outcome=str(msg.get("outcome", "")),
        cause=str(msg.get("cause", "")),
    )


@dataclass
class Stats:
    requests: int = 0
    batch_requests: int = 0
    step_items: int = 0
    episode_ends: int = 0
    returns: List[float] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def as_json(self) -> Dict[str, Any]:
        with self.lock:
            return {
                "requests": self.requests,
                "batchRequests": self.batch_requests,
                "stepItems": self.step_items,
                "episodeEnds": self.episode_ends,
                "returns": list(self.returns),
            }


class PolicyServer:
    """Serves an Agent over HTTP: POST /act (single), POST /batch (batched), GET /stats, GET /healthz."""

    def __init__(self, agent: Agent, host: str = "127.0.0.1", port: int = 0) -> None:
        self.agent = agent
        self.stats = Stats()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, fmt: str, *args: Any) -> None:  # quiet: one line per step is too much
                pass

            def _send(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.send_header("x-policy-protocol", str(PROTOCOL))
                self.send_header("x-policy-version", server.agent.version)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path == "/stats":
                    self._send(200, server.stats.as_json())
                elif self.path == "/healthz":
                    self._send(200, {"ok": True})
                else:
                    self._send(404, {"error": "no such route; POST /act or /batch, GET /stats"})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                if length <= 0 or length > MAX_BODY_BYTES:
                    self._send(400, {"error": "send a JSON body with a content-length"})
                    return
                try:
                    msg = json.loads(self.rfile.read(length))
                except ValueError as e:
                    self._send(400, {"error": f"not JSON: {e}"})
                    return
                with server.stats.lock:
                    server.stats.requests += 1
                try:
                    if self.path == "/act":
                        self._send(200, server.handle_single(msg))
                    elif self.path == "/batch":
                        self._send(200, server.handle_batch(msg))
                    else:
                        self._send(404, {"error": "POST /act (one step) or /batch (a batch)"})
                except (KeyError, TypeError, ValueError) as e:
                    self._send(400, {"error": f"bad request: {e!r}"})

        self.httpd = ThreadingHTTPServer((host, port), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self._thread: Optional[threading.Thread] = None

    def _ended(self, end: EpisodeEnd) -> None:
        with self.stats.lock:
            self.stats.episode_ends += 1
            self.stats.returns.append(end.episode_return)
        self.agent.episode_end(end)

    def handle_single(self, msg: Dict[str, Any]) -> Dict[str, Any]:
        if msg.get("type") == "episode_end":
            self._ended(_end_of(msg, ""))
            return {}
        with self.stats.lock:
            self.stats.step_items += 1
        return self.agent.act(_step_of(msg, ""))

    def handle_batch(self, msg: Dict[str, Any]) -> Dict[str, Any]:
        with self.stats.lock:
            self.stats.batch_requests += 1
        steps: List[StepRequest] = []
        for item in msg["batch"]:
            if item.get("type") == "episode_end":
                self._ended(_end_of(item, str(item["id"])))
            else:
                steps.append(_step_of(item, str(item["id"])))
        with self.stats.lock:
            self.stats.step_items += len(steps)
        actions = self.agent.act_batch(steps) if steps else []
        results = []
        for s, a in zip(steps, actions):
            results.append({"id": s.item_id, "error": str(a)[:500]} if isinstance(a, Exception) else {"id": s.item_id, "action": a})
        return {"results": results}

    def serve_forever(self) -> None:
        self.httpd.serve_forever(poll_interval=0.2)

    def start(self) -> "PolicyServer":
        """Serves in a background thread (for use inside a training script)."""
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m farm_client.policy_server", description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8000, help="0 = a free port (printed)")
    ap.add_argument("--agent", choices=sorted(AGENTS), default="random", help="random: seeded swipes; ui-random: clicks a random clickable element (needs elements)")
    args = ap.parse_args(argv)
    server = PolicyServer(AGENTS[args.agent](), args.host, args.port)
    # One line a caller can parse, then serve until killed.
    print(f"policy server listening on http://{args.host}:{server.port} (POST /act, POST /batch, GET /stats)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
