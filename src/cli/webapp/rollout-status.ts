/**
 * `devctl webapp rollout status NAME`: waits until the WebApp's latest spec is rolled out, as `kubectl rollout status`
 * waits for a Deployment. Exit 0 once rolled out; 1 when the rollout failed (the WebApp is Stalled: its reason and
 * message are printed), the WebApp is being deleted, or --timeout passed.
 *
 * Properties:
 * - Rolled out means: the operator has reported on this generation (status.observedGeneration = generation) and
 *   Ready is True; after `rollout restart`, also that its newest revision (status.rollouts) is the restart's. A
 *   WebApp with no status yet is waiting (for an operator), never done: kstatus alone would call a
 *   resource without conditions Current.
 * - Progress goes to stderr, one line each time the message changes; the verdict goes to stdout (success) or is the
 *   error (failure).
 * - --watch=false prints where the rollout is and exits: 0 unless it failed.
 * - Polls the WebApp once a second (a GET).
 */
import { defineCommand } from "citty";
import { findCondition } from "../../api/conditions.ts";
import { RESTARTED_AT_ANNOTATION, type WebAppObject } from "../../api/webapp.ts";
import { durationFlag, parseDuration } from "../_flags.ts";
import { clientFrom, clusterArgs, namespaceOf } from "../_global.ts";
import { info, out } from "../_output.ts";
import { getWebApp } from "./_webapp-io.ts";

export type RolloutProgress = { state: "done" | "failed" | "waiting"; message: string };

const POLL_MS = 1000;

/** Where a WebApp's rollout is, from the WebApp alone (see the module doc). */
export function rolloutProgress(w: WebAppObject): RolloutProgress {
  const name = `webapp "${w.metadata.name}"`;
  if (w.metadata.deletionTimestamp) return { state: "failed", message: `${name} is being deleted` };
  const { generation } = w.metadata;
  const observed = w.status?.observedGeneration;
  const conditions = w.status?.conditions;
  if (observed === undefined || !conditions?.length)
    return {
      state: "waiting",
      message: `Waiting for the operator to report on ${name} (is one running and watching namespace ${w.metadata.namespace}?)`,
    };
  if (generation !== undefined && observed < generation)
    return {
      state: "waiting",
      message: `Waiting for the operator to observe generation ${generation} of ${name} (it reports ${observed})`,
    };
  // A restart asked for (rollout restart) that the operator has not rolled out yet: the Ready it reports is the old
  // pods'. Only an operator that records revisions (status.rollouts) can say; with an older one this is not checked.
  const restart = w.metadata.annotations?.[RESTARTED_AT_ANNOTATION];
  const newest = w.status?.rollouts?.at(-1);
  if (restart !== undefined && newest && newest.restartedAt !== restart)
    return { state: "waiting", message: `Waiting for the operator to roll out the restart of ${name} (${restart})` };
  const stalled = findCondition(conditions, "Stalled");
  if (stalled?.status === "True")
    return { state: "failed", message: `${name} rollout failed: ${stalled.reason}: ${stalled.message}` };
  const ready = findCondition(conditions, "Ready");
  if (ready?.status === "True") return { state: "done", message: `${name} successfully rolled out` };
  return { state: "waiting", message: `Waiting for ${name} rollout to finish: ${ready?.message ?? "not ready yet"}` };
}

export default defineCommand({
  meta: {
    name: "status",
    description: `Wait until a WebApp is rolled out

Exit 0 once the operator reports the WebApp's latest spec Ready; 1 when the rollout
failed (the WebApp is Stalled: the reason is printed), or after --timeout.

Examples:
  devctl webapp rollout status my-service
  devctl webapp rollout status my-service -n team-a --timeout 5m`,
  },
  args: {
    name: { type: "positional", description: "Name of the WebApp", required: true },
    ...clusterArgs,
    timeout: durationFlag({ default: "0s", description: "How long to wait before giving up (0s: no limit)" }),
    watch: { type: "boolean", default: true, description: "Wait for the rollout; --watch=false prints where it is" },
  },
  async run({ args }) {
    const timeoutMs = parseDuration(args.timeout, "timeout");
    const client = await clientFrom(args);
    const namespace = namespaceOf(args, client);
    const deadline = timeoutMs > 0 ? Date.now() + timeoutMs : Number.POSITIVE_INFINITY;
    let last = "";
    for (;;) {
      const w = await getWebApp(client, args.name, namespace);
      const p = rolloutProgress(w);
      if (p.state === "failed") throw new Error(p.message);
      if (p.state === "done") return out(p.message);
      if (p.message !== last) (args.watch ? info : out)((last = p.message));
      if (!args.watch) return;
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(`timed out after ${args.timeout} waiting for webapp "${args.name}" to roll out: ${p.message}`);
      await Bun.sleep(Math.min(POLL_MS, left));
    }
  },
});
