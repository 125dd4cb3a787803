import type { Command } from "commander";
import { runUntilSignal, untilAborted } from "@farm/lifecycle";
import { parseIntOption, shown } from "./options.ts";
import type { CommandModule } from "./types.ts";

interface SimOptions {
  devices?: string;
  adbPort?: string;
  adbHost?: string;
  seed?: string;
  latencyProfile?: string;
  screen?: string;
  basePort?: string;
  grpc?: boolean;
  grpcBasePort?: string;
  discovery: boolean;
}

const PROFILES = ["instant", "emulator-adb", "emulator-grpc"] as const;

/**
 * `farm sim --devices N [--adb-port P]`: starts N simulated emulators registered with an adb server
 * (the one answering on P, else a private one it starts) and keeps them until SIGINT/SIGTERM.
 * Each device is a whole emulator: console port N, adb port N+1 (serial `emulator-N`), a discovery file.
 * stdout: `adb_port=P started_server=true|false`, then per device one line
 * `emulator-N console_port=N adb_port=N+1 grpc_port=G` (serial first; no grpc_port with --no-grpc),
 * then `ready devices=N`.
 */
export const simCommand: CommandModule = {
  register(program: Command) {
    const sim = program
      .command("sim")
      .description("run simulated Android emulators against an adb server (until SIGINT/SIGTERM)")
      .option("--devices <n>", "how many simulated emulators (required)")
      .option("--adb-port <port>", "adb server port (default: start a private server on a free port)")
      .option("--adb-host <host>", "adb server host (default 127.0.0.1)")
      .option("--seed <n>", "base seed; device i uses seed+i (default 1)")
      .option("--latency-profile <name>", `added latency: ${PROFILES.join(", ")} (default instant)`)
      .option("--screen <WxH>", "screen size, e.g. 1080x1920 (default 360x640)")
      .option("--base-port <port>", "console port of the first device (even); device i: console base+2i, adb base+2i+1 (default: free ports)")
      .option("--grpc", "serve the emulator gRPC endpoint (android.emulation.control) per device (the default)")
      .option("--no-grpc", "do not serve gRPC")
      .option("--grpc-base-port <port>", "gRPC port of the first device, then +1 each (default: base-port + 3000 + 2i with --base-port, else free ports)")
      .option("--no-discovery", "do not write the emulator discovery files (pid_<pid>.ini under the running-AVD folder)")
      .action(async (o: SimOptions) => {
        // The flags are checked before the simulator and the adb helpers load (a bad command line fails at once).
        if (o.devices === undefined) throw new Error("farm sim needs --devices <n> (or a subcommand: farm sim avd create NAME)");
        const count = parseIntOption("devices", o.devices, 1)!;
        const seed = parseIntOption("seed", o.seed, Number.MIN_SAFE_INTEGER) ?? 1;
        const profile = o.latencyProfile;
        if (profile !== undefined && !(PROFILES as readonly string[]).includes(profile)) {
          throw new Error(`--latency-profile must be one of ${PROFILES.join(", ")}, got '${shown(profile)}'`);
        }
        const screen = parseScreen(o.screen);
        const adbHost = o.adbHost ?? "127.0.0.1";
        const basePort = o.basePort === undefined ? undefined : parseIntOption("base-port", o.basePort, 1024);
        const { startSimulatedDevices, consolePortsFrom } = await import("@farm/simulator");
        if (basePort !== undefined) consolePortsFrom(basePort, count); // checks evenness and range before anything starts
        const grpcBasePort = o.grpcBasePort === undefined ? undefined : parseIntOption("grpc-base-port", o.grpcBasePort, 1024);
        const { adbServerAnswers, startAdbServer } = await import("@farm/local-services");

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
          emulator: {
            ...(basePort !== undefined ? { basePort } : {}),
            ...(grpcBasePort !== undefined ? { grpcBasePort } : {}),
            grpc: o.grpc !== false,
            discovery: o.discovery,
          },
        }).catch(async (e: unknown) => {
          await server?.close();
          throw e;
        });
        for (const e of fleet.emulators) {
          process.stdout.write(`${e.serial} console_port=${e.consolePort} adb_port=${e.adbPort}${e.grpc ? ` grpc_port=${e.grpc.port}` : ""}\n`);
        }
        process.stdout.write(`ready devices=${fleet.devices.length}\n`);
        process.stderr.write(`farm sim: try \`adb -P ${adbPort} devices -l\`; Ctrl-C stops\n`);

        await runUntilSignal(untilAborted);
        await fleet.close();
        await server?.close();
        process.stdout.write("stopped\n");
      });
    registerAvdCommands(sim);
  },
};

function parseScreen(v: string | undefined): { width: number; height: number } | undefined {
  if (v === undefined) return undefined;
  const m = /^(\d{1,5})x(\d{1,5})$/.exec(v);
  const width = Number(m?.[1]);
  const height = Number(m?.[2]);
  if (!m || width < 1 || height < 1 || width > 8192 || height > 8192) throw new Error(`--screen must look like 1080x1920 (1..8192 each), got '${shown(v)}'`);
  return { width, height };
}

/**
 * `farm sim avd create NAME [--screen WxH]`: writes an AVD (NAME.ini + NAME.avd/config.ini) into the
 * AVD home the `emulator` command reads ($ANDROID_AVD_HOME, …, ~/.android/avd); prints its folder.
 */
function registerAvdCommands(sim: Command): void {
  sim
    .command("avd")
    .description("AVDs for the simulated `emulator` command")
    .command("create <name>")
    .description("write an AVD into the AVD home ($ANDROID_AVD_HOME, else ~/.android/avd)")
    .option("--screen <WxH>", "screen size (hw.lcd.width x hw.lcd.height), default 360x640")
    .action(async (name: string, _o: unknown, cmd: Command) => {
      const { avdHome, createAvd } = await import("@farm/simulator");
      // `sim` has a --screen of its own, which takes the value wherever it stands on the line.
      const { screen } = cmd.optsWithGlobals<{ screen?: string }>();
      const avd = createAvd(avdHome(), name, parseScreen(screen) ?? { width: 360, height: 640 });
      process.stdout.write(`avd=${avd.name} dir=${avd.dir} screen=${avd.screen.width}x${avd.screen.height}\n`);
    });
}
