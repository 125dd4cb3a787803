/**
 * @module @farm/outbound-http
 * Which hosts the farm may call when a job or a task file names the URL (a remote policy, a task server): without
 * a guard, whoever writes them could make workers POST to any address they reach, cloud metadata endpoints included.
 *
 * Allow-list entries:
 *   policy.example.com     that host name exactly          *.models.example.com   any name under it
 *   10.1.2.3 / fd00::5     that address                    10.0.0.0/8 / fd00::/8  addresses in the range
 *   *                      any host (still not the metadata ranges below)
 * Always allowed: loopback (localhost, 127.0.0.0/8, ::1). Refused unless an entry names them exactly (an exact
 * name, address or range — `*` does not count): link-local 169.254.0.0/16 and fe80::/10, 100.100.100.200,
 * fd00:ec2::254, 0.0.0.0/8, ::, metadata.google.internal, metadata, metadata.goog, instance-data. Every address a
 * name resolves to is checked again when connecting (a name cannot be re-pointed between check and use).
 *
 * The caller's errors: each user names its own error for a refused host and for a bad entry, and the words of its
 * messages (which list, how to add a host).
 *
 *   const guard = hostGuard(entries, { refused: (m) => new UrlNotAllowedError(m), badEntry: (m) => new RangeError(`item ${m}`),
 *     notListed: "is not in the remote policy allow-list", addHint: "FARM_POLICY_ALLOWED_HOSTS" });
 *   guard.checkHost(new URL(url).hostname); http.request(url, { lookup: guard.lookup });
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import net from "node:net";
import { coerceError } from "@farm/errors";

const METADATA_NAMES = new Set(["metadata.google.internal", "metadata", "metadata.goog", "instance-data", "instance-data.ec2.internal"]);

function blockList(entries: [string, number, "ipv4" | "ipv6"][]): net.BlockList {
  const b = new net.BlockList();
  for (const [addr, prefix, type] of entries) b.addSubnet(addr, prefix, type);
  return b;
}

const LOOPBACK = blockList([["127.0.0.0", 8, "ipv4"], ["::1", 128, "ipv6"]]);
const DANGEROUS = blockList([
  ["169.254.0.0", 16, "ipv4"],
  ["fe80::", 10, "ipv6"],
  ["100.100.100.200", 32, "ipv4"],
  ["fd00:ec2::254", 128, "ipv6"],
  ["0.0.0.0", 8, "ipv4"],
  ["::", 128, "ipv6"],
]);

/** Host names without brackets, lower-case, no trailing dot; IPv4-mapped IPv6 as IPv4. */
export function normalizeHost(host: string): string {
  let h = host.toLowerCase().replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "");
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
  if (mapped) h = mapped[1]!;
  return h;
}

const ipType = (a: string): "ipv4" | "ipv6" | undefined => (net.isIPv4(a) ? "ipv4" : net.isIPv6(a) ? "ipv6" : undefined);

export interface HostGuardOptions {
  /** The error for a host that may not be contacted, from the whole message. */
  refused(message: string): Error;
  /** The error for an entry that is no host name, address, range, `*.suffix` or `*`: `message` starts with the entry quoted. */
  badEntry(message: string): Error;
  /** Why a host no entry allows is refused, e.g. "is not in the remote policy allow-list". */
  notListed: string;
  /** What to add a host to, in messages: "(add it to <addHint>)". */
  addHint: string;
  /** Put before every refusal message (e.g. the file that names the URL). */
  where?: string;
}

export interface HostGuard {
  /** Throws `refused` unless the URL's host may be contacted (names: before resolution). */
  checkHost(host: string): void;
  /** Throws `refused` unless `address` (a resolved address of `host`) may be contacted. */
  checkAddress(host: string, address: string): void;
  /** A `lookup` for http.request that refuses disallowed addresses at connection time. */
  lookup: typeof dnsLookup;
  /** The entries, for messages. */
  readonly entries: readonly string[];
}

/** Parses the operator's entries (throws `badEntry` naming a bad one). */
export function hostGuard(entries: readonly string[], o: HostGuardOptions): HostGuard {
  let any = false;
  const names = new Set<string>();
  const suffixes: string[] = [];
  const explicit = new net.BlockList();
  for (const raw of entries) {
    const e = raw.trim().toLowerCase();
    if (e === "") continue;
    if (e === "*") {
      any = true;
      continue;
    }
    const cidr = /^(.+)\/(\d{1,3})$/.exec(e);
    const addr = normalizeHost(cidr ? cidr[1]! : e);
    const type = ipType(addr);
    if (type) {
      const prefix = cidr ? Number(cidr[2]) : type === "ipv4" ? 32 : 128;
      if (prefix > (type === "ipv4" ? 32 : 128)) throw o.badEntry(`'${raw}' has a prefix longer than the address`);
      explicit.addSubnet(addr, prefix, type);
    } else if (cidr) {
      throw o.badEntry(`'${raw}' is not an address range (e.g. 10.0.0.0/8)`);
    } else if (/^\*\.[a-z0-9.-]+$/.test(e)) {
      suffixes.push(e.slice(1));
    } else if (/^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/.test(e)) {
      names.add(e);
    } else {
      throw o.badEntry(`'${raw}' is not a host name, address, range, '*.suffix' or '*'`);
    }
  }
  const listed = entries.map((e) => e.trim()).filter(Boolean);
  const where = o.where ? `${o.where}: ` : "";
  const notListed = o.notListed;
  const refuse = (host: string, why: string) =>
    o.refused(`${where}host ${JSON.stringify(host.slice(0, 100))} ${why}; allowed: loopback${listed.length ? `, ${listed.slice(0, 10).join(", ")}` : ""} (add it to ${o.addHint})`);

  const addressAllowed = (a: string, type: "ipv4" | "ipv6"): boolean => {
    if (explicit.check(a, type)) return true; // named by the operator: even a dangerous range
    if (DANGEROUS.check(a, type)) return false;
    return any || LOOPBACK.check(a, type);
  };
  const nameAllowed = (h: string): "listed" | "loopback-name" | false => {
    if (h === "localhost") return "loopback-name";
    if (names.has(h)) return "listed";
    if (METADATA_NAMES.has(h)) return false; // only an exact entry (above) lets these through
    if (suffixes.some((s) => h.endsWith(s) && h.length > s.length)) return "listed";
    return any ? "listed" : false;
  };

  const checkHost = (host: string): void => {
    const h = normalizeHost(host);
    const type = ipType(h);
    if (type) {
      if (!addressAllowed(h, type)) throw refuse(h, DANGEROUS.check(h, type) ? "is a link-local / cloud metadata address" : notListed);
      return;
    }
    if (!nameAllowed(h)) throw refuse(h, METADATA_NAMES.has(h) ? "is a cloud metadata name" : notListed);
  };

  const checkAddress = (host: string, address: string): void => {
    const h = normalizeHost(host);
    const a = normalizeHost(address);
    const type = ipType(a);
    if (!type) throw refuse(h, `resolved to ${JSON.stringify(a.slice(0, 60))}, not an address`);
    if (explicit.check(a, type)) return;
    if (DANGEROUS.check(a, type)) throw refuse(h, `resolves to ${a}, a link-local / cloud metadata address (DNS rebinding?)`);
    // `localhost` (allowed by default) must stay on loopback; a listed name may resolve anywhere else.
    if (nameAllowed(h) === "loopback-name" && !LOOPBACK.check(a, type)) throw refuse(h, `resolves to ${a}, which is not loopback`);
    if (ipType(h) && !addressAllowed(a, type)) throw refuse(h, notListed);
  };

  const lookup = ((hostname: string, options: unknown, callback: unknown) => {
    const cb = (typeof options === "function" ? options : callback) as (err: Error | null, address?: string | LookupAddress[], family?: number) => void;
    const opts = (typeof options === "function" ? {} : (options ?? {})) as { all?: boolean; family?: number };
    dnsLookup(hostname, { ...opts, all: true }, (err, addresses) => {
      if (err) return cb(err);
      try {
        if (addresses.length === 0) throw refuse(hostname, "resolves to no address");
        for (const a of addresses) checkAddress(hostname, a.address);
      } catch (e) {
        return cb(coerceError(e));
      }
      if (opts.all) cb(null, addresses);
      else cb(null, addresses[0]!.address, addresses[0]!.family);
    });
  }) as typeof dnsLookup;

  return { checkHost, checkAddress, lookup, entries: listed };
}

/** A URL for messages and logs: no user info, no query values (they may carry credentials). */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.username || u.password) {
      u.username = "***";
      u.password = "";
    }
    for (const k of [...u.searchParams.keys()]) u.searchParams.set(k, "***");
    return u.toString().replace(/%2A%2A%2A/g, "***");
  } catch {
    return "(unparseable URL)";
  }
}

/** An answer read up to a bound. */
export interface BoundedAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body, or its first `maxBytes` bytes when `tooLarge`. */
  text: string;
  tooLarge: boolean;
  /** Bytes read (or declared, when refused by its content-length). */
  size: number;
}

/**
 * Reads `res` (an http.request callback's response) up to `maxBytes`: a declared content-length over it is refused
 * before reading, a body growing past it is cut there; either way the connection is dropped and `done` gets
 * `tooLarge`. A broken or aborted answer goes to `failed` (aborted: an Error with code ECONNRESET).
 */
export function readBoundedAnswer(res: IncomingMessage, maxBytes: number, done: (answer: BoundedAnswer) => void, failed: (error: Error) => void): void {
  const status = res.statusCode ?? 0;
  const declared = Number(res.headers["content-length"] ?? NaN);
  const chunks: Buffer[] = [];
  let size = 0;
  const finish = (tooLarge: boolean) => done({ status, headers: res.headers, text: Buffer.concat(chunks).toString("utf8"), tooLarge, size });
  if (Number.isFinite(declared) && declared > maxBytes) {
    size = declared;
    finish(true);
    res.destroy();
    return;
  }
  res.on("data", (c: Buffer) => {
    size += c.length;
    if (size > maxBytes) {
      chunks.push(c.subarray(0, Math.max(0, maxBytes - (size - c.length))));
      finish(true);
      res.destroy();
      return;
    }
    chunks.push(c);
  });
  res.on("end", () => finish(false));
  res.on("error", (e) => failed(e));
  res.on("aborted", () => failed(Object.assign(new Error("connection closed while reading the answer"), { code: "ECONNRESET" })));
}
