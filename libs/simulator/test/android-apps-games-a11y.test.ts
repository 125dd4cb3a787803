/** The games as accessibility sees them: 2048's score and cells as text, Catch's counters, ball and paddle. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { sh } from "./android-helpers.ts";
import { startApp, top } from "./android-apps-ui-helpers.ts";
import type { SimAndroid } from "../src/android/index.ts";

const cellTexts = (d: SimAndroid): string[] => top(d).filter((n) => n.contentDescription.startsWith("Row ")).map((n) => n.text);

test("2048: the score and every cell's value are in the tree and follow the game", async () => {
  const d = await startApp("classic_2048.apk", "com.tpcstld.twozerogame/com.tpcstld.twozerogame.MainActivity", '{"seed": 5}');
  const game = (): { grid: number[][]; score: number } => d.appState() as { grid: number[][]; score: number };
  const expected = (): string[] => game().grid.flat().map((v) => (v ? String(v) : ""));
  assert.deepEqual(cellTexts(d), expected());
  assert.equal(cellTexts(d).filter((t) => t !== "").length, 2, "two tiles at the start");
  for (const swipe of ["input swipe 180 450 180 150", "input swipe 60 320 300 320", "input swipe 180 150 180 450", "input swipe 300 320 60 320"]) await sh(d, swipe);
  assert.deepEqual(cellTexts(d), expected());
  const score = top(d).find((n) => n.contentDescription === "Score");
  assert.equal(score?.text, String(game().score));
  const cell = top(d).find((n) => n.contentDescription === "Row 2, column 3")!;
  const board = top(d).find((n) => n.contentDescription === "Game board")!;
  assert.ok(cell.bounds.left > board.bounds.left && cell.bounds.bottom < board.bounds.bottom, "cells lie inside the board");
  d.close();
});

test("Catch the Ball: lives and caught as text; the ball and paddle nodes sit where the game has them", async () => {
  const d = await startApp("catch_the_ball.apk", "com.example.catchtheball/com.example.catchtheball.MainActivity", "{}");
  const s = d.appState() as { lives: number; ball: [number, number]; paddle: [number, number]; caught: number };
  const nodes = top(d);
  assert.equal(nodes.find((n) => n.contentDescription === "Lives")?.text, `LIVES ${s.lives}`);
  assert.equal(nodes.find((n) => n.contentDescription === "Caught")?.text, `CAUGHT ${s.caught}`);
  const inside = (b: { left: number; top: number; right: number; bottom: number }, [x, y]: [number, number]): boolean => x >= b.left && x < b.right && y >= b.top && y < b.bottom;
  const ball = nodes.find((n) => n.contentDescription === "Ball")!;
  const paddle = nodes.find((n) => n.contentDescription === "Paddle")!;
  assert.ok(inside(paddle.bounds, s.paddle), `paddle ${JSON.stringify(paddle.bounds)} at ${s.paddle}`);
  // The ball falls in real time: its node is a ball-sized box (it may have moved since the state was read).
  assert.ok(ball.bounds.right > ball.bounds.left && ball.bounds.bottom > ball.bounds.top, "the ball has a size");
  d.close();
});
