/** A parsed task object (protobufjs toObject) of any dialect → the normalised Task, validating as it goes. */
import { type Checker, num, obj, type Obj, str } from "./checker.ts";
import { currentStepPayload, type StepEnv } from "./commands-current.ts";
import { legacyStepPayload } from "./commands-legacy.ts";
import type { AppScreen, Dialect, LogParsing, Task } from "./model.ts";
import { internal2021LogParsing, normaliseAppScreen, normaliseExtrasSpec, normaliseLogParsing, normaliseSteps } from "./normalise-common.ts";

const EMPTY_LOG_PARSING: LogParsing = { filters: [], reward: [], episodeEnd: [], extra: [], jsonExtra: [], rewardEvent: [] };

export function normaliseTask(env: StepEnv, raw: Obj, dialect: Dialect): Task {
  const { ck } = env;
  const legacy = dialect !== "current";
  const payload = legacy ? legacyStepPayload(env) : currentStepPayload(env);
  // Only the early-2021 runtime matched wait_for_message against the whole message.
  const wholeMessage = dialect === "internal-2021";
  const packageName = ck.packageName("package_name", str(raw.package_name), true);
  const fullActivityName = str(raw.full_activity_name);
  if (fullActivityName !== "") ck.activity("full_activity_name", fullActivityName);

  const setupSteps = normaliseSteps(ck, raw.setup_steps, "setup_steps", payload, wholeMessage);
  const resetSteps = normaliseSteps(ck, raw.reset_steps, "reset_steps", payload, wholeMessage);
  const screen = obj(raw.expected_app_screen);
  let expectedAppScreen: AppScreen | undefined;
  if (screen && str(screen.activity) === "") ck.warn("expected_app_screen", "expected_app_screen without an activity never detects anything; ignored");
  else if (screen) expectedAppScreen = normaliseAppScreen(ck, screen, "expected_app_screen");

  const limits = legacy ? legacyLimits(ck, raw) : { maxEpisodeSec: num(raw.max_episode_sec), maxEpisodeSteps: num(raw.max_episode_steps) };

  let logParsing: LogParsing;
  if (dialect === "internal-2021") logParsing = internal2021LogParsing(ck, str(raw.log_tag), str(raw.log_prefix));
  else if (raw.log_parsing_config) logParsing = normaliseLogParsing(ck, raw.log_parsing_config);
  else logParsing = EMPTY_LOG_PARSING;

  return {
    id: str(raw.id),
    name: str(raw.name),
    description: str(raw.description),
    packageName,
    fullActivityName,
    setupSteps,
    resetSteps,
    expectedAppScreen,
    ...limits,
    logParsing,
    extrasSpec: normaliseExtrasSpec(ck, raw.extras_spec),
  };
}

/** Old limit names, with the current names accepted as aliases; both spellings of one limit is an error. */
function legacyLimits(ck: Checker, raw: Obj): { maxEpisodeSec: number; maxEpisodeSteps: number } {
  const pick = (oldName: string, newName: string): number => {
    if (ck.index.has(oldName) && ck.index.has(newName)) {
      ck.fail("conflicting_limits", newName, `both ${oldName} and ${newName} are set`, `keep one of them (${newName} is the current name)`);
    }
    return num(raw[oldName]) || num(raw[newName]);
  };
  return { maxEpisodeSec: pick("max_duration_sec", "max_episode_sec"), maxEpisodeSteps: pick("max_num_steps", "max_episode_steps") };
}
