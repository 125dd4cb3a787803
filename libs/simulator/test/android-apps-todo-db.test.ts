/**
 * Todo's notes in a real SQLite database (`/data/data/com.farm.simapps.todo/databases/todo.db`, sql.js) and the
 * device shell's `sqlite3`: what the screen saves is in the file, what the file holds is on the screen.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { newDevice, installPrebuilt, sh } from "./android-helpers.ts";
import { byDesc, byId, byText, startApp, tapNode, TODO, top, typeOnKeyboard } from "./android-apps-ui-helpers.ts";
import type { SimAndroid } from "../src/android/index.ts";

const DB = "/data/data/com.farm.simapps.todo/databases/todo.db";
const q = async (d: SimAndroid, sql: string): Promise<string> => {
  const r = await sh(d, `sqlite3 ${DB} "${sql}"`);
  assert.equal(r.code, 0, r.err);
  return r.out;
};
const titles = (d: SimAndroid): string[] => top(d).filter((n) => n.resourceId.endsWith(":id/note_title")).map((n) => n.text);

test("an RL start writes the sample notes to the database; a note typed through the screen lands in it", async () => {
  const d = await startApp("todo.apk", TODO, '{"prefill": 3}');
  assert.equal(await q(d, "SELECT id, title, body, done FROM notes ORDER BY id"), "1|Pay rent|before the 5th|0\n2|Call mom|sunday evening|0\n3|Buy bread|whole grain|0\n");
  assert.equal(await q(d, "SELECT locale FROM android_metadata"), "en_US\n");
  await tapNode(d, byText(d, "NEW NOTE"));
  await typeOnKeyboard(d, "milk\n2 litres");
  await tapNode(d, byText(d, "SAVE"));
  assert.equal(await q(d, "SELECT title, body, done FROM notes WHERE id = 4"), "milk|2 litres|0\n");
  await tapNode(d, byDesc(d, "Done: milk"));
  assert.equal(await q(d, "SELECT done FROM notes WHERE title = 'milk'"), "1\n");
  await tapNode(d, byDesc(d, "Delete Call mom"));
  await tapNode(d, byId(d, "button1"));
  assert.equal(await q(d, "SELECT count(*) FROM notes"), "3\n");
  d.close();
});

test("the app reads the database at start (a launcher start keeps it) and follows changes made while it runs", async () => {
  const d = newDevice();
  await installPrebuilt(d, "todo.apk");
  await sh(d, `sqlite3 ${DB} "CREATE TABLE notes (id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL, body TEXT NOT NULL DEFAULT '', done INTEGER NOT NULL DEFAULT 0, created INTEGER NOT NULL DEFAULT 0, modified INTEGER NOT NULL DEFAULT 0); INSERT INTO notes (title) VALUES ('from the shell')"`);
  await sh(d, `am start -W -n ${TODO}`);
  assert.deepEqual(titles(d), ["from the shell"]);
  await q(d, "INSERT INTO notes (title, body) VALUES ('second', 'x')");
  assert.deepEqual(titles(d), ["second", "from the shell"]);
  // A start without RL extras opens the database as it is; with them it starts from the samples.
  await sh(d, `am force-stop com.farm.simapps.todo`);
  await sh(d, `am start -W -n ${TODO}`);
  assert.deepEqual(titles(d), ["second", "from the shell"]);
  d.close();
});

test("with no database, a plain start creates it with the 12 sample notes; rm of the data folder starts over", async () => {
  const d = newDevice();
  await installPrebuilt(d, "todo.apk");
  await sh(d, `am start -W -n ${TODO}`);
  assert.equal(await q(d, "SELECT count(*) FROM notes"), "12\n");
  await sh(d, "am force-stop com.farm.simapps.todo");
  await sh(d, "rm -rf /data/data/com.farm.simapps.todo");
  await sh(d, `am start -W -n ${TODO}`);
  assert.equal(await q(d, "SELECT count(*) FROM notes"), "12\n");
  d.close();
});

test("a device snapshot restores the database file and the app together", async () => {
  const d = await startApp("todo.apk", TODO, '{"prefill": 2}');
  const saved = d.system.saveState();
  await q(d, "DELETE FROM notes");
  assert.deepEqual(titles(d), []);
  d.system.restoreState(saved);
  assert.deepEqual(titles(d), ["Buy bread", "Call mom"]);
  assert.equal(await q(d, "SELECT count(*) FROM notes"), "2\n");
  d.close();
});

test("sqlite3: list mode, -header, -separator, -csv, several statements, stdin, .tables, errors, lazy creation", async () => {
  const d = newDevice();
  const db = "/data/local/tmp/t.db";
  // A read of a database that does not exist creates nothing.
  const missing = await sh(d, `sqlite3 ${db} "SELECT * FROM t"`);
  assert.equal(missing.code, 1);
  assert.equal(missing.err, "Error: in prepare, no such table: t\n");
  assert.equal(d.system.fs.read(db), undefined);
  assert.equal((await sh(d, `sqlite3 ${db} "CREATE TABLE t (a, b); INSERT INTO t VALUES (1, 'x'), (NULL, 'y,z')"`)).code, 0);
  assert.equal((await sh(d, `sqlite3 ${db} "SELECT * FROM t"`)).out, "1|x\n|y,z\n");
  assert.equal((await sh(d, `sqlite3 -header -separator , ${db} "SELECT a, b FROM t WHERE a = 1"`)).out, "a,b\n1,x\n");
  assert.equal((await sh(d, `sqlite3 -csv ${db} "SELECT b FROM t"`)).out, 'x\n"y,z"\n');
  assert.equal((await sh(d, `sqlite3 ${db} "SELECT 1" "SELECT 2"`)).out, "1\n2\n");
  assert.equal((await sh(d, `sqlite3 ${db}`, { stdin: ".tables\nSELECT count(*)\nFROM t;\n" })).out, "t\n2\n");
  const bad = await sh(d, `sqlite3 ${db} "SELEC 1"`);
  assert.equal(bad.code, 1);
  assert.match(bad.err, /^Error: in prepare, near "SELEC": syntax error/);
  d.system.fs.write("/data/local/tmp/junk.db", new TextEncoder().encode("this is not a database, not at all......................................................................................................"), 0o644, 0);
  assert.equal((await sh(d, `sqlite3 /data/local/tmp/junk.db "SELECT 1"`)).code, 1);
  assert.equal((await sh(d, "sqlite3")).code, 1);
  d.close();
});
