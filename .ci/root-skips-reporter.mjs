// A node:test reporter (added by .ci/test-files.sh) that fails the run when a test declaring that it must run
// as root skips while the suite runs as root (CI does): its skip reason starts with ROOT_ONLY. Without root such a
// test skips as before; under root a skip means it silently stopped running (the network-lab tests). Set
// FARM_REQUIRE_ROOT_TESTS=1 to apply the check without root (the rule's own test does).
export const ROOT_ONLY = "[root-only]";

export default async function* rootSkips(source) {
  const enforce = process.getuid?.() === 0 || process.env.FARM_REQUIRE_ROOT_TESTS === "1";
  const skipped = [];
  for await (const event of source) {
    if (event.type !== "test:pass" || typeof event.data.skip !== "string" || !event.data.skip.startsWith(ROOT_ONLY)) continue;
    skipped.push(`${event.data.file ?? "?"}: ${event.data.name} (${event.data.skip})`);
  }
  if (!enforce || skipped.length === 0) return;
  yield `root-only tests skipped although the suite runs as root (they must run here):\n${skipped.map((s) => `  ${s}\n`).join("")}`;
  process.exitCode = 1;
}
