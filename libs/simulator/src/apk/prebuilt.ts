/**
 * The APK files shipped in `tasks/apks/` for the simulated apps. Regenerate them with
 *   node --import tsx libs/simulator/src/apk/write-prebuilt.ts
 * (test/android-apk.test.ts checks that the committed files equal what this produces).
 */
import { buildSimApk, type SimApkSpec } from "./sim-apk.ts";

export const PREBUILT_APKS: readonly { file: string; spec: SimApkSpec }[] = [
  {
    file: "classic_2048.apk",
    spec: { packageName: "com.tpcstld.twozerogame", versionCode: 1, label: "2048", app: "classic-2048", activities: ["com.tpcstld.twozerogame.MainActivity"] },
  },
  {
    file: "catch_the_ball.apk",
    spec: { packageName: "com.example.catchtheball", versionCode: 1, label: "Catch the Ball", app: "catch-the-ball", activities: ["com.example.catchtheball.MainActivity"] },
  },
  {
    file: "sim_notes.apk",
    spec: {
      packageName: "com.farm.simapps.notes",
      versionCode: 1,
      label: "Sim Notes",
      app: "sim-notes",
      activities: ["com.farm.simapps.notes.MainActivity", "com.farm.simapps.notes.NoteActivity"],
    },
  },
  {
    file: "todo.apk",
    spec: { packageName: "com.farm.simapps.todo", versionCode: 1, label: "Todo", app: "todo", activities: ["com.farm.simapps.todo.MainActivity"] },
  },
  {
    file: "sim_settings.apk",
    spec: { packageName: "com.farm.simapps.settings", versionCode: 1, label: "Sim Settings", app: "sim-settings", activities: ["com.farm.simapps.settings.MainActivity"] },
  },
];

export function prebuiltApkFiles(): { file: string; bytes: Uint8Array }[] {
  return PREBUILT_APKS.map(({ file, spec }) => ({ file, bytes: buildSimApk(spec) }));
}
