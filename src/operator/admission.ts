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
 * - Bounded to what the CRD lets the status hold (api/webapp.ts AdmittedField, at most 64 records), so a status
 *   write is never refused for them (it would be retried forever, the status never updated): a text longer than
 *   the field's limit is recorded as its SHA-256 digest, and past PER_KIND records of a kind the rest of its fields
 *   are one record (OVERFLOW_PATH) whose values are digests of them all, in the intent's order.
 */
import { createHash } from "node:crypto";
import type { AdmittedField } from "../api/webapp.ts";
import type { ApplyCheck, Diff } from "./diff.ts";

export type { AdmittedField } from "../api/webapp.ts";

/** Records of one kind before the rest go into one: 7 kinds of child fit the CRD's 64 (8 + 1 each). */
export const PER_KIND = 8;
/** The path of the record that stands for a kind's fields past PER_KIND. */
export const OVERFLOW_PATH = "(more fields)";
/** The CRD's maxLength of a record's path and of its sent and stored texts (api/webapp.ts AdmittedField). */
const MAX_PATH = 1024;
const MAX_TEXT = 4096;

/** The fields of `kind` where what a write returned differs from the intent it sent (needsApply(intent, returned)). */
export function admittedBy(kind: string, returned: ApplyCheck): AdmittedField[] {
  const each = returned.diffs.slice(0, PER_KIND);
  const rest = returned.diffs.slice(PER_KIND);
  const records = each.map((d) => ({
    kind,
    path: bounded(d.path, MAX_PATH),
    sent: json(d.want),
    stored: json(d.have),
  }));
  return rest.length === 0 ? records : [...records, { kind, path: OVERFLOW_PATH, ...overflow(rest) }];
}

/** The differences of `check` (needsApply(intent, live)) that the records of `kind` do not explain: drift. */
export function drift(kind: string, check: ApplyCheck, admitted: readonly AdmittedField[]): Diff[] {
  const mine = admitted.filter((a) => a.kind === kind);
  if (mine.length === 0) return check.diffs;
  const left = check.diffs.filter(
    (d) =>
      !mine.some((a) => a.path === bounded(d.path, MAX_PATH) && a.sent === json(d.want) && a.stored === json(d.have)),
  );
  const more = mine.find((a) => a.path === OVERFLOW_PATH);
  if (!more || left.length === 0) return left;
  const { sent, stored } = overflow(left);
  return more.sent === sent && more.stored === stored ? [] : left;
}

/** The sent and stored values of the fields past PER_KIND, as digests of them all (paths included). */
function overflow(diffs: readonly Diff[]): { sent: string; stored: string } {
  return {
    sent: digest(JSON.stringify(diffs.map((d) => [d.path, d.want ?? null]))),
    stored: digest(JSON.stringify(diffs.map((d) => [d.path, d.have ?? null]))),
  };
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

const digest = (text: string): string => `sha256:${createHash("sha256").update(text).digest("hex")}`;
/** The text itself while within `max` characters, else its digest. */
const bounded = (text: string, max: number): string => (text.length <= max ? text : digest(text));
const json = (x: unknown): string => bounded(JSON.stringify(x ?? null), MAX_TEXT);
