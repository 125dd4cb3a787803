"""The host side of AndroidEnv's accessibility forwarding, in Python as AndroidEnv runs it: an
android_env.A11yService server (grpc.aio, grpc.local_server_credentials(), stubs generated from the
farm's .proto files), a device turned on with the adb commands A11yGrpcWrapper sends, then checks
that the forests match the screen. Prints one JSON summary line; exits non-zero with the reason on
the first check that fails.

usage: a11y_host.py <stub dir> <adb server port> <serial>
"""
import asyncio
import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import grpc

sys.path.insert(0, sys.argv[1])
from android_env.proto.a11y import a11y_pb2  # noqa: E402
from android_env.proto.a11y import a11y_pb2_grpc  # noqa: E402

ADB_PORT, SERIAL = sys.argv[2], sys.argv[3]
PKG = "com.google.androidenv.accessibilityforwarder"
RECEIVER = f"{PKG}/{PKG}.FlagsBroadcastReceiver"
LAUNCHER = "com.android.launcher3"
WAIT_S = 30.0


class Failed(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failed(what)


def adb(*args):
    """One adb call as AndroidEnv's adb controller makes it: an argument list, `shell` first."""
    r = subprocess.run(["adb", "-P", ADB_PORT, "-s", SERIAL, *args], capture_output=True, text=True, timeout=120)
    return r.stdout


class Host(a11y_pb2_grpc.A11yServiceServicer):
    def __init__(self):
        self.forests = []
        self.events = []
        self.outboxes = set()
        self.waiters = []

    async def SendForest(self, request, context):
        self.forests.append(request)
        return a11y_pb2.ForestResponse()

    async def SendEvent(self, request, context):
        self.events.append(dict(request.event))
        return a11y_pb2.EventResponse()

    async def Bidi(self, request_iterator, context):
        yield a11y_pb2.ServerToClient()  # as AndroidEnv's servicer: unblock the client
        outbox = asyncio.Queue()
        self.outboxes.add(outbox)

        async def read():
            async for req in request_iterator:
                kind = req.WhichOneof("payload")
                if kind == "forest":
                    for w in self.waiters:
                        if not w.done():
                            w.set_result(req.forest)
                    self.waiters.clear()
                elif kind == "event":
                    self.events.append(dict(req.event.event))
            await outbox.put(None)

        reader = asyncio.ensure_future(read())
        try:
            while True:
                item = await outbox.get()
                if item is None:
                    break
                yield item
        finally:
            self.outboxes.discard(outbox)
            reader.cancel()

    async def get_forest(self):
        fut = asyncio.get_running_loop().create_future()
        self.waiters.append(fut)
        for box in self.outboxes:
            box.put_nowait(a11y_pb2.ServerToClient(get_forest=a11y_pb2.ServerToClient.GetA11yForest()))
        return await asyncio.wait_for(fut, WAIT_S)


async def until(what, cond):
    loop = asyncio.get_running_loop()
    end = loop.time() + WAIT_S
    while not cond():
        if loop.time() > end:
            raise Failed("timed out waiting for " + what)
        await asyncio.sleep(0.05)


async def sh(*args):
    return await asyncio.to_thread(adb, "shell", *args)


def centre(node):
    b = node.bounds_in_screen
    return (b.left + b.right) // 2, (b.top + b.bottom) // 2


def top(forest):
    return max(forest.windows, key=lambda w: w.layer)


async def turn_on(port):
    """What A11yGrpcWrapper does, in its order (adb_call_parser turns each request into these calls)."""
    await sh("settings", "put", "secure", "enabled_accessibility_services", f"{PKG}/{PKG}.AccessibilityForwarder")
    await sh("am", "broadcast", "-a", "accessibility_forwarder.intent.action.ENABLE_ACCESSIBILITY_TREE_LOGS", "-n", RECEIVER)
    await sh("settings", "put", "global", "no_proxy", f"10.0.2.2:{port}")
    await sh("settings", "put", "global", "airplane_mode_on", "0")
    await sh("svc", "wifi", "enable")
    out = await sh("am", "broadcast", "-a", f'accessibility_forwarder.intent.action.SET_GRPC --ei "port" {port} --es "host" 10.0.2.2', "-n", RECEIVER)
    check("Broadcast completed: result=0" in out, "am broadcast SET_GRPC printed: " + out)


async def clickables_do_what_they_say(host, summary):
    """Every clickable node of the launcher, tapped at its centre, opens the app its text names."""
    forest = await host.get_forest()
    check(len(forest.windows) == 1, "one window on the launcher, got %d" % len(forest.windows))
    launcher = top(forest)
    check(launcher.is_active and launcher.is_focused and launcher.window_type == 1, "the launcher's window is active, focused, an application window")
    nodes = launcher.tree.nodes
    ids = {n.unique_id for n in nodes}
    check(all(c in ids for n in nodes for c in n.child_ids), "every child id names a node of the tree")
    clickable = [n for n in nodes if n.is_clickable]
    check(len(clickable) >= 2, "clickable icons on the launcher, got %d" % len(clickable))
    for icon in clickable:
        check(icon.text and icon.package_name == LAUNCHER, "clickable launcher node with a label: %r" % icon)
        x, y = centre(icon)
        before = len(host.events)
        await sh("input", "tap", str(x), str(y))
        await until("a click event for " + icon.text, lambda: any(
            e.get("event_type") == "TYPE_VIEW_CLICKED" and e.get("source_text") == icon.text for e in host.events[before:]))
        await until("the window of " + icon.text, lambda: any(
            e.get("event_type") == "TYPE_WINDOW_STATE_CHANGED" and e.get("event_text") == icon.text for e in host.events[before:]))
        opened = top(await host.get_forest())
        check(opened.title == icon.text, "tapping %r opened %r" % (icon.text, opened.title))
        check(opened.tree.nodes and opened.tree.nodes[0].package_name != LAUNCHER, "an app's window in front after tapping " + icon.text)
        if any(n.is_editable for n in opened.tree.nodes):
            summary["with_field"].append((icon.text, x, y))
        summary["max_windows"] = max(summary["max_windows"], len((await host.get_forest()).windows))
        await sh("input", "keyevent", "KEYCODE_HOME")
        home = top(await host.get_forest())
        check(home.tree.nodes[0].package_name == LAUNCHER, "HOME brings the launcher back")
        summary["opened"].append(icon.text)
    click = next(e for e in host.events if e.get("event_type") == "TYPE_VIEW_CLICKED")
    for key in ("event_type", "event_package_name", "source_class_name", "source_text", "view_id", "event_timestamp_ms"):
        check(key in click, "view-clicked event has %s: %r" % (key, click))
    summary["click_event_keys"] = sorted(click)


async def typing_changes_the_tree(host, summary):
    """In the first app whose first screen has an editable field: tap it, type; a text-changed event
    comes and the node's text in the next forest holds what was typed."""
    summary["typed"] = None
    if not summary["with_field"]:
        return
    label, x, y = summary["with_field"][0]
    await sh("input", "tap", str(x), str(y))
    field = next(n for n in top(await host.get_forest()).tree.nodes if n.is_editable)
    fx, fy = centre(field)
    await sh("input", "tap", str(fx), str(fy))
    before = len(host.events)
    await sh("input", "text", "farm")
    await until("a text-changed event", lambda: any(
        e.get("event_type") == "TYPE_VIEW_TEXT_CHANGED" and "farm" in e.get("source_text", "") for e in host.events[before:]))
    after = next((n for n in top(await host.get_forest()).tree.nodes if n.unique_id == field.unique_id), None)
    check(after is not None and "farm" in after.text, "the field's text in the forest holds what was typed: %r" % after)
    await sh("input", "keyevent", "KEYCODE_HOME")
    summary["typed"] = label


async def uiautomator_agrees_with_forest(host, summary):
    """`uiautomator dump /dev/tty` over exec-out, read with xml.etree: the same clickable nodes (text,
    bounds) as the forest's top window, in the same order."""
    forest_nodes = [(n.text, "[%d,%d][%d,%d]" % (n.bounds_in_screen.left, n.bounds_in_screen.top, n.bounds_in_screen.right, n.bounds_in_screen.bottom))
                    for n in top(await host.get_forest()).tree.nodes if n.is_clickable]
    out = await asyncio.to_thread(adb, "exec-out", "uiautomator", "dump", "/dev/tty")
    xml = out[: out.rindex("UI hierchary dumped to:")] if "UI hierchary dumped to:" in out else out
    root = ET.fromstring(xml.encode("utf-8"))
    check(root.tag == "hierarchy", "the dump's root is <hierarchy>: %r" % root.tag)
    dumped = [(n.get("text"), n.get("bounds")) for n in root.iter("node") if n.get("clickable") == "true"]
    check(dumped == forest_nodes, "uiautomator and the forest agree on the clickable nodes: %r vs %r" % (dumped, forest_nodes))
    summary["uiautomator_clickables"] = len(dumped)


async def dialog_is_a_second_window(host, summary):
    """Sim Settings' "Reset options" opens a dialog: the forest then has a second window on top, holding
    the dialog's own nodes, and CANCEL takes it away again."""
    summary["dialog_windows"] = 0
    icon = next((n for n in top(await host.get_forest()).tree.nodes if n.text == "Sim Settings"), None)
    if icon is None:
        return
    await sh("input", "tap", *map(str, centre(icon)))
    row = None
    for _ in range(6):
        row = next((n for n in top(await host.get_forest()).tree.nodes if n.text == "Reset options"), None)
        if row is not None:
            break
        await sh("input", "swipe", "180", "520", "180", "220", "100")
    check(row is not None, "the Reset options row is reachable by scrolling")
    await sh("input", "tap", *map(str, centre(row)))
    forest = await host.get_forest()
    check(len(forest.windows) == 2, "a dialog is a window of its own: %d windows" % len(forest.windows))
    dialog = top(forest)
    check(any(n.text == "Reset all settings?" for n in dialog.tree.nodes), "the top window is the dialog")
    cancel = next(n for n in dialog.tree.nodes if n.text == "CANCEL" and n.is_clickable)
    await sh("input", "tap", *map(str, centre(cancel)))
    check(len((await host.get_forest()).windows) == 1, "CANCEL closes the dialog's window")
    summary["dialog_windows"] = len(forest.windows)
    await sh("input", "keyevent", "KEYCODE_HOME")


async def rotation_turns_bounds(host, summary):
    portrait = await host.get_forest()
    await sh("settings", "put", "system", "accelerometer_rotation", "0")
    await sh("settings", "put", "system", "user_rotation", "1")
    landscape = await host.get_forest()
    await sh("settings", "put", "system", "user_rotation", "0")
    p, l = top(portrait).bounds_in_screen, top(landscape).bounds_in_screen
    check((l.right - l.left, l.bottom - l.top) == (p.bottom - p.top, p.right - p.left), "rotation swaps the window's width and height: %s vs %s" % (p, l))
    ids_p = [n.unique_id for n in top(portrait).tree.nodes]
    ids_l = [n.unique_id for n in top(landscape).tree.nodes]
    check(ids_p == ids_l, "the same views keep their ids across rotation")
    moved = sum(1 for a, b in zip(top(portrait).tree.nodes, top(landscape).tree.nodes) if a.bounds_in_screen != b.bounds_in_screen)
    check(moved > 0, "rotation moves node bounds")
    summary["rotated_nodes_moved"] = moved


async def main():
    host = Host()
    server = grpc.aio.server()
    a11y_pb2_grpc.add_A11yServiceServicer_to_server(host, server)
    port = server.add_secure_port("[::]:0", grpc.local_server_credentials())
    await server.start()
    summary = {"opened": [], "with_field": [], "max_windows": 0}
    try:
        await turn_on(port)
        await until("the forwarder's Bidi stream", lambda: host.outboxes)
        await until("tree logs (SendForest)", lambda: host.forests)
        await clickables_do_what_they_say(host, summary)
        await rotation_turns_bounds(host, summary)
        await uiautomator_agrees_with_forest(host, summary)
        await typing_changes_the_tree(host, summary)
        await dialog_is_a_second_window(host, summary)
        summary["with_field"] = [label for label, _, _ in summary["with_field"]]
        summary["forests_logged"] = len(host.forests) > 0
        summary["events"] = len(host.events)
    except Failed as e:
        print("FAILED: " + str(e), file=sys.stderr)
        sys.exit(1)
    finally:
        await server.stop(None)
    print(json.dumps(summary))


asyncio.run(main())
