"""A farm device driven as an OpenEnv environment (farm_client.openenv_client, written from OpenEnv's protocol):
a whole episode of the todo_note_create family solved from the goal and the element list, scored by the device
(reward and success at the end), and the protocol's answers to touches, invalid actions and bad messages.

Runs against a worker started with --openenv-port (FARM_OPENENV_URL=http://host:port), e.g. from
services/worker/test/openenv.python.test.ts (its name keeps it out of `unittest discover`); skipped without it. Prints one `OPENENV_RESULT {json}` line per
solved episode for the caller to compare with the committed trajectory."""

import base64
import json
import os
import re
import unittest

from farm_client.openenv_client import OpenEnvClient, OpenEnvError

URL = os.environ.get("FARM_OPENENV_URL")


def solve_step(obs, saved):
    """The next AndroidWorld action for the note task, from the goal and the element list (as a GUI agent would)."""
    m = re.search(r'titled "([^"]*)" with the text "([^"]*)"', obs["goal"])
    if not m:
        return {"action_type": "status", "goal_status": "infeasible"}, saved
    title, body = m.groups()
    els = obs["elements"] or []
    by_id = {e["resource_id"].split(":id/")[-1]: e for e in els if ":id/" in e["resource_id"]}
    if saved:
        return {"action_type": "status", "goal_status": "complete"}, saved
    t, b = by_id.get("title_input"), by_id.get("body_input")
    if t and b:
        if t["text"] != title:
            return {"action_type": "input_text", "index": t["index"], "text": title}, saved
        if b["text"] != body:
            return {"action_type": "input_text", "index": b["index"], "text": body}, saved
        return {"action_type": "click", "index": by_id["save"]["index"]}, True
    if "new_note" in by_id:
        return {"action_type": "click", "index": by_id["new_note"]["index"]}, saved
    return {"action_type": "navigate_back"}, saved


@unittest.skipUnless(URL, "FARM_OPENENV_URL not set (a worker with --openenv-port)")
class OpenEnvDeviceTest(unittest.TestCase):
    def test_http_endpoints(self):
        env = OpenEnvClient(URL)
        self.assertEqual(env.health(), {"status": "healthy"})
        meta = env.metadata()
        self.assertEqual(meta["name"], "android-episode-farm")
        self.assertIn("todo_note_create", meta["description"])
        schema = env.schema()
        self.assertEqual(sorted(schema), ["action", "observation", "state"])
        self.assertIn("step_count", schema["state"]["properties"])

    def test_whole_episode_of_a_family_scored_by_the_device(self):
        with OpenEnvClient(URL) as env:
            r = env.reset(task="todo_note_create", seed=7, episode_id="py-note-1", max_episode_steps=20)
            obs = r.observation
            self.assertFalse(r.done)
            self.assertIsNone(r.reward)
            self.assertRegex(obs["goal"], r'^Create a note in Todo titled "[^"]+" with the text "[^"]+"\.$')
            self.assertTrue(obs["elements"], "the element list comes with the observation")
            png = base64.b64decode(obs["screenshot"]["data"])
            self.assertEqual(png[:8], b"\x89PNG\r\n\x1a\n")
            self.assertEqual(obs["screenshot"]["format"], "png")
            self.assertEqual(obs["episode_id"], "py-note-1")
            st = env.state()
            self.assertEqual((st["episode_id"], st["step_count"], st["task_id"]), ("py-note-1", 0, "todo_note_create"))
            self.assertEqual(st["farm_episode_id"], "openenv-%s-0" % st["session_id"])
            total, saved, steps = 0.0, False, 0
            while not r.done:
                action, saved = solve_step(r.observation, saved)
                r = env.step(action)
                steps += 1
                total += r.reward
                self.assertLess(steps, 20)
            final = r.observation
            self.assertEqual(final["success"], 1)
            self.assertEqual((final["outcome"], final["cause"]), ("terminated", "agent_status"))
            self.assertEqual(total, 1.0, "the family's check gives reward 1 at the end, nothing before")
            self.assertEqual(r.reward, 1.0)
            self.assertEqual(sorted(final["params"]), ["body", "title"])
            self.assertTrue(all(c["passed"] for c in final["checks"]), final["checks"])
            st = env.state()
            self.assertEqual(st["step_count"], steps)
            self.assertTrue(st["done"])
            with self.assertRaises(OpenEnvError) as e:
                env.step({"action_type": "wait"})
            self.assertEqual(e.exception.code, "EXECUTION_ERROR")
            print("OPENENV_RESULT " + json.dumps({"session": st["session_id"], "steps": steps, "reward": total, "success": final["success"], "goal": final["goal"]}), flush=True)

    def test_touches_invalid_actions_and_bad_messages(self):
        with OpenEnvClient(URL) as env:
            r = env.reset(task="todo_note_create", params={"title": "Fixed title", "body": "fixed body text"}, screenshot="jpeg:70@180x320", elements=False)
            self.assertEqual(r.observation["goal"], 'Create a note in Todo titled "Fixed title" with the text "fixed body text".')
            self.assertIsNone(r.observation["elements"])
            self.assertEqual((r.observation["screenshot"]["format"], r.observation["screenshot"]["width"]), ("jpeg", 180))
            r = env.step({"action_type": "TOUCH", "touch_position": [0.5, 0.9]})
            self.assertFalse(r.done)
            r = env.step({"action_type": "LIFT"})
            self.assertEqual(env.state()["step_count"], 2)
            r = env.step({"action_type": "click", "index": 9999, "metadata": {"note": "ignored"}})
            self.assertFalse(r.done)
            self.assertIn("invalid", r.observation["last_action"], r.observation["last_action"])
            for bad, code in (
                ({"action_type": "TOUCH", "touch_position": [2, 0]}, "VALIDATION_ERROR"),
                ({"index": 1}, "VALIDATION_ERROR"),
            ):
                with self.assertRaises(OpenEnvError) as e:
                    env.step(bad)
                self.assertEqual(e.exception.code, code)
            with self.assertRaises(OpenEnvError) as e:
                env.reset(task="todo_note_create", params={"colour": "red"})
            self.assertEqual(e.exception.code, "VALIDATION_ERROR")
            self.assertIn("colour", str(e.exception))
            with self.assertRaises(OpenEnvError) as e:
                env.reset(task="no_such_task")
            self.assertIn("todo_note_create", str(e.exception))
            with self.assertRaises(OpenEnvError) as e:
                env._call({"type": "mcp", "data": {}})
            self.assertEqual(e.exception.code, "UNKNOWN_TYPE")
            self.assertEqual(env.state()["step_count"], 3, "errors leave the episode as it was")


if __name__ == "__main__":
    unittest.main()
