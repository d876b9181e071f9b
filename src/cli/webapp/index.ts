/** `devctl webapp ...`: list, get and create WebApps, the way kubectl does. */
import { defineCommand } from "citty";

export default defineCommand({
  meta: {
    name: "webapp",
    description: `List, show and create WebApps

Examples:
  devctl webapp create my-service --image myregistry/myapp:v2.1.0 --replicas 5 --port 8080
  devctl webapp list -A
  devctl webapp get my-service -o yaml`,
  },
  subCommands: {
    list: () => import("./list.ts").then((m) => m.default),
    get: () => import("./get.ts").then((m) => m.default),
    create: () => import("./create.ts").then((m) => m.default),
  },
});
