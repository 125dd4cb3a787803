import { test } from "node:test";
import assert from "node:assert/strict";
import { orTimeout, pollUntil, timed, withDeadline } from "../src/index.ts";

test("pollUntil resolves with the first value that is not undefined or false", async () => {
  let calls = 0;
  const v = await pollUntil(() => (++calls >= 3 ? `ready after ${calls}` : false), { timeoutMs: 10_000, intervalMs: 1 });
  assert.equal(v, "ready after 3");
});

test("pollUntil resolves undefined after its timeout, having checked at least once", async () => {
  let calls = 0;
  const v = await pollUntil(async () => void calls++, { timeoutMs: 30, intervalMs: 5 });
  assert.equal(v, undefined);
  assert.ok(calls >= 1);
});

test("pollUntil stops early when its signal aborts", async () => {
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 10);
  const started = Date.now();
  assert.equal(await pollUntil(() => undefined, { timeoutMs: 60_000, intervalMs: 5, signal: ac.signal }), undefined);
  assert.ok(Date.now() - started < 30_000);
});

test("pollUntil: a throwing check ends the wait, unless onError takes the error as 'not yet'", async () => {
  await assert.rejects(pollUntil(() => { throw new Error("refused"); }, { timeoutMs: 1000, intervalMs: 1 }), /refused/);
  let calls = 0;
  const seen: string[] = [];
  const v = await pollUntil(() => { if (++calls < 3) throw new Error(`refused ${calls}`); return "up"; }, { timeoutMs: 10_000, intervalMs: 1, onError: (e) => seen.push((e as Error).message) });
  assert.equal(v, "up");
  assert.deepEqual(seen, ["refused 1", "refused 2"]);
});

test("withDeadline passes the work's value and error through, and rejects with the caller's error when late", async () => {
  assert.equal(await withDeadline(Promise.resolve(7), 1000, () => new Error("late")), 7);
  await assert.rejects(withDeadline(Promise.reject(new Error("own")), 1000, () => new Error("late")), /own/);
  await assert.rejects(withDeadline(new Promise(() => undefined), 5, () => new RangeError("late")), RangeError);
});

test("orTimeout answers with the work's value, or with onTimeout's once late, and drops a late rejection", async () => {
  assert.equal(await orTimeout(Promise.resolve(7), 1000, () => "late"), 7);
  await assert.rejects(orTimeout(Promise.reject(new Error("own")), 1000, () => "late"), /own/);
  let fail!: (e: Error) => void;
  const work = new Promise<number>((_, reject) => (fail = reject));
  assert.equal(await orTimeout(work, 5, () => "late"), "late");
  fail(new Error("after the deadline")); // no unhandled rejection follows
  await new Promise((r) => setImmediate(r));
  await assert.rejects(orTimeout(new Promise(() => undefined), 5, () => { throw new RangeError("thrown"); }), RangeError);
});

test("timed gives the value, or that the time ran out; a rejection in time passes on, a late one is dropped", async () => {
  assert.deepEqual(await timed(Promise.resolve(7), 1000), { timedOut: false, value: 7 });
  await assert.rejects(timed(Promise.reject(new Error("own")), 1000), /own/);
  let fail!: (e: Error) => void;
  const late = new Promise<number>((_, reject) => (fail = reject));
  assert.deepEqual(await timed(late, 5), { timedOut: true });
  fail(new Error("too late"));
  await new Promise((r) => setImmediate(r));
});
