#!/usr/bin/env python3
"""dm_env_rpc compliance checks from Python (farm_remote's stubs, Debian's python3-grpcio) against a worker.

    python3 clients/python/tests/remote_compliance_checks.py --target 127.0.0.1:P --task classic_2048

The checks of DeepMind's compliance/step.py that a Python client meets first: exactly the requested
observations, unknown uids, wrong dtypes and shapes refused with INVALID_ARGUMENT naming the uid, a broadcast
scalar and a variable dimension accepted; and the farm's string action `ui_action`: a number sent to it, or a
UI action together with a touch, refused naming it; an invalid UI action taken as a step the farm records as
invalid. Prints one `ok <check>` line per check, last `checks=<n> failed=0`; exits 1 when a check fails.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from farm_remote import RemoteWorld, RemoteEnvError, LIFT, TOUCH  # noqa: E402

INVALID_ARGUMENT = 3


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--target", required=True)
    p.add_argument("--task", required=True)
    args = p.parse_args()
    world = RemoteWorld(args.target, task=args.task, seed=1, max_episode_steps=0)
    pb = world.pb
    results = []

    def step(actions=None, requested=()):
        return world._call(step=pb.StepRequest(actions=actions or {}, requested_observations=list(requested))).step

    def tensor(shape, **payload):
        return world._tensor(shape=shape, **payload)

    def check(name, f):
        try:
            f()
            results.append((name, None))
            print(f"ok {name}", flush=True)
        except Exception as e:  # one failed check does not hide the others
            results.append((name, e))
            print(f"FAIL {name}: {e!r}", flush=True)

    def refused(uid, **request):
        try:
            step(**request)
        except RemoteEnvError as e:
            assert e.code == INVALID_ARGUMENT, f"code {e.code}: {e}"
            assert str(uid) in str(e), f"the error names uid {uid}: {e}"
            return
        raise AssertionError(f"accepted: {request}")

    ids = {s.name: uid for uid, s in world.observation_specs.items()}
    act = {s.name: uid for uid, s in world.action_specs.items()}
    lift = {act["action_type"]: tensor([], int32s=[LIFT])}
    try:
        world._call(reset=pb.ResetRequest())

        def none_requested():
            assert len(step().observations) == 0

        def all_requested():
            got = set(step(lift, requested=list(ids.values()) * 2).observations)
            assert got == set(ids.values()), f"{sorted(got)} != {sorted(ids.values())}"

        def each_individually():
            for uid in ids.values():
                assert list(step(lift, requested=[uid]).observations) == [uid]

        bad = 0  # _find_uid_not_in_set: our uids start at 1
        check("test_no_observations_returned_if_not_requested", none_requested)
        check("test_requested_observations_are_returned", all_requested)
        check("test_can_request_each_observation_individually", each_individually)
        check("test_cannot_request_invalid_observation_uid", lambda: refused(bad, actions=lift, requested=[bad]))
        check("test_cannot_send_invalid_action_uid", lambda: refused(bad, actions={**lift, bad: tensor([], int64s=[0])}))
        check("test_cannot_send_wrong_numeric_type_action", lambda: refused(act["action_type"], actions={act["action_type"]: tensor([], doubles=[1.0])}))
        check("test_cannot_send_action_with_wrong_shape", lambda: refused(act["touch_position"], actions={**lift, act["touch_position"]: tensor([2, 1], floats=[0.5, 0.5])}))
        check("test_can_send_broadcastable_actions", lambda: step({act["action_type"]: tensor([], int32s=[TOUCH]), act["touch_position"]: tensor([2], floats=[0.5])}))
        check("test_can_send_variable_dimension_tensor_action", lambda: step({**lift, act["touch_position"]: tensor([-1], floats=[0.25, 0.75])}))
        ui = act["ui_action"]
        check("test_cannot_send_wrong_type_to_nonnumeric_actions", lambda: refused(ui, actions={ui: tensor([], int32s=[1])}))
        check("farm_ui_action_with_touch_fields_refused", lambda: refused(ui, actions={**lift, ui: tensor([], strings=['{"action_type":"wait"}'])}))

        def invalid_ui_recorded():
            ts = world.step_ui({"action_type": "click", "index": 100000}, observations=["last_action_outcome"])
            outcome = ts.observations["last_action_outcome"]
            assert ts.state == "RUNNING", ts.state
            assert outcome and outcome.get("invalid"), f"recorded as invalid: {outcome}"

        check("farm_invalid_ui_action_is_a_recorded_step", invalid_ui_recorded)
    finally:
        world.close()
    failed = sum(1 for _, e in results if e is not None)
    print(f"checks={len(results)} failed={failed}", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
