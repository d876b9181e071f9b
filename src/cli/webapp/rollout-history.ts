/**
 * `devctl webapp rollout history NAME`: the WebApp's rollout history (status.rollouts, written by the operator), as
 * `kubectl rollout history` lists a Deployment's revisions; one GET. --revision N shows one record in full;
 * -o yaml|json prints the records as they are stored.
 */
import { defineCommand } from "citty";
import { type RolloutRecord, recordState } from "../../api/rollout-history.ts";
import type { WebAppObject } from "../../api/webapp.ts";
import { toYaml } from "../../api/yaml.ts";
import { formatTable, humanDuration } from "../../printers/format.ts";
import { UsageError } from "../_errors.ts";
import { parseChoice, parsePositiveInt, typed } from "../_flags.ts";
import { clientFrom, clusterArgs, namespaceOf } from "../_global.ts";
import { getWebApp } from "./_webapp-io.ts";

const FORMATS = ["table", "yaml", "json"] as const;
export const HISTORY_HEADERS = ["REVISION", "IMAGE", "RESULT", "TOOK", "AGE", "NOTE"] as const;

/** How long a revision took to become Ready, or to fail; empty while neither. */
function took(r: RolloutRecord): string {
  const end = r.readyAt ?? r.failedAt;
  return end ? humanDuration(Date.parse(end) - Date.parse(r.startedAt)) : "";
}

/** The history table of a WebApp, oldest first (pure: `now` is given); a sentence when it has none. */
export function historyTable(w: WebAppObject, now: number): string {
  const records = w.status?.rollouts ?? [];
  if (records.length === 0)
    return `No rollout history for webapp "${w.metadata.name}" yet (the operator records a revision when it rolls one out)`;
  const rows = records.map((r, i) => {
    const notes = [
      r.restartedAt ? "restart" : "",
      r.revision === w.status?.lastReadyRevision ? "last ready" : "",
      i === records.length - 1 ? "current" : "",
    ].filter(Boolean);
    return [
      String(r.revision),
      r.image,
      recordState(r, i === records.length - 1),
      took(r),
      humanDuration(now - Date.parse(r.startedAt)),
      notes.join(", "),
    ];
  });
  return formatTable([[...HISTORY_HEADERS], ...rows]);
}

/** The record of `revision` in the WebApp's history; a UsageError naming `flag` and the revisions it has when none. */
export function recordNamed(w: WebAppObject, revision: number, flag: string): RolloutRecord {
  const records = w.status?.rollouts ?? [];
  const r = records.find((x) => x.revision === revision);
  if (r) return r;
  const known = records.map((x) => x.revision).join(", ") || "none";
  throw new UsageError(`${flag} ${revision}: webapp "${w.metadata.name}" has no such revision (it has: ${known})`);
}

/** One record in full, as `kubectl rollout history --revision N` shows one revision. */
export function revisionDetail(w: WebAppObject, revision: number): string {
  const records = w.status?.rollouts ?? [];
  const r = recordNamed(w, revision, "--revision");
  const state = recordState(r, r === records[records.length - 1]);
  return [
    `webapp "${w.metadata.name}" revision ${r.revision}: ${state}`,
    `  Image:       ${r.image}`,
    `  Digest:      ${r.digest}`,
    ...(r.restartedAt ? [`  Restarted:   ${r.restartedAt}`] : []),
    `  Started:     ${r.startedAt}`,
    ...(r.readyAt ? [`  Ready:       ${r.readyAt}`] : []),
    ...(r.failedAt ? [`  Failed:      ${r.failedAt} (${r.reason})`, `  Message:     ${r.message ?? ""}`] : []),
  ].join("\n");
}

export default defineCommand({
  meta: {
    name: "history",
    description: `Show the rollout history of a WebApp

One row per pod template the operator rolled out (the last 10): its image, whether it
became Ready or how it failed, and how long that took.

Examples:
  devctl webapp rollout history my-service
  devctl webapp rollout history my-service --revision 3`,
  },
  args: {
    name: { type: "positional", description: "Name of the WebApp", required: true },
    ...clusterArgs,
    revision: typed({ type: "string", description: "Show this revision in full" }, (v) =>
      parsePositiveInt(v, "--revision"),
    ),
    output: typed(
      { type: "string", alias: "o", default: "table", description: "Output format: table, yaml or json" },
      (v) => parseChoice(v, "output", FORMATS),
    ),
  },
  async run({ args }) {
    const revision = args.revision === undefined ? undefined : parsePositiveInt(args.revision, "--revision");
    const output = parseChoice(args.output, "output", FORMATS);
    const client = await clientFrom(args);
    const namespace = namespaceOf(args, client);
    const w = await getWebApp(client, args.name, namespace);
    const records = w.status?.rollouts ?? [];
    let text: string;
    if (output === "json") text = JSON.stringify(records, null, 2);
    else if (output === "yaml") text = toYaml(records).trimEnd();
    else text = revision === undefined ? historyTable(w, Date.now()) : revisionDetail(w, revision);
    process.stdout.write(`${text}\n`);
  },
});
