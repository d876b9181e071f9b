/** `devctl webapp ...`: list, get, describe, create, scale, roll out and delete WebApps, the way kubectl does. */
import { defineCommand } from "citty";

export default defineCommand({
  meta: {
    name: "webapp",
    description: `List, show, create, scale, restart and delete WebApps

Examples:
  devctl webapp create my-service --image myregistry/myapp:v2.1.0 --replicas 5 --port 8080
  devctl webapp list -A
  devctl webapp get my-service -o yaml`,
  },
  subCommands: {
    list: () => import("./list.ts").then((m) => m.default),
    get: () => import("./get.ts").then((m) => m.default),
    create: () => import("./create.ts").then((m) => m.default),
    delete: () => import("./delete.ts").then((m) => m.default),
    describe: () => import("./describe.ts").then((m) => m.default),
    scale: () => import("./scale.ts").then((m) => m.default),
    rollout: () => import("./rollout.ts").then((m) => m.default),
  },
});
