/**
 * The scheduler's HTTP API as an OpenAPI 3.1 document (`GET /openapi.json`). Request bodies and query
 * parameters come from the zod schemas that validate them (zod's own `z.toJSONSchema`, JSON Schema 2020-12,
 * which OpenAPI 3.1 uses as is), so the document cannot drift from validation. What JSON Schema cannot say
 * (zod refinements: a frameEncoding that parses, no user:password@ in a policy URL) is in the descriptions.
 * Answers are described by the schemas below (documentation only: the scheduler builds them itself).
 */
import { z } from "zod";
import { campaignInputSchema, campaignListQuerySchema } from "./campaign-spec.ts";
import { webPagesOpenApi } from "./web-pages.ts";
import { raiseVersionInputSchema } from "@farm/queue";
import { operatorOpenApi } from "./operator-routes.ts";

const errorSchema = z.strictObject({
  error: z.strictObject({ code: z.string().describe("stable error code, e.g. SPEC_INVALID, TASK_UNKNOWN, NOT_FOUND"), message: z.string() }),
});

const campaignStatusSchema = z
  .looseObject({
    id: z.string(),
    state: z.string().describe("running | finished | cancelled"),
    spec: z.looseObject({ id: z.string(), taskId: z.string(), taskHash: z.string(), policy: z.looseObject({ spec: z.string() }), episodes: z.int() }).describe("the submitted campaign without its goals"),
    goals: z.int().optional().describe("how many goals the episodes cycle through (absent: the task's description)"),
    episodes: z.int(),
    enqueued: z.int(),
    completed: z.int(),
    failed: z.int(),
    finished: z.int(),
    inFlight: z.int(),
    running: z.int(),
    waiting: z.int(),
    createdAt: z.string(),
    finishedAt: z.string().optional(),
    episodesPerSec: z.number(),
    etaSec: z.number().nullable(),
    summary: z.looseObject({}).optional().describe("once finished: outcomes, causes, failures by code, mean reward and steps"),
    commits: z.looseObject({}),
  })
  .describe("CampaignStatus (services/scheduler/src/campaign-status.ts)");

const submitResultSchema = z.strictObject({ created: z.boolean(), campaign: campaignStatusSchema });
const listSchema = z.strictObject({ campaigns: z.array(campaignStatusSchema) });
const policyVersionSchema = z
  .strictObject({ campaignId: z.string(), version: z.string().optional(), previous: z.string().optional(), raised: z.boolean().optional(), versions: z.int() })
  .describe("CampaignPolicyVersion (services/scheduler/src/scheduler.ts): the campaign's current policy version (absent: none raised), the one before a raise, whether the raise changed it, versions raised (the newest 1000 kept)");

/** A schema as it appears inside the document: without its own `$schema` (the document's dialect applies). */
function schemaOf(s: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(s, { io, unrepresentable: "any" }) as Record<string, unknown>;
  return rest;
}

const json = (ref: string) => ({ "application/json": { schema: { $ref: `#/components/schemas/${ref}` } } });
const errors = (...codes: number[]) => Object.fromEntries(codes.map((c) => [String(c), { description: HTTP_TEXT[c] ?? "error", content: json("Error") }]));
const HTTP_TEXT: Record<number, string> = {
  400: "bad request (invalid JSON, invalid campaign: the message names the field)",
  401: "token required (FARM_API_TOKEN as `Authorization: Bearer …`)",
  403: "forbidden (foreign Origin or Host, or a state change without the token)",
  404: "no such campaign or route",
  409: "conflict (e.g. the same id with a different spec, a task hash that does not match)",
  413: "body too large (1 MiB)",
};
const idParam = { name: "id", in: "path", required: true, schema: { type: "string", pattern: "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$" } };


export function openApiDocument(version: string): Record<string, unknown> {
  const limit = schemaOf(campaignListQuerySchema.shape.limit, "input");
  return {
    openapi: "3.1.0",
    info: { title: "Android episode farm: scheduler API", version, description: "Campaigns (task × policy × N episodes) over BullMQ. Errors are `{error: {code, message}}`. See services/scheduler/README.md." },
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    components: {
      schemas: {
        CampaignInput: { ...schemaOf(campaignInputSchema, "input"), description: "A campaign to submit. `policy`: random | scripted:<name> | module:<name> | http:<url> | http-batch:<url> (a URL without user:password@). `options.frameEncoding`: png, jpeg[:Q] or webp[:Q], optionally @WxH. `options.resetMode` start-snapshot is refused (400) for a task whose reset steps draw from the episode's seed (start_random_activity). `goals` (at most 10,000; episode i gets goals[i mod N]; each gives at least one of goal, gameConfig, params): `goal` is 1–2000 characters without control characters but tab and newline (default: the task's description; a task family's goal template rendered with the episode's parameters), required (400, `goals.<i>.goal: missing`) unless the task is a family; `params` (task families only, libs/task/FAMILIES.md; 400 `goals.<i>.params: …` otherwise) fixes that episode's parameters: an object of at most 64 names `[a-z][a-z0-9_]{0,63}` → a string of at most 2000 characters, a number or a boolean, each a parameter the family declares, of its type (a `choice` one of its items, an `int` an integer in its range); the family draws the others from the episode's seed; `gameConfig` is a JSON object of at most 4096 characters of JSON, the episode's RL_TASK_GAME_CONFIG, refused (400) with `options.resetMode` start-snapshot or for a task whose reset steps start no activity. `options.a11yEvery`: record the screen as a tree every N steps (0: never); `options.maxInvalidActions`: invalid agent answers that end the episode (0: no limit)." },
        CampaignStatus: schemaOf(campaignStatusSchema, "output"),
        SubmitResult: schemaOf(submitResultSchema, "output"),
        CampaignList: schemaOf(listSchema, "output"),
        RaiseVersion: { ...schemaOf(raiseVersionInputSchema, "input"), description: "A campaign's new current policy version: 1-128 printable characters, or a whole number (kept as its text). Versions only go forward: a lower whole number, or a version raised before, is 409 VERSION_CONFLICT." },
        CampaignPolicyVersion: schemaOf(policyVersionSchema, "output"),
        Error: schemaOf(errorSchema, "output"),
      },
      securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "FARM_API_TOKEN; required off loopback, and for state changes when a token is set" } },
    },
    security: [{}, { bearer: [] }],
    paths: {
      "/healthz": { get: { operationId: "health", summary: "liveness", security: [{}], responses: { "200": { description: "ok", content: { "text/plain": { schema: { type: "string" } } } } } } },
      "/metrics": { get: { operationId: "metrics", summary: "Prometheus exposition", responses: { "200": { description: "metrics", content: { "text/plain": { schema: { type: "string" } } } } } } },
      "/openapi.json": { get: { operationId: "openapi", summary: "this document", responses: { "200": { description: "OpenAPI 3.1", content: { "application/json": { schema: { type: "object" } } } } } } },
      "/campaigns": {
        get: {
          operationId: "listCampaigns",
          summary: "campaigns, newest first",
          parameters: [{ name: "limit", in: "query", required: false, schema: limit, description: "values outside 1…1000 are clamped; non-numbers mean 100" }],
          responses: { "200": { description: "campaigns", content: json("CampaignList") }, ...errors(401, 403) },
        },
        post: {
          operationId: "submitCampaign",
          summary: "submit a campaign (idempotent: the same campaign twice adds nothing)",
          requestBody: { required: true, content: json("CampaignInput") },
          responses: { "201": { description: "created", content: json("SubmitResult") }, "200": { description: "already there (same id and spec)", content: json("SubmitResult") }, ...errors(400, 401, 403, 409, 413) },
        },
      },
      "/campaigns/{id}": { get: { operationId: "campaignStatus", summary: "one campaign's status", parameters: [idParam], responses: { "200": { description: "status", content: json("CampaignStatus") }, ...errors(401, 403, 404) } } },
      "/campaigns/{id}/cancel": { post: { operationId: "cancelCampaign", summary: "cancel: waiting episodes are dropped, running ones stop at their next step", parameters: [idParam], responses: { "200": { description: "status after cancelling", content: json("CampaignStatus") }, ...errors(401, 403, 404) } } },
      "/campaigns/{id}/policy-version": {
        get: { operationId: "campaignPolicyVersion", summary: "the campaign's current policy version (issue 38: staleness of episodes)", parameters: [idParam], responses: { "200": { description: "current version", content: json("CampaignPolicyVersion") }, ...errors(401, 403, 404) } },
        post: {
          operationId: "raisePolicyVersion",
          summary: "raise the campaign's current policy version (a learner after an update); workers see it within a second",
          parameters: [idParam],
          requestBody: { required: true, content: json("RaiseVersion") },
          responses: { "200": { description: "the version now current", content: json("CampaignPolicyVersion") }, ...errors(400, 401, 403, 404, 409) },
        },
      },
      "/campaigns/{id}/stream/read": {
        post: {
          operationId: "readCampaignStream",
          summary: "committed episodes of the campaign's stream for a consumer of a consumer group (Redis XREADGROUP): its pending entries first, else new ones; never waits",
          parameters: [idParam],
          requestBody: { required: true, content: { "application/json": { schema: { type: "object", properties: { group: { type: "string" }, consumer: { type: "string" }, count: { type: "integer", minimum: 1, maximum: 1000 }, from: { type: "string", enum: ["pending", "new"] }, after: { type: "string", description: "with from=pending: entries after this id (default 0)" } }, required: ["group", "consumer"] } } } },
          responses: { "200": { description: "entries: {id, episodeId, file, host, outcome, cause, steps, reward, success?, groupIndex?, groupMember?, groupSize?, committedAtMs}", content: { "application/json": { schema: { type: "object", properties: { entries: { type: "array", items: { type: "object" } } }, required: ["entries"] } } } }, ...errors(400, 401, 403, 404) },
        },
      },
      "/campaigns/{id}/stream/ack": {
        post: {
          operationId: "ackCampaignStream",
          summary: "acknowledge stream entries for a consumer group (Redis XACK)",
          parameters: [idParam],
          requestBody: { required: true, content: { "application/json": { schema: { type: "object", properties: { group: { type: "string" }, ids: { type: "array", items: { type: "string" }, maxItems: 1000 } }, required: ["group", "ids"] } } } },
          responses: { "200": { description: "how many were pending", content: { "application/json": { schema: { type: "object", properties: { acked: { type: "integer" } }, required: ["acked"] } } } }, ...errors(400, 401, 403) },
        },
      },
      "/login": {
        get: { operationId: "loginPage", summary: "browser login form for the queue UI", security: [{}], responses: { "200": { description: "HTML form", content: { "text/html": { schema: { type: "string" } } } } } },
        post: { operationId: "login", summary: "browser login: form field `token`; sets a session cookie", security: [{}], requestBody: { content: { "application/x-www-form-urlencoded": { schema: { type: "object", properties: { token: { type: "string" } } } } } }, responses: { "303": { description: "logged in, redirect to /ui" }, "401": { description: "wrong token" } } },
      },
      "/logout": { post: { operationId: "logout", summary: "end the browser session", responses: { "303": { description: "logged out" } } } },
      "/ui": { get: { operationId: "queueUi", summary: "bull-board UI for the queues (HTML)", responses: { "200": { description: "HTML", content: { "text/html": { schema: { type: "string" } } } } } } },
      "/": { get: { operationId: "fleetPage", summary: "the fleet page (HTML): hosts, devices, campaigns", responses: { "200": { description: "HTML", content: { "text/html": { schema: { type: "string" } } } } } } },
      "/favicon.ico": { get: { operationId: "favicon", summary: "the fleet page's icon", responses: { "200": { description: "icon" }, "204": { description: "no icon" } } } },
      "/fleet/fleet.js": { get: { operationId: "fleetScript", summary: "the fleet page's script", responses: { "200": { description: "JavaScript", content: { "text/javascript": { schema: { type: "string" } } } } } } },
      ...webPagesOpenApi(),
      ...operatorOpenApi(),
      "/devices": {
        get: {
          operationId: "listDevices",
          summary: "the fleet's devices from the workers' heartbeats (the fleet page, `farm devices`)",
          responses: { "200": { description: "devices and how many heartbeats did not parse", content: { "application/json": { schema: { type: "object", properties: { devices: { type: "array", items: { type: "object" } }, invalid: { type: "integer" } }, required: ["devices", "invalid"] } } } } },
        },
      },
      "/devices/{worker}/{serial}/screen": {
        get: {
          operationId: "deviceScreen",
          summary: "a JPEG thumbnail of a device's screen, fetched from its worker (only the URL of its live heartbeat)",
          parameters: [
            { name: "worker", in: "path", required: true, schema: { type: "string" } },
            { name: "serial", in: "path", required: true, schema: { type: "string" } },
          ],
          responses: { "200": { description: "JPEG", content: { "image/jpeg": { schema: { type: "string", contentEncoding: "binary" } } } }, "404": { description: "no live heartbeat for that device" } },
        },
      },
    },
  };
}
