/** `devctl operator ...`: run, install, uninstall, status and print the operator. */
import { defineCommand } from "citty";

export default defineCommand({
  meta: { name: "operator", description: "Run, install and inspect the WebApp operator" },
  subCommands: {
    run: () => import("./run.ts").then((m) => m.default),
  },
});
