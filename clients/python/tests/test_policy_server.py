"""Unit tests of the reference policy server (no farm needed): protocol 2 single and batched, per-item errors."""

import json
import unittest
import urllib.error
import urllib.request

from farm_client import Agent, PolicyServer, RandomAgent, RandomClickAgent

OBS = {"stepIndex": 0, "timedeltaUs": 0, "orientation": 0, "extras": {}, "screen": {"width": 10, "height": 10}}


def step(item_id=None, step_index=0, reward=0.0, seed=3):
    msg = {"protocol": 2, "type": "step", "stepType": "first" if step_index == 0 else "mid", "reward": reward, "discount": 1,
           "observation": dict(OBS, stepIndex=step_index), "episode": {"id": "e-%s" % item_id, "seed": seed, "index": 0}, "context": None}
    if item_id is not None:
        msg["id"] = item_id
    return msg


class FailingOnOdd(RandomAgent):
    def act(self, s):
        if s.item_id == "bad":
            raise ValueError("model failed")
        return super().act(s)


class PolicyServerTest(unittest.TestCase):
    def setUp(self):
        self.server = PolicyServer(FailingOnOdd()).start()
        self.base = "http://127.0.0.1:%d" % self.server.port

    def tearDown(self):
        self.server.close()

    def post(self, path, body):
        req = urllib.request.Request(self.base + path, data=json.dumps(body).encode(), method="POST", headers={"content-type": "application/json"})
        with urllib.request.urlopen(req) as res:
            return res.headers, json.loads(res.read())

    def test_single_step_declares_protocol_2_and_seeded_actions_repeat(self):
        headers, a = self.post("/act", step())
        self.assertEqual(headers["x-policy-protocol"], "2")
        self.assertEqual(a["actionType"], "TOUCH")
        _, again = self.post("/act", step())
        self.assertEqual(a, again)

    def test_a_protocol_1_request_works(self):
        _, a = self.post("/act", {"observation": OBS, "context": None})
        self.assertIn(a["actionType"], ("TOUCH", "LIFT"))

    def test_batch_answers_every_step_and_keeps_errors_per_item(self):
        end = {"id": "x", "protocol": 2, "type": "episode_end", "stepType": "last", "reward": 1, "discount": 0, "episodeReturn": 7.5,
               "steps": 4, "outcome": "terminated", "cause": "episode_end", "episode": {"id": "e-x", "seed": 1, "index": 0}}
        _, body = self.post("/batch", {"protocol": 2, "batch": [step("a"), step("bad"), end, step("c", 1, 2.0)]})
        by_id = {r["id"]: r for r in body["results"]}
        self.assertEqual(sorted(by_id), ["a", "bad", "c"])
        self.assertIn("model failed", by_id["bad"]["error"])
        self.assertEqual(by_id["a"]["action"]["actionType"], "TOUCH")
        self.assertEqual(by_id["c"]["action"]["actionType"], "TOUCH")
        stats = json.loads(urllib.request.urlopen(self.base + "/stats").read())
        self.assertEqual((stats["batchRequests"], stats["stepItems"], stats["episodeEnds"], stats["returns"]), (1, 3, 1, [7.5]))
        _, lifted = self.post("/act", step("d", 2))
        self.assertEqual(lifted["actionType"], "LIFT")

    def test_garbage_is_a_400(self):
        req = urllib.request.Request(self.base + "/act", data=b"{not json", method="POST")
        with self.assertRaises(urllib.error.HTTPError) as cm:
            urllib.request.urlopen(req)
        self.assertEqual(cm.exception.code, 400)

    def test_agent_base_class_needs_act(self):
        with self.assertRaises(NotImplementedError):
            Agent().act(None)


ELEMENTS = [
    {"index": 0, "text": "Todo", "is_clickable": False},
    {"index": 1, "text": "NEW NOTE", "is_clickable": True},
    {"index": 2, "text": "Buy bread", "is_clickable": True},
]


class GuiAgentTest(unittest.TestCase):
    """The agent fields of a step (goal, elements, previous outcome) and UI actions as answers."""

    def setUp(self):
        self.agent = RandomClickAgent()
        self.server = PolicyServer(self.agent).start()
        self.base = "http://127.0.0.1:%d" % self.server.port

    def tearDown(self):
        self.server.close()

    def post(self, body):
        req = urllib.request.Request(self.base + "/act", data=json.dumps(body).encode(), method="POST", headers={"content-type": "application/json"})
        with urllib.request.urlopen(req) as res:
            return json.loads(res.read())

    def agent_step(self, step_index, elements, previous=None):
        msg = step("g", step_index)
        msg["observation"].update(goal="Create a note titled milk", elements=elements)
        if previous is not None:
            msg["observation"]["previous"] = previous
        return msg

    def test_clicks_a_clickable_element_by_index(self):
        for i in range(6):
            a = self.post(self.agent_step(i, ELEMENTS))
            self.assertEqual(a["action_type"], "click")
            self.assertIn(a["index"], (1, 2), "never the element that cannot be clicked")

    def test_nothing_clickable_goes_back(self):
        self.assertEqual(self.post(self.agent_step(0, ELEMENTS[:1])), {"action_type": "navigate_back"})
        self.assertEqual(self.post(self.agent_step(1, [])), {"action_type": "navigate_back"})

    def test_reads_goal_elements_and_previous_outcome(self):
        seen = []

        class Recording(Agent):
            def act(self, s):
                seen.append((s.goal, [e["index"] for e in s.elements], s.previous))
                return {"action_type": "wait"}

        server = PolicyServer(Recording()).start()
        try:
            prev = {"given": '{"action_type":"click","index":9}', "invalid": "index 9 is out of range"}
            req = urllib.request.Request("http://127.0.0.1:%d/act" % server.port, data=json.dumps(self.agent_step(1, ELEMENTS, prev)).encode(), method="POST")
            with urllib.request.urlopen(req) as res:
                self.assertEqual(json.loads(res.read()), {"action_type": "wait"})
        finally:
            server.close()
        self.assertEqual(seen, [("Create a note titled milk", [0, 1, 2], prev)])

    def test_counts_the_invalid_outcomes_it_was_told(self):
        self.post(self.agent_step(0, ELEMENTS))
        self.post(self.agent_step(1, ELEMENTS, {"given": "x", "invalid": "not JSON"}))
        self.post(self.agent_step(2, ELEMENTS, {"given": "{}", "resolved": {"op": "tap", "x": 5, "y": 5}}))
        self.assertEqual(self.agent.invalid_seen, 1)


if __name__ == "__main__":
    unittest.main()
