#!/usr/bin/env python3
"""Generates farm_remote/proto/ (the dm_env_rpc v1 messages and gRPC stubs the package ships) from the
farm's own .proto files in libs/dm-env-rpc/proto, with Debian's protoc (protobuf-compiler) and
grpc_python_plugin (protobuf-compiler-grpc); and farm_client/android_env_proto/adb_pb2.py (AndroidEnv's
AdbRequest/AdbResponse, for task servers: farm_client.task_server) from the farm's own copy in
libs/task-protocol/proto.

    python3 clients/python/tools/generate_stubs.py            # rewrite farm_remote/proto/
    python3 clients/python/tools/generate_stubs.py --check    # exit 1 naming the files that differ

protoc writes absolute imports (`from dm_env_rpc.v1 import …`, `from google.rpc import …`); they are made
package-relative here so the installed package adds no top-level `dm_env_rpc` or `google.rpc` module (which
would shadow DeepMind's dm_env_rpc package or googleapis-common-protos). The output is committed; the suite
runs --check, so a .proto change without regenerating fails.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_ROOT = os.path.dirname(HERE)
DEFAULT_PROTO_ROOT = os.path.normpath(os.path.join(PACKAGE_ROOT, "..", "..", "libs", "dm-env-rpc", "proto"))
DEFAULT_OUT = os.path.join(PACKAGE_ROOT, "farm_remote", "proto")
PROTOS = ["dm_env_rpc/v1/dm_env_rpc.proto", "google/rpc/status.proto"]
HEADER = "# farm: from libs/dm-env-rpc/proto by clients/python/tools/generate_stubs.py (imports made package-relative)\n"
INIT = '"""dm_env_rpc v1 messages and gRPC stubs, generated from the farm\'s .proto (clients/python/tools/generate_stubs.py)."""\n'

# (generated file, file in the package, [(what protoc writes, what the package needs)])
OUTPUTS = [
    ("dm_env_rpc/v1/dm_env_rpc_pb2.py", "dm_env_rpc_pb2.py", [
        ("from google.rpc import status_pb2 as", "from . import status_pb2 as"),
        ("'dm_env_rpc.v1.dm_env_rpc_pb2'", "'farm_remote.proto.dm_env_rpc_pb2'"),
    ]),
    ("dm_env_rpc/v1/dm_env_rpc_pb2_grpc.py", "dm_env_rpc_pb2_grpc.py", [
        ("from dm_env_rpc.v1 import dm_env_rpc_pb2 as", "from . import dm_env_rpc_pb2 as"),
    ]),
    ("google/rpc/status_pb2.py", "status_pb2.py", [
        ("'google.rpc.status_pb2'", "'farm_remote.proto.status_pb2'"),
    ]),
]

# The task protocol's adb messages: messages only (no service), one file.
ADB_PROTO_ROOT = os.path.normpath(os.path.join(PACKAGE_ROOT, "..", "..", "libs", "task-protocol", "proto"))
ADB_OUT = os.path.join(PACKAGE_ROOT, "farm_client", "android_env_proto")
ADB_PROTOS = ["android_env/proto/adb.proto"]
ADB_HEADER = "# farm: from libs/task-protocol/proto by clients/python/tools/generate_stubs.py (module name made package-relative)\n"
ADB_INIT = (
    '"""AndroidEnv\'s adb messages (AdbRequest, AdbResponse), generated from the farm\'s own copy of adb.proto\n'
    '(clients/python/tools/generate_stubs.py). Import through farm_client.task_server.adb_pb2(), which prefers an\n'
    'installed android_env."""\n'
)
ADB_OUTPUTS = [
    ("android_env/proto/adb_pb2.py", "adb_pb2.py", [
        ("'android_env.proto.adb_pb2'", "'farm_client.android_env_proto.adb_pb2'"),
    ]),
]


def well_known_include():
    """The folder holding google/protobuf/any.proto (Debian: libprotobuf-dev puts it under /usr/include)."""
    for d in ("/usr/include", "/usr/local/include"):
        if os.path.exists(os.path.join(d, "google", "protobuf", "any.proto")):
            return d
    sys.exit("generate_stubs: google/protobuf/any.proto not found; install Debian's libprotobuf-dev")


def run_protoc(proto_root, out, protos=PROTOS, grpc=True):
    protoc, plugin = shutil.which("protoc"), shutil.which("grpc_python_plugin")
    if not protoc or (grpc and not plugin):
        sys.exit("generate_stubs: needs protoc and grpc_python_plugin; install Debian's protobuf-compiler and protobuf-compiler-grpc")
    for p in protos:
        if not os.path.isfile(os.path.join(proto_root, p)):
            sys.exit(f"generate_stubs: {os.path.join(proto_root, p)} not found (--proto-root must hold {', '.join(protos)})")
    cmd = [protoc, f"-I{proto_root}", f"-I{well_known_include()}", f"--python_out={out}"]
    if grpc:
        cmd += [f"--grpc_out={out}", f"--plugin=protoc-gen-grpc={plugin}"]
    cmd += protos
    r = subprocess.run(cmd, cwd=proto_root, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"generate_stubs: protoc failed: {r.stderr.strip()}")


def package_files(generated, outputs=OUTPUTS, init=INIT, header=HEADER):
    """{file name in the package folder: content} from protoc's output folder."""
    files = {"__init__.py": init}
    for src, dst, edits in outputs:
        with open(os.path.join(generated, src), encoding="utf-8") as f:
            text = f.read()
        for old, new in edits:
            if text.count(old) != 1:
                sys.exit(f"generate_stubs: {src}: expected one '{old}' in protoc's output (another protoc version?); adjust OUTPUTS")
            text = text.replace(old, new)
        files[dst] = header + text
    return files


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--proto-root", default=DEFAULT_PROTO_ROOT)
    p.add_argument("--out", default=DEFAULT_OUT)
    p.add_argument("--adb-proto-root", default=ADB_PROTO_ROOT)
    p.add_argument("--adb-out", default=ADB_OUT)
    p.add_argument("--check", action="store_true", help="compare with --out and --adb-out instead of writing them")
    args = p.parse_args()
    tmp = tempfile.mkdtemp(prefix="farm-stubs-")
    tmp_adb = tempfile.mkdtemp(prefix="farm-stubs-adb-")
    try:
        run_protoc(os.path.abspath(args.proto_root), tmp)
        files = package_files(tmp)
        run_protoc(os.path.abspath(args.adb_proto_root), tmp_adb, ADB_PROTOS, grpc=False)
        adb_files = package_files(tmp_adb, ADB_OUTPUTS, ADB_INIT, ADB_HEADER)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(tmp_adb, ignore_errors=True)
    status = 0
    for out, fs in ((args.out, files), (args.adb_out, adb_files)):
        status = max(status, write_or_check(out, fs, args.check))
    return status


def write_or_check(out, files, check):
    """Writes `files` into `out`, or (check) compares them; returns the exit status."""
    if check:
        present = set(os.listdir(out)) if os.path.isdir(out) else set()
        present = {n for n in present if n.endswith(".py")}
        differ = sorted(n for n, text in files.items() if not same(os.path.join(out, n), text))
        extra = sorted(present - set(files))
        if differ or extra:
            print(f"generate_stubs: {out} is not what the .proto files give: differ {differ}, extra {extra}; "
                  "run python3 clients/python/tools/generate_stubs.py", file=sys.stderr)
            return 1
        print(f"generate_stubs: {len(files)} files match in {out}")
        return 0
    os.makedirs(out, exist_ok=True)
    for name, text in files.items():
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            f.write(text)
    print(f"generate_stubs: wrote {len(files)} files to {out}")
    return 0


def same(path, text):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read() == text
    except FileNotFoundError:
        return False


if __name__ == "__main__":
    sys.exit(main())
