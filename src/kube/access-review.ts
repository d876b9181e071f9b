/**
 * Delegated authentication and authorization: the API server's TokenReview and SubjectAccessReview, as the
 * delegating authenticator and authorizer of k8s.io/apiserver make them (what controller-runtime's secure metrics
 * filter uses). One request each, no cache (the caller caches: server/request-auth.ts).
 *
 * Properties:
 * - `reviewToken` resolves to the user the token belongs to, or to `undefined` when the API server says it is not
 *   authenticated (expired, revoked, garbage). It rejects only when the review itself could not be made (API server
 *   unreachable, 5xx, the operator may not create tokenreviews): a KubeError whose message names the request, never
 *   the token.
 * - `reviewAccess` asks whether that user (name, uid, groups, extra, as the TokenReview gave them) may `verb` the
 *   non-resource `path`; `allowed` is the API server's answer, `reason` its explanation. Rejects like reviewToken.
 * - Each review is bounded by REVIEW_TIMEOUT_MS (k8s.io/apiserver's TokenAccessReviewTimeout, 10 s).
 * - `isRetriableReviewError`: what k8s.io/apiserver's webhooks retry: no answer (unreachable, timed out), 429, 5xx.
 */
import { KubeError } from "./errors.ts";
import { SUBJECT_ACCESS_REVIEWS, TOKEN_REVIEWS, apiVersionOf } from "./resources.ts";
import type { KubeClient, KubeObject } from "./types.ts";

export const REVIEW_TIMEOUT_MS = 10_000;

/** authentication.k8s.io/v1 UserInfo. */
export interface UserInfo {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface AccessDecision {
  allowed: boolean;
  /** The API server's explanation, when it gave one (an RBAC denial usually gives none). */
  reason?: string;
}

interface TokenReview extends KubeObject {
  status?: { authenticated?: boolean; user?: Partial<UserInfo>; error?: string };
}

interface SubjectAccessReview extends KubeObject {
  status?: { allowed?: boolean; denied?: boolean; reason?: string; evaluationError?: string };
}

export function isRetriableReviewError(e: unknown): boolean {
  if (!(e instanceof KubeError)) return false;
  return e.reason === "Unreachable" || e.reason === "Timeout" || e.code === 429 || e.code >= 500;
}

const bounded = (signal?: AbortSignal): AbortSignal =>
  signal ? AbortSignal.any([signal, AbortSignal.timeout(REVIEW_TIMEOUT_MS)]) : AbortSignal.timeout(REVIEW_TIMEOUT_MS);

export async function reviewToken(
  client: KubeClient,
  token: string,
  signal?: AbortSignal,
): Promise<UserInfo | undefined> {
  const review: TokenReview = {
    apiVersion: apiVersionOf(TOKEN_REVIEWS),
    kind: TOKEN_REVIEWS.kind,
    metadata: {},
    spec: { token },
  };
  const answer = await client.create<TokenReview>(TOKEN_REVIEWS, review, { signal: bounded(signal) });
  const user = answer.status?.user;
  if (!answer.status?.authenticated || !user?.username) return undefined;
  return {
    username: user.username,
    ...(user.uid ? { uid: user.uid } : {}),
    ...(user.groups ? { groups: [...user.groups] } : {}),
    ...(user.extra ? { extra: { ...user.extra } } : {}),
  };
}

export async function reviewAccess(
  client: KubeClient,
  user: UserInfo,
  attributes: { path: string; verb: string },
  signal?: AbortSignal,
): Promise<AccessDecision> {
  const review: SubjectAccessReview = {
    apiVersion: apiVersionOf(SUBJECT_ACCESS_REVIEWS),
    kind: SUBJECT_ACCESS_REVIEWS.kind,
    metadata: {},
    spec: {
      user: user.username,
      ...(user.uid ? { uid: user.uid } : {}),
      ...(user.groups ? { groups: user.groups } : {}),
      ...(user.extra ? { extra: user.extra } : {}),
      nonResourceAttributes: { path: attributes.path, verb: attributes.verb },
    },
  };
  const answer = await client.create<SubjectAccessReview>(SUBJECT_ACCESS_REVIEWS, review, { signal: bounded(signal) });
  const s = answer.status ?? {};
  const reason = s.reason || s.evaluationError;
  return { allowed: s.allowed === true && s.denied !== true, ...(reason ? { reason } : {}) };
}
