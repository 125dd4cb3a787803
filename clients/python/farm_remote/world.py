"""One remote world over one dm_env_rpc stream: create, join, reset, step (a touch or a UI action), leave, destroy."""
import json
import queue
import threading
from collections import namedtuple

from .stubs import load_stubs

TOUCH, LIFT, REPEAT = 0, 1, 2

# step_type: "FIRST" | "MID" | "LAST"; last_state: RUNNING / TERMINATED / INTERRUPTED (dm_env_rpc names).
TimeStep = namedtuple("TimeStep", "step_type reward discount observations state")
TimeStep.first = property(lambda self: self.step_type == "FIRST")
TimeStep.last = property(lambda self: self.step_type == "LAST")

# The GUI-agent observations, decoded: goal str, elements a list of dicts (AndroidWorld-style fields, `index`
# is what a click points at), a11y_tree the compact tree JSON as bytes (b"" when this step's tree was not
# recorded: CreateWorld a11y_every), last_action_outcome a dict {given, resolved?, invalid?} or None.
AGENT_OBSERVATIONS = ("goal", "elements", "a11y_tree", "last_action_outcome")

_PAYLOADS = ("floats", "doubles", "int8s", "int32s", "int64s", "uint8s", "uint32s", "uint64s", "bools", "strings")


class RemoteEnvError(RuntimeError):
    """An error response (google.rpc.Status): `code` is the gRPC status code, the message says what to do."""

    def __init__(self, code, message):
        super().__init__(f"dm_env_rpc error {code}: {message}")
        self.code = code


def unpack(t):
    """A Tensor as (values, shape): bytes for uint8/int8 payloads, else a list."""
    which = t.WhichOneof("payload")
    if which is None:
        return None, list(t.shape)
    arr = getattr(t, which).array
    return (bytes(arr) if which in ("uint8s", "int8s") else list(arr)), list(t.shape)


class RemoteWorld:
    """A world on a farm device. Settings: task (required), seed, max_episode_steps, max_episode_sec,
    step_timeout_ms, frame_size=(height, width), a11y_every (record the screen's tree every N steps; the
    a11y_tree observation carries it on those steps). `token` for a worker bound beyond loopback."""

    def __init__(self, target, task, seed=None, token=None, **limits):
        import grpc

        self.pb, pb_grpc = load_stubs()
        self._channel = grpc.insecure_channel(target, options=[("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1)])
        self._requests = queue.Queue()
        metadata = [("authorization", f"Bearer {token}")] if token else None
        self._responses = pb_grpc.EnvironmentStub(self._channel).Process(iter(self._requests.get, None), metadata=metadata)
        self._lock = threading.Lock()
        settings = {"task": self._tensor(strings=[task])}
        if seed is not None:
            settings["seed"] = self._tensor(int64s=[int(seed)])
        for name, value in limits.items():
            if value is None:
                continue
            if name == "frame_size":
                settings[name] = self._tensor(int32s=[int(v) for v in value], shape=[2])
            elif name == "max_episode_sec":
                settings[name] = self._tensor(doubles=[float(value)])
            else:
                settings[name] = self._tensor(int64s=[int(value)])
        self.name = None
        try:
            self.name = self._call(create_world=self.pb.CreateWorldRequest(settings=settings)).create_world.world_name
            specs = self._call(join_world=self.pb.JoinWorldRequest(world_name=self.name)).join_world.specs
        except BaseException:
            self._abandon()
            raise
        self.observation_specs = {uid: s for uid, s in specs.observations.items()}
        self.action_specs = {uid: s for uid, s in specs.actions.items()}
        self._obs_ids = {s.name: uid for uid, s in specs.observations.items()}
        self._act_ids = {s.name: uid for uid, s in specs.actions.items()}
        self._last_state = None

    def _tensor(self, shape=(), **payload):
        (name, values), = payload.items()
        t = self.pb.Tensor(shape=list(shape))
        if name in ("uint8s", "int8s"):
            getattr(t, name).array = bytes(values)
        else:
            getattr(t, name).array.extend(values)
        return t

    def _abandon(self):
        """Ends the stream (a created world is destroyed first, when the stream still works)."""
        if self.name:
            try:
                self._call(destroy_world=self.pb.DestroyWorldRequest(world_name=self.name))
            except Exception:
                pass  # the worker's idle timeout gives the device back
        self._requests.put(None)
        self._channel.close()

    def _call(self, **request):
        import grpc

        with self._lock:
            self._requests.put(self.pb.EnvironmentRequest(**request))
            try:
                res = next(self._responses)
            except grpc.RpcError as e:
                raise RemoteEnvError(e.code().value[0], e.details()) from None
        if res.WhichOneof("payload") == "error":
            raise RemoteEnvError(res.error.code, res.error.message)
        return res

    def _timestep(self, step):
        obs = {}
        for uid, t in step.observations.items():
            spec = self.observation_specs.get(uid)
            values, shape = unpack(t)
            obs[spec.name if spec else str(uid)] = values if shape or values is None or isinstance(values, bytes) else values[0]
        _decode_agent(obs)
        R, names = self.pb.EnvironmentStateType, self.pb.EnvironmentStateType.Name
        if step.state == R.Value("RUNNING"):
            step_type = "MID" if self._last_state == R.Value("RUNNING") else "FIRST"
        else:
            step_type = "LAST"
        self._last_state = step.state
        reward = obs.pop("reward", 0.0)
        discount = obs.pop("discount", 1.0)
        return TimeStep(step_type, float(reward if step_type != "FIRST" else 0.0), float(discount), obs, names(step.state))

    def reset(self, seed=None, observations=None):
        """Ends a running episode (it is committed as cancelled) and returns the next episode's FIRST step."""
        settings = {"seed": self._tensor(int64s=[int(seed)])} if seed is not None else {}
        self._call(reset=self.pb.ResetRequest(settings=settings))
        self._last_state = None
        return self._step({}, observations)

    def step(self, action_type, touch_position=(0.0, 0.0), observations=None):
        """One step; after a LAST step the next call starts a new episode (FIRST, the action is not applied)."""
        actions = {
            self._act_ids["action_type"]: self._tensor(int32s=[int(action_type)]),
            self._act_ids["touch_position"]: self._tensor(floats=[float(touch_position[0]), float(touch_position[1])], shape=[2]),
        }
        return self._step(actions, observations)

    def step_ui(self, action, observations=None):
        """One step with a UI action: AndroidWorld's JSON action as a dict (or its JSON text), e.g.
        {"action_type": "click", "index": 3}. An invalid one is recorded and the episode goes on: the next
        observation's last_action_outcome["invalid"] says why."""
        text = action if isinstance(action, str) else json.dumps(action)
        return self._step({self._act_ids["ui_action"]: self._tensor(strings=[text])}, observations)

    def _step(self, actions, observations):
        names = observations if observations is not None else list(self._obs_ids)
        requested = [self._obs_ids[n] for n in names] + [self._obs_ids["reward"], self._obs_ids["discount"]]
        res = self._call(step=self.pb.StepRequest(actions=actions, requested_observations=sorted(set(requested))))
        return self._timestep(res.step)

    def close(self, destroy=True):
        """Leaves (the running episode is committed) and destroys the world; the device goes back to the farm."""
        try:
            self._call(leave_world=self.pb.LeaveWorldRequest())
            if destroy:
                self._call(destroy_world=self.pb.DestroyWorldRequest(world_name=self.name))
        finally:
            self._requests.put(None)
            self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _decode_agent(obs):
    """The agent observations as Python values (elements as dicts, the previous outcome as a dict or None)."""
    if "goal" in obs and isinstance(obs["goal"], list):
        obs["goal"] = obs["goal"][0] if obs["goal"] else ""
    if "elements" in obs:
        obs["elements"] = [json.loads(e) for e in (obs["elements"] or [])]
    if "a11y_tree" in obs and obs["a11y_tree"] is None:
        obs["a11y_tree"] = b""
    if "last_action_outcome" in obs:
        v = obs["last_action_outcome"]
        obs["last_action_outcome"] = json.loads(v) if v else None
