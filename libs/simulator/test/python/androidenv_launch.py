"""Launches our `emulator` the way AndroidEnv's launch mode does (EmulatorSimulator picks the ports,
EmulatorLauncher builds the command line and environment), then does what AndroidEnv does next:
waits for the gRPC channel and getStatus().booted, talks to the device over adb by the serial it
derives (emulator-<adb port - 1>), and shuts the emulator down with setVmState(SHUTDOWN).

usage: androidenv_launch.py EMULATOR_PATH AVD_NAME ADB_SERVER_PORT AVD_HOME
Needs Debian's python3-grpcio, python3-protobuf, protobuf-compiler and protobuf-compiler-grpc.
Prints one JSON line (the facts the Node test checks); exits non-zero with a message on failure.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import grpc
from google.protobuf import empty_pb2

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_DIR = os.path.normpath(os.path.join(HERE, "..", "..", "..", "emulator-grpc", "proto"))


def port_free(port):
    """Free for TCP and UDP, as portpicker.is_port_free checks."""
    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        s = socket.socket(socket.AF_INET, kind)
        try:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("", port))
        except OSError:
            return False
        finally:
            s.close()
    return True


def unused_port():
    """A port the kernel hands out (portpicker.pick_unused_port's usual answer)."""
    s = socket.socket()
    s.bind(("", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def pick_ports():
    """AndroidEnv: adb in 5555..5585 (odd), console any unused port, gRPC 8554 if free."""
    adb = next((p for p in range(5555, 5587, 2) if port_free(p)), None) or unused_port()
    console = unused_port()
    while console in (adb, adb - 1):
        console = unused_port()
    grpc_port = 8554 if port_free(8554) else unused_port()
    return console, adb, grpc_port


def stubs(out):
    """emulator_controller_pb2(_grpc) from our copy of the emulator's proto, as AndroidEnv ships them."""
    plugin = shutil.which("grpc_python_plugin")
    protoc = shutil.which("protoc")
    if not plugin or not protoc:
        sys.exit("androidenv_launch: needs protoc and grpc_python_plugin (Debian: protobuf-compiler, protobuf-compiler-grpc)")
    r = subprocess.run([protoc, f"-I{PROTO_DIR}", "-I/usr/include", f"--python_out={out}", f"--grpc_out={out}",
                        f"--plugin=protoc-gen-grpc={plugin}", os.path.join(PROTO_DIR, "emulator_controller.proto")],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"androidenv_launch: protoc failed: {r.stderr.strip()}")
    sys.path.insert(0, out)
    import emulator_controller_pb2
    import emulator_controller_pb2_grpc
    return emulator_controller_pb2, emulator_controller_pb2_grpc


def launch(emulator_path, avd_name, adb_server_port, avd_home, ports, logfile):
    """The command line and environment of EmulatorLauncher.launch_emulator_process (snapshot unset,
    headless, restricted network)."""
    console, adb, grpc_port = ports
    base_lib_dir = emulator_path[:-8] + "lib64/"
    env = dict(os.environ)
    env.update({
        "ANDROID_HOME": "",
        "ANDROID_SDK_ROOT": os.path.dirname(os.path.dirname(emulator_path)),
        "ANDROID_AVD_HOME": avd_home,
        "ANDROID_EMULATOR_KVM_DEVICE": "/dev/kvm",
        "ANDROID_ADB_SERVER_PORT": str(adb_server_port),
        "LD_LIBRARY_PATH": ":".join([base_lib_dir + "x11/", base_lib_dir + "qt/lib/", base_lib_dir + "gles_swiftshader/", base_lib_dir]),
        "QT_XKB_CONFIG_ROOT": emulator_path[:-8] + "qt_config/",
        "ANDROID_EMU_ENABLE_CRASH_REPORTING": "1",
        "SHOW_PERF_STATS": "0",
    })
    command = [emulator_path, "-adb-path", shutil.which("adb") or "adb", "-gpu", "swiftshader_indirect", "-no-audio",
               "-show-kernel", "-verbose", "-avd", avd_name, "-grpc", str(grpc_port), "-no-skin", "-no-window",
               "-ports", f"{console},{adb}", "-no-snapshot",
               "-network-user-mode-options", "restrict=y", "-wifi-user-mode-options", "restrict=y"]
    return subprocess.Popen(command, env=env, stdout=logfile, stderr=logfile), command


def confirm_booted(pb2, stub, deadline_s=120):
    deadline = time.time() + deadline_s
    while time.time() < deadline:
        if stub.getStatus(empty_pb2.Empty()).booted:
            return True
        time.sleep(0.5)
    return False


def adb_getprop(adb_server_port, serial):
    r = subprocess.run(["adb", "-P", str(adb_server_port), "-s", serial, "shell", "getprop", "sys.boot_completed"],
                       capture_output=True, text=True, timeout=60)
    return r.stdout.strip() if r.returncode == 0 else f"adb failed ({r.returncode}): {r.stderr.strip()}"


def wait_adb(adb_server_port, serial, deadline_s=60):
    deadline = time.time() + deadline_s
    answer = ""
    while time.time() < deadline:
        answer = adb_getprop(adb_server_port, serial)
        if answer == "1":
            break
        time.sleep(0.5)
    return answer


def discovery(pid):
    running = os.path.join(os.environ["XDG_RUNTIME_DIR"], "avd", "running")
    path = os.path.join(running, f"pid_{pid}.ini")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)


def main():
    emulator_path, avd_name, adb_server_port, avd_home = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    work = tempfile.mkdtemp(prefix="androidenv-launch-")
    try:
        pb2, pb2_grpc = stubs(work)
        ports = pick_ports()
        console, adb, grpc_port = ports
        serial = f"emulator-{adb - 1}"
        with open(os.path.join(work, "emulator_output"), "wb") as logfile:
            proc, command = launch(emulator_path, avd_name, adb_server_port, avd_home, ports, logfile)
            result = {"console": console, "adb": adb, "grpc": grpc_port, "serial": serial}
            try:
                channel = grpc.secure_channel(f"localhost:{grpc_port}", grpc.local_channel_credentials(),
                                              options=[("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)])
                grpc.channel_ready_future(channel).result(timeout=100)
                stub = pb2_grpc.EmulatorControllerStub(channel)
                result["booted"] = confirm_booted(pb2, stub)
                result["boot_completed"] = wait_adb(adb_server_port, serial)
                result["discovery"] = discovery(proc.pid)
                stub.setVmState(pb2.VmRunState(state=pb2.VmRunState.RunState.SHUTDOWN))
                channel.close()
                result["exit_code"] = proc.wait(timeout=30)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        result["discovery_after_exit"] = discovery(proc.pid) is not None
        with open(os.path.join(work, "emulator_output")) as f:
            result["log_tail"] = f.read()[-2000:]
        print(json.dumps(result))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
