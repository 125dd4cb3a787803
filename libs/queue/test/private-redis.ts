/**
 * A private Redis for one test file: started on a free port before its tests, with a client handed to `use`,
 * and stopped after them.
 */
import { after, before } from "node:test";
import { startRedis, type LocalRedis } from "@farm/local-services";
import { createRedisClient, type RedisClient } from "../src/index.ts";

export function privateRedis(use: (client: RedisClient) => void): void {
  let server: LocalRedis | undefined;
  let client: RedisClient | undefined;
  before(async () => {
    server = await startRedis();
    client = createRedisClient(server.url);
    use(client);
  });
  after(async () => {
    await client?.quit();
    await server?.close();
  });
}
