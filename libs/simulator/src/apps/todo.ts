/**
 * Todo (`com.farm.simapps.todo`), notes an agent creates, edits, searches, checks and deletes, built
 * with the widget toolkit (ui/). One activity (MainActivity) with two screens, as a single-activity app
 * with fragments: the list and the editor.
 *
 * List: an app bar, a search field (filters by title or body as typed), the notes (newest first; each
 * row: a "done" checkbox, the title, which opens the editor (a long press on it asks to delete the note, as
 * many notes apps do), and a delete button that asks in a dialog), and a NEW NOTE button. The list holds 12 sample notes (RL_TASK_GAME_CONFIG `prefill` 0–12),
 * more than the screen shows: it scrolls. Editor: Up, title and body fields, SAVE (enabled once the
 * title is not blank), DELETE (existing notes). ENTER in the title moves to the body, in the body hides
 * the keyboard. Up or BACK leaves the editor without saving.
 *
 * Every change logs `json_extra: {"notes": N, "done": D}`. Goals (RL_TASK_GAME_CONFIG, titles and
 * bodies compared trimmed and case-insensitively):
 *   {"title": T, "body": B}            (or "goal": "create"; body optional) a note T with body B is saved
 *                                      (created, or an existing one edited into it)
 *   {"goal": "check", "title": T}      note T is marked done
 *   {"goal": "delete", "title": T}     no note T is left
 * Any other "goal", or a title that is not a string, names no goal. Reaching it logs `reward: 1` and `episode end` once per app run.
 *
 * The notes live in a SQLite database, `/data/data/com.farm.simapps.todo/databases/todo.db` (TODO_DB; sql.js),
 * table `notes(id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT, body TEXT, done INTEGER 0|1, created INTEGER,
 * modified INTEGER)` (ms since the epoch), newest first by id; Android's `android_metadata` table beside it.
 * Every change is written to the file at once; the list is read from it again whenever the file changed (a
 * note put in by `sqlite3` or `adb push` shows up, before or after the start). A start with
 * `--ez RL_TASK_ENABLED true` (an AndroidEnv episode) begins from the sample notes (`prefill`), as a reset that
 * clears the app's data would; any other start (launcher, `am start` without it) opens the database as it is,
 * creating it with the 12 sample notes when it does not exist.
 */
import type { AppFactory, AppHost } from "../android/app-contract.ts";
import { openDatabase, type Database, type SqlValue } from "../android/system/sql-engine.ts";
import { alertDialog } from "./ui/dialog.ts";
import { UiApp } from "./ui/ui-app.ts";
import type { Box, Widget } from "./ui/widget.ts";
import { appBar, button, checkbox, COLORS, iconButton, list, panel, row, textField } from "./ui/widgets.ts";

export const TODO_PACKAGE = "com.farm.simapps.todo";
/** The database, relative to the app's data folder (`/data/data/com.farm.simapps.todo/`). */
export const TODO_DB = "databases/todo.db";
const SCHEMA = [
  "CREATE TABLE IF NOT EXISTS android_metadata (locale TEXT)",
  "CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL, body TEXT NOT NULL DEFAULT '', done INTEGER NOT NULL DEFAULT 0, created INTEGER NOT NULL DEFAULT 0, modified INTEGER NOT NULL DEFAULT 0)",
];

const SAMPLES: readonly [string, string][] = [
  ["Buy bread", "whole grain"],
  ["Call mom", "sunday evening"],
  ["Pay rent", "before the 5th"],
  ["Water plants", "balcony too"],
  ["Book dentist", "checkup"],
  ["Fix bike", "rear brake"],
  ["Read book", "chapter 4"],
  ["Plan trip", "train tickets"],
  ["Gym", "legs day"],
  ["Clean kitchen", "oven"],
  ["Send invoice", "march"],
  ["Walk dog", "long walk"],
];

interface Note {
  id: number;
  title: string;
  body: string;
  done: boolean;
}

type Goal = { kind: "create"; title: string; body: string | undefined } | { kind: "check" | "delete"; title: string } | { kind: "none" };

function norm(s: string): string {
  return s.trim().toLowerCase();
}

function goalFrom(config: Readonly<Record<string, unknown>>): Goal {
  const str = (k: string): string | undefined => (Object.hasOwn(config, k) && typeof config[k] === "string" ? (config[k] as string) : undefined);
  const title = str("title");
  if (title === undefined) return { kind: "none" };
  const goal = Object.hasOwn(config, "goal") ? config.goal : "create";
  if (goal === "check" || goal === "delete") return { kind: goal, title };
  return goal === "create" ? { kind: "create", title, body: str("body") } : { kind: "none" };
}

const ROW_DP = 56;

/** The notes a Todo process last read, by the file bytes they came from (outside the app's fields: snapshots copy those). */
const readCache = new WeakMap<object, { bytes: Uint8Array | undefined; notes: Note[] }>();

/** The file bytes a Todo process last wrote itself: their schema is known, so the next change checks nothing. */
const ownWrites = new WeakMap<object, Uint8Array>();

/** How many of the schema's tables a database has (CREATE TABLE IF NOT EXISTS costs a statement even when they exist). */
const SCHEMA_PROBE = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('android_metadata', 'notes')";

/** The schema and the locale row, for a database with `tables` of the schema's tables. */
function createSchema(db: Database, tables: number): void {
  if (tables < SCHEMA.length) for (const sql of SCHEMA) db.run(sql);
  if (db.exec("SELECT count(*) FROM android_metadata")[0]?.values[0]?.[0] === 0) db.run("INSERT INTO android_metadata VALUES ('en_US')");
}

let emptyDb: Uint8Array | undefined;

/** A database file with the schema and no notes, built once per process (each app start opens a copy). */
function emptyTodoDb(): Uint8Array {
  if (!emptyDb) {
    const db = openDatabase();
    try {
      createSchema(db, 0);
      emptyDb = db.export();
    } finally {
      db.close();
    }
  }
  return emptyDb;
}

function rowsToNotes(db: Database): Note[] {
  const r = db.exec("SELECT id, title, body, done FROM notes ORDER BY id DESC");
  return (r[0]?.values ?? []).map((v: SqlValue[]) => ({ id: Number(v[0]), title: String(v[1] ?? ""), body: String(v[2] ?? ""), done: Number(v[3]) !== 0 }));
}

class Todo extends UiApp {
  readonly activity = "MainActivity";
  protected override readonly slowLists = ["notes"]; // the note list loads (a spinner first) each time it comes up
  private screen: "list" | "edit" = "list";
  private first = 0;
  private query = "";
  /** The note the editor holds (undefined: a new one) and its unsaved fields. */
  private editing: number | undefined = undefined;
  private draftTitle = "";
  private draftBody = "";
  /** The note the delete dialog asks about. */
  private confirmDelete: number | undefined = undefined;
  private readonly goal: Goal;
  private solved = false;

  constructor(host: AppHost) {
    super(host);
    this.goal = goalFrom(host.config);
    if (host.rlEnabled || host.files.read(TODO_DB) === undefined) {
      const prefill = typeof host.config.prefill === "number" && Number.isInteger(host.config.prefill) ? Math.min(Math.max(host.config.prefill, 0), SAMPLES.length) : SAMPLES.length;
      const now = host.now();
      // Newest first: the first sample is the newest note (the highest id).
      const rows = SAMPLES.slice(0, prefill).reverse();
      this.write(
        (db) => {
          // One statement for all rows: each statement is compiled anew, and an app start writes up to 12 notes.
          if (rows.length > 0) db.run(`INSERT INTO notes (title, body, done, created, modified) VALUES ${rows.map(() => "(?, ?, 0, ?, ?)").join(", ")}`, rows.flatMap(([title, body]) => [title, body, now, now]));
        },
        true,
      );
    }
  }

  /** The notes, newest first, as the database file holds them now (read again only when the file changed). */
  private get notes(): Note[] {
    const bytes = this.host.files.read(TODO_DB);
    const cached = readCache.get(this);
    if (cached && cached.bytes === bytes) return cached.notes;
    let notes: Note[] = [];
    if (bytes !== undefined && bytes.length > 0) {
      let db: Database | undefined;
      try {
        db = openDatabase(bytes);
        notes = rowsToNotes(db);
      } catch (e) {
        // A file that is no database, or has no notes table: an empty list (the next change writes a fresh schema).
        this.host.log("E", "SQLiteLog", `(1) ${e instanceof Error ? e.message : String(e)}`);
      } finally {
        db?.close();
      }
    }
    readCache.set(this, { bytes, notes });
    return notes;
  }

  /**
   * Runs `change` on the database and writes the file back; `fresh`: a new database instead of the file's.
   * Returns the row id of the last INSERT when `wantId` (else 0). One transaction, as SQLiteDatabase's own (each statement on its own
   * commits through a journal: a fresh database with its samples took ~5× as long). The notes just written are
   * what the next read finds, unless the write was muted (a reviving process): then the file is read again.
   */
  private write(change: (db: Database) => void, fresh = false, wantId = false): number {
    const bytes = fresh ? undefined : this.host.files.read(TODO_DB);
    // The empty database's copy, or what this process wrote last, has the schema: no statements to check it.
    let known = bytes === undefined || ownWrites.get(this) === bytes;
    let db: Database;
    let tables = SCHEMA.length;
    try {
      db = openDatabase(bytes ?? emptyTodoDb());
      if (!known) tables = Number(db.exec(SCHEMA_PROBE)[0]?.values[0]?.[0] ?? 0);
    } catch {
      db = openDatabase(emptyTodoDb()); // not a database: the app starts over, as SQLiteOpenHelper deletes a corrupt file
      known = true;
    }
    try {
      db.run("BEGIN");
      if (!known) createSchema(db, tables);
      change(db);
      const id = wantId ? Number(db.exec("SELECT last_insert_rowid()")[0]?.values[0]?.[0] ?? 0) : 0;
      db.run("COMMIT");
      const out = db.export();
      this.host.files.write(TODO_DB, out);
      const stored = this.host.files.read(TODO_DB);
      if (stored !== undefined && Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength).equals(out)) {
        readCache.set(this, { bytes: stored, notes: rowsToNotes(db) });
        ownWrites.set(this, stored);
      }
      return id;
    } finally {
      db.close();
    }
  }

  state(): unknown {
    return { screen: this.screen, notes: this.notes.map((n) => ({ ...n })), query: this.query, editing: this.editing, draftTitle: this.draftTitle, draftBody: this.draftBody, dialog: this.confirmDelete !== undefined, focused: this.focused, solved: this.solved };
  }

  private d(v: number): number {
    return Math.round(v * this.dp);
  }

  protected page(box: Box): Widget {
    return this.screen === "list" ? this.listPage(box) : this.editPage(box);
  }

  private visible(): Note[] {
    const q = norm(this.query);
    return q === "" ? this.notes : this.notes.filter((n) => norm(n.title).includes(q) || norm(n.body).includes(q));
  }

  private listPage(box: Box): Widget {
    const [l, t, r, b] = box;
    const d = (v: number): number => this.d(v);
    const shown = this.visible();
    const children: Widget[] = [appBar([l, t, r, t + d(56)], "Todo")];
    children.push(
      textField("search", [l + d(8), t + d(60), r - d(56), t + d(108)], {
        id: "app:id/search",
        text: this.query,
        hint: "Search notes",
        focused: this.focused === "search",
        focus: () => this.focus("search"),
        setText: (s) => {
          this.query = s;
          this.first = 0;
        },
      }),
    );
    if (this.query !== "") children.push(iconButton("clear_search", [r - d(48), t + d(60), r - d(8), t + d(108)], "X", "Clear search", () => ((this.query = ""), (this.first = 0)), { id: "app:id/clear_search" }));
    const listBox: Box = [l, t + d(112), r, b - d(72)];
    children.push(
      list("notes", listBox, d(ROW_DP), shown.length, this.first, (i, rb) => this.noteRow(shown[i]!, rb), (f) => (this.first = f), { id: "app:id/notes" }),
    );
    if (shown.length === 0) children.push({ cls: "android.widget.TextView", key: "empty", id: "app:id/empty", bounds: listBox, text: this.query === "" ? "No notes yet" : "No notes found", paint: { align: "center", fg: COLORS.muted } });
    children.push(button("new", [l + d(16), b - d(64), r - d(16), b - d(8)], "NEW NOTE", () => this.openEditor(undefined), { id: "app:id/new_note", desc: "New note" }));
    return panel("list_page", box, children, { id: "app:id/list_page" });
  }

  private noteRow(n: Note, rb: Box): Widget {
    const [l, t, r, b] = rb;
    const d = (v: number): number => this.d(v);
    return panel(
      `note/${n.id}`,
      rb,
      [
        checkbox(`note/${n.id}/done`, [l, t, l + d(48), b], "", n.done, () => this.toggleDone(n.id), { id: "app:id/note_done", desc: `Done: ${n.title}` }),
        row(`note/${n.id}/title`, [l + d(48), t, r - d(48), b], n.title, () => this.openEditor(n.id), { id: "app:id/note_title", longClick: () => this.askDelete(n.id), paint: { fg: n.done ? COLORS.muted : COLORS.text } }),
        iconButton(`note/${n.id}/delete`, [r - d(48), t, r, b], "X", `Delete ${n.title}`, () => this.askDelete(n.id), { id: "app:id/note_delete", paint: { fg: COLORS.danger } }),
      ],
      { id: "app:id/note_row", cls: "android.view.ViewGroup", paint: { bg: n.id % 2 === 0 ? COLORS.row : 0xffffff } },
    );
  }

  private editPage(box: Box): Widget {
    const [l, t, r] = box;
    const d = (v: number): number => this.d(v);
    const field = (key: "title_input" | "body_input", top: number, hint: string, text: string, set: (s: string) => void, submit: () => void): Widget[] => {
      const out = [textField(key, [l + d(16), top, r - d(56), top + d(48)], { id: `app:id/${key}`, text, hint, focused: this.focused === key, focus: () => this.focus(key), setText: set, submit })];
      if (text !== "") out.push(iconButton(`clear_${key}`, [r - d(48), top, r - d(8), top + d(48)], "X", `Clear ${hint.toLowerCase()}`, () => set(""), { id: `app:id/clear_${key}` }));
      return out;
    };
    const existing = this.editing !== undefined;
    return panel(
      "edit_page",
      box,
      [
        appBar([l, t, r, t + d(56)], existing ? "Edit note" : "New note", () => this.closeEditor()),
        ...field("title_input", t + d(72), "Title", this.draftTitle, (s) => (this.draftTitle = s), () => this.focus("body_input")),
        ...field("body_input", t + d(128), "Note", this.draftBody, (s) => (this.draftBody = s), () => this.focus(undefined)),
        button("save", [l + d(16), t + d(192), l + d(172), t + d(240)], "SAVE", () => this.save(), { id: "app:id/save", enabled: this.draftTitle.trim() !== "" }),
        button("delete", [l + d(188), t + d(192), r - d(16), t + d(240)], "DELETE", () => this.askDelete(this.editing!), { id: "app:id/delete", enabled: existing, paint: { bg: existing ? COLORS.danger : COLORS.line } }),
      ],
      { id: "app:id/edit_page" },
    );
  }

  protected override dialog(): Widget | undefined {
    const n = this.notes.find((x) => x.id === this.confirmDelete);
    if (!n) return undefined;
    return alertDialog(this.host.screen, this.dp, "Delete note?", `${n.title} will be deleted.`, { text: "CANCEL", press: () => this.cancelDialog() }, { text: "DELETE", press: () => this.remove(n.id) });
  }

  protected override cancelDialog(): void {
    this.confirmDelete = undefined;
  }

  protected back(): boolean {
    if (this.screen !== "edit") return false;
    this.closeEditor();
    return true;
  }

  private openEditor(id: number | undefined): void {
    const n = this.notes.find((x) => x.id === id);
    this.editing = n?.id;
    this.draftTitle = n?.title ?? "";
    this.draftBody = n?.body ?? "";
    this.screen = "edit";
    this.focus(n ? undefined : "title_input");
  }

  private closeEditor(): void {
    this.screen = "list";
    this.editing = undefined;
    this.focus(undefined);
  }

  private save(): void {
    const title = this.draftTitle.trim();
    if (title === "") return;
    const body = this.draftBody.trim();
    const now = this.host.now();
    const existing = this.notes.find((x) => x.id === this.editing);
    let id: number;
    if (existing) {
      id = existing.id;
      this.write((db) => db.run("UPDATE notes SET title = ?, body = ?, modified = ? WHERE id = ?", [title, body, now, id]));
    } else {
      id = this.write((db) => db.run("INSERT INTO notes (title, body, done, created, modified) VALUES (?, ?, 0, ?, ?)", [title, body, now, now]), false, true);
      this.first = 0;
    }
    this.closeEditor();
    this.changed(this.notes.find((x) => x.id === id));
  }

  private toggleDone(id: number): void {
    if (!this.notes.some((x) => x.id === id)) return;
    this.write((db) => db.run("UPDATE notes SET done = 1 - done, modified = ? WHERE id = ?", [this.host.now(), id]));
    this.changed();
  }

  private askDelete(id: number): void {
    this.focus(undefined);
    this.confirmDelete = id;
  }

  private remove(id: number): void {
    this.write((db) => db.run("DELETE FROM notes WHERE id = ?", [id]));
    this.confirmDelete = undefined;
    if (this.editing === id) this.closeEditor();
    this.changed();
  }

  /** `saved`: the note a SAVE just wrote (a create goal counts only what the agent saved, not a sample note). */
  private changed(saved?: Note): void {
    this.host.rl(`json_extra: {"notes": ${this.notes.length}, "done": ${this.notes.filter((n) => n.done).length}}`);
    if (this.solved || !this.goalReached(saved)) return;
    this.solved = true;
    this.host.rl("reward: 1");
    this.host.rl("episode end");
  }

  private goalReached(saved: Note | undefined): boolean {
    const g = this.goal;
    if (g.kind === "none") return false;
    if (g.kind === "create") return saved !== undefined && norm(saved.title) === norm(g.title) && (g.body === undefined || norm(saved.body) === norm(g.body));
    const named = this.notes.filter((n) => norm(n.title) === norm(g.title));
    if (g.kind === "check") return named.some((n) => n.done);
    return named.length === 0;
  }
}

export const createTodo: AppFactory = (host) => new Todo(host);
