/** `wm size [WxH|reset]`, `wm density [N|reset]`, `wm user-rotation [lock|free] [r]`. */
import { fail, type CommandTable } from "./types.ts";

export const wmCommands: CommandTable = {
  wm: {
    latencyClass: "am",
    run(args, ctx) {
      const display = ctx.sys.display;
      const [verb, value, extra] = args;
      if (verb === "size") {
        if (value === undefined) {
          ctx.out(`Physical size: ${display.physical.width}x${display.physical.height}\n`);
          if (display.override) ctx.out(`Override size: ${display.override.width}x${display.override.height}\n`);
          return 0;
        }
        if (value === "reset") {
          display.override = undefined;
          return 0;
        }
        const m = /^(\d+)x(\d+)$/.exec(value);
        if (!m) return fail(ctx, `Error: bad size ${value}`, 255);
        display.override = { width: Number(m[1]), height: Number(m[2]) };
        return 0;
      }
      if (verb === "density") {
        if (value === undefined) {
          ctx.out(`Physical density: ${display.physicalDensity}\n`);
          if (display.overrideDensity) ctx.out(`Override density: ${display.overrideDensity}\n`);
          return 0;
        }
        if (value === "reset") display.overrideDensity = undefined;
        else if (/^\d+$/.test(value)) display.overrideDensity = Number(value);
        else return fail(ctx, `Error: bad density ${value}`, 255);
        return 0;
      }
      if (verb === "user-rotation") {
        const settings = ctx.sys.settings;
        if (value === undefined) {
          ctx.out(`${settings.get("system", "accelerometer_rotation") === "1" ? "free" : "lock"} ${settings.rotation()}\n`);
          return 0;
        }
        if (value === "free") settings.put("system", "accelerometer_rotation", "1");
        else if (value === "lock") {
          settings.put("system", "accelerometer_rotation", "0");
          if (extra !== undefined) {
            if (!/^[0-3]$/.test(extra)) return fail(ctx, `Error: bad rotation ${extra}`, 255);
            settings.put("system", "user_rotation", extra);
          }
        } else return fail(ctx, `Error: unknown user-rotation mode ${value}`, 255);
        ctx.sys.onSettingChanged("system", "user_rotation");
        return 0;
      }
      return fail(ctx, "usage: wm [size|density|user-rotation] …", 255);
    },
  },
};
