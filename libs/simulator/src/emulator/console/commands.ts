/**
 * The emulator console's command tables, with the emulator's names, texts and replies for the part
 * we serve: help, help-verbose, ping, auth, quit|exit, avd (status, name, id, path, discoverypath,
 * snapshotspath, stop, start, snapshot list|save|load|del|delete|get), rotate, kill, crash.
 * A handler writes its text lines and returns how the command ended; the session adds `OK`.
 */
import type { ConsoleBackend, ConsoleSnapshotInfo } from "./backend.ts";

export type Outcome = "ok" | "ko" | "quit" | "kill" | "crash";

export interface CommandContext {
  backend: ConsoleBackend;
  /** Writes text as-is (lines end with \r\n). */
  write(text: string): void;
  /** Called by a successful `auth`: the session switches to the full command table. */
  authenticate(token: string): boolean;
}

export interface CommandDef {
  /** Alternatives separated by '|', as the emulator lists them (`help|h|?`). */
  names: string;
  abstract: string;
  description?: string;
  run?: (c: CommandContext, args: string | undefined) => Outcome | Promise<Outcome>;
  sub?: CommandDef[];
}

const ko = (c: CommandContext, msg: string): Outcome => {
  c.write(`KO: ${msg}\r\n`);
  return "ko";
};

/** `find_command`: the first word (or a listed alias of it) followed by a space or the end of the line. */
export function findCommand(input: string, table: CommandDef[]): { cmd: CommandDef; args: string | undefined } | undefined {
  const space = input.indexOf(" ");
  const word = space < 0 ? input : input.slice(0, space);
  const rest = space < 0 ? "" : input.slice(space).replace(/^ +/, "");
  const cmd = table.find((d) => d.names.split("|").includes(word));
  return cmd ? { cmd, args: rest === "" ? undefined : rest } : undefined;
}

function dumpHelp(c: CommandContext, cmd: CommandDef, prefix: string): void {
  c.write(cmd.description ?? `${cmd.abstract}\r\n`);
  if (!cmd.sub) return;
  c.write("\r\navailable sub-commands:\r\n");
  for (const s of cmd.sub) c.write(`   ${prefix} ${s.names.padEnd(15)}  ${s.abstract}\r\n`);
  c.write("\r\n");
}

/** Runs one line against a table, walking sub-commands as the emulator does. */
export async function runLine(c: CommandContext, line: string, table: CommandDef[]): Promise<Outcome> {
  const found = findCommand(line, table);
  if (!found) return ko(c, "unknown command, try 'help'");
  let { cmd, args } = found;
  let prefix = cmd.names;
  for (;;) {
    if (cmd.run) return cmd.run(c, args);
    if (!args) {
      dumpHelp(c, cmd, prefix);
      return ko(c, "missing sub-command");
    }
    const sub = findCommand(args, cmd.sub ?? []);
    if (!sub) {
      dumpHelp(c, cmd, prefix);
      return ko(c, " bad sub-command"); // the emulator's text has two spaces here
    }
    prefix = `${prefix} ${sub.cmd.names}`;
    ({ cmd, args } = sub);
  }
}

function helpCommand(table: () => CommandDef[]): CommandDef {
  return {
    names: "help|h|?",
    abstract: "print a list of commands",
    run: (c, args) => {
      if (!args) {
        c.write("Android console commands:\r\n");
        for (const d of table()) c.write(`    ${d.names}\r\n`);
        c.write("\r\nTry 'help-verbose' for more description\r\nTry 'help <command>' for command-specific help\r\n");
        return "ok";
      }
      let current = table();
      let rest: string | undefined = args;
      for (;;) {
        const found = findCommand(rest, current);
        if (!found) {
          c.write("Android console commands:\r\n");
          for (const d of table()) c.write(`    ${d.names}\r\n`);
          return ko(c, "unknown command");
        }
        if (!found.args || !found.cmd.sub) {
          dumpHelp(c, found.cmd, args);
          return "ok";
        }
        current = found.cmd.sub;
        rest = found.args;
      }
    },
  };
}

function helpVerboseCommand(table: () => CommandDef[]): CommandDef {
  return {
    names: "help-verbose",
    abstract: "print a list of commands with descriptions",
    run: (c) => {
      c.write("Android console command help:\r\n\r\n");
      for (const d of table()) c.write(`    ${d.names.padEnd(15)}  ${d.abstract}\r\n`);
      c.write("\r\ntry 'help <command>' for command-specific help\r\n");
      return "ok";
    },
  };
}

const PING: CommandDef = {
  names: "ping",
  abstract: "check if the emulator is alive",
  run: (c) => {
    c.write("I am alive!\r\n");
    return "ok";
  },
};

const QUIT: CommandDef = { names: "quit|exit", abstract: "quit control session", run: () => "quit" };

const AVD_NAME: CommandDef = {
  names: "name",
  abstract: "query virtual device name",
  description: "'avd name' will return the name of this virtual device\r\n",
  run: (c) => {
    c.write(`${c.backend.avdName}\r\n`);
    return "ok";
  },
};

function avdCommand(sub: CommandDef[]): CommandDef {
  return {
    names: "avd",
    abstract: "control virtual device execution",
    description: "allows you to control (e.g. start/stop) the execution of the virtual device\r\n",
    sub,
  };
}

/** `avd snapshot list`: QEMU's `info snapshots` table, which is what the emulator prints. */
export function formatSnapshotList(list: ConsoleSnapshotInfo[]): string {
  if (list.length === 0) return "There is no snapshot available.\r\n";
  const rows = list.map((s) => {
    const date = s.createdAt ? formatDate(s.createdAt) : "";
    return `${"--".padEnd(10)}${s.name.padEnd(20)}${formatSize(s.sizeBytes ?? 0).padStart(7)}${date.padStart(20)}${"00:00:00.000".padStart(15)}\r\n`;
  });
  return `List of snapshots present on all disks:\r\n${"ID".padEnd(10)}${"TAG".padEnd(20)}${"VM SIZE".padStart(7)}${"DATE".padStart(20)}${"VM CLOCK".padStart(15)}\r\n${rows.join("")}`;
}

function formatSize(bytes: number): string {
  const units = ["", "K", "M", "G", "T"];
  let v = bytes;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? String(v) : `${v < 10 ? v.toFixed(1) : Math.round(v)}${units[i]}`;
}

function formatDate(d: Date): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

function snapshotCommand(verb: "save" | "load" | "delete", names: string, abstract: string): CommandDef {
  return {
    names,
    abstract,
    run: async (c, args) => {
      const snaps = c.backend.snapshots;
      if (!snaps) return ko(c, "snapshots are not available on this virtual device");
      if (c.backend.readOnly) return ko(c, `Snapshot ${verb} is disabled because "-read-only" was specified`);
      // (sic: the emulator's hint for a delete without a name names 'list')
      if (!args) return ko(c, `Argument missing, try 'avd snapshot ${verb === "delete" ? "list" : verb} <name>'`);
      try {
        // The snapshot API checks the name (it becomes a folder name) and says what is wrong.
        await snaps[verb](args);
        return "ok";
      } catch (e) {
        return ko(c, e instanceof Error ? e.message : String(e));
      }
    },
  };
}

const SNAPSHOT: CommandDef = {
  names: "snapshot",
  abstract: "state snapshot commands",
  description: "allows you to save and restore the virtual device state in snapshots\r\n",
  sub: [
    {
      names: "list",
      abstract: "list available state snapshots",
      run: async (c) => {
        const snaps = c.backend.snapshots;
        if (!snaps) return ko(c, "snapshots are not available on this virtual device");
        c.write(formatSnapshotList(await snaps.list()));
        return "ok";
      },
    },
    snapshotCommand("save", "save", "save state snapshot"),
    snapshotCommand("load", "load", "load state snapshot"),
    snapshotCommand("delete", "del", "delete state snapshot"),
    snapshotCommand("delete", "delete", "delete state snapshot"),
    {
      names: "get",
      abstract: "print the name of the snapshot loaded into the current session",
      run: (c) => {
        c.write(`${c.backend.snapshots?.lastLoaded() ?? "(null)"}\r\n`);
        return "ok";
      },
    },
  ],
};

const AVD_FULL: CommandDef[] = [
  {
    names: "stop",
    abstract: "stop the virtual device",
    run: (c) => (c.backend.isRunning() ? (c.backend.stopVm(), "ok") : ko(c, "virtual device already stopped")),
  },
  {
    names: "start",
    abstract: "start/restart the virtual device",
    run: (c) => (c.backend.isRunning() ? ko(c, "virtual device already running") : (c.backend.startVm(), "ok")),
  },
  {
    names: "status",
    abstract: "query virtual device status",
    run: (c) => {
      c.write(`virtual device is ${c.backend.isRunning() ? "running" : "stopped"}\r\n`);
      return "ok";
    },
  },
  AVD_NAME,
  SNAPSHOT,
  {
    names: "id",
    abstract: "query virtual device ID",
    run: (c) => {
      c.write(`${c.backend.avdName}\r\n`);
      return "ok";
    },
  },
  {
    names: "path",
    abstract: "query AVD path",
    run: (c) => {
      c.write(`${c.backend.avdDir}\r\n`);
      return "ok";
    },
  },
  {
    names: "discoverypath",
    abstract: "query AVD discovery path",
    run: (c) => {
      c.write(`${c.backend.discoveryPath() ?? ""}\r\n`);
      return "ok";
    },
  },
  {
    names: "snapshotspath",
    abstract: "query AVD snapshots path",
    run: (c) => {
      c.write(`${c.backend.snapshots?.directory ?? ""}\r\n`);
      return "ok";
    },
  },
];

/** Before `auth`: what the emulator allows unauthenticated (`avd name` only for old Android Studio). */
export const PREAUTH_COMMANDS: CommandDef[] = [
  helpCommand(() => PREAUTH_COMMANDS),
  helpVerboseCommand(() => PREAUTH_COMMANDS),
  PING,
  avdCommand([AVD_NAME]),
  {
    names: "auth",
    abstract: "user authentication for the emulator console",
    description: "use 'auth <auth_token>' to get extended console functionality\r\n",
    run: (c, args) => {
      if (!args) return ko(c, "missing authentication token");
      if (!c.authenticate(args)) return ko(c, "authentication token does not match ~/.emulator_console_auth_token");
      c.write("Android Console: type 'help' for a list of commands\r\n");
      return "ok";
    },
  },
  QUIT,
];

export const MAIN_COMMANDS: CommandDef[] = [
  helpCommand(() => MAIN_COMMANDS),
  helpVerboseCommand(() => MAIN_COMMANDS),
  PING,
  { names: "crash", abstract: "crash the emulator instance", run: () => "crash" },
  { names: "kill", abstract: "kill the emulator instance", run: () => "kill" },
  QUIT,
  avdCommand(AVD_FULL),
  {
    names: "rotate",
    abstract: "rotate the screen clockwise by 90 degrees",
    run: (c) => {
      c.backend.rotate();
      return "ok";
    },
  },
];
