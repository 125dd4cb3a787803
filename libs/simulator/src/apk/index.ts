/** The simulated APK format and the prebuilt APKs of the simulated apps. */
export { buildSimApk, parseSimApk, expandActivityName, SimApkError, SIM_APK_MAGIC, type SimApkSpec, type SimApkManifest } from "./sim-apk.ts";
export { PREBUILT_APKS, prebuiltApkFiles } from "./prebuilt.ts";
