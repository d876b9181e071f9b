import { describe, expect, test } from "bun:test";
import type { AccessDecision, UserInfo } from "../kube/access-review.ts";
import { createFakeClock } from "../runtime/clock.ts";
import type { Logger } from "../runtime/logger.ts";
import {
  ALLOWED_TTL_MS,
  bearerToken,
  createRequestAuth,
  DENIED_TTL_MS,
  type RequestAuthOptions,
  TOKEN_TTL_MS,
} from "./request-auth.ts";

const READER: UserInfo = {
  username: "system:serviceaccount:mon:prometheus",
  uid: "u1",
  groups: ["system:serviceaccounts"],
};

/** A RequestAuth whose reviews answer from these tables and are counted. */
function harness(o: Partial<RequestAuthOptions> & { users?: Record<string, UserInfo>; allow?: Set<string> } = {}) {
  const clock = createFakeClock(1_000_000);
  const logs: string[] = [];
  const logger: Logger = {
    debug: (m) => void logs.push(m),
    info: (m) => void logs.push(m),
    warn: (m) => void logs.push(m),
    error: (m) => void logs.push(m),
  };
  const calls = { tokenReviews: 0, accessReviews: [] as { user: string; path: string; verb: string }[] };
  const users = o.users ?? { "reader-token": READER, "other-token": { username: "bob" } };
  const allow = o.allow ?? new Set([READER.username]);
  const auth = createRequestAuth({
    authenticate: async (token) => {
      calls.tokenReviews++;
      return users[token];
    },
    authorize: async (user, a): Promise<AccessDecision> => {
      calls.accessReviews.push({ user: user.username, ...a });
      return allow.has(user.username) ? { allowed: true } : { allowed: false, reason: "no RBAC policy matched" };
    },
    clock,
    logger,
    ...o,
  });
  const scrape = async (token?: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    if (token !== undefined) headers.set("authorization", `Bearer ${token}`);
    const res = await auth.check(new Request("https://127.0.0.1:8443/metrics", { ...init, headers }));
    return res ? [res.status, (await res.text()).trim()] : [200, "let through"];
  };
  return { auth, clock, calls, logs, scrape, allow };
}

describe("bearerToken", () => {
  test("reads `Bearer <token>` with any case of the scheme, and nothing else", () => {
    expect(bearerToken("Bearer abc")).toBe("abc");
    expect(bearerToken("bearer abc")).toBe("abc");
    expect(bearerToken("  BEARER abc  ")).toBe("abc");
    expect(bearerToken("Bearer abc def")).toBe("abc");
    for (const h of [null, "", "Bearer", "Bearer ", "Bearer  abc", "Basic dXNlcjpwYXNz", "abc"])
      expect(bearerToken(h)).toBeUndefined();
  });
});

describe("request authentication and authorization", () => {
  test("no token is 401 and asks the API server nothing", async () => {
    const h = harness();
    expect(await h.scrape()).toEqual([401, "Unauthorized"]);
    expect(await h.scrape(undefined, { headers: { authorization: "Basic dXNlcjpwYXNz" } })).toEqual([
      401,
      "Unauthorized",
    ]);
    expect([h.calls.tokenReviews, h.calls.accessReviews.length]).toEqual([0, 0]);
  });

  test("a token the TokenReview does not authenticate is 401", async () => {
    const h = harness();
    expect(await h.scrape("garbage")).toEqual([401, "Unauthorized"]);
    expect(h.calls.accessReviews).toEqual([]);
  });

  test("an authenticated user the SubjectAccessReview allows to get /metrics is let through", async () => {
    const h = harness();
    expect(await h.scrape("reader-token")).toEqual([200, "let through"]);
    expect(h.calls.accessReviews).toEqual([{ user: READER.username, path: "/metrics", verb: "get" }]);
  });

  test("an authenticated user without access is 403 naming the user, the verb being the method lower-cased", async () => {
    const h = harness();
    expect(await h.scrape("other-token")).toEqual([403, "Authorization denied for user bob"]);
    await h.scrape("reader-token", { method: "POST" });
    expect(h.calls.accessReviews.map((a) => a.verb)).toEqual(["get", "post"]);
  });

  test("a TokenReview that cannot be made is 500 with why, and is not cached", async () => {
    let down = true;
    const h = harness({
      authenticate: async () => {
        if (down) throw new Error("POST /apis/authentication.k8s.io/v1/tokenreviews: connection refused");
        return READER;
      },
    });
    const [status, body] = await h.scrape("reader-token");
    expect(status).toBe(500);
    expect(body).toContain("Authentication failed: the TokenReview could not be made");
    expect(body).toContain("connection refused");
    down = false;
    expect(await h.scrape("reader-token")).toEqual([200, "let through"]);
  });

  test("a SubjectAccessReview that cannot be made is 500 naming the user, and is not cached", async () => {
    let down = true;
    const h = harness({
      authorize: async () => {
        if (down) throw new Error("no answer within 10000 ms");
        return { allowed: true };
      },
    });
    const [status, body] = await h.scrape("reader-token");
    expect(status).toBe(500);
    expect(body).toStartWith(`Authorization for user ${READER.username} failed`);
    expect(body).toContain("no answer within 10000 ms");
    down = false;
    expect(await h.scrape("reader-token")).toEqual([200, "let through"]);
  });

  test("a token's review is cached for exactly 1 minute, authenticated or not", async () => {
    const h = harness();
    await h.scrape("reader-token");
    await h.scrape("garbage");
    expect(h.calls.tokenReviews).toBe(2);
    await h.clock.advance(TOKEN_TTL_MS - 1);
    await h.scrape("reader-token");
    await h.scrape("garbage");
    expect(h.calls.tokenReviews).toBe(2);
    await h.clock.advance(1);
    await h.scrape("reader-token");
    await h.scrape("garbage");
    expect(h.calls.tokenReviews).toBe(4);
  });

  test("an allowed decision is cached for exactly 5 minutes, a denied one for exactly 30 seconds", async () => {
    const h = harness();
    const reviews = () => h.calls.accessReviews.map((a) => a.user.replace(/^system:.*/, "reader"));
    await h.scrape("reader-token");
    await h.scrape("other-token");
    // Keep the tokens' reviews fresh by stepping under a minute at a time; count only access reviews.
    await h.clock.advance(DENIED_TTL_MS - 1);
    await h.scrape("other-token");
    expect(reviews()).toEqual(["reader", "bob"]);
    await h.clock.advance(1);
    await h.scrape("other-token");
    expect(reviews()).toEqual(["reader", "bob", "bob"]);
    for (let t = DENIED_TTL_MS; t < ALLOWED_TTL_MS - 1; t += 50_000) {
      await h.clock.advance(Math.min(50_000, ALLOWED_TTL_MS - 1 - t));
      await h.scrape("reader-token");
    }
    expect(reviews().filter((u) => u === "reader")).toEqual(["reader"]);
    await h.clock.advance(1);
    await h.scrape("reader-token");
    expect(reviews().filter((u) => u === "reader")).toEqual(["reader", "reader"]);
  });

  test("a decision that flips is served from the new answer, not the old cache", async () => {
    const h = harness();
    expect((await h.scrape("other-token"))[0]).toBe(403);
    h.allow.add("bob");
    await h.clock.advance(DENIED_TTL_MS);
    expect((await h.scrape("other-token"))[0]).toBe(200);
    h.allow.delete("bob");
    await h.clock.advance(DENIED_TTL_MS);
    expect((await h.scrape("other-token"))[0]).toBe(200); // allowed answers are trusted for 5 minutes
  });

  test("each cache holds at most maxEntries, the oldest going first", async () => {
    const users = Object.fromEntries(["a", "b", "c"].map((t) => [t, { username: t }]));
    const h = harness({ users, allow: new Set(["a", "b", "c"]), maxEntries: 2 });
    for (const t of ["a", "b", "c"]) await h.scrape(t);
    expect(h.calls.tokenReviews).toBe(3);
    await h.scrape("c");
    await h.scrape("b");
    expect(h.calls.tokenReviews).toBe(3);
    await h.scrape("a"); // evicted by c
    expect(h.calls.tokenReviews).toBe(4);
  });

  test("concurrent requests with one token share one TokenReview and one SubjectAccessReview", async () => {
    const h = harness();
    const answers = await Promise.all(Array.from({ length: 5 }, () => h.scrape("reader-token")));
    expect(answers.every(([s]) => s === 200)).toBe(true);
    expect([h.calls.tokenReviews, h.calls.accessReviews.length]).toEqual([1, 1]);
  });

  test("never logs a token", async () => {
    const h = harness({
      authenticate: async (t) => {
        if (t === "secret-token-down") throw new Error("connection refused");
        return t === "secret-token-bob" ? { username: "bob" } : undefined;
      },
    });
    for (const t of ["secret-token-down", "secret-token-bob", "secret-token-garbage"]) await h.scrape(t);
    expect(h.logs.length).toBeGreaterThan(0);
    expect(h.logs.join("\n")).not.toContain("secret-token");
  });
});

describe("a review that fails", () => {
  const busy = () => Object.assign(new Error("the server is currently unable to handle the request"), { busy: true });
  const retriable = (e: unknown) => (e as { busy?: boolean }).busy === true;

  test("is made again after 500, 750 and 1125 ms (no jitter) while it fails retriably, and answers once it succeeds", async () => {
    let calls = 0;
    const h = harness({
      retriable,
      random: () => 0,
      authenticate: async () => {
        calls++;
        if (calls <= 3) throw busy();
        return READER;
      },
    });
    const answer = h.scrape("reader-token");
    await h.clock.settle();
    expect(calls).toBe(1);
    await h.clock.advance(499);
    expect(calls).toBe(1);
    await h.clock.advance(1);
    expect(calls).toBe(2);
    await h.clock.advance(750);
    expect(calls).toBe(3);
    await h.clock.advance(1125);
    expect(calls).toBe(4);
    expect(await answer).toEqual([200, "let through"]);
  });

  test("gives up after 5 attempts with 500; the jitter makes each delay up to 20% longer", async () => {
    let calls = 0;
    const h = harness({
      retriable,
      random: () => 0.5, // +10%
      authorize: async () => {
        calls++;
        throw busy();
      },
    });
    const answer = h.scrape("reader-token");
    await h.clock.settle();
    expect(calls).toBe(1);
    for (const d of [550, 825, 1237.5, 1856.25]) {
      const before = calls;
      await h.clock.advance(d - 0.25);
      expect(calls).toBe(before);
      await h.clock.advance(0.25);
      expect(calls).toBe(before + 1);
    }
    expect(calls).toBe(5);
    const [status, body] = await answer;
    expect([status, body]).toEqual([500, expect.stringContaining("the SubjectAccessReview could not be made")]);
  });

  test("is not made again when the failure is not retriable (or no predicate is given)", async () => {
    let calls = 0;
    const h = harness({
      retriable,
      authenticate: async () => {
        calls++;
        throw new Error("forbidden");
      },
    });
    expect((await h.scrape("reader-token"))[0]).toBe(500);
    expect(calls).toBe(1);
  });
});
