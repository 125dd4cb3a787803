#!/usr/bin/env python3
"""Random agent on farm devices over dm_env_rpc: N worlds at once (one thread each), S steps each.

    python3 clients/python/examples/remote_env_random.py --target 127.0.0.1:7000 --task classic_2048 --steps 100 --worlds 2
    python3 clients/python/examples/remote_env_random.py --target 127.0.0.1:7000 --task todo_create_note --ui

--ui: a GUI agent instead of a finger: reads the goal and the screen as elements every step and answers
AndroidWorld JSON actions (mostly a click on a random clickable element by index; sometimes input_text into
an editable one, a scroll or navigate_back); an invalid one is recorded by the farm and the episode goes on.
Prints one line per finished episode and per world (with --ui, the UI actions the farm found invalid), and
last: worlds=N steps=N*S reward=<sum over all>.
Start a farm that serves remote environments with `npx farm demo --env-port 7000 --keep` (or
`farm worker … --env-port P`). Needs the farm_remote package: `pip install ./clients/python` (grpcio,
protobuf), or run from a checkout with Debian's python3-grpcio and python3-protobuf.
"""
import argparse
import os
import random
import sys
import threading

try:
    from farm_remote import RemoteWorld, TOUCH, LIFT, load_stubs
except ImportError:
    # Not installed: run from a checkout (clients/python/examples/ next to farm_remote/).
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    try:
        from farm_remote import RemoteWorld, TOUCH, LIFT, load_stubs
    except ImportError as e:
        sys.exit(f"remote_env_random: {e}; pip install ./clients/python (the farm's checkout) first")


WORDS = ("milk", "2 litres", "bread", "call mom", "hello")


def ui_action(rng, elements):
    """A random GUI-agent action on the elements the agent was shown."""
    clickable = [e for e in elements if e.get("is_clickable")]
    editable = [e for e in elements if e.get("is_editable")]
    r = rng.random()
    if editable and r < 0.15:
        return {"action_type": "input_text", "text": rng.choice(WORDS), "index": rng.choice(editable)["index"]}
    if r < 0.25:
        return {"action_type": "scroll", "direction": rng.choice(["up", "down"])}
    if r < 0.3 or not clickable:
        return {"action_type": "navigate_back"}
    return {"action_type": "click", "index": rng.choice(clickable)["index"]}


def finger_step(world, rng, want):
    """Random finger: touch somewhere or lift, as AndroidEnv's random agent does."""
    if rng.random() < 0.5:
        return world.step(TOUCH, (rng.random(), rng.random()), observations=want)
    return world.step(LIFT, observations=want)


def run_world(i, args, results, lock):
    rng = random.Random(args.seed * 1000 + i)
    world = RemoteWorld(args.target, task=args.task, seed=args.seed + i, token=args.token, max_episode_steps=args.max_episode_steps)
    want = (["pixels"] if args.pixels else []) + (["goal", "elements", "last_action_outcome"] if args.ui else [])
    total, episode_reward, episode, taken, invalid = 0.0, 0.0, 0, 0, 0
    try:
        ts = world.reset(observations=want)
        while taken < args.steps:
            if ts.last:
                with lock:
                    print(f"episode world={world.name} index={episode} reward={episode_reward:g} end={ts.state}", flush=True)
                episode, episode_reward = episode + 1, 0.0
                ts = world.reset(observations=want)
                continue
            if args.ui:
                ts = world.step_ui(ui_action(rng, ts.observations["elements"]), observations=want)
                invalid += 1 if (ts.observations["last_action_outcome"] or {}).get("invalid") else 0
            else:
                ts = finger_step(world, rng, want)
            taken += 1
            total += ts.reward
            episode_reward += ts.reward
        with lock:
            print(f"episode world={world.name} index={episode} reward={episode_reward:g} end=closed", flush=True)
    finally:
        world.close()
    with lock:
        ui = f" ui_invalid={invalid}" if args.ui else ""
        print(f"world={world.name} episodes={episode + 1} steps={taken} reward={total:g}{ui}", flush=True)
        results.append((taken, total))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--target", required=True, help="HOST:PORT of a worker's dm_env_rpc server")
    p.add_argument("--task", required=True, help="task id served by that worker, e.g. classic_2048")
    p.add_argument("--steps", type=int, default=100, help="steps per world")
    p.add_argument("--worlds", type=int, default=1, help="worlds (devices) at once")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-episode-steps", type=int, default=None, help="override the task's step limit")
    p.add_argument("--pixels", action="store_true", help="also fetch the pixels every step")
    p.add_argument("--ui", action="store_true", help="a GUI agent: read the screen as elements, answer UI actions (AndroidWorld JSON)")
    p.add_argument("--token", default=os.environ.get("FARM_ENV_TOKEN"), help="for a worker bound beyond loopback (default: FARM_ENV_TOKEN)")
    args = p.parse_args()
    if args.steps < 1 or args.worlds < 1:
        p.error("--steps and --worlds must be at least 1")
    load_stubs()  # once, before the threads
    results, errors, lock = [], [], threading.Lock()

    def guarded(i):
        try:
            run_world(i, args, results, lock)
        except Exception as e:  # reported below; the other worlds go on
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(args.worlds)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for e in errors:
        print(f"error: {e}", file=sys.stderr)
    print(f"worlds={len(results)} steps={sum(s for s, _ in results)} reward={sum(r for _, r in results):g}", flush=True)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
