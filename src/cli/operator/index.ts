/** `devctl operator ...`: run, install, uninstall, status, logs and print the operator. */
import { defineCommand } from "citty";

export default defineCommand({
  meta: {
    name: "operator",
    description: `Run, install and inspect the WebApp operator

Examples:
  devctl operator install --wait
  devctl operator status
  devctl operator logs -f
  devctl operator manifests | kubectl apply --server-side -f -
  devctl operator run --leader-elect=false`,
  },
  subCommands: {
    run: () => import("./run.ts").then((m) => m.default),
    install: () => import("./install.ts").then((m) => m.default),
    uninstall: () => import("./uninstall.ts").then((m) => m.default),
    status: () => import("./status.ts").then((m) => m.default),
    manifests: () => import("./manifests.ts").then((m) => m.default),
    logs: () => import("./logs.ts").then((m) => m.default),
  },
});
