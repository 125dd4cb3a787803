"""A campaign client over the scheduler's HTTP API (services/scheduler/README.md, GET /openapi.json).

    from farm_client import CampaignClient
    c = CampaignClient("http://127.0.0.1:8420", token=None)
    c.submit("classic_2048", episodes=10, policy="random")
    for status in c.watch(campaign_id): print(status["finished"], "/", status["episodes"])
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Iterator, List, Optional

FINISHED_STATES = ("completed", "cancelled", "failed")


class FarmApiError(Exception):
    """The scheduler answered with an error: ``status`` (HTTP), ``code`` and ``message`` from its JSON body."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"HTTP {status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


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
               options: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        """Submits a campaign; returns ``{"created": bool, "campaign": status}`` (same spec twice: created False)."""
        body: Dict[str, Any] = {"taskId": task_id, "episodes": episodes, "policy": policy}
        if campaign_id is not None:
            body["id"] = campaign_id
        if base_seed is not None:
            body["baseSeed"] = base_seed
        if priority is not None:
            body["priority"] = priority
        if options:
            body["options"] = options
        return self._call("POST", "/campaigns", body)

    def status(self, campaign_id: str) -> Dict[str, Any]:
        return self._call("GET", "/campaigns/" + self._quote(campaign_id))

    def list(self, limit: int = 100) -> List[Dict[str, Any]]:
        return self._call("GET", f"/campaigns?limit={int(limit)}")["campaigns"]

    def cancel(self, campaign_id: str) -> Dict[str, Any]:
        return self._call("POST", "/campaigns/" + self._quote(campaign_id) + "/cancel")

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
