"""AndroidEnv's adb messages (AdbRequest, AdbResponse), generated from the farm's own copy of adb.proto
(clients/python/tools/generate_stubs.py). Import through farm_client.task_server.adb_pb2(), which prefers an
installed android_env."""
