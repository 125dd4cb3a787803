"""farm_client.task_server driven as the farm drives it (HTTP, stdlib client): sessions, device calls and their
responses, parameters by seed, the agent's answer, task code errors, closing a session mid-call, refusals of
requests out of order, and the android_env alias."""

import http.client
import json
import random
import threading
import unittest

from farm_client import task_server
from farm_client.task_server import TaskServer, adb_pb2, install_android_env_alias

pb = adb_pb2()


class Counter:
    template = "Count to {n}."
    schema = {"type": "object"}
    closed_in_call = threading.Event()

    def __init__(self, params):
        self.params = params

    @property
    def goal(self):
        return self.template.format(**self.params)

    @classmethod
    def generate_random_params(cls):
        return {"n": random.randint(1, 10**9), "tag": "drawn"}

    def initialize_task(self, env):
        r = env.controller.execute_adb_call(pb.AdbRequest(generic=pb.AdbRequest.GenericRequest(args=["shell", "echo", "hi"]), timeout_sec=3))
        self.first = r.generic.output.decode()
        if self.params.get("hang"):
            try:
                env.controller.execute_adb_call(pb.AdbRequest(get_current_activity=pb.AdbRequest.GetCurrentActivity()))
            except task_server.SessionClosed:
                Counter.closed_in_call.set()
                raise

    def is_successful(self, env):
        if env.interaction_cache == "boom":
            raise KeyError("boom")
        return 1.0 if env.interaction_cache == self.first.strip() else 0.0


class TaskServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = TaskServer([Counter], port=0)
        cls.thread = threading.Thread(target=cls.server.serve_forever, daemon=True)
        cls.thread.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()

    def post(self, path, body, method="POST"):
        c = http.client.HTTPConnection(*self.server.address, timeout=10)
        try:
            c.request(method, path, body=None if body is None else json.dumps(body), headers={"content-type": "application/json"})
            r = c.getresponse()
            return r.status, json.loads(r.read())
        finally:
            c.close()

    def start(self, seed=5, params=None):
        body = {"protocol": 1, "class": "Counter", "episode": {"campaign": "c", "index": 0, "seed": seed}}
        if params:
            body["params"] = params
        return self.post("/v1/sessions", body)

    def test_a_session_as_the_farm_drives_it(self):
        status, a = self.start()
        self.assertEqual(status, 200)
        sid = a["session"]
        self.assertEqual(a["phase"], "initialize")
        self.assertEqual(a["device_call"], {"id": "c1", "request": {"generic": {"args": ["shell", "echo", "hi"]}, "timeoutSec": 3.0}})
        status, a = self.post(f"/v1/sessions/{sid}/calls/c1", {"response": {"status": "OK", "generic": {"output": "aGkK"}}})
        self.assertEqual(status, 200)
        n = a["result"]["params"]["n"]
        self.assertEqual(a["result"], {"goal": f"Count to {n}.", "params": {"n": n, "tag": "drawn"}})
        status, s = self.post(f"/v1/sessions/{sid}/score", {"answer": "hi", "final": True})
        self.assertEqual((status, s["phase"], s["result"]), (200, "score", {"success": 1.0}))
        status, s = self.post(f"/v1/sessions/{sid}/score", {"answer": "ho", "final": True})
        self.assertEqual(s["result"], {"success": 0.0})
        status, s = self.post(f"/v1/sessions/{sid}/score", {"answer": "boom", "final": True})
        self.assertEqual(s["error"]["type"], "KeyError")
        self.assertIn("boom", s["error"]["message"])
        self.assertEqual(self.post(f"/v1/sessions/{sid}", None, "DELETE"), (200, {"session": sid, "closed": True}))
        self.assertEqual(self.post(f"/v1/sessions/{sid}/score", {"answer": None, "final": True})[0], 404)

    def test_the_same_seed_draws_the_same_parameters_and_fixed_ones_win(self):
        def params(seed, fixed=None):
            _, a = self.start(seed, fixed)
            _, r = self.post(f"/v1/sessions/{a['session']}/calls/c1", {"response": {"status": "OK"}})
            self.post(f"/v1/sessions/{a['session']}", None, "DELETE")
            return r["result"]["params"]

        self.assertEqual(params(11), params(11))
        self.assertNotEqual(params(11)["n"], params(12)["n"])
        self.assertEqual(params(11, {"tag": "fixed"}), {"n": params(11)["n"], "tag": "fixed"})

    def test_closing_a_session_stops_the_task_code_waiting_for_a_device_call(self):
        Counter.closed_in_call.clear()
        _, a = self.start(params={"hang": True})
        sid = a["session"]
        _, a = self.post(f"/v1/sessions/{sid}/calls/c1", {"response": {"status": "OK"}})
        self.assertEqual(a["device_call"]["request"], {"getCurrentActivity": {}})
        self.post(f"/v1/sessions/{sid}", None, "DELETE")
        self.assertTrue(Counter.closed_in_call.wait(5), "execute_adb_call raised SessionClosed")

    def test_requests_out_of_order_are_refused_with_a_reason(self):
        self.assertEqual(self.post("/v1/sessions", {"protocol": 1, "class": "Nope", "episode": {"seed": 1}})[0], 404)
        self.assertEqual(self.post("/v1/sessions", {"protocol": 2, "class": "Counter", "episode": {"seed": 1}})[0], 400)
        self.assertEqual(self.post("/v1/sessions", {"protocol": 1, "class": "Counter", "episode": {"seed": "x"}})[0], 400)
        _, a = self.start()
        sid = a["session"]
        status, e = self.post(f"/v1/sessions/{sid}/calls/c9", {"response": {"status": "OK"}})
        self.assertEqual((status, e["error"]["type"]), (409, "NoSuchCall"))
        status, e = self.post(f"/v1/sessions/{sid}/score", {"answer": None, "final": True})
        self.assertEqual((status, e["error"]["type"]), (409, "NotReady"))
        self.assertEqual(self.post(f"/v1/sessions/{sid}/calls/c1", {"response": "OK"})[0], 400)
        self.assertEqual(self.post("/v1/sessions/../../etc", {}, "POST")[0], 404)
        self.post(f"/v1/sessions/{sid}", None, "DELETE")

    def test_the_alias_makes_android_env_proto_adb_pb2_importable_without_android_env(self):
        if task_server._android_env_installed():
            self.skipTest("android_env is installed: its own adb_pb2 is used")
        self.assertTrue(install_android_env_alias())
        from android_env.proto import adb_pb2 as aliased  # noqa: E402 - the point of the test

        from farm_client.android_env_proto import adb_pb2 as shipped

        self.assertIs(aliased, shipped)
        self.assertIs(adb_pb2(), shipped)
        self.assertEqual(shipped.AdbRequest.DESCRIPTOR.full_name, "android_env.AdbRequest")
        self.assertEqual(shipped.AdbRequest.DESCRIPTOR.fields_by_name["generic"].number, 22)
        self.assertEqual(shipped.AdbResponse.Status.Value("TIMEOUT"), 6)


if __name__ == "__main__":
    unittest.main()
