/**
 * Which task servers the farm may call. A family file names its task server URL, so without a guard whoever writes
 * task files could make workers POST episode data to any address they reach (cloud metadata endpoints included).
 *
 * Always allowed: loopback (localhost, 127.0.0.0/8, ::1). Other hosts only when the worker's config lists them
 * (`allowedHosts`: exact names, `*.suffix`, addresses, CIDR ranges, or `*` for any host). Link-local and cloud
 * metadata addresses and names are refused unless an entry names them exactly (`*` does not count). Every address a
 * name resolves to is checked again when connecting (a name cannot be re-pointed between check and use).
 * (The remote policy's guard in @farm/policy follows the same rules; it sits after this lib in the order.)
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import net from "node:net";
import { coerceError } from "@farm/errors";
import { TaskProtocolError } from "./errors.ts";

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

const ipType = (a: string): "ipv4" | "ipv6" | undefined => (net.isIPv4(a) ? "ipv4" : net.isIPv6(a) ? "ipv6" : undefined);

/** Lower-case, no brackets, no trailing dot; IPv4-mapped IPv6 as IPv4. */
function normalizeHost(host: string): string {
  let h = host.toLowerCase().replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "");
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
  if (mapped) h = mapped[1]!;
  return h;
}

export interface TaskServerHostGuard {
  /** Throws TaskProtocolError(url_not_allowed) unless the host may be contacted (names: before resolution). */
  checkHost(host: string): void;
  /** A `lookup` for http.request that refuses disallowed addresses when connecting. */
  lookup: typeof dnsLookup;
}

/** Parses the allow-list (throws TaskProtocolError(bad_ref) naming a bad entry). `where` prefixes messages. */
export function taskServerHostGuard(entries: readonly string[], where: string): TaskServerHostGuard {
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
      if (prefix > (type === "ipv4" ? 32 : 128)) throw new TaskProtocolError("bad_ref", `${where}: allowed host '${raw}' has a prefix longer than the address`);
      explicit.addSubnet(addr, prefix, type);
    } else if (/^\*\.[a-z0-9.-]+$/.test(e)) suffixes.push(e.slice(1));
    else if (/^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/.test(e)) names.add(e);
    else throw new TaskProtocolError("bad_ref", `${where}: allowed host '${raw}' is not a host name, address, range, '*.suffix' or '*'`);
  }
  const listed = entries.map((e) => e.trim()).filter(Boolean);
  const refuse = (host: string, why: string) =>
    new TaskProtocolError("url_not_allowed", `${where}: host ${JSON.stringify(host.slice(0, 100))} ${why}; allowed: loopback${listed.length ? `, ${listed.slice(0, 10).join(", ")}` : ""} (add it to the worker's task server allow-list)`);

  const addressAllowed = (a: string, type: "ipv4" | "ipv6"): boolean => explicit.check(a, type) || (!DANGEROUS.check(a, type) && (any || LOOPBACK.check(a, type)));
  const nameAllowed = (h: string): "listed" | "loopback-name" | false => {
    if (h === "localhost") return "loopback-name";
    if (names.has(h)) return "listed";
    if (METADATA_NAMES.has(h)) return false;
    if (suffixes.some((s) => h.endsWith(s) && h.length > s.length)) return "listed";
    return any ? "listed" : false;
  };

  const checkHost = (host: string): void => {
    const h = normalizeHost(host);
    const type = ipType(h);
    if (type) {
      if (!addressAllowed(h, type)) throw refuse(h, DANGEROUS.check(h, type) ? "is a link-local / cloud metadata address" : "is not on the task server allow-list");
      return;
    }
    if (!nameAllowed(h)) throw refuse(h, METADATA_NAMES.has(h) ? "is a cloud metadata name" : "is not on the task server allow-list");
  };

  const checkAddress = (host: string, address: string): void => {
    const h = normalizeHost(host);
    const a = normalizeHost(address);
    const type = ipType(a);
    if (!type) throw refuse(h, `resolved to ${JSON.stringify(a.slice(0, 60))}, not an address`);
    if (explicit.check(a, type)) return;
    if (DANGEROUS.check(a, type)) throw refuse(h, `resolves to ${a}, a link-local / cloud metadata address`);
    if (nameAllowed(h) === "loopback-name" && !LOOPBACK.check(a, type)) throw refuse(h, `resolves to ${a}, which is not loopback`);
    if (ipType(h) && !addressAllowed(a, type)) throw refuse(h, "is not on the task server allow-list");
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

  return { checkHost, lookup };
}

/** A URL for messages: no user info, no query values (they may carry credentials). */
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
