"""A campaign client over the scheduler's HTTP API (services/scheduler/README.md, GET /openapi.json).

    from farm_client import CampaignClient
    c = CampaignClient("http://127.0.0.1:8420", token=None)
    c.submit("classic_2048", episodes=10, policy="random")
    c.submit("todo_create_note", episodes=100, goals=load_goals("goals.jsonl"), options={"a11yEvery": 1})
    c.submit("example_wifi", episodes=10, goals=[{"params": {"state": "on"}}, {"goal": "Wi-Fi off", "params": {"state": "off"}}])
    for status in c.watch(campaign_id): print(status["finished"], "/", status["episodes"])
"""

from __future__ import annotations

import json
import math
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

FINISHED_STATES = ("completed", "cancelled", "failed")

#: Bounds the scheduler applies to a campaign's goals (services/scheduler/README.md, "Goals").
MAX_GOALS = 10_000
GOAL_MAX_CHARS = 2000
GAME_CONFIG_MAX_CHARS = 4096
GOALS_MAX_BYTES = 1 << 20
#: Bounds of a task family's fixed parameters (libs/task/FAMILIES.md), as the scheduler checks them.
PARAMS_MAX = 64
PARAM_VALUE_MAX_CHARS = 2000
_PARAM_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
_LINE_SHAPE = '{"goal": "...", "game_config": {...}, "params": {...}}'


class FarmApiError(Exception):
    """The scheduler answered with an error: ``status`` (HTTP), ``code`` and ``message`` from its JSON body."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"HTTP {status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


class GoalsFileError(ValueError):
    """A goals file line the scheduler would refuse; the message names ``file:line``, the field and why."""


Goal = Union[str, Mapping[str, Any]]


def _goal_problem(goal: Any) -> Optional[str]:
    if not isinstance(goal, str):
        return "must be text"
    if not goal:
        return "must not be empty"
    if len(goal) > GOAL_MAX_CHARS:
        return f"at most {GOAL_MAX_CHARS} characters"
    if any((ord(c) < 32 and c not in "\t\n") or ord(c) == 127 for c in goal):
        return "no control characters (tab and newline are fine)"
    return None


def _game_config_problem(config: Any) -> Optional[str]:
    if not isinstance(config, dict):
        return 'must be a JSON object, e.g. {"title": "milk"}'
    # The scheduler measures the JSON text as JavaScript writes it: compact, non-ASCII kept.
    if len(json.dumps(config, separators=(",", ":"), ensure_ascii=False)) > GAME_CONFIG_MAX_CHARS:
        return f"at most {GAME_CONFIG_MAX_CHARS} characters of JSON"
    return None


def _bad_chars(text: str) -> bool:
    return any((ord(c) < 32 and c not in "\t\n") or 127 <= ord(c) <= 159 or 0x202A <= ord(c) <= 0x202E or 0x2066 <= ord(c) <= 0x2069 for c in text)


def params_problem(params: Any) -> Optional[str]:
    """Why ``params`` is not a task family's fixed parameters (an object of at most 64 names ``[a-z][a-z0-9_]{0,63}``
    → a string of at most 2000 characters, a finite number or a boolean), or None. Whether the family declares them
    (and of which type) the scheduler checks against the family."""
    if not isinstance(params, dict):
        return 'must be a JSON object of parameter values, e.g. {"state": "on"}'
    if len(params) > PARAMS_MAX:
        return f"{len(params)} parameters; at most {PARAMS_MAX}"
    for name, value in params.items():
        if not isinstance(name, str) or not _PARAM_NAME.fullmatch(name):
            return f"{json.dumps(str(name)[:64])} is not a parameter name (1-64 lower case letters, digits and _, starting with a letter)"
        if isinstance(value, str):
            if len(value) > PARAM_VALUE_MAX_CHARS:
                return f"{name}: {len(value)} characters; at most {PARAM_VALUE_MAX_CHARS}"
            if _bad_chars(value):
                return f"{name}: no control characters (tab and newline are fine)"
        elif isinstance(value, bool) or (isinstance(value, (int, float)) and math.isfinite(value)):
            continue
        else:
            return f"{name}: must be a string, a finite number or a boolean"
    return None


def load_goals(path: str) -> List[Dict[str, Any]]:
    """Reads a goals file (JSON Lines, each ``{"goal": "...", "game_config": {...}, "params": {...}}``, blank lines
    skipped), as ``farm submit --goals`` does; raises GoalsFileError naming ``file:line`` and the field. ``game_config``
    and ``params`` (a task family's fixed parameters, libs/task/FAMILIES.md) are optional; ``goal`` may be left out
    on a line with ``params`` (the family renders its goal template)."""
    try:
        with open(path, encoding="utf-8") as f:
            text_all = f.read(GOALS_MAX_BYTES + 1)
    except (OSError, UnicodeDecodeError) as e:
        raise GoalsFileError(f"{path}: cannot read it ({e})") from None
    if len(text_all) > GOALS_MAX_BYTES:
        raise GoalsFileError(f"{path}: more than {GOALS_MAX_BYTES} characters; split the campaign")
    goals: List[Dict[str, Any]] = []
    for n, raw in enumerate(text_all.split("\n"), start=1):
        text = raw.strip()
        if not text:
            continue
        where = f"{path}:{n}"
        if len(goals) == MAX_GOALS:
            raise GoalsFileError(f"{where}: more than {MAX_GOALS} goals; at most {MAX_GOALS} per campaign")
        try:
            line = json.loads(text)
        except ValueError as e:
            raise GoalsFileError(f"{where}: not JSON ({e}); each line is {_LINE_SHAPE}") from None
        if not isinstance(line, dict):
            raise GoalsFileError(f"{where}: a line is a JSON object {_LINE_SHAPE}")
        unknown = [k for k in line if k not in ("goal", "game_config", "params")]
        if unknown:
            raise GoalsFileError(f"{where}: unknown field {unknown[0]!r}; a line has \"goal\", and optionally \"game_config\" and \"params\"")
        if "goal" not in line and "params" not in line:
            raise GoalsFileError(f"{where}: field goal: missing; only a task family's line with params may leave it out")
        if "goal" in line:
            problem = _goal_problem(line["goal"])
            if problem:
                raise GoalsFileError(f"{where}: field goal: {problem}")
        if "params" in line:
            problem = params_problem(line["params"])
            if problem:
                raise GoalsFileError(f"{where}: field params: {problem}")
        if "game_config" in line:
            problem = _game_config_problem(line["game_config"])
            if problem:
                raise GoalsFileError(f"{where}: field game_config: {problem}")
        goals.append(line)
    if not goals:
        raise GoalsFileError(f"{path}: no goals (one JSON object a line: {_LINE_SHAPE})")
    return goals


def goals_body(goals: Sequence[Goal]) -> List[Dict[str, Any]]:
    """The API's ``goals`` from texts or ``{"goal", "game_config", "params"}`` mappings (``gameConfig`` accepted too);
    ``goal`` may be left out of a mapping with ``params`` (a task family renders its goal from them)."""
    out: List[Dict[str, Any]] = []
    for i, g in enumerate(goals):
        if isinstance(g, str):
            out.append({"goal": g})
            continue
        if not isinstance(g, Mapping) or ("goal" not in g and "params" not in g):
            raise ValueError(f"goals[{i}]: a text or a mapping with 'goal' and/or 'params' (and optionally 'game_config')")
        item: Dict[str, Any] = {"goal": g["goal"]} if "goal" in g else {}
        config = g.get("game_config", g.get("gameConfig"))
        if config is not None:
            item["gameConfig"] = config
        if "params" in g:
            problem = params_problem(g["params"])
            if problem:
                raise ValueError(f"goals[{i}].params: {problem}")
            item["params"] = dict(g["params"])
        out.append(item)
    return out


class CampaignClient:
    def __init__(self, base_url: str, token: Optional[str] = None, timeout: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout

    def _call(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base_url + path, data=data, method=method)
        req.add_header("accept", "application/json")
        if data is not None:
            req.add_header("content-type", "application/json")
        if self.token:
            req.add_header("authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as res:
                return json.loads(res.read() or b"null")
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                err = json.loads(raw)["error"]
                raise FarmApiError(e.code, str(err.get("code", "")), str(err.get("message", ""))) from None
            except (ValueError, KeyError, TypeError):
                raise FarmApiError(e.code, "HTTP", raw[:200].decode("utf-8", "replace")) from None

    @staticmethod
    def _quote(campaign_id: str) -> str:
        return urllib.parse.quote(campaign_id, safe="")

    def submit(self, task_id: str, episodes: int, policy: str = "random", *, campaign_id: Optional[str] = None,
               base_seed: Optional[int] = None, priority: Optional[int] = None,
               options: Optional[Dict[str, Any]] = None, goals: Optional[Sequence[Goal]] = None,
               max_staleness: Optional[int] = None, on_stale: Optional[str] = None,
               settle: Optional[str] = None,
               group_size: Optional[int] = None, resample_uniform_groups: Optional[int] = None) -> Dict[str, Any]:
        """Submits a campaign; returns ``{"created": bool, "campaign": status}`` (same spec twice: created False).

        ``goals``: episode i's goal is ``goals[i % len(goals)]``, a text or ``{"goal": ..., "game_config": {...},
        "params": {...}}`` (``load_goals`` reads a file of them); without goals every episode's goal is the task's
        description. ``params`` fix a task family's parameters for those episodes (the family draws the others from
        the episode's seed); ``goal`` may then be left out (the family's goal template rendered with them).
        ``options`` may hold ``a11yEvery`` (record the screen as a tree every N steps) and ``maxInvalidActions``.
        ``group_size`` K (GRPO-style groups): every task instance (seed, params, goal) runs K times; ``episodes`` then
        counts every run (groups × K). ``resample_uniform_groups`` N: a completed group whose rewards are all equal is
        followed by a new instance, at most N times.
        ``max_staleness`` V: an episode whose steps' policy versions span more than V, or lag the campaign's current
        version (``raise_version``) by more than V, is stale; ``on_stale`` ``"mark"`` (default: its ``stale`` reason is
        recorded) or ``"end"`` (it ends truncated, cause ``stale_policy``).
        ``settle``: how each step waits for the screen to settle after its action (``options.settle``): ``none``
        (default), ``fixed:MS``, ``androidworld[:wait=MS,cap=MS]``, ``events[:quiet=MS,cap=MS]``,
        ``frames[:quiet=MS,cap=MS]``; the scheduler checks it (a bad one is HTTP 400 naming ``options.settle``)."""
        if settle is not None:
            if not isinstance(settle, str) or not settle or len(settle) > 64:
                raise ValueError("settle: a spec string such as 'events', 'fixed:500' or 'androidworld' (at most 64 characters)")
            options = {**(options or {}), "settle": settle}
        body: Dict[str, Any] = {"taskId": task_id, "episodes": episodes, "policy": policy}
        if campaign_id is not None:
            body["id"] = campaign_id
        if base_seed is not None:
            body["baseSeed"] = base_seed
        if priority is not None:
            body["priority"] = priority
        if on_stale is not None and max_staleness is None:
            raise ValueError("on_stale goes with max_staleness")
        if on_stale is not None and on_stale not in ("mark", "end"):
            raise ValueError(f"on_stale must be 'mark' or 'end', got {on_stale!r}")
        if max_staleness is not None:
            options = dict(options or {})
            options["staleness"] = {"maxVersions": int(max_staleness), **({"onStale": on_stale} if on_stale else {})}
        if options:
            body["options"] = options
        if goals is not None:
            body["goals"] = goals_body(goals)
        if group_size is not None:
            body["groupSize"] = int(group_size)
        if resample_uniform_groups is not None:
            body["resampleUniformGroups"] = int(resample_uniform_groups)
        return self._call("POST", "/campaigns", body)

    # ---- the stream of committed episodes (Redis Streams consumer groups, through the scheduler) ----

    def read_stream(self, campaign_id: str, group: str, consumer: str, count: int = 100, *, pending_after: Optional[str] = None, new_only: bool = False) -> List[Dict[str, Any]]:
        """Up to ``count`` committed episodes for ``consumer`` of consumer group ``group``: its unacknowledged entries
        first (a restart resumes with them), else new ones; never waits. Each entry: ``id`` (the stream entry id),
        ``episodeId``, ``file``, ``host``, ``outcome``, ``cause``, ``steps``, ``reward``, ``success`` (when scored),
        ``groupIndex``/``groupMember``/``groupSize`` (grouped campaigns), ``committedAtMs``. ``pending_after``: only this
        consumer's unacknowledged entries after that id ("0": all); ``new_only``: only entries never delivered."""
        body: Dict[str, Any] = {"group": group, "consumer": consumer, "count": int(count)}
        if pending_after is not None:
            body["from"], body["after"] = "pending", pending_after
        elif new_only:
            body["from"] = "new"
        return self._call("POST", "/campaigns/" + self._quote(campaign_id) + "/stream/read", body)["entries"]

    def ack_stream(self, campaign_id: str, group: str, ids: Sequence[str]) -> int:
        """Acknowledges stream entries for ``group``: they are not delivered to its consumers again."""
        if not ids:
            return 0
        return self._call("POST", "/campaigns/" + self._quote(campaign_id) + "/stream/ack", {"group": group, "ids": list(ids)})["acked"]

    def follow(self, campaign_id: str, group: str, consumer: str, *, poll: float = 0.5, until_finished: bool = True) -> Iterator[Dict[str, Any]]:
        """Yields the campaign's committed episodes (stream entries) in commit order, each once per consumer group; an
        entry is acknowledged when the loop asks for the next one, so a consumer that dies mid-entry gets it again.
        Stops once the campaign is finished and every entry was read (``until_finished``), else runs on."""
        while True:
            finished = until_finished and self.status(campaign_id)["state"] in FINISHED_STATES
            entries = self.read_stream(campaign_id, group, consumer)
            for e in entries:
                yield e
                self.ack_stream(campaign_id, group, [e["id"]])
            if not entries:
                if finished:
                    return
                time.sleep(poll)

    def follow_episodes(self, campaign_id: str, group: str, consumer: str, **kw: Any) -> Iterator[Tuple[Dict[str, Any], Dict[str, Any]]]:
        """As ``follow``, with each whole episode: ``(entry, record)``, the record read from the episode's Avro file
        (``entry["file"]``: reachable from here, e.g. the worker's folder or shared storage; python3-avro)."""
        for e in self.follow(campaign_id, group, consumer, **kw):
            yield e, read_episode_file(e["file"], e["episodeId"])

    def follow_groups(self, campaign_id: str, group: str, consumer: str, *, with_records: bool = False, **kw: Any) -> Iterator[List[Dict[str, Any]]]:
        """Yields complete groups of a grouped campaign (its K members' entries, by member index), each once per consumer
        group; a group's entries are acknowledged when the loop asks for the next group (until then a restart gets them
        again and rebuilds the group). With ``with_records`` each entry carries its Avro record as ``entry["record"]``."""
        open_groups: Dict[int, Dict[int, Dict[str, Any]]] = {}
        # Members stay unacknowledged until their group is whole: page through this consumer's pending entries first
        # (a restart), then read only new ones.
        cursor: Optional[str] = "0"
        while True:
            finished = kw.get("until_finished", True) and self.status(campaign_id)["state"] in FINISHED_STATES
            if cursor is not None:
                entries = self.read_stream(campaign_id, group, consumer, pending_after=cursor)
                if entries:
                    cursor = entries[-1]["id"]
                else:
                    cursor = None
                    continue
            else:
                entries = self.read_stream(campaign_id, group, consumer, new_only=True)
            for e in entries:
                if "groupIndex" not in e:
                    self.ack_stream(campaign_id, group, [e["id"]])
                    continue
                members = open_groups.setdefault(int(e["groupIndex"]), {})
                members[int(e["groupMember"])] = e
                if len(members) >= int(e["groupSize"]):
                    del open_groups[int(e["groupIndex"])]
                    whole = [members[m] for m in sorted(members)]
                    if with_records:
                        for m in whole:
                            m["record"] = read_episode_file(m["file"], m["episodeId"])
                    yield whole
                    self.ack_stream(campaign_id, group, [m["id"] for m in whole])
            if not entries:
                if finished:
                    return
                time.sleep(kw.get("poll", 0.5))


    def status(self, campaign_id: str) -> Dict[str, Any]:
        return self._call("GET", "/campaigns/" + self._quote(campaign_id))

    def list(self, limit: int = 100) -> List[Dict[str, Any]]:
        return self._call("GET", f"/campaigns?limit={int(limit)}")["campaigns"]

    def cancel(self, campaign_id: str) -> Dict[str, Any]:
        return self._call("POST", "/campaigns/" + self._quote(campaign_id) + "/cancel")

    def raise_version(self, campaign_id: str, version: Any) -> Dict[str, Any]:
        """Raises the campaign's current policy version (a learner after each update): ``POST
        /campaigns/:id/policy-version``. ``version``: a string of 1-128 printable characters or an int (whole numbers
        compare as numbers; others in the order raised). Versions only go forward: a lower whole number or a version
        raised before is ``FarmApiError`` 409 ``VERSION_CONFLICT``; the current one again changes nothing. Returns
        ``{"campaignId", "version", "previous"?, "raised", "versions"}``; workers see it within a second."""
        return self._call("POST", "/campaigns/" + self._quote(campaign_id) + "/policy-version", {"version": version})

    def policy_version(self, campaign_id: str) -> Optional[str]:
        """The campaign's current policy version, or None when none was raised."""
        return self._call("GET", "/campaigns/" + self._quote(campaign_id) + "/policy-version").get("version")

    def openapi(self) -> Dict[str, Any]:
        return self._call("GET", "/openapi.json")

    def watch(self, campaign_id: str, interval: float = 1.0, timeout: Optional[float] = None) -> Iterator[Dict[str, Any]]:
        """Yields the status every ``interval`` s while it changes, and the final one when the campaign is done."""
        deadline = None if timeout is None else time.monotonic() + timeout
        last = None
        while True:
            st = self.status(campaign_id)
            key = (st["state"], st["finished"], st["running"])
            if key != last:
                yield st
                last = key
            if st["state"] in FINISHED_STATES:
                return
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"campaign {campaign_id} still {st['state']} after {timeout} s")
            time.sleep(interval)


def read_episode_file(path: str, episode_id: Optional[str] = None) -> Dict[str, Any]:
    """The episode record (a dict, as the farm's Avro schema names its fields) in a committed trajectory file."""
    from avro.datafile import DataFileReader  # python3-avro (Debian) or `pip install avro`
    from avro.io import DatumReader

    with open(path, "rb") as f:
        reader = DataFileReader(f, DatumReader())
        try:
            for rec in reader:
                if episode_id is None or rec.get("episodeId") == episode_id:
                    return rec
        finally:
            reader.close()
    raise ValueError(f"{path}: no episode {episode_id!r}")
