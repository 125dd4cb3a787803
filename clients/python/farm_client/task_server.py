"""A task server: AndroidWorld-style ``TaskEval`` classes set up and score farm episodes over the task protocol
(libs/task-protocol/README.md).

    python3 -m farm_client.task_server --module my_tasks --port 8765       # serves my_tasks' task classes

A family file names it (``task_server: {url: "http://127.0.0.1:8765", class: "SystemWifiTurnOn"}``); the farm
opens every connection. For each episode it starts a session: this server draws the class's parameters
(``generate_random_params()`` with ``random`` seeded from the episode's seed, so episode i gets the same ones on
every retry and host; the campaign's fixed ``params`` win), builds the task and runs ``initialize_task(env)`` in a
thread of its own. Whenever the task code calls ``env.controller.execute_adb_call(request)``, the call goes to
the farm as the answer of the farm's pending request; the farm carries it out on the episode's device and posts the
``AdbResponse`` back, which ``execute_adb_call`` returns. At the episode's end the farm asks for the score: the
agent's answer is put into ``env.interaction_cache`` and ``is_successful(env)`` runs the same way.

A class needs what AndroidWorld's ``TaskEval`` has: ``template`` (or a ``goal`` property), ``schema``,
``generate_random_params()`` (a classmethod), ``__init__(params)``, ``initialize_task(env)`` and
``is_successful(env) -> float`` (0..1). ``tear_down`` is not called: the farm resets the device for the next
episode itself (the task's reset steps or a snapshot).

``request`` is an ``AdbRequest`` of AndroidEnv's ``adb_pb2``. ``adb_pb2()`` returns the module to build them
with: an installed ``android_env``'s, else the one this package ships (generated from the farm's own copy of
``adb.proto``: same package, names and numbers). Unchanged code that does ``from android_env.proto import
adb_pb2`` works without android_env installed because ``install_android_env_alias()`` (run by the command line
before it imports your module) registers the shipped module under that name, in this process only, and only when
no ``android_env`` package is installed: nothing is installed as a top-level ``android_env`` that could shadow
DeepMind's, and with DeepMind's installed its own ``adb_pb2`` is used (both register the same message names in
protobuf's pool, so one process uses one of them).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import json
import queue
import random
import sys
import threading
import time
import traceback
import types
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, Iterable, Mapping, Optional, Tuple, Union

PROTOCOL = 1
# The farm posts at most one pulled file (16 MiB, base64) with its envelope.
MAX_BODY_BYTES = 24 * 1024 * 1024
_ID_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_ALIAS_MARK = "__farm_client_alias__"


def _ours():
    from .android_env_proto import adb_pb2 as ours

    return ours


def adb_pb2() -> types.ModuleType:
    """AndroidEnv's adb messages: the installed android_env's ``adb_pb2`` when there is one, else the shipped one."""
    mod = sys.modules.get("android_env.proto.adb_pb2")
    if mod is not None:
        return mod
    if _android_env_installed():
        from android_env.proto import adb_pb2 as theirs  # type: ignore[import-not-found]

        return theirs
    return _ours()


def _android_env_installed() -> bool:
    mod = sys.modules.get("android_env")
    if mod is not None:
        return not getattr(mod, _ALIAS_MARK, False)
    try:
        return importlib.util.find_spec("android_env") is not None
    except (ImportError, ValueError):
        return False


def install_android_env_alias() -> bool:
    """Lets ``from android_env.proto import adb_pb2`` import the shipped module, in this process, when no
    android_env package is installed (returns whether it did). With android_env installed, nothing changes."""
    if _android_env_installed():
        return False
    if "android_env.proto.adb_pb2" in sys.modules:
        return True
    pkg = types.ModuleType("android_env", "farm_client's alias: only android_env.proto.adb_pb2 (no android_env is installed)")
    sub = types.ModuleType("android_env.proto", "farm_client's alias: only adb_pb2")
    pkg.__path__ = []  # a package with nothing else to import
    sub.__path__ = []
    setattr(pkg, _ALIAS_MARK, True)
    setattr(sub, _ALIAS_MARK, True)
    ours = _ours()
    pkg.proto = sub  # type: ignore[attr-defined]
    sub.adb_pb2 = ours  # type: ignore[attr-defined]
    sys.modules.setdefault("android_env", pkg)
    sys.modules.setdefault("android_env.proto", sub)
    sys.modules.setdefault("android_env.proto.adb_pb2", ours)
    return True


class SessionClosed(Exception):
    """Raised inside task code by ``execute_adb_call`` once the farm has ended the session (deadline, close)."""


class FarmController:
    """``env.controller`` for task code: ``execute_adb_call(request)`` runs the request on the farm's device."""

    def __init__(self, session: "Session") -> None:
        self._session = session

    def execute_adb_call(self, request: Any) -> Any:
        return self._session.device_call(request)


class FarmEnv:
    """The ``env`` task code gets: ``controller.execute_adb_call`` (also as ``env.execute_adb_call``) and
    ``interaction_cache`` (the agent's answer while ``is_successful`` runs, as AndroidWorld keeps it)."""

    def __init__(self, session: "Session") -> None:
        self.controller = FarmController(session)
        self.interaction_cache = ""

    def execute_adb_call(self, request: Any) -> Any:
        return self.controller.execute_adb_call(request)

    @property
    def foreground_activity_name(self) -> str:
        pb = adb_pb2()
        r = self.execute_adb_call(pb.AdbRequest(get_current_activity=pb.AdbRequest.GetCurrentActivity()))
        return r.get_current_activity.full_activity if r.status == pb.AdbResponse.Status.OK else ""


_CLOSED = object()
_RANDOM_LOCK = threading.Lock()


def _jsonable(v: Any) -> Any:
    return json.loads(json.dumps(v, default=str))


class Session:
    """One episode's task: its task code thread and the hand-over of device calls between it and the farm."""

    def __init__(self, sid: str, cls: type, episode: Mapping[str, Any], fixed: Mapping[str, Any], call_wait_s: float) -> None:
        self.id = sid
        self.cls = cls
        self.episode = dict(episode)
        self.fixed = dict(fixed)
        self.env = FarmEnv(self)
        self.task: Any = None
        self.phase: Optional[str] = None  # the phase running now
        self.pending_call: Optional[str] = None
        self.closed = False
        self.last_used = time.monotonic()
        self.busy = threading.Lock()  # one farm request per session at a time
        self._call_lock = threading.Lock()  # task code calling from several threads: one call at a time
        self._calls = 0
        self._call_wait_s = call_wait_s
        self._to_farm: "queue.Queue[Tuple[str, Any]]" = queue.Queue()
        self._from_farm: "queue.Queue[Any]" = queue.Queue()

    # -- task code thread side --
    def device_call(self, request: Any) -> Any:
        from google.protobuf import json_format

        req = json_format.MessageToDict(request)
        with self._call_lock:
            if self.closed:
                raise SessionClosed(f"session {self.id} is closed")
            self._calls += 1
            cid = f"c{self._calls}"
            self._to_farm.put(("call", (cid, req)))
            try:
                resp = self._from_farm.get(timeout=self._call_wait_s)
            except queue.Empty:
                self.closed = True
                raise SessionClosed(f"no answer from the farm to device call {cid} within {self._call_wait_s} s") from None
        if resp is _CLOSED:
            raise SessionClosed(f"the farm ended session {self.id}")
        response_cls = getattr(sys.modules.get(type(request).__module__), "AdbResponse", None) or adb_pb2().AdbResponse
        return json_format.ParseDict(resp, response_cls(), ignore_unknown_fields=True)

    def start(self, phase: str, fn: Callable[[], Dict[str, Any]]) -> None:
        self.phase = phase

        def run() -> None:
            try:
                out = ("result", fn())
            except SessionClosed:
                return
            except BaseException as e:  # the task code's trouble goes to the farm, never kills the server
                out = ("error", {"type": type(e).__name__, "message": str(e) or repr(e), "traceback": traceback.format_exc()[-16000:]})
            self._to_farm.put(out)

        threading.Thread(target=run, name=f"task-{self.id}-{phase}", daemon=True).start()

    # -- HTTP side --
    def next_answer(self, wait_s: float) -> Dict[str, Any]:
        """Waits for the task code's next device call, result or error, as the answer to the farm."""
        base = {"session": self.id, "phase": self.phase}
        try:
            kind, value = self._to_farm.get(timeout=wait_s)
        except queue.Empty:
            return {**base, "error": {"type": "Timeout", "message": f"the task code made no device call and gave no result within {wait_s} s"}}
        if kind == "call":
            cid, req = value
            self.pending_call = cid
            return {**base, "device_call": {"id": cid, "request": req}}
        self.pending_call = None
        self.phase = None
        return {**base, kind: value}

    def answer_call(self, cid: str, response: Any) -> None:
        self.pending_call = None
        self._from_farm.put(response)

    def close(self) -> None:
        self.closed = True
        self._from_farm.put(_CLOSED)  # a task code thread waiting for a device response raises SessionClosed
        self._to_farm.put(("error", {"type": "SessionClosed", "message": f"session {self.id} was closed"}))


def _initialize(s: Session) -> Dict[str, Any]:
    cls = s.cls
    with _RANDOM_LOCK:  # `random` is one state for the process: seed and draw without another session between
        random.seed(int(s.episode.get("seed", 0)))
        params = dict(cls.generate_random_params()) if hasattr(cls, "generate_random_params") else {}
    params.update(s.fixed)
    task = cls(params)
    s.task = task
    task.initialize_task(s.env)
    goal = getattr(task, "goal", None)
    if not isinstance(goal, str):
        goal = str(getattr(cls, "template", "")).format(**params)
    return {"goal": goal, "params": _jsonable(params)}


def _score(s: Session, answer: Optional[str]) -> Dict[str, Any]:
    s.env.interaction_cache = answer or ""
    v = s.task.is_successful(s.env)
    return {"success": float(v)}


class TaskServer:
    """Serves task classes over the task protocol: ``TaskServer([MyTask], port=8765).serve_forever()``."""

    def __init__(
        self,
        classes: Union[Mapping[str, type], Iterable[type]],
        host: str = "127.0.0.1",
        port: int = 8765,
        max_sessions: int = 256,
        session_ttl_s: float = 1800.0,
        answer_wait_s: float = 600.0,
        call_wait_s: float = 600.0,
        quiet: bool = True,
    ) -> None:
        self.classes: Dict[str, type] = dict(classes) if isinstance(classes, Mapping) else {c.__name__: c for c in classes}
        self.max_sessions = max_sessions
        self.session_ttl_s = session_ttl_s
        self.answer_wait_s = answer_wait_s
        self.call_wait_s = call_wait_s
        self.sessions: Dict[str, Session] = {}
        self.stats = {"sessions": 0, "device_calls": 0, "results": 0, "errors": 0}
        self._lock = threading.Lock()
        self._httpd = _Server((host, port), _handler(self, quiet))
        self._httpd.daemon_threads = True

    @property
    def address(self) -> Tuple[str, int]:
        return self._httpd.server_address[:2]  # type: ignore[return-value]

    @property
    def url(self) -> str:
        return f"http://{self.address[0]}:{self.address[1]}"

    def serve_forever(self) -> None:
        self._httpd.serve_forever()

    def shutdown(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._lock:
            for s in self.sessions.values():
                s.close()
            self.sessions.clear()

    # -- sessions --
    def _expire(self) -> None:
        now = time.monotonic()
        for sid in [sid for sid, s in self.sessions.items() if now - s.last_used > self.session_ttl_s]:
            self.sessions.pop(sid).close()

    def create(self, body: Mapping[str, Any]) -> Tuple[int, Dict[str, Any]]:
        if body.get("protocol") != PROTOCOL:
            return 400, _err("BadRequest", f"protocol {body.get('protocol')!r} is not {PROTOCOL}")
        name = body.get("class")
        cls = self.classes.get(name) if isinstance(name, str) else None
        if cls is None:
            return 404, _err("UnknownClass", f"class {name!r} is not served here (served: {', '.join(sorted(self.classes)) or 'none'})")
        episode = body.get("episode")
        fixed = body.get("params") or {}
        if not isinstance(episode, dict) or not isinstance(episode.get("seed"), int) or not isinstance(fixed, dict):
            return 400, _err("BadRequest", "episode must be {campaign, index, seed (an integer)} and params an object")
        with self._lock:
            self._expire()
            if len(self.sessions) >= self.max_sessions:
                return 503, _err("TooManySessions", f"{len(self.sessions)} sessions are open (max {self.max_sessions})")
            s = Session(uuid.uuid4().hex, cls, episode, fixed, self.call_wait_s)
            self.sessions[s.id] = s
            self.stats["sessions"] += 1
        with s.busy:
            s.start("initialize", lambda: _initialize(s))
            return 200, self._answer(s)

    def _answer(self, s: Session) -> Dict[str, Any]:
        a = s.next_answer(self.answer_wait_s)
        s.last_used = time.monotonic()
        self.stats["device_calls" if "device_call" in a else "results" if "result" in a else "errors"] += 1
        return a

    def _session(self, sid: str) -> Tuple[Optional[Session], Dict[str, Any]]:
        with self._lock:
            s = self.sessions.get(sid)
        return s, (_err("UnknownSession", f"no session {sid!r} (ended or expired)") if s is None else {})

    def call_response(self, sid: str, cid: str, body: Mapping[str, Any]) -> Tuple[int, Dict[str, Any]]:
        s, e = self._session(sid)
        if s is None:
            return 404, e
        if not s.busy.acquire(blocking=False):
            return 409, _err("Busy", f"session {sid} is already answering a request")
        try:
            if s.pending_call != cid:
                return 409, _err("NoSuchCall", f"session {sid} is not waiting for device call {cid!r} (waiting for {s.pending_call!r})")
            response = body.get("response")
            if not isinstance(response, dict):
                return 400, _err("BadRequest", "response must be an AdbResponse object")
            s.answer_call(cid, response)
            return 200, self._answer(s)
        finally:
            s.busy.release()

    def score(self, sid: str, body: Mapping[str, Any]) -> Tuple[int, Dict[str, Any]]:
        s, e = self._session(sid)
        if s is None:
            return 404, e
        if not s.busy.acquire(blocking=False):
            return 409, _err("Busy", f"session {sid} is already answering a request")
        try:
            if s.task is None or s.phase is not None:
                return 409, _err("NotReady", f"session {sid} has no initialized task to score (phase running: {s.phase})")
            answer = body.get("answer")
            if answer is not None and not isinstance(answer, str):
                return 400, _err("BadRequest", "answer must be a string or null")
            s.start("score", lambda: _score(s, answer))
            return 200, self._answer(s)
        finally:
            s.busy.release()

    def delete(self, sid: str) -> Tuple[int, Dict[str, Any]]:
        with self._lock:
            s = self.sessions.pop(sid, None)
        if s is not None:
            s.close()
        return 200, {"session": sid, "closed": s is not None}


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # The farm gave up on an exchange (its deadline) and closed the connection: nothing to report.
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


def _err(kind: str, message: str) -> Dict[str, Any]:
    return {"error": {"type": kind, "message": message}}


def _handler(server: TaskServer, quiet: bool) -> type:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # kept-alive connections
        timeout = 60  # an idle kept-alive connection is dropped after 60 s (the farm's are idle at most 2 s)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - BaseHTTPRequestHandler's name
            if not quiet:
                super().log_message(format, *args)

        def _send(self, status: int, body: Mapping[str, Any]) -> None:
            data = json.dumps(body).encode("utf-8")
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _parts(self) -> Optional[list]:
            parts = self.path.split("?", 1)[0].strip("/").split("/")
            if len(parts) < 2 or parts[0] != "v1" or parts[1] != "sessions":
                return None
            if any(not p or not set(p) <= _ID_CHARS or len(p) > 64 for p in parts[2:]):
                return None
            return parts[2:]

        def do_GET(self) -> None:  # noqa: N802
            if self.path.split("?", 1)[0] == "/v1/classes":
                return self._send(200, {"protocol": PROTOCOL, "classes": sorted(server.classes), "sessions": len(server.sessions), "stats": server.stats})
            self._send(404, _err("NotFound", f"GET {self.path[:100]}: only GET /v1/classes"))

        def do_POST(self) -> None:  # noqa: N802
            parts = self._parts()
            try:
                n = int(self.headers.get("content-length") or "0")
            except ValueError:
                n = -1
            if n < 0 or n > MAX_BODY_BYTES:
                self.close_connection = True
                return self._send(413, _err("TooLarge", f"a body of {n} bytes (at most {MAX_BODY_BYTES})"))
            raw = self.rfile.read(n)
            try:
                body = json.loads(raw or b"{}")
                if not isinstance(body, dict):
                    raise ValueError("not a JSON object")
            except ValueError as e:
                return self._send(400, _err("BadRequest", f"body is not a JSON object: {e}"))
            if parts == []:
                status, out = server.create(body)
            elif parts is not None and len(parts) == 3 and parts[1] == "calls":
                status, out = server.call_response(parts[0], parts[2], body)
            elif parts is not None and len(parts) == 2 and parts[1] == "score":
                status, out = server.score(parts[0], body)
            else:
                status, out = 404, _err("NotFound", f"POST {self.path[:100]}")
            self._send(status, out)

        def do_DELETE(self) -> None:  # noqa: N802
            parts = self._parts()
            if parts is None or len(parts) != 1:
                return self._send(404, _err("NotFound", f"DELETE {self.path[:100]}"))
            self._send(*server.delete(parts[0]))

    return Handler


def task_classes(module: types.ModuleType) -> Dict[str, type]:
    """The classes of ``module`` that look like TaskEval classes (not abstract, with the methods the protocol calls)."""
    out = {}
    for name, obj in vars(module).items():
        if inspect.isclass(obj) and obj.__module__ == module.__name__ and not inspect.isabstract(obj):
            if all(callable(getattr(obj, m, None)) for m in ("initialize_task", "is_successful", "generate_random_params")):
                out[name] = obj
    return out


def main(argv: Optional[list] = None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m farm_client.task_server", description="Serve TaskEval-style task classes to the farm over the task protocol.")
    p.add_argument("--module", required=True, help="the Python module holding the task classes (imported by name)")
    p.add_argument("--class", dest="classes", action="append", default=[], help="serve only this class (repeatable)")
    p.add_argument("--path", action="append", default=[], help="a folder to import the module from (repeatable; default: the working folder)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--max-sessions", type=int, default=256)
    p.add_argument("--no-android-env-alias", action="store_true", help="do not alias android_env.proto.adb_pb2 to the shipped module")
    p.add_argument("--verbose", action="store_true", help="log every request")
    args = p.parse_args(argv)
    if not args.no_android_env_alias:
        install_android_env_alias()
    for d in reversed(args.path or ["."]):
        sys.path.insert(0, d)
    module = importlib.import_module(args.module)
    found = task_classes(module)
    if args.classes:
        missing = [c for c in args.classes if c not in found]
        if missing:
            print(f"task_server: {args.module} has no task class {', '.join(missing)} (found: {', '.join(sorted(found)) or 'none'})", file=sys.stderr)
            return 2
        found = {c: found[c] for c in args.classes}
    if not found:
        print(f"task_server: {args.module} defines no task class (initialize_task, is_successful, generate_random_params)", file=sys.stderr)
        return 2
    server = TaskServer(found, host=args.host, port=args.port, max_sessions=args.max_sessions, quiet=not args.verbose)
    print(f"task server listening on {server.url} (classes: {', '.join(sorted(found))})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
