import { spawn, type ChildProcess } from "node:child_process";

const live = new Set<ChildProcess>();
let hooked = false;

/** Kills every child this process started when it exits, so a crashed test run leaves no servers behind. */
function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.once("exit", () => {
    for (const c of live) c.kill("SIGKILL");
  });
}

export interface ManagedChild {
  readonly process: ChildProcess;
  /** Last lines the child wrote, for error messages. */
  output(): string;
  /** SIGTERM, SIGKILL after 3 s; resolves once the child has exited. */
  close(): Promise<void>;
}

export function startManagedChild(cmd: string, args: string[], env?: NodeJS.ProcessEnv): ManagedChild {
  hookExit();
  const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"], env: env ?? process.env });
  live.add(child);
  let tail = "";
  const keep = (b: Buffer) => {
    tail = (tail + b.toString()).slice(-4000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.once("exit", () => live.delete(child));
  child.once("error", (e) => {
    tail += `\nspawn error: ${e.message}`;
  });
  return {
    process: child,
    output: () => tail,
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
      await exited;
      clearTimeout(timer);
    },
  };
}
