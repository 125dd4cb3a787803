"""Python client for the Android episode farm (standard library only; numpy optional).

- ``farm_client.policy_server``: a reference policy server speaking the farm's HTTP policy protocol 2
  (single ``/act`` and batched ``/batch``), to start your own learner from.
- ``farm_client.campaigns``: a campaign client (submit, status, watch, cancel) over the scheduler's
  HTTP API.
"""

from .campaigns import CampaignClient, FarmApiError, GoalsFileError, load_goals, params_problem
from .policy_server import Agent, RandomAgent, RandomClickAgent, PolicyServer, StepRequest, EpisodeEnd

__all__ = ["CampaignClient", "FarmApiError", "GoalsFileError", "load_goals", "params_problem", "Agent", "RandomAgent", "RandomClickAgent", "PolicyServer", "StepRequest", "EpisodeEnd"]
