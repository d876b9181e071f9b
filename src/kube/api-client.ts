/**
 * client-node's generated, typed API classes (CoreV1Api, AppsV1Api, ...) running over our
 * Bun-native transport, through the extension point client-node offers for exactly this:
 * a configuration whose `httpApi` implements `send(request)`. TLS and auth therefore work under Bun
 * (docs/BUN-TLS.md), and these calls are counted by the same observer as every other request.
 */
import {
  createConfiguration,
  ResponseContext,
  ServerConfiguration,
  wrapHttpLibrary,
  type RequestContext,
} from "@kubernetes/client-node";
import type { Transport } from "./transport.ts";

type ApiConstructor<T> = new (config: ReturnType<typeof createConfiguration>) => T;

export function makeApiClient<T>(transport: Transport, Api: ApiConstructor<T>): T {
  const httpApi = wrapHttpLibrary({
    async send(ctx: RequestContext): Promise<ResponseContext> {
      const url = new URL(ctx.getUrl());
      const headers = ctx.getHeaders();
      const body = ctx.getBody();
      const res = await transport.send({
        method: ctx.getHttpMethod(),
        path: url.pathname + url.search,
        ...(body !== undefined && body !== null
          ? { body: body as string, contentType: headers["Content-Type"] ?? "application/json" }
          : {}),
        ...(headers.Accept ? { accept: headers.Accept } : {}),
        signal: ctx.getSignal(),
      });
      const data = Buffer.from(await res.arrayBuffer());
      const resHeaders: Record<string, string> = {};
      res.headers.forEach((v, k) => {
        resHeaders[k] = v;
      });
      return new ResponseContext(res.status, resHeaders, {
        text: async () => data.toString("utf8"),
        binary: async () => data,
        stream: () => null,
      });
    },
  });
  return new Api(createConfiguration({ baseServer: new ServerConfiguration(transport.server, {}), httpApi }));
}
