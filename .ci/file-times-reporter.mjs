// A node:test reporter that prints, at the end, how long each test file's top-level tests took (summed),
// slowest first: `npm run test:stress` names the suite's slowest files with it.
export default async function* fileTimes(source) {
  const byFile = new Map();
  for await (const event of source) {
    if ((event.type === "test:pass" || event.type === "test:fail") && event.data.nesting === 0 && event.data.file) {
      const f = byFile.get(event.data.file) ?? { ms: 0, failed: 0 };
      f.ms += event.data.details?.duration_ms ?? 0;
      if (event.type === "test:fail") f.failed++;
      byFile.set(event.data.file, f);
    }
  }
  const rows = [...byFile.entries()].sort((a, b) => b[1].ms - a[1].ms);
  yield `slowest test files (sum of their top-level tests):\n`;
  for (const [file, f] of rows.slice(0, 15)) yield `${(f.ms / 1000).toFixed(1).padStart(7)} s  ${file.replace(process.cwd() + "/", "")}${f.failed ? `  (${f.failed} failed)` : ""}\n`;
  yield `files: ${rows.length}\n`;
}
