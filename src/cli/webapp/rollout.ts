/** `devctl webapp rollout ...`: what `kubectl rollout` does for a Deployment, for a WebApp's pods. */
import { defineCommand } from "citty";

export default defineCommand({
  meta: {
    name: "rollout",
    description: `Manage the rollout of a WebApp's pods

Examples:
  devctl webapp rollout restart my-service
  devctl webapp rollout status my-service --timeout 5m
  devctl webapp rollout history my-service
  devctl webapp rollout undo my-service --to-revision 2`,
  },
  subCommands: {
    history: () => import("./rollout-history.ts").then((m) => m.default),
    restart: () => import("./rollout-restart.ts").then((m) => m.default),
    status: () => import("./rollout-status.ts").then((m) => m.default),
    undo: () => import("./rollout-undo.ts").then((m) => m.default),
  },
});
