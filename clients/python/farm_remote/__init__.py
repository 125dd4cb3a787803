"""A dm_env_rpc v1 client for the farm's remote environments (``farm worker --env-port P``).

Standard library plus ``grpcio`` and ``protobuf`` (``pip install ./clients/python``, or Debian's
``python3-grpcio`` and ``python3-protobuf``); the message classes ship in ``farm_remote.proto``, generated
from the farm's own ``.proto`` files (``libs/dm-env-rpc/proto``) by ``tools/generate_stubs.py``.
numpy is not needed: pixels come back as ``bytes`` with their shape.

    from farm_remote import RemoteWorld
    with RemoteWorld("127.0.0.1:7000", task="classic_2048", seed=1) as w:
        ts = w.reset()                       # FIRST: ts.reward == 0, ts.observations["pixels"]
        ts = w.step(action_type=0, touch_position=(0.5, 0.5))
        if ts.last: ts = w.reset()

    # A GUI agent: the goal and the screen as elements, AndroidWorld's JSON actions.
    with RemoteWorld("127.0.0.1:7000", task="todo_create_note") as w:
        want = ["goal", "elements", "last_action_outcome"]
        ts = w.reset(observations=want)      # ts.observations["elements"]: [{"index": 0, "text": …}, …]
        ts = w.step_ui({"action_type": "click", "index": 3}, observations=want)
        ts.observations["last_action_outcome"]   # {"given": …, "resolved": {…}} or {…, "invalid": reason}

DeepMind's own ``dm_env_rpc`` package (``DmEnvAdaptor``) speaks the same wire format; this module is
for machines without it.
"""
from .stubs import load_stubs
from .world import AGENT_OBSERVATIONS, RemoteWorld, TimeStep, RemoteEnvError, TOUCH, LIFT, REPEAT

__all__ = ["RemoteWorld", "TimeStep", "RemoteEnvError", "load_stubs", "AGENT_OBSERVATIONS", "TOUCH", "LIFT", "REPEAT"]
