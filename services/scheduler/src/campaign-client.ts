/**
 * One interface over the two ways to reach campaigns: a `Scheduler` on Redis directly (what the CLI
 * uses by default) or the scheduler's HTTP API (`HttpCampaignClient`, for hosts without Redis access).
 */
import type { CampaignInput } from "./campaign-spec.ts";
import type { CampaignStatus } from "./campaign-status.ts";
import { SchedulerError, type SchedulerErrorCode } from "./errors.ts";
import type { CampaignPolicyVersion, SubmitResult } from "./scheduler.ts";
import { coerceError } from "@farm/errors";

export interface CampaignClient {
  submit(input: CampaignInput): Promise<SubmitResult>;
  status(id: string): Promise<CampaignStatus>;
  list(limit?: number): Promise<CampaignStatus[]>;
  cancel(id: string): Promise<CampaignStatus>;
  /** Raises the campaign's current policy version (`POST /campaigns/:id/policy-version`). */
  raisePolicyVersion(id: string, body: { version: string | number }): Promise<CampaignPolicyVersion>;
  /** The campaign's current policy version (`GET /campaigns/:id/policy-version`). */
  policyVersion(id: string): Promise<CampaignPolicyVersion>;
  close(): Promise<void>;
}

/** The HTTP API as a CampaignClient. `token` is sent as `Authorization: Bearer …` on state changes. */
export class HttpCampaignClient implements CampaignClient {
  private readonly base: string;
  constructor(
    baseUrl: string,
    private readonly token?: string,
  ) {
    this.base = baseUrl.replace(/\/+$/, "");
  }

  async submit(input: CampaignInput): Promise<SubmitResult> {
    return this.call<SubmitResult>("POST", "/campaigns", input);
  }
  async status(id: string): Promise<CampaignStatus> {
    return this.call<CampaignStatus>("GET", `/campaigns/${encodeURIComponent(id)}`);
  }
  async list(limit = 100): Promise<CampaignStatus[]> {
    return (await this.call<{ campaigns: CampaignStatus[] }>("GET", `/campaigns?limit=${limit}`)).campaigns;
  }
  async cancel(id: string): Promise<CampaignStatus> {
    return this.call<CampaignStatus>("POST", `/campaigns/${encodeURIComponent(id)}/cancel`);
  }
  async raisePolicyVersion(id: string, body: { version: string | number }): Promise<CampaignPolicyVersion> {
    return this.call<CampaignPolicyVersion>("POST", `/campaigns/${encodeURIComponent(id)}/policy-version`, body);
  }
  async policyVersion(id: string): Promise<CampaignPolicyVersion> {
    return this.call<CampaignPolicyVersion>("GET", `/campaigns/${encodeURIComponent(id)}/policy-version`);
  }
  async close(): Promise<void> {}

  private async call<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    // Every request: a server reachable beyond loopback needs the token for reads too.
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    let res: Response;
    try {
      res = await fetch(this.base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (e) {
      throw new Error(`cannot reach the scheduler API at ${this.base}: ${coerceError(e).message}`, { cause: e });
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new Error(`scheduler API ${method} ${path}: HTTP ${res.status}, not JSON: ${text.slice(0, 200)}`);
    }
    if (!res.ok) {
      const err = (json as { error?: { code?: string; message?: string } }).error;
      throw new SchedulerError((err?.code ?? "SPEC_INVALID") as SchedulerErrorCode, err?.message ?? `HTTP ${res.status}`);
    }
    return json as T;
  }
}
