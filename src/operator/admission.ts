/**
 * What admission made of devctl's own writes, so that it is never taken for drift. Pure.
 *
 * Clusters that verify images (Kyverno verifyImages, Sigstore policy-controller, Connaisseur) pin `app:v1` to
 * `app@sha256:…` on every write of a Deployment; other policies add labels or force a pull policy. A child then
 * never equals the intent, and comparing strings would apply it on every pass, forever, and never call it Ready.
 *
 * Properties:
 * - Learnt from our own write: the fields where the object a create or apply returned differs from the intent it
 *   sent are recorded as admitted (what we sent, what was stored), per child kind. Nothing else is ever recorded,
 *   so a difference someone makes later (`kubectl scale`, `kubectl set image`, `kubectl edit`) is drift, and the
 *   apply that reverts it is recorded afresh: whatever admission makes of it again is accepted.
 * - Exact: a difference is admission's only while the intent there is still what we sent and the child still holds
 *   what was stored. A new spec (another image) or another value on the child is drift again.
 * - Persisted: the records travel in the WebApp's status (`status.admitted`), so a restart or a new leader finds
 *   them and writes nothing; the reconciler keeps a record it has not seen in the cached status yet.
 * - Values are compared as JSON text (what the status stores).
 */
import type { AdmittedField } from "../api/webapp.ts";
import type { ApplyCheck, Diff } from "./diff.ts";

export type { AdmittedField } from "../api/webapp.ts";

/** The fields of `kind` where what a write returned differs from the intent it sent (needsApply(intent, returned)). */
export function admittedBy(kind: string, returned: ApplyCheck): AdmittedField[] {
  return returned.diffs.map((d) => ({ kind, path: d.path, sent: json(d.want), stored: json(d.have) }));
}

/** The differences of `check` (needsApply(intent, live)) that the records of `kind` do not explain: drift. */
export function drift(kind: string, check: ApplyCheck, admitted: readonly AdmittedField[]): Diff[] {
  const mine = admitted.filter((a) => a.kind === kind);
  if (mine.length === 0) return check.diffs;
  return check.diffs.filter(
    (d) => !mine.some((a) => a.path === d.path && a.sent === json(d.want) && a.stored === json(d.have)),
  );
}

/** The records with those of `kind` replaced by `fresh` (what the last write of that child returned). */
export function withAdmitted(
  admitted: readonly AdmittedField[],
  kind: string,
  fresh: readonly AdmittedField[],
): AdmittedField[] {
  return [...admitted.filter((a) => a.kind !== kind), ...fresh];
}

export function sameAdmitted(
  a: readonly AdmittedField[] | undefined,
  b: readonly AdmittedField[] | undefined,
): boolean {
  return JSON.stringify(a ?? []) === JSON.stringify(b ?? []);
}

const json = (x: unknown): string => JSON.stringify(x ?? null);
