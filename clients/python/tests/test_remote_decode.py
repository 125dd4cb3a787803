"""The agent observations as farm_remote hands them to Python (no farm needed)."""

import json
import unittest

from farm_remote.world import AGENT_OBSERVATIONS, _decode_agent


class DecodeAgentTest(unittest.TestCase):
    def test_elements_become_dicts_and_the_outcome_a_dict(self):
        el = {"index": 0, "text": "NEW NOTE", "is_clickable": True}
        prev = {"given": "{}", "invalid": "not JSON"}
        obs = {"goal": "make a note", "elements": [json.dumps(el)], "a11y_tree": b'{"v":1}', "last_action_outcome": json.dumps(prev)}
        _decode_agent(obs)
        self.assertEqual(obs, {"goal": "make a note", "elements": [el], "a11y_tree": b'{"v":1}', "last_action_outcome": prev})

    def test_absent_values_are_empty(self):
        obs = {"elements": None, "a11y_tree": None, "last_action_outcome": ""}
        _decode_agent(obs)
        self.assertEqual(obs, {"elements": [], "a11y_tree": b"", "last_action_outcome": None})

    def test_other_observations_are_left_alone(self):
        obs = {"reward": 1.0, "grid": [0, 2]}
        _decode_agent(obs)
        self.assertEqual(obs, {"reward": 1.0, "grid": [0, 2]})
        self.assertEqual(AGENT_OBSERVATIONS, ("goal", "elements", "a11y_tree", "last_action_outcome"))


if __name__ == "__main__":
    unittest.main()
