/**
 * Asks the API server, before anything is written, whether the identity in use may do what an
 * install or uninstall needs (SelfSubjectAccessReview, which every authenticated identity may create).
 *
 * Properties:
 * - Every check is asked (in parallel) and every missing permission is reported at once, so a user
 *   or an admin fixes them in one round instead of one failed run per permission.
 * - The answer is a value: the list of denied checks, empty when all are allowed.
 * - It cannot see RBAC escalation rules (granting permissions one does not hold); those still fail at
 *   apply time with the API server's own Forbidden message.
 */
import { isForbidden } from "../kube/errors.ts";
import { SELF_SUBJECT_ACCESS_REVIEWS } from "../kube/resources.ts";
import type { KubeClient, KubeObject } from "../kube/types.ts";

export interface AccessCheck {
  verb: string;
  group: string;
  resource: string;
  namespace?: string;
  name?: string;
}

interface AccessReview extends KubeObject {
  status?: { allowed?: boolean; denied?: boolean; reason?: string };
}

/** The checks that are not allowed. An identity that may not even ask is not judged here: [] (the writes will tell). */
export async function deniedChecks(
  client: KubeClient,
  checks: readonly AccessCheck[],
  signal?: AbortSignal,
): Promise<AccessCheck[]> {
  const answers = await Promise.all(
    checks.map((c) =>
      client.create<AccessReview>(
        SELF_SUBJECT_ACCESS_REVIEWS,
        {
          apiVersion: "authorization.k8s.io/v1",
          kind: "SelfSubjectAccessReview",
          metadata: {},
          spec: { resourceAttributes: { ...c } },
        },
        signal ? { signal } : {},
      ),
    ),
  ).catch((e) => {
    if (isForbidden(e)) return undefined;
    throw e;
  });
  if (!answers) return [];
  return checks.filter((_, i) => answers[i]?.status?.allowed !== true);
}

/** `get, create, patch deployments.apps in namespace "x"; get customresourcedefinitions.apiextensions.k8s.io`. */
export function describeChecks(checks: readonly AccessCheck[]): string {
  const groups = new Map<string, string[]>();
  for (const c of checks) {
    const what = `${c.resource}${c.group ? `.${c.group}` : ""}${c.namespace ? ` in namespace "${c.namespace}"` : ""}`;
    groups.set(what, [...(groups.get(what) ?? []), c.verb]);
  }
  return [...groups].map(([what, verbs]) => `${verbs.join(", ")} ${what}`).join("; ");
}
