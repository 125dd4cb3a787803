/**
 * Task texts for the CLI's end-to-end tests (current dialect, the same shape as libs/episode's fixtures; a
 * package's tests do not reach into another's files). APKs come from tasks/apks.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

export const APP = {
  twozero: { pkg: "com.tpcstld.twozerogame", activity: "com.tpcstld.twozerogame/com.tpcstld.twozerogame.MainActivity", apk: "classic_2048.apk" },
  catch: { pkg: "com.example.catchtheball", activity: "com.example.catchtheball/com.example.catchtheball.MainActivity", apk: "catch_the_ball.apk" },
  notes: { pkg: "com.farm.simapps.notes", activity: "com.farm.simapps.notes/com.farm.simapps.notes.MainActivity", apk: "sim_notes.apk" },
} as const;

export interface TaskOpts {
  id: string;
  app: keyof typeof APP;
  /** RL_TASK_GAME_CONFIG JSON. */
  gameConfig?: string;
  maxEpisodeSteps?: number;
  maxEpisodeSec?: number;
  /** Extra reset steps appended after the start (textproto). */
  extraResetSteps?: string[];
  extrasSpec?: string;
  /** Replace the start activity of the reset (to make it fail). */
  startActivity?: string;
}

const q = (s: string) => JSON.stringify(s);

export function taskText(o: TaskOpts): string {
  const app = APP[o.app];
  const cfg = (o.gameConfig ?? "{}").replace(/"/g, '\\\\\\"');
  const start = o.startActivity ?? app.activity;
  return `
id: ${q(o.id)}
name: ${q(`episode test ${o.id}`)}
setup_steps: [
  {
    adb_request: { install_apk: { filesystem: { path: ${q(app.apk)} } } }
    success_condition: { check_install: { package_name: ${q(app.pkg)} timeout_sec: 10.0 } }
  }
]
reset_steps: [
  { adb_request: { force_stop: { package_name: ${q(app.pkg)} } } },
  {
    adb_request: {
      start_activity: {
        full_activity: ${q(start)}
        extra_args: ["--ez", '"RL_TASK_ENABLED"', '"true"', "--es", '"RL_TASK_GAME_CONFIG"', '"${cfg}"']
      }
    }
    success_condition: {
      wait_for_app_screen: { app_screen: { activity: ${q(app.activity)} } timeout_sec: 2.0 }
      num_retries: 3
    }
  }${(o.extraResetSteps ?? []).map((s) => `,\n  ${s}`).join("")}
]
expected_app_screen: { activity: ${q(app.activity)} }
max_episode_sec: ${o.maxEpisodeSec ?? 0}
max_episode_steps: ${o.maxEpisodeSteps ?? 0}
log_parsing_config: {
  filters: ["AndroidRLTask:V"]
  log_regexps: {
    score: "^[Ss]core: ([-+]?[0-9]*\\\\.?[0-9]*)$"
    reward: "^[Rr]eward: ([-+]?[0-9]*\\\\.?[0-9]*)$"
    episode_end: "^episode[ _]end$"
    extra: "^extra: (?P<name>[^ ]*)[ ]?(?P<extra>.*)$"
    json_extra: "^json_extra: (?P<json_extra>.*)$"
  }
}
${o.extrasSpec ?? ""}
`;
}

export interface FarmResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs the `farm` command as a user would (from the checkout, logs at warn), killed after `timeoutMs`. */
export function runFarm(args: string[], opts: { timeoutMs?: number; env?: Record<string, string> } = {}): Promise<FarmResult> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(REPO, "services/cli/bin/farm.js"), ...args], { cwd: REPO, env: { ...process.env, FARM_LOG_LEVEL: "warn", ...opts.env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b) => (stdout += b));
    child.stderr.on("data", (b) => (stderr += b));
    const t = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(t);
      resolve({ code, stdout, stderr, ms: performance.now() - t0 });
    });
  });
}
