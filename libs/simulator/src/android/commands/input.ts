/**
 * `input [source] [-d display] tap|swipe|draganddrop|keyevent|text|motionevent|press|roll …`.
 * Coordinates are screen pixels; events go to the input dispatcher (which may drop them: faults).
 */
import { fail, type CommandContext, type CommandTable } from "./types.ts";
import { keyCodeOf as parseKeycode } from "@farm/key-codes";
import { KEYCODE_ENTER } from "../app-contract.ts";

const SOURCES = new Set(["keyboard", "mouse", "joystick", "touchnavigation", "touchpad", "trackball", "dpad", "stylus", "gamepad", "touchscreen"]);

const USAGE = `Usage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]

The commands and default sources are:
      text <string> (Default: touchscreen)
      keyevent [--longpress] <key code number or name> ... (Default: keyboard)
      tap <x> <y> (Default: touchscreen)
      swipe <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)
      draganddrop <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)
      press (Default: trackball)
      roll <dx> <dy> (Default: trackball)
      motionevent <DOWN|UP|MOVE|CANCEL> <x> <y> (Default: touchscreen)`;

function numbers(ctx: CommandContext, values: string[]): number[] | undefined {
  const out: number[] = [];
  for (const v of values) {
    const n = Number(v);
    if (v === "" || !Number.isFinite(n)) {
      fail(ctx, `Exception occurred while executing 'input':\njava.lang.NumberFormatException: For input string: "${v}"`, 255);
      return undefined;
    }
    out.push(n);
  }
  return out;
}

async function input(argsIn: string[], ctx: CommandContext): Promise<number> {
  const args = [...argsIn];
  if (args[0] && SOURCES.has(args[0])) args.shift();
  if (args[0] === "-d") args.splice(0, 2);
  const [verb, ...rest] = args;
  const dispatcher = ctx.sys.input;
  switch (verb) {
    case "tap": {
      if (rest.length !== 2) return fail(ctx, USAGE, 1);
      const n = numbers(ctx, rest);
      if (!n) return 255;
      dispatcher.tap(n[0]!, n[1]!);
      return 0;
    }
    case "swipe":
    case "draganddrop": {
      if (rest.length !== 4 && rest.length !== 5) return fail(ctx, USAGE, 1);
      const n = numbers(ctx, rest);
      if (!n) return 255;
      // The duration is honoured in real time; real `input swipe` defaults to 300 ms when it is
      // omitted, here an omitted duration means an instant gesture.
      await dispatcher.swipe(n[0]!, n[1]!, n[2]!, n[3]!, Math.max(0, n[4] ?? 0), ctx.signal);
      return 0;
    }
    case "motionevent": {
      const action = rest[0]?.toLowerCase();
      if (rest.length !== 3 || !action || !["down", "up", "move", "cancel"].includes(action)) return fail(ctx, USAGE, 1);
      const n = numbers(ctx, rest.slice(1));
      if (!n) return 255;
      dispatcher.motion(action as "down" | "up" | "move" | "cancel", n[0]!, n[1]!);
      return 0;
    }
    case "keyevent": {
      const codes = rest.filter((a) => a !== "--longpress" && a !== "--doubletap");
      if (codes.length === 0) return fail(ctx, USAGE, 1);
      for (const c of codes) {
        const code = parseKeycode(c);
        if (code === undefined) return fail(ctx, `Error: Unknown keycode: ${c}`, 1);
        dispatcher.key(code);
      }
      return 0;
    }
    case "text": {
      if (rest.length === 0) return fail(ctx, USAGE, 1);
      // As Android's InputShellCommand: each `%s` becomes a space (the farm types the same on gRPC: @farm/adb androidInputText).
      dispatcher.text(rest.join(" ").replace(/%s/g, " "));
      return 0;
    }
    case "press":
      dispatcher.key(KEYCODE_ENTER);
      return 0;
    case "roll":
      return 0;
    default:
      return fail(ctx, USAGE, 1);
  }
}

export const inputCommands: CommandTable = {
  input: { latencyClass: "input", run: input },
};
