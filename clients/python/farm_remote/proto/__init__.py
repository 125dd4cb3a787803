"""dm_env_rpc v1 messages and gRPC stubs, generated from the farm's .proto (clients/python/tools/generate_stubs.py)."""
