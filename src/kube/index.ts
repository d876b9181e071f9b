/** The Kubernetes client: config loading, the Bun-native transport, the REST client and errors. */
export { createKubeClient, clientFromTransport, resourcePath, PAGE_SIZE, type ClientOptions } from "./client.ts";
export { loadConnection, ConfigError, SERVICE_ACCOUNT_DIR, type Connection, type LoadOptions } from "./config.ts";
export { createTransport, type Transport } from "./transport.ts";
export * from "./errors.ts";
export type * from "./types.ts";
