"""The dm_env_rpc v1 message and service modules, shipped in farm_remote/proto (generated from the farm's
.proto files by tools/generate_stubs.py; nothing is generated at import time)."""


def load_stubs():
    """Returns (dm_env_rpc_pb2, dm_env_rpc_pb2_grpc)."""
    try:
        import grpc  # noqa: F401
        import google.protobuf  # noqa: F401
    except ImportError as e:
        raise SystemExit(f"farm_remote: {e}; pip install grpcio protobuf (or Debian's python3-grpcio and python3-protobuf)")
    from .proto import dm_env_rpc_pb2, dm_env_rpc_pb2_grpc
    return dm_env_rpc_pb2, dm_env_rpc_pb2_grpc
