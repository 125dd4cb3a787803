/** Logcat filter specs (`Tag:Prio`, `*:S`, `-s`), applied like liblog: a tag's own rule wins, else the `*` rule. */

const LEVELS = ["V", "D", "I", "W", "E", "F", "S"] as const;
type Level = (typeof LEVELS)[number];
const RANK: Record<Level, number> = { V: 0, D: 1, I: 2, W: 3, E: 4, F: 5, S: 6 };

export class LogFilter {
  private readonly byTag = new Map<string, number>();
  private defaultRank = 0;

  /** Adds one spec; returns false when it is not a valid filter expression. */
  add(spec: string): boolean {
    const colon = spec.lastIndexOf(":");
    const tag = colon < 0 ? spec : spec.slice(0, colon);
    const level = colon < 0 ? "V" : spec.slice(colon + 1).toUpperCase();
    if (tag === "" || !(LEVELS as readonly string[]).includes(level)) return false;
    const rank = RANK[level as Level];
    if (tag === "*") this.defaultRank = rank;
    else this.byTag.set(tag, rank);
    return true;
  }

  silenceByDefault(): void {
    this.defaultRank = RANK.S;
  }

  accepts(tag: string, priority: string): boolean {
    const min = this.byTag.get(tag) ?? this.defaultRank;
    const rank = RANK[priority as Level] ?? 0;
    return min < RANK.S && rank >= min;
  }
}
