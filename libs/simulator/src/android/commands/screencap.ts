/**
 * `screencap [-p] [-d id] [FILE]`: the current frame as PNG (`-p`, or a FILE ending in .png) or raw
 * (12-byte header: width, height, format 1 = RGBA_8888, u32 LE each; then the RGBA pixels).
 */
import { encodeRgbaPng } from "@farm/png";
import { fail, type CommandTable } from "./types.ts";

export function rawScreencap(width: number, height: number, rgba: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + rgba.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, width, true);
  view.setUint32(4, height, true);
  view.setUint32(8, 1, true);
  out.set(rgba, 12);
  return out;
}

export const screencapCommands: CommandTable = {
  screencap: {
    latencyClass: "screencap",
    run(args, ctx) {
      let png = false;
      let file: string | undefined;
      for (let i = 0; i < args.length; i++) {
        const a = args[i]!;
        if (a === "-p") png = true;
        else if (a === "-d") i++;
        else if (a === "-h") return fail(ctx, "usage: screencap [-hp] [-d display-id] [FILENAME]\n   -h: this message\n   -p: save the file as a png.\n   -d: specify the physical display ID to capture", 0);
        else if (a.startsWith("-")) return fail(ctx, `screencap: invalid option -- '${a.slice(1)}'`, 1);
        else file = a;
      }
      if (file?.endsWith(".png")) png = true;
      const canvas = ctx.sys.displayFrame();
      const bytes = png ? encodeRgbaPng(canvas.width, canvas.height, canvas.rgba) : rawScreencap(canvas.width, canvas.height, canvas.rgba);
      if (file) ctx.sys.fs.write(file, bytes, 0o644, Math.floor(ctx.sys.now() / 1000));
      else ctx.out(bytes);
      return 0;
    },
  },
};
