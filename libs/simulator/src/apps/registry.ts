/** App implementations by the id a simulated APK names in its `app` field. */
import type { AppFactory } from "../android/app-contract.ts";
import { createClassic2048 } from "./classic-2048.ts";
import { createCatchTheBall } from "./catch-the-ball.ts";
import { createSimNotes } from "./sim-notes.ts";
import { staticAppFactory } from "./static-app.ts";
import { createTodo } from "./todo.ts";
import { createAndroidSettings, createSimSettings } from "./sim-settings.ts";

export const APP_FACTORIES: Readonly<Record<string, AppFactory>> = {
  "classic-2048": createClassic2048,
  "catch-the-ball": createCatchTheBall,
  "sim-notes": createSimNotes,
  todo: createTodo,
  "sim-settings": createSimSettings,
  // com.android.settings, a system package (android/system/package-manager.ts).
  "android-settings": createAndroidSettings,
};

/** The factory for an implementation id; unknown ids (and system apps) get a static screen titled `label`. */
export function appFactoryFor(appId: string, label: string): AppFactory {
  return Object.hasOwn(APP_FACTORIES, appId) ? APP_FACTORIES[appId]! : staticAppFactory(label);
}
