/** The devctl command tree. Subcommands are loaded only when named. */
import { defineCommand } from "citty";

export const devctl = defineCommand({
  meta: {
    name: "devctl",
    description:
      "Platform CLI and WebApp operator.\n\nExamples:\n  devctl operator install\n" +
      "  devctl webapp create my-service --image myregistry/myapp:v2.1.0 --replicas 5 --port 8080\n" +
      "  devctl webapp list -A",
  },
  subCommands: {
    completion: () => import("./completion.ts").then((m) => m.default),
    operator: () => import("./operator/index.ts").then((m) => m.default),
    version: () => import("./version.ts").then((m) => m.default),
    webapp: () => import("./webapp/index.ts").then((m) => m.default),
  },
});
