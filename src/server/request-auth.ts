/**
 * Authentication and authorization of a request by bearer token, as controller-runtime's secure metrics filter
 * (`filters.WithAuthenticationAndAuthorization`) does it with k8s.io/apiserver's delegating authenticator and
 * authorizer. The reviews themselves are callbacks (kube/access-review.ts in the operator); this module decides
 * and caches.
 *
 * Properties:
 * - 401 "Unauthorized" without an `Authorization: Bearer <token>` header, and for a token the review says is not
 *   authenticated. 403 "Authorization denied for user <name>" when the access review does not allow the request's
 *   verb (its method, lower-cased: GET is "get") on its path. 500 with what failed when a review could not be made
 *   (the API server down): a scrape is never let through, nor told its token is bad, because the API server is.
 * - Cached as k8s.io/apiserver caches for controller-runtime: a token's review (authenticated or not) for
 *   TOKEN_TTL_MS (1 min); an access decision for ALLOWED_TTL_MS (5 min) when allowed, DENIED_TTL_MS (30 s) when not.
 *   A failed review is retried per REVIEW_BACKOFF when `retriable` says so, and not cached. Each cache holds at
 *   most `maxEntries` (CACHE_MAX, 4096); the oldest go first.
 * - Tokens are held only as their SHA-256 digest, and never logged; concurrent requests with the same token (or the
 *   same user and attributes) share one review in flight.
 * - `check` resolves to undefined when the request may proceed, else to the response to send.
 */
import type { AccessDecision, UserInfo } from "../kube/access-review.ts";
import type { Clock } from "../runtime/clock.ts";
import { ExpiringMap } from "../runtime/expiring-map.ts";
import type { Logger } from "../runtime/logger.ts";
import { messageOf } from "../kube/errors.ts";

export const TOKEN_TTL_MS = 60_000;
export const ALLOWED_TTL_MS = 5 * 60_000;
export const DENIED_TTL_MS = 30_000;
export const CACHE_MAX = 4096;
/**
 * A review that fails with an error `retriable` accepts is made again after 500 ms, then 1.5 times longer each time
 * (each delay up to 20% longer, at random), 5 attempts in all: k8s.io/apiserver's DefaultAuthWebhookRetryBackoff,
 * which controller-runtime's filter copies.
 */
export const REVIEW_BACKOFF = { initialMs: 500, factor: 1.5, jitter: 0.2, steps: 5 } as const;

export interface RequestAuthOptions {
  /** TokenReview: the token's user, undefined when not authenticated; rejects when the review cannot be made. */
  authenticate: (token: string) => Promise<UserInfo | undefined>;
  /** SubjectAccessReview of a non-resource URL; rejects when the review cannot be made. */
  authorize: (user: UserInfo, attributes: { path: string; verb: string }) => Promise<AccessDecision>;
  /** Whether a failed review is worth making again (the API server busy or unreachable); default: never. */
  retriable?: (error: unknown) => boolean;
  clock: Clock;
  logger: Logger;
  maxEntries?: number;
  /** [0, 1), for the backoff's jitter; default Math.random. */
  random?: () => number;
}

export interface RequestAuth {
  check(req: Request): Promise<Response | undefined>;
}

const TEXT = { "content-type": "text/plain; charset=utf-8", "x-content-type-options": "nosniff" };
const answer = (status: number, message: string): Response => new Response(`${message}\n`, { status, headers: TEXT });

/** The token of `Authorization: Bearer <token>` (scheme case-insensitive), as k8s.io/apiserver's bearertoken reads it. */
export function bearerToken(header: string | null): string | undefined {
  const parts = (header ?? "").trim().split(" ");
  if (parts.length < 2 || parts[0]?.toLowerCase() !== "bearer") return undefined;
  return parts[1] || undefined;
}

/** fn, made again per REVIEW_BACKOFF while it fails with an error `retriable` accepts. */
async function withBackoff<T>(fn: () => Promise<T>, o: RequestAuthOptions): Promise<T> {
  const { initialMs, factor, jitter, steps } = REVIEW_BACKOFF;
  let delay: number = initialMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if (attempt >= steps || !o.retriable?.(e)) throw e;
      await o.clock.sleep(delay * (1 + jitter * (o.random ?? Math.random)()));
      delay *= factor;
    }
  }
}

const digest = (token: string): string => new Bun.CryptoHasher("sha256").update(token).digest("hex");

export function createRequestAuth(o: RequestAuthOptions): RequestAuth {
  const max = o.maxEntries ?? CACHE_MAX;
  /** Token digest → the review's user (null: not authenticated). */
  const tokens = new ExpiringMap<UserInfo | null>(o.clock, TOKEN_TTL_MS, max);
  /** The same keys never sit in both: a decision is set in one and deleted from the other. */
  const allowed = new ExpiringMap<AccessDecision>(o.clock, ALLOWED_TTL_MS, max);
  const denied = new ExpiringMap<AccessDecision>(o.clock, DENIED_TTL_MS, max);
  const inFlight = new Map<string, Promise<unknown>>();
  const shared = <T>(key: string, review: () => Promise<T>): Promise<T> => {
    const pending = inFlight.get(key);
    if (pending) return pending as Promise<T>;
    const started = review().finally(() => inFlight.delete(key));
    inFlight.set(key, started);
    return started;
  };

  const authenticate = async (token: string): Promise<UserInfo | null> => {
    const key = digest(token);
    const cached = tokens.get(key);
    if (cached !== undefined) return cached;
    return shared(`t:${key}`, async () => {
      const user = (await withBackoff(() => o.authenticate(token), o)) ?? null;
      tokens.set(key, user);
      return user;
    });
  };

  const authorize = async (user: UserInfo, attributes: { path: string; verb: string }): Promise<AccessDecision> => {
    const key = JSON.stringify([user.username, user.uid, user.groups, user.extra, attributes.path, attributes.verb]);
    const cached = allowed.get(key) ?? denied.get(key);
    if (cached) return cached;
    return shared(`a:${key}`, async () => {
      const decision = await withBackoff(() => o.authorize(user, attributes), o);
      (decision.allowed ? denied : allowed).delete(key);
      (decision.allowed ? allowed : denied).set(key, decision);
      return decision;
    });
  };

  return {
    async check(req) {
      const token = bearerToken(req.headers.get("authorization"));
      if (!token) return answer(401, "Unauthorized");
      let user: UserInfo | null;
      try {
        user = await authenticate(token);
      } catch (e) {
        o.logger.error(`authentication failed: the TokenReview could not be made: ${messageOf(e)}`);
        return answer(500, `Authentication failed: the TokenReview could not be made (${messageOf(e)})`);
      }
      if (!user) return answer(401, "Unauthorized");
      const attributes = { path: new URL(req.url).pathname, verb: req.method.toLowerCase() };
      let decision: AccessDecision;
      try {
        decision = await authorize(user, attributes);
      } catch (e) {
        const msg = `Authorization for user ${user.username} failed`;
        o.logger.error(`${msg}: the SubjectAccessReview could not be made: ${messageOf(e)}`);
        return answer(500, `${msg}: the SubjectAccessReview could not be made (${messageOf(e)})`);
      }
      if (decision.allowed) return undefined;
      const msg = `Authorization denied for user ${user.username}`;
      o.logger.debug(`${msg} (${attributes.verb} ${attributes.path})${decision.reason ? `: ${decision.reason}` : ""}`);
      return answer(403, msg);
    },
  };
}
