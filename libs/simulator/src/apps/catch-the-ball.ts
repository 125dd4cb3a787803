/**
 * Catch the Ball (`com.example.catchtheball/.MainActivity`), real time: while the activity is in
 * front a timer ticks every `tick_ms` and the ball falls whether or not the agent acts. The paddle
 * follows the touch x (any down/move), or D-pad left/right. Catching logs `reward: 1`; a miss logs
 * `reward: -1` and costs a life; `episode end` when no lives are left.
 *
 * RL_TASK_GAME_CONFIG (all optional): `seed` (int, default 7: ball x positions), `lives` (default 3),
 * `speed` (screen heights per second, default 0.5), `tick_ms` (default 50), `paddle_width` (px,
 * default a fifth of the screen width), `extras_interval_ms` (default 200).
 *
 * Extras (ints): `extra: lives [n]` and `extra: paddle_width [w]` at start and when lives change;
 * `extra: ball [x, y]` and `extra: paddle [x, y]` (centres) at start, every `extras_interval_ms`,
 * and after every catch or miss. Extras are rate-limited rather than per tick to keep 64 devices'
 * log streams small.
 */
import type { Canvas } from "../graphics/canvas.ts";
import { simRandom, type SeededRandom } from "../android/system/rng.ts";
import type { AppFactory, AppHost, SimApp, TouchAction, ViewNode } from "../android/app-contract.ts";
import { configNumber, configSeed } from "./game-config.ts";

export const CATCH_DEFAULT_SEED = 7;

class CatchTheBall implements SimApp {
  readonly activity = "MainActivity";
  readonly tickMs: number;
  private readonly rng: SeededRandom;
  private readonly speedPxPerTick: number;
  private readonly radius: number;
  private readonly paddleWidth: number;
  private readonly paddleY: number;
  private readonly paddleHeight: number;
  private readonly extrasEveryTicks: number;
  private lives: number;
  private ballX = 0;
  private ballY = 0;
  private paddleX: number;
  private ticks = 0;
  private caught = 0;
  private over = false;
  private readonly gameTid: number;

  constructor(private readonly host: AppHost) {
    const { width, height } = host.screen;
    const cfg = host.config;
    this.rng = simRandom(configSeed(cfg, CATCH_DEFAULT_SEED));
    this.lives = configNumber(cfg, "lives", 3, { min: 1, integer: true });
    this.tickMs = configNumber(cfg, "tick_ms", 50, { min: 5, max: 1000 });
    const speed = configNumber(cfg, "speed", 0.5, { min: 0.01, max: 100 });
    this.speedPxPerTick = (speed * height * this.tickMs) / 1000;
    this.paddleWidth = Math.round(configNumber(cfg, "paddle_width", width / 5, { min: 4, max: width }));
    this.extrasEveryTicks = Math.max(1, Math.round(configNumber(cfg, "extras_interval_ms", 200, { min: 1 }) / this.tickMs));
    this.radius = Math.max(3, Math.round(width * 0.03));
    this.paddleHeight = Math.max(4, Math.round(height * 0.02));
    this.paddleY = Math.round(height * 0.9);
    this.paddleX = Math.round(width / 2);
    this.gameTid = host.pid + 17;
    this.newBall();
    host.rl(`extra: lives [${this.lives}]`);
    host.rl(`extra: paddle_width [${this.paddleWidth}]`);
    this.logPositions(host.pid);
  }

  wantsTicks(): boolean {
    return !this.over;
  }

  private newBall(): void {
    const { width } = this.host.screen;
    this.ballX = this.radius + this.rng.int(0, Math.max(1, width - 2 * this.radius) - 1);
    this.ballY = this.radius;
  }

  private logPositions(tid: number): void {
    this.host.rl(`extra: ball [${Math.round(this.ballX)}, ${Math.round(this.ballY)}]`, tid);
    this.host.rl(`extra: paddle [${Math.round(this.paddleX)}, ${this.paddleY + Math.round(this.paddleHeight / 2)}]`, tid);
  }

  tick(): void {
    if (this.over) return;
    this.ticks++;
    this.ballY += this.speedPxPerTick;
    const tid = this.gameTid;
    if (this.ballY + this.radius >= this.paddleY) {
      const hit = Math.abs(this.ballX - this.paddleX) <= this.paddleWidth / 2 + this.radius;
      if (hit) {
        this.caught++;
        this.host.rl("reward: 1", tid);
      } else {
        this.lives--;
        this.host.rl("reward: -1", tid);
        this.host.rl(`extra: lives [${this.lives}]`, tid);
      }
      if (this.lives <= 0) {
        this.over = true;
        this.logPositions(tid);
        this.host.rl("episode end", tid);
        this.host.refreshTicking();
        return;
      }
      this.newBall();
      this.logPositions(tid);
    } else if (this.ticks % this.extrasEveryTicks === 0) {
      this.logPositions(tid);
    }
  }

  private movePaddleTo(x: number): void {
    const { width } = this.host.screen;
    const half = this.paddleWidth / 2;
    this.paddleX = Math.round(Math.min(width - half, Math.max(half, x)));
  }

  onTouch(_action: TouchAction, x: number): void {
    this.movePaddleTo(x);
  }

  onKey(keycode: number): boolean {
    if (keycode === 21) this.movePaddleTo(this.paddleX - this.paddleWidth / 2);
    else if (keycode === 22) this.movePaddleTo(this.paddleX + this.paddleWidth / 2);
    else return false;
    return true;
  }

  /** Current state (tests and tools). */
  state(): { lives: number; ball: [number, number]; paddle: [number, number]; caught: number; over: boolean; ticks: number } {
    return { lives: this.lives, ball: [Math.round(this.ballX), Math.round(this.ballY)], paddle: [this.paddleX, this.paddleY], caught: this.caught, over: this.over, ticks: this.ticks };
  }

  render(c: Canvas): void {
    const { width, height } = this.host.screen;
    c.fill(0x101820);
    const scale = Math.max(1, Math.floor(width / 180));
    c.text(width * 0.04, height * 0.02, `LIVES ${this.lives}`, scale, 0xffffff);
    c.text(width * 0.6, height * 0.02, `CAUGHT ${this.caught}`, scale, 0xffffff);
    c.circle(this.ballX, this.ballY, this.radius, 0xffc107);
    c.rect(this.paddleX - this.paddleWidth / 2, this.paddleY, this.paddleWidth, this.paddleHeight, 0x4fc3f7);
    if (this.over) c.textCentered(0, height * 0.4, width, height * 0.1, "GAME OVER", scale * 2, 0xff5252);
  }

  /** The game's one custom view, with its counters as text and the ball and paddle as described virtual views. */
  viewHierarchy(): ViewNode {
    const { width, height } = this.host.screen;
    const r = this.radius;
    const half = this.paddleWidth / 2;
    const box = (l: number, t: number, rr: number, b: number): [number, number, number, number] => [Math.round(l), Math.round(t), Math.round(rr), Math.round(b)];
    const children: ViewNode[] = [
      { cls: "android.view.View", key: "lives", bounds: box(width * 0.04, height * 0.02, width * 0.5, height * 0.06), text: `LIVES ${this.lives}`, desc: "Lives" },
      { cls: "android.view.View", key: "caught", bounds: box(width * 0.6, height * 0.02, width, height * 0.06), text: `CAUGHT ${this.caught}`, desc: "Caught" },
      { cls: "android.view.View", key: "ball", bounds: box(this.ballX - r, this.ballY - r, this.ballX + r + 1, this.ballY + r + 1), desc: "Ball" },
      { cls: "android.view.View", key: "paddle", bounds: box(this.paddleX - half, this.paddleY, this.paddleX + half, this.paddleY + this.paddleHeight), desc: "Paddle" },
    ];
    if (this.over) children.push({ cls: "android.view.View", key: "game_over", bounds: box(0, height * 0.4, width, height * 0.5), text: "GAME OVER" });
    return { cls: "com.example.catchtheball.GameView", id: "app:id/game_view", bounds: [0, 0, width, height], focusable: true, children };
  }
}

export const createCatchTheBall: AppFactory = (host) => new CatchTheBall(host);
