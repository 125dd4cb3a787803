import type { Command } from "commander";
import { parseIntOption, shown } from "./options.ts";
import type { CommandModule } from "./types.ts";

interface SimOptions {
  devices: string;
  adbPort?: string;
  adbHost?: string;
  seed?: string;
  latencyProfile?: string;
  screen?: string;
}

const PROFILES = ["instant", "emulator-adb", "emulator-grpc"] as const;

/**
 * `farm sim --devices N [--adb-port P]`: starts N simulated emulators registered with an adb server
 * (the one answering on P, else a private one it starts) and keeps them until SIGINT/SIGTERM.
 * stdout: `adb_port=P started_server=true|false`, then one serial per line, then `ready devices=N`.
 */
export const simCommand: CommandModule = {
  register(program: Command) {
    program
      .command("sim")
      .description("run simulated Android emulators against an adb server (until SIGINT/SIGTERM)")
      .requiredOption("--devices <n>", "how many simulated emulators")
      .option("--adb-port <port>", "adb server port (default: start a private server on a free port)")
      .option("--adb-host <host>", "adb server host (default 127.0.0.1)")
      .option("--seed <n>", "base seed; device i uses seed+i (default 1)")
      .option("--latency-profile <name>", `added latency: ${PROFILES.join(", ")} (default instant)`)
      .option("--screen <WxH>", "screen size, e.g. 1080x1920 (default 360x640)")
      .action(async (o: SimOptions) => {
        const { adbServerAnswers, startAdbServer } = await import("@farm/local-services");
        const { startSimulatedDevices } = await import("@farm/simulator");
        const count = parseIntOption("devices", o.devices, 1)!;
        const seed = parseIntOption("seed", o.seed, Number.MIN_SAFE_INTEGER) ?? 1;
        const profile = o.latencyProfile;
        if (profile !== undefined && !(PROFILES as readonly string[]).includes(profile)) {
          throw new Error(`--latency-profile must be one of ${PROFILES.join(", ")}, got '${shown(profile)}'`);
        }
        let screen: { width: number; height: number } | undefined;
        if (o.screen !== undefined) {
          const m = /^(\d{1,5})x(\d{1,5})$/.exec(o.screen);
          const width = Number(m?.[1]);
          const height = Number(m?.[2]);
          if (!m || width < 1 || height < 1 || width > 8192 || height > 8192) throw new Error(`--screen must look like 1080x1920 (1..8192 each), got '${shown(o.screen)}'`);
          screen = { width, height };
        }
        const adbHost = o.adbHost ?? "127.0.0.1";

        // Use the server answering on --adb-port; otherwise start a private one (on that port if given).
        const wanted = o.adbPort === undefined ? undefined : parseIntOption("adb-port", o.adbPort, 1);
        const existing = wanted !== undefined && (await adbServerAnswers(wanted, adbHost));
        if (!existing && adbHost !== "127.0.0.1" && adbHost !== "localhost") {
          throw new Error(`no adb server answers on ${adbHost}:${wanted}`);
        }
        const server = existing ? undefined : await startAdbServer(wanted === undefined ? {} : { port: wanted });
        const adbPort = server?.port ?? wanted!;
        process.stdout.write(`adb_port=${adbPort} started_server=${server !== undefined}\n`);

        const fleet = await startSimulatedDevices({
          adbPort,
          adbHost,
          count,
          seed,
          ...(screen ? { screen } : {}),
          ...(profile ? { latencyProfile: profile as (typeof PROFILES)[number] } : {}),
        }).catch(async (e: unknown) => {
          await server?.stop();
          throw e;
        });
        for (const d of fleet.devices) process.stdout.write(`${d.serial}\n`);
        process.stdout.write(`ready devices=${fleet.devices.length}\n`);
        process.stderr.write(`farm sim: try \`adb -P ${adbPort} devices -l\`; Ctrl-C stops\n`);

        await new Promise<void>((resolve) => {
          process.once("SIGINT", resolve);
          process.once("SIGTERM", resolve);
        });
        await fleet.close();
        await server?.stop();
        process.stdout.write("stopped\n");
      });
  },
};
