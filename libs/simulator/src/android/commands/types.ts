/** The contract between the shell and the device commands. */
import type { CommandIO } from "../shell/io.ts";
import type { AndroidSystem } from "../system/android-system.ts";
import type { LatencyClass } from "../system/latency.ts";
import { FarmError } from "@farm/errors";

/** Latency classes for fault injection (defined in system/latency.ts). */
export type { LatencyClass };

export interface CommandContext extends CommandIO {
  readonly sys: AndroidSystem;
  /** Runs a nested command line (`sh -c`) in a child shell, sharing this command's IO. */
  runScript(line: string, io: CommandIO): Promise<number>;
  /** A child shell that keeps its variables from one line to the next (`sh` reading its commands from stdin). */
  subshell(): (line: string, io: CommandIO) => Promise<number>;
}

export type CommandHandler = (args: string[], ctx: CommandContext) => Promise<number> | number;

export interface CommandSpec {
  latencyClass: LatencyClass;
  run: CommandHandler;
}

export type CommandTable = Record<string, CommandSpec>;

/** Thrown by `exit N`; ends the whole command line (or the interactive session). */
export class ExitRequest extends FarmError<"exit"> {
  /** the same input fails the same way (not retryable). `exitCode`: the shell's exit status, 0..255. */
  constructor(readonly exitCode: number) {
    super("exit", `exit ${exitCode}`);
  }
}

/** A usage error in a device command: message on stderr, the given exit code. */
export function fail(ctx: CommandIO, message: string, code = 1): number {
  ctx.err(message.endsWith("\n") ? message : message + "\n");
  return code;
}

/** The arguments without `--user <id>` pairs (this device has only user 0). */
export function stripUser(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--user") i++;
    else out.push(args[i]!);
  }
  return out;
}
