/**
 * `devctl webapp rollout undo NAME [--to-revision N]`: rolls a WebApp back to an earlier revision of its history by
 * setting its spec back, the explicit, GitOps-visible way (`kubectl rollout undo` of the Deployment would be
 * reverted by the operator at once: the WebApp is the source of truth).
 *
 * Properties:
 * - The target is --to-revision N, else the newest revision before the current one that became Ready.
 * - A record keeps a revision's image and the digest of its pod template (status.rollouts), and once it became Ready
 *   the spec fields that made that template (podSpec: image, env, resources, probes...). undo sets those fields
 *   back (the image alone for a record without podSpec), and first checks that this gives the revision's pod
 *   template again (podTemplateDigest, the operator's own function): when it does not (an image-only record, and
 *   other template fields changed since), it refuses and says so; --image-only sets the image anyway.
 * - Fields outside the pod template (replicas, autoscaling, expose, rollout) are never changed.
 * - One merge patch of those spec fields, conditioned on the resourceVersion read; nothing is sent when the spec
 *   already gives that template. --dry-run=client|server.
 * - A change made meanwhile is never overwritten: on a conflict undo reads the WebApp again. When its generation is
 *   the one planned from, only its status changed (the operator writes it while a rollout settles, which is when undo
 *   is run): undo plans again from what it read and retries, up to CONFLICT_RETRIES times. When the generation moved,
 *   someone changed the spec: undo stops, changes nothing, and says so.
 */
import { defineCommand } from "citty";
import { parseWebApp } from "../../api/parse.ts";
import { podSpecPatch, type RolloutRecord, withRecordPodSpec } from "../../api/rollout-history.ts";
import { SINGULAR, WEBAPP_RESOURCE, type WebAppObject } from "../../api/webapp.ts";
import { isConflict } from "../../kube/errors.ts";
import type { KubeClient } from "../../kube/types.ts";
import { podTemplateDigest } from "../../operator/desired.ts";
import { type DryRun, dryRunFlag, parsePositiveInt, typed } from "../_flags.ts";
import { clientFrom, clusterArgs, namespaceOf } from "../_global.ts";
import { out } from "../_output.ts";
import { recordNamed } from "./rollout-history.ts";
import { getWebApp, patchWebApp } from "./_webapp-io.ts";
import { DRY_RUN_NOTE } from "./delete.ts";

export type UndoPlan =
  | { kind: "patch"; record: RolloutRecord; spec: Record<string, unknown> }
  | { kind: "unchanged"; record: RolloutRecord };

/**
 * What undo does to `w` (pure): patch spec.image to the target's, or nothing. Why it cannot is an Error (exit 1), or a
 * UsageError (exit 2) for a --to-revision the history does not have.
 */
export function planUndo(w: WebAppObject, toRevision: number | undefined, imageOnly: boolean): UndoPlan {
  const name = `webapp "${w.metadata.name}"`;
  const parsed = parseWebApp(w);
  if (!parsed.ok)
    throw new Error(
      `${name} has an invalid spec (${parsed.issues[0]?.path}: ${parsed.issues[0]?.message}); fix it first`,
    );
  const record = targetOf(w, toRevision);
  const webapp = parsed.webapp;
  const current = podTemplateDigest(webapp);
  if (current === record.digest) return { kind: "unchanged", record };
  const target = withRecordPodSpec(webapp.spec, record);
  const restored = podTemplateDigest({ ...webapp, spec: target });
  if (restored === record.digest) return { kind: "patch", record, spec: podSpecPatch(webapp.spec, target) };
  if (imageOnly) return { kind: "patch", record, spec: { image: record.image } };
  throw new Error(
    `revision ${record.revision} differs from the current spec in more than the image, and its record keeps only ` +
      `the image (its pod template digest is ${record.digest}; with image ${record.image} the spec gives ` +
      `${restored}): re-apply the manifest of revision ${record.revision}, or pass --image-only to set spec.image ` +
      `to ${record.image}`,
  );
}

/** How many times undo plans again after a conflict that a status write caused (client-go's RetryOnConflict: 5). */
export const CONFLICT_RETRIES = 5;

/**
 * Reads the WebApp, plans undo and sends its patch; a conflict caused by a status write is planned again from a fresh
 * read (see the module doc). Returns the plan that was carried out.
 */
export async function undoWebApp(
  client: KubeClient,
  where: { name: string; namespace: string },
  how: { toRevision: number | undefined; imageOnly: boolean; dryRun: DryRun },
): Promise<UndoPlan> {
  let w = await getWebApp(client, where.name, where.namespace);
  for (let retries = 0; ; retries++) {
    const plan = planUndo(w, how.toRevision, how.imageOnly);
    if (plan.kind === "unchanged") return plan;
    const patch = { metadata: { resourceVersion: w.metadata.resourceVersion }, spec: plan.spec };
    try {
      await patchWebApp(client, where, patch, how.dryRun);
      return plan;
    } catch (e) {
      if (!isConflict(e) || retries >= CONFLICT_RETRIES) throw e;
    }
    const fresh = await getWebApp(client, where.name, where.namespace);
    const [was, now] = [w.metadata.generation, fresh.metadata.generation];
    if (now !== was)
      throw new Error(
        `webapp "${where.name}"'s spec changed while undo ran (generation ${was} -> ${now}), so nothing was changed: ` +
          `see what runs now with \`devctl webapp rollout history ${where.name}\` and run undo again`,
      );
    w = fresh;
  }
}

function targetOf(w: WebAppObject, toRevision: number | undefined): RolloutRecord {
  const name = `webapp "${w.metadata.name}"`;
  const records = w.status?.rollouts ?? [];
  if (records.length === 0)
    throw new Error(`${name} has no rollout history yet (devctl webapp rollout history shows it once it has)`);
  if (toRevision !== undefined) return recordNamed(w, toRevision, "--to-revision");
  const earlier = records.slice(0, -1).filter((r) => r.readyAt !== undefined);
  const r = earlier[earlier.length - 1];
  if (!r) {
    const current = records[records.length - 1];
    const why = current?.readyAt ? `only the current one (${current.revision}) became Ready` : "none became Ready";
    const known = records.map((x) => x.revision).join(", ");
    throw new Error(`${name} has no earlier Ready revision to go back to (revisions ${known}: ${why})`);
  }
  return r;
}

export default defineCommand({
  meta: {
    name: "undo",
    description: `Roll a WebApp back to an earlier revision

Sets the spec's pod template fields (image, env, resources, probes...) back to that
revision's, so the WebApp itself says what runs (a GitOps tool sees the change). Without --to-revision: the last revision before the current one
that became Ready. See the revisions with: devctl webapp rollout history NAME

Examples:
  devctl webapp rollout undo my-service
  devctl webapp rollout undo my-service --to-revision 3 --dry-run=server`,
  },
  args: {
    name: { type: "positional", description: "Name of the WebApp", required: true },
    ...clusterArgs,
    "to-revision": typed(
      { type: "string", description: "The revision to go back to (default: the last Ready before the current)" },
      (v) => parsePositiveInt(v, "--to-revision"),
    ),
    "image-only": {
      type: "boolean",
      default: false,
      description: "Set the revision's image even when other pod template fields changed since",
    },
    "dry-run": dryRunFlag("client: print what would change; server: the API server checks the change, stores nothing"),
  },
  async run({ args }) {
    const toRevision =
      args["to-revision"] === undefined ? undefined : parsePositiveInt(args["to-revision"], "--to-revision");
    const dryRun = args["dry-run"] as DryRun;
    const client = await clientFrom(args);
    const namespace = namespaceOf(args, client);
    const plan = await undoWebApp(
      client,
      { name: args.name, namespace },
      { toRevision, imageOnly: args["image-only"], dryRun },
    );
    const what = `${SINGULAR}.${WEBAPP_RESOURCE.group}/${args.name}`;
    const { revision, image } = plan.record;
    if (plan.kind === "unchanged") {
      out(`${what} skipped rollback (the spec already gives the pod template of revision ${revision})`);
      return;
    }
    out(`${what} rolled back to revision ${revision} (image ${image})${DRY_RUN_NOTE[dryRun]}`);
  },
});
