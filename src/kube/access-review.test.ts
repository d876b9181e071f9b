import { describe, expect, test } from "bun:test";
import { isRetriableReviewError, reviewAccess, reviewToken } from "./access-review.ts";
import { KubeError } from "./errors.ts";
import type { KubeClient, KubeObject, ResourceType } from "./types.ts";

/** A client whose create() records what it was sent and answers with `status`. */
function reviewer(answer: (body: KubeObject) => unknown) {
  const sent: { rt: ResourceType; body: KubeObject; signal?: AbortSignal }[] = [];
  const client = {
    create: async (rt: ResourceType, body: KubeObject, o?: { signal?: AbortSignal }) => {
      sent.push({ rt, body, ...(o?.signal ? { signal: o.signal } : {}) });
      return { ...body, status: answer(body) };
    },
  } as unknown as KubeClient;
  return { client, sent };
}

describe("reviewToken", () => {
  test("creates a TokenReview of the token and returns the user it names", async () => {
    const { client, sent } = reviewer(() => ({
      authenticated: true,
      user: {
        username: "system:serviceaccount:mon:prom",
        uid: "42",
        groups: ["system:serviceaccounts"],
        extra: { a: ["b"] },
      },
    }));
    expect(await reviewToken(client, "tok")).toEqual({
      username: "system:serviceaccount:mon:prom",
      uid: "42",
      groups: ["system:serviceaccounts"],
      extra: { a: ["b"] },
    });
    expect(sent[0]?.rt.plural).toBe("tokenreviews");
    expect(sent[0]?.rt.group).toBe("authentication.k8s.io");
    expect(sent[0]?.body).toEqual({
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenReview",
      metadata: {},
      spec: { token: "tok" },
    });
    expect(sent[0]?.signal).toBeDefined();
  });

  test("a token the API server does not authenticate is undefined, not an error", async () => {
    expect(
      await reviewToken(reviewer(() => ({ authenticated: false, error: "invalid bearer token" })).client, "x"),
    ).toBe(undefined);
    expect(await reviewToken(reviewer(() => undefined).client, "x")).toBe(undefined);
  });

  test("a review that cannot be made rejects with the client's error", async () => {
    const client = {
      create: async () => {
        throw new KubeError("Forbidden", "cannot create tokenreviews.authentication.k8s.io", 403);
      },
    } as unknown as KubeClient;
    await expect(reviewToken(client, "x")).rejects.toThrow("cannot create tokenreviews");
  });
});

describe("reviewAccess", () => {
  const user = { username: "bob", uid: "7", groups: ["g"], extra: { k: ["v"] } };

  test("asks about the non-resource path and verb for the user with its uid, groups and extra", async () => {
    const { client, sent } = reviewer(() => ({ allowed: true }));
    expect(await reviewAccess(client, user, { path: "/metrics", verb: "get" })).toEqual({ allowed: true });
    expect(sent[0]?.rt.plural).toBe("subjectaccessreviews");
    expect(sent[0]?.body).toEqual({
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      metadata: {},
      spec: {
        user: "bob",
        uid: "7",
        groups: ["g"],
        extra: { k: ["v"] },
        nonResourceAttributes: { path: "/metrics", verb: "get" },
      },
    });
  });

  test("not allowed, or allowed and denied at once, is a denial with the API server's reason", async () => {
    expect(
      await reviewAccess(reviewer(() => ({ allowed: false })).client, user, { path: "/metrics", verb: "get" }),
    ).toEqual({ allowed: false });
    const denied = reviewer(() => ({ allowed: true, denied: true, reason: "webhook says no" })).client;
    expect(await reviewAccess(denied, user, { path: "/metrics", verb: "get" })).toEqual({
      allowed: false,
      reason: "webhook says no",
    });
  });
});

test("isRetriableReviewError: no answer, 429 and 5xx are retried; a refusal or a bad request is not", () => {
  const e = (reason: ConstructorParameters<typeof KubeError>[0], code: number) => new KubeError(reason, "m", code);
  expect(
    [e("Unreachable", 0), e("Timeout", 504), e("Other", 429), e("Other", 500), e("Other", 503)].map(
      isRetriableReviewError,
    ),
  ).toEqual([true, true, true, true, true]);
  expect(
    [e("Forbidden", 403), e("Unauthorized", 401), e("Invalid", 422), new Error("x")].map(isRetriableReviewError),
  ).toEqual([false, false, false, false]);
});
