/**
 * `dumpsys [-l] [-t s | -T ms] [--priority P] [--skip a,b] [service [args…]] [--proto]` for the
 * services the farm reads: activity, window (`mCurrentFocus=Window{… u0 pkg/pkg.Activity}`), input
 * (`SurfaceOrientation: N`), display, power, package.
 */
import { fail, type CommandContext, type CommandTable } from "./types.ts";
import { dumpsysActivity, objectId } from "./dumpsys-activity.ts";
import { flatComponent, shortComponent } from "../system/components.ts";
import { runPm } from "./pm.ts";
import { LAUNCHER_PID } from "../system/activity-manager.ts";

const SERVICES = ["activity", "display", "input", "package", "power", "settings", "window", "SurfaceFlinger"];

function dumpsysWindow(ctx: CommandContext): number {
  const sys = ctx.sys;
  const am = sys.activities;
  const cmp = am.currentComponent();
  const front = am.foregroundTask();
  const win = `Window{${objectId(ctx, `window/${flatComponent(cmp)}`)} u0 ${flatComponent(cmp)}}`;
  const record = `ActivityRecord{${objectId(ctx, `record/${front?.taskId ?? 1}/${cmp.className}`)} u0 ${shortComponent(cmp)} t${front?.taskId ?? 1}}`;
  const { width: w, height: h } = sys.screen;
  const rot = sys.rotation();
  const [cw, ch] = rot % 2 === 1 ? [h, w] : [w, h];
  ctx.out(
    [
      "WINDOW MANAGER WINDOWS (dumpsys window windows)",
      `  Window #0 ${win}:`,
      "    mDisplayId=0 rootTaskId=" + (front?.taskId ?? 1) + " mSession=Session{" + objectId(ctx, "session") + " " + (front?.process.pid ?? LAUNCHER_PID) + ":u0a10100} mClient=android.os.BinderProxy@" + objectId(ctx, "client"),
      `    mOwnerUid=10100 mShowForAllUsers=false package=${cmp.packageName} appop=NONE`,
      `    mAttrs={(0,0)(fillxfill) sim=adjust_pan ty=BASE_APPLICATION fmt=TRANSPARENT wanim=0x10302f8}`,
      "    isOnScreen=true",
      "    isVisible=true",
      "",
      `  mGlobalConfiguration={1.0 ?mcc?mnc [en_US] ldltr sw${Math.min(w, h)}dp w${cw}dp h${ch}dp 160dpi nrml ${rot % 2 ? "land" : "port"} finger -keyb/v/h -nav/h}`,
      `  mCurrentFocus=${win}`,
      `  mFocusedApp=AppWindowToken{${objectId(ctx, "token")} token=Token{${objectId(ctx, "tokeninner")} ${record}}}`,
      "",
      "WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)",
      "  Display: mDisplayId=0",
      `    init=${w}x${h} 160dpi cur=${cw}x${ch} app=${cw}x${ch} rng=${Math.min(w, h)}x${Math.min(w, h) - 24}-${Math.max(w, h)}x${Math.max(w, h) - 24}`,
      `    mRotation=${rot} mLastOrientation=${rot % 2 ? 0 : 1}`,
      `  mLockTaskModeState=${am.lockedTaskId() === undefined ? "NONE" : "PINNED"}`,
      "",
    ].join("\n"),
  );
  return 0;
}

function dumpsysInput(ctx: CommandContext): number {
  const { width: w, height: h } = ctx.sys.screen;
  const rot = ctx.sys.rotation();
  const [sw, sh] = rot % 2 === 1 ? [h, w] : [w, h];
  const showTouches = ctx.sys.settings.get("system", "show_touches") === "1";
  ctx.out(
    [
      "INPUT MANAGER (dumpsys input)",
      "",
      "Input Manager State:",
      "  Interactive: true",
      "  System UI Visibility: 0x8008",
      "  Pointer Speed: 0",
      "  Pointer Gestures Enabled: true",
      `  Show Touches: ${showTouches}`,
      "  Pointer Capture Enabled: false",
      "",
      "Event Hub State:",
      "  BuiltInKeyboardId: -2",
      "  Devices:",
      "    -1: Virtual",
      "      Classes: 0x40000023",
      "      Path: <virtual>",
      "    2: virtio_input_multi_touch_1",
      "      Classes: 0x00000014",
      "      Path: /dev/input/event1",
      "",
      "Input Reader State:",
      "  Device -1: Virtual",
      "    Generation: 2",
      "    IsExternal: false",
      "    Sources: 0x00000301",
      "    KeyboardType: 2",
      "  Device 2: virtio_input_multi_touch_1",
      "    Generation: 5",
      "    IsExternal: false",
      "    Sources: 0x00001002",
      "    KeyboardType: 0",
      "    Touch Input Mapper (mode - DIRECT):",
      "      Parameters:",
      "        GestureMode: MULTI_TOUCH",
      "        DeviceType: touchScreen",
      "        OrientationAware: true",
      `      Viewport INTERNAL: displayId=0, uniqueId=local:0, port=<none>, orientation=${rot}, logicalFrame=[0, 0, ${sw}, ${sh}], physicalFrame=[0, 0, ${sw}, ${sh}], deviceSize=[${w}, ${h}]`,
      `      SurfaceWidth: ${sw}px`,
      `      SurfaceHeight: ${sh}px`,
      "      SurfaceLeft: 0",
      "      SurfaceTop: 0",
      `      PhysicalWidth: ${sw}px`,
      `      PhysicalHeight: ${sh}px`,
      "      PhysicalLeft: 0",
      "      PhysicalTop: 0",
      `      SurfaceOrientation: ${rot}`,
      "",
      "Input Dispatcher State:",
      `  FocusedApplication: name='${shortComponent(ctx.sys.activities.currentComponent())}'`,
      "  DispatchEnabled: true",
      "  DispatchFrozen: false",
      "",
    ].join("\n"),
  );
  return 0;
}

function dumpsysDisplay(ctx: CommandContext): number {
  const { width: w, height: h } = ctx.sys.screen;
  const rot = ctx.sys.rotation();
  ctx.out(`DISPLAY MANAGER (dumpsys display)\n  mDisplayInfo=DisplayInfo{"Built-in Screen", displayId 0, real ${w} x ${h}, largest app ${Math.max(w, h)} x ${Math.max(w, h)}, smallest app ${Math.min(w, h)} x ${Math.min(w, h)}, 60.0 fps, rotation ${rot}, density 160 (160.0 x 160.0) dpi, layerStack 0, type BUILT_IN, state ON}\n  mScreenState=ON\n`);
  return 0;
}

async function dumpsys(argsIn: string[], ctx: CommandContext): Promise<number> {
  const args: string[] = [];
  let listOnly = false;
  for (let i = 0; i < argsIn.length; i++) {
    const a = argsIn[i]!;
    if (a === "-l") listOnly = true;
    else if (a === "-t" || a === "-T" || a === "--priority" || a === "--skip") {
      const v = argsIn[++i];
      if (v === undefined) return fail(ctx, `dumpsys: option ${a} requires an argument`, 255);
      if ((a === "-t" || a === "-T") && !(Number(v) >= 0)) return fail(ctx, `Error parsing timeout: ${v}`, 255);
    } else if (a === "--proto" || a === "--pid" || a === "--thread" || a === "--dump-priority") continue;
    else args.push(a);
  }
  if (listOnly) {
    ctx.out(`Currently running services:\n${SERVICES.map((s) => `  ${s}\n`).join("")}`);
    return 0;
  }
  const [service, ...rest] = args;
  switch (service) {
    case "activity":
      return dumpsysActivity(rest, ctx);
    case "window":
      return dumpsysWindow(ctx);
    case "input":
      return dumpsysInput(ctx);
    case "display":
      return dumpsysDisplay(ctx);
    case "power":
      ctx.out("POWER MANAGER (dumpsys power)\n  mWakefulness=Awake\n  mInteractive=true\n  Display Power: state=ON\n");
      return 0;
    case "package":
      if (rest[0]) return runPm(["dump", rest[0]], ctx);
      ctx.out(ctx.sys.packages.list().map((p) => `  Package [${p.name}]`).join("\n") + "\n");
      return 0;
    case undefined:
      for (const s of ["activity", "window", "input"]) {
        ctx.out(`-------------------------------------------------------------------------------\nDUMP OF SERVICE ${s}:\n`);
        await dumpsys([s], ctx);
      }
      return 0;
    default:
      ctx.err(`Can't find service: ${service}\n`);
      return 0;
  }
}

export const dumpsysCommands: CommandTable = {
  dumpsys: { latencyClass: "dumpsys", run: dumpsys },
};
