"""Goals for campaigns (issue 28): load_goals reads a goals file as `farm submit --goals` does and names file:line and
the field of a bad line; goals_body turns texts and mappings into the API's ``goals``. The scheduler's verdicts on
the same goals: services/scheduler/test/python-goals.test.ts (this client against a real scheduler)."""

import json
import os
import tempfile
import unittest

from farm_client.campaigns import GoalsFileError, goals_body, load_goals, params_problem


class LoadGoalsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self) -> None:
        self.dir.cleanup()

    def write(self, name: str, text: str) -> str:
        path = os.path.join(self.dir.name, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def test_lines_in_order_blank_lines_skipped(self) -> None:
        path = self.write("ok.jsonl", '{"goal": "Create a note titled eggs", "game_config": {"title": "eggs"}}\n\n{"goal": "Look"}\n')
        self.assertEqual(load_goals(path), [{"goal": "Create a note titled eggs", "game_config": {"title": "eggs"}}, {"goal": "Look"}])

    def test_bad_lines_name_file_line_and_field(self) -> None:
        cases = [
            ('{"goal": "a"}\n{goal: b}\n', r"bad\.jsonl:2: not JSON"),
            ('["a"]\n', r"bad\.jsonl:1: a line is a JSON object"),
            ('{"goal": "a"}\n\n{"game_config": {}}\n', r"bad\.jsonl:3: field goal: missing"),
            ('{"goal": ""}\n', r"bad\.jsonl:1: field goal: must not be empty"),
            ('{"goal": 7}\n', r"bad\.jsonl:1: field goal: must be text"),
            ('{"goal": "a\\u001b[2J"}\n', r"bad\.jsonl:1: field goal: no control characters"),
            ('{"goal": "a", "gameconfig": {}}\n', r"bad\.jsonl:1: unknown field 'gameconfig'"),
            ('{"goal": "a", "game_config": "{}"}\n', r"bad\.jsonl:1: field game_config: must be a JSON object"),
            ('{"goal": "a", "game_config": {"t": "%s"}}\n' % ("x" * 5000), r"bad\.jsonl:1: field game_config: at most 4096"),
            ("\n\n", r"bad\.jsonl: no goals"),
        ]
        for text, message in cases:
            with self.subTest(text=text[:40]):
                with self.assertRaisesRegex(GoalsFileError, message):
                    load_goals(self.write("bad.jsonl", text))

    def test_too_many_and_missing(self) -> None:
        with self.assertRaisesRegex(GoalsFileError, r"many\.jsonl:10001: more than 10000 goals"):
            load_goals(self.write("many.jsonl", '{"goal":"g"}\n' * 10_001))
        with self.assertRaisesRegex(GoalsFileError, r"absent\.jsonl: cannot read it"):
            load_goals(os.path.join(self.dir.name, "absent.jsonl"))


class GoalsBodyTest(unittest.TestCase):
    def test_texts_and_mappings(self) -> None:
        body = goals_body(["Just a goal", {"goal": "eggs", "game_config": {"title": "eggs"}}, {"goal": "milk", "gameConfig": {"title": "milk"}}])
        self.assertEqual(json.loads(json.dumps(body)), [
            {"goal": "Just a goal"},
            {"goal": "eggs", "gameConfig": {"title": "eggs"}},
            {"goal": "milk", "gameConfig": {"title": "milk"}},
        ])

    def test_a_mapping_without_goal_is_refused(self) -> None:
        with self.assertRaisesRegex(ValueError, r"goals\[1\]"):
            goals_body(["ok", {"game_config": {}}])


if __name__ == "__main__":
    unittest.main()


class FamilyParamsTest(unittest.TestCase):
    """A task family's fixed params (libs/task/FAMILIES.md) in goals files and in ``goals=[...]``."""

    def setUp(self) -> None:
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self) -> None:
        self.dir.cleanup()

    def write(self, text: str) -> str:
        path = os.path.join(self.dir.name, "family.jsonl")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def test_lines_with_params_may_leave_out_the_goal(self) -> None:
        path = self.write('{"params": {"state": "off"}}\n{"goal": "Wi-Fi on", "params": {"state": "on", "level": 3, "ok": true}}\n')
        self.assertEqual(load_goals(path), [{"params": {"state": "off"}}, {"goal": "Wi-Fi on", "params": {"state": "on", "level": 3, "ok": True}}])
        self.assertEqual(goals_body([{"params": {"state": "off"}}, {"goal": "g", "game_config": {"a": 1}, "params": {"state": "on"}}]),
                         [{"params": {"state": "off"}}, {"goal": "g", "gameConfig": {"a": 1}, "params": {"state": "on"}}])

    def test_bad_params_name_file_line_and_field(self) -> None:
        cases = [
            ('{"params": ["on"]}\n', r"family\.jsonl:1: field params: must be a JSON object"),
            ('{"goal": "a"}\n{"params": {"State": "on"}}\n', r"family\.jsonl:2: field params: \"State\" is not a parameter name"),
            ('{"params": {"state": {"on": 1}}}\n', r"family\.jsonl:1: field params: state: must be a string, a finite number or a boolean"),
            ('{"params": {"state": "%s"}}\n' % ("x" * 2001), r"family\.jsonl:1: field params: state: 2001 characters; at most 2000"),
            ('{"game_config": {}}\n', r"family\.jsonl:1: field goal: missing; only a task family's line with params"),
        ]
        for text, message in cases:
            with self.subTest(message=message):
                with self.assertRaisesRegex(GoalsFileError, message):
                    load_goals(self.write(text))
        self.assertRegex(params_problem({"p%d" % i: i for i in range(65)}) or "", r"65 parameters; at most 64")
        self.assertRegex(params_problem({"x": float("nan")}) or "", r"x: must be a string, a finite number")
        with self.assertRaisesRegex(ValueError, r"goals\[0\]\.params: "):
            goals_body([{"params": {"Bad": 1}}])
