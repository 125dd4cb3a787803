/**
 * Wall-clock arithmetic in the device's time zone (`persist.sys.timezone`, an Olson ID): broken-down
 * local time for `date` and `ls -l`, and the reverse for `date MMDDhhmm[[CC]YY][.ss]`. Uses the ICU
 * time-zone data Node ships with; an ID it does not know reads as UTC (as bionic falls back to GMT).
 */

export interface LocalTime {
  year: number;
  /** 1..12 */
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  ms: number;
  /** 0 = Sunday */
  weekday: number;
  /** Minutes east of UTC. */
  offsetMinutes: number;
  /** `UTC`, `EST`, `GMT+05:30`, … */
  abbreviation: string;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** Whether Node's ICU knows the zone (`service call alarm 3` refuses the others, as AlarmManager does). */
export function isKnownTimeZone(tz: string): boolean {
  if (tz === "" || tz.length > 64) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: isKnownTimeZone(tz) ? tz : "UTC",
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
      weekday: "short",
      timeZoneName: "short",
    });
    if (formatters.size > 64) formatters.clear();
    formatters.set(tz, f);
  }
  return f;
}

const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

export function localTime(epochMs: number, tz: string): LocalTime {
  const parts: Record<string, string> = {};
  for (const p of formatter(tz).formatToParts(new Date(epochMs))) parts[p.type] = p.value;
  const year = Number(parts.year);
  const month = Number(parts.month);
  const day = Number(parts.day);
  const hour = Number(parts.hour);
  const minute = Number(parts.minute);
  const second = Number(parts.second);
  const ms = ((epochMs % 1000) + 1000) % 1000;
  const asUtc = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  const offsetMinutes = Math.round((asUtc - epochMs) / 60_000);
  let abbreviation = parts.timeZoneName ?? "UTC";
  if (abbreviation === "GMT" && offsetMinutes === 0 && (tz === "UTC" || tz === "Etc/UTC" || !isKnownTimeZone(tz))) abbreviation = tz === "UTC" || tz === "Etc/UTC" ? "UTC" : "GMT";
  return { year, month, day, hour, minute, second, ms, weekday: Math.max(0, WEEKDAYS.indexOf(parts.weekday ?? "Sun")), offsetMinutes, abbreviation };
}

/** The epoch ms of a local wall-clock time in `tz` (the earlier instant when the time occurs twice). */
export function fromLocalTime(tz: string, year: number, month: number, day: number, hour: number, minute: number, second: number): number {
  const guess = Date.UTC(year, month - 1, day, hour, minute, second);
  // Two rounds settle the offset across a DST change.
  let t = guess - localTime(guess, tz).offsetMinutes * 60_000;
  t = guess - localTime(t, tz).offsetMinutes * 60_000;
  return t;
}

/** `+0000`, `-0500`, `+0530`. */
export function offsetString(offsetMinutes: number): string {
  const sign = offsetMinutes < 0 ? "-" : "+";
  const a = Math.abs(offsetMinutes);
  return `${sign}${String(Math.floor(a / 60)).padStart(2, "0")}${String(a % 60).padStart(2, "0")}`;
}
