"""Generates and imports the dm_env_rpc message and service modules from the farm's .proto files."""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile

_HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_PROTO_ROOT = os.path.normpath(os.path.join(_HERE, "..", "..", "..", "libs", "dm-env-rpc", "proto"))
_loaded = None


def _well_known_include():
    """Folder holding google/protobuf/any.proto (Debian's protobuf-compiler installs it under /usr/include)."""
    for d in ("/usr/include", "/usr/local/include"):
        if os.path.exists(os.path.join(d, "google", "protobuf", "any.proto")):
            return d
    return None


def load_stubs(proto_root=DEFAULT_PROTO_ROOT):
    """Returns (dm_env_rpc_pb2, dm_env_rpc_pb2_grpc), generating them into a temporary folder once per process."""
    global _loaded
    if _loaded is not None:
        return _loaded
    try:
        import grpc  # noqa: F401
        import google.protobuf  # noqa: F401
    except ImportError as e:
        raise SystemExit(f"farm_remote: {e}; install Debian's python3-grpcio and python3-protobuf (or pip install grpcio protobuf)")
    protoc = shutil.which("protoc")
    plugin = shutil.which("grpc_python_plugin")
    if not protoc or not plugin:
        raise SystemExit("farm_remote: protoc and grpc_python_plugin are needed to generate the stubs; install Debian's protobuf-compiler and protobuf-compiler-grpc")
    out = tempfile.mkdtemp(prefix="farm-dm-env-rpc-")
    atexit.register(shutil.rmtree, out, True)
    includes = [f"-I{proto_root}"]
    wk = _well_known_include()
    if wk:
        includes.append(f"-I{wk}")
    files = [os.path.join(proto_root, "dm_env_rpc", "v1", "dm_env_rpc.proto"), os.path.join(proto_root, "google", "rpc", "status.proto")]
    r = subprocess.run([protoc, *includes, f"--python_out={out}", f"--grpc_out={out}", f"--plugin=protoc-gen-grpc={plugin}", *files], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"farm_remote: protoc failed: {r.stderr.strip()}")
    sys.path.insert(0, out)
    # google is a package of python3-protobuf already: let google.rpc be found in our folder too.
    import google
    google.__path__.append(os.path.join(out, "google"))
    from dm_env_rpc.v1 import dm_env_rpc_pb2, dm_env_rpc_pb2_grpc
    _loaded = (dm_env_rpc_pb2, dm_env_rpc_pb2_grpc)
    return _loaded
