/** devctl entry point: nothing but the command tree. Heavy modules load inside the subcommands that use them. */
import { devctl } from "./cli/index.ts";
import { run } from "./cli/_run.ts";

process.exitCode = await run(devctl, process.argv.slice(2));
