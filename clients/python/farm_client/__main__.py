"""``python3 -m farm_client <command>``: campaigns over the scheduler's HTTP API, and the policy server.

    python3 -m farm_client submit classic_2048 --episodes 10 [--policy http-batch:http://127.0.0.1:8000/batch] [--wait]
        [--goals FILE.jsonl] [--a11y-every N]
    python3 -m farm_client status <id> | watch <id> | cancel <id> | list
    python3 -m farm_client set-version <id> <version>      (raise the campaign's policy version; --max-staleness on submit)
    python3 -m farm_client serve-policy --port 8000

The scheduler URL comes from --url or FARM_SCHEDULER_URL (default http://127.0.0.1:8420), the token from
FARM_API_TOKEN. Every command prints JSON; watch prints one line per change.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import List, Optional

from .campaigns import CampaignClient, FarmApiError, GoalsFileError, load_goals
from . import policy_server


def _print(obj: object) -> None:
    print(json.dumps(obj, sort_keys=True), flush=True)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m farm_client")
    ap.add_argument("--url", default=os.environ.get("FARM_SCHEDULER_URL", "http://127.0.0.1:8420"))
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("submit", help="submit a campaign")
    s.add_argument("task")
    s.add_argument("--episodes", type=int, required=True)
    s.add_argument("--policy", default="random")
    s.add_argument("--id")
    s.add_argument("--seed", type=int)
    s.add_argument("--max-steps", type=int, help="per-episode step limit (options.maxEpisodeSteps)")
    s.add_argument("--reset", choices=["steps", "setup-snapshot", "start-snapshot"],
                   help="how each episode starts (options.resetMode; default steps)")
    s.add_argument("--goals", metavar="FILE.jsonl",
                   help='one {"goal": ..., "game_config": {...}, "params": {...}} a line (params: a task family\'s fixed parameters); episode i gets line i mod N')
    s.add_argument("--a11y-every", type=int, help="record the screen as a tree every N steps (options.a11yEvery)")
    s.add_argument("--max-staleness", type=int, metavar="V",
                   help="an episode whose steps' policy versions span, or lag the campaign's current version by, more than V is stale (options.staleness)")
    s.add_argument("--on-stale", choices=["mark", "end"], help="a stale episode is marked (default) or ended (cause stale_policy)")
    s.add_argument("--settle", help="how each step waits for the screen to settle: none | fixed:MS | androidworld | events[:quiet=MS,cap=MS] | frames[:...] (options.settle)")
    s.add_argument("--wait", action="store_true", help="watch until the campaign is done; print the final status")
    for name in ("status", "watch", "cancel"):
        sub.add_parser(name).add_argument("id")
    sub.add_parser("list")
    sv = sub.add_parser("set-version", help="raise a campaign's current policy version")
    sv.add_argument("id")
    sv.add_argument("version")
    sp = sub.add_parser("serve-policy", help="the reference policy server")
    sp.add_argument("--host", default="127.0.0.1")
    sp.add_argument("--port", default="8000")
    args = ap.parse_args(argv)

    if args.cmd == "serve-policy":
        return policy_server.main(["--host", args.host, "--port", str(args.port)])
    client = CampaignClient(args.url, token=os.environ.get("FARM_API_TOKEN") or None)
    try:
        if args.cmd == "submit":
            options = {}
            if args.max_steps:
                options["maxEpisodeSteps"] = args.max_steps
            if args.reset and args.reset != "steps":  # steps is the default: no option, the same campaign id
                options["resetMode"] = args.reset
            if args.a11y_every is not None:
                options["a11yEvery"] = args.a11y_every
            options = options or None
            goals = load_goals(args.goals) if args.goals else None
            r = client.submit(args.task, args.episodes, args.policy, campaign_id=args.id, base_seed=args.seed, options=options, goals=goals,
                              max_staleness=args.max_staleness, on_stale=args.on_stale, settle=args.settle)
            if not args.wait:
                _print(r)
                return 0
            final = None
            for final in client.watch(r["campaign"]["id"], interval=0.5):
                pass
            _print(final)
        elif args.cmd == "status":
            _print(client.status(args.id))
        elif args.cmd == "watch":
            for st in client.watch(args.id):
                _print({k: st[k] for k in ("id", "state", "finished", "episodes", "running", "failed")})
        elif args.cmd == "cancel":
            _print(client.cancel(args.id))
        elif args.cmd == "list":
            _print(client.list())
        elif args.cmd == "set-version":
            _print(client.raise_version(args.id, args.version))
    except (FarmApiError, GoalsFileError, ValueError) as e:
        print(f"farm_client: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"farm_client: cannot reach the scheduler at {args.url}: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
