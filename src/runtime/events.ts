/**
 * The event recorder: core/v1 Events on the involved object, for `kubectl describe` (client-go `record`).
 *
 * Properties:
 * - Shaped as kubectl expects: the Event lives in the involved object's namespace ("default" for a
 *   cluster-scoped object), is named `<object name>.<16 hex digits>`, carries type Normal|Warning, reason,
 *   message (cut at 1024 characters), source.component, reportingComponent (the reporting controller) and
 *   reportingInstance, count, firstTimestamp and lastTimestamp.
 * - Aggregating: an identical repeat (same object, type, reason and message) within `aggregateWindowMs`
 *   (10 min) PATCHes count and lastTimestamp of the Event already written instead of creating another.
 *   What was written is remembered in an LRU of 4096 entries (client-go's size); if that Event is gone
 *   (expired after the API server's 1 h TTL, or deleted) a new one is created.
 * - Rate-limited, so a hot loop cannot flood the API server: per involved object a token bucket of burst 25
 *   refilled by one every 5 min (client-go's spam filter), and overall a bucket of burst 100 refilled by one
 *   per second. Limits apply before aggregation (as in client-go); what they drop is logged at debug.
 * - Harmless: `event()` never throws and never blocks; writes are fire-and-forget, serialized per Event so
 *   repeats aggregate even while the first write is in flight; failures are logged at debug.
 *   `flush()` resolves when every write started so far has finished (tests, shutdown).
 * - Sent at once. (Until 2026-12-06 each write first waited until the reconciles had been quiet for 0.5 s, at most
 *   0.8 s. Measured then with `npm run bench -- --scenario convergence --n 100 --repeats 5 --no-peer`, two runs each
 *   way, alternating: devctl / floor median 1.14 with that wait, 1.11 without, CPU 1.25 and 1.20 s; no gain left,
 *   and a new WebApp's first Event came up to 1 s late, which a CI run caught.)
 */
import type { Clock } from "./clock.ts";
import type { Logger } from "./logger.ts";
import { isNotFound, messageOf } from "../kube/errors.ts";
import { EVENTS } from "../kube/resources.ts";
import type { KubeClient, KubeObject, ObjectMeta } from "../kube/types.ts";

/** What an event can be about: any object with a kind and metadata. */
export type InvolvedObject = Pick<KubeObject, "apiVersion" | "kind"> & { metadata: ObjectMeta };

export type EventType = "Normal" | "Warning";

export interface EventRecorder {
  /** Records an event about `obj`. Never throws. */
  event(obj: InvolvedObject, type: EventType, reason: string, message: string): void;
  /** Resolves once every write started so far has finished. */
  flush(): Promise<void>;
}

export interface TokenBucketConfig {
  burst: number;
  /** One token is added every refillMs. */
  refillMs: number;
}

export interface EventRecorderOptions {
  clock: Clock;
  logger: Logger;
  /** source.component, e.g. "webapp-operator". */
  component: string;
  /** reportingComponent; a qualified name, e.g. "devctl.dev/webapp-operator". Default: component. */
  reportingController?: string;
  /** reportingInstance and source.host, e.g. the pod name. */
  reportingInstance?: string;
  aggregateWindowMs?: number;
  perObject?: TokenBucketConfig;
  overall?: TokenBucketConfig;
  /** Uniform in [0, 1), for Event names. Default Math.random. */
  random?: () => number;
}

export const EVENT_DEFAULTS = {
  aggregateWindowMs: 600_000,
  cacheSize: 4096,
  perObject: { burst: 25, refillMs: 300_000 },
  overall: { burst: 100, refillMs: 1_000 },
  messageLimit: 1024,
} as const;

/** What was written for one aggregation key. */
interface Written {
  name: string;
  namespace: string;
  count: number;
  lastAt: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

export function createEventRecorder(client: KubeClient, opts: EventRecorderOptions): EventRecorder {
  const { clock, logger } = opts;
  const allowed = rateLimiter(
    opts.perObject ?? EVENT_DEFAULTS.perObject,
    opts.overall ?? EVENT_DEFAULTS.overall,
    clock.now(),
  );
  /** Last write per aggregation key; a new write for the key waits for it. */
  const chains = new Map<string, Promise<void>>();
  const pending = new Set<Promise<void>>();
  const write = eventWriter(client, opts);

  return {
    event(obj, type, reason, message) {
      try {
        const now = clock.now();
        const m = obj.metadata;
        const objKey = m.uid || `${obj.kind}/${m.namespace ?? ""}/${m.name ?? ""}`;
        if (!allowed(objKey, now)) {
          logger.debug(
            `event ${type} ${reason} on ${obj.kind} ${m.namespace ?? ""}/${m.name}: dropped by the rate limit`,
          );
          return;
        }
        const key = JSON.stringify([objKey, type, reason, message]);
        const p = (chains.get(key) ?? Promise.resolve())
          .then(() => write(key, now, obj, type, reason, message))
          .catch((e: unknown) =>
            logger.debug(
              `event ${type} ${reason} on ${obj.kind} ${m.namespace ?? ""}/${m.name}: not recorded: ${messageOf(e)}`,
            ),
          );
        chains.set(key, p);
        pending.add(p);
        void p.finally(() => {
          pending.delete(p);
          if (chains.get(key) === p) chains.delete(key);
        });
      } catch (e) {
        logger.debug(`event ${type} ${reason}: not recorded: ${messageOf(e)}`);
      }
    },
    async flush() {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
  };
}

/**
 * Writes one event recorded at `now` under its aggregation key: a PATCH of count and lastTimestamp when the same
 * key was written within the aggregation window (and that Event still exists), else a new Event.
 */
function eventWriter(
  client: KubeClient,
  opts: EventRecorderOptions,
): (key: string, now: number, obj: InvolvedObject, type: EventType, reason: string, message: string) => Promise<void> {
  const random = opts.random ?? Math.random;
  const windowMs = opts.aggregateWindowMs ?? EVENT_DEFAULTS.aggregateWindowMs;
  /** LRU: Map iteration order is insertion order; touching = delete + set. */
  const written = new Map<string, Written>();
  return async (key, now, obj, type, reason, message) => {
    const prev = written.get(key);
    if (prev && now - prev.lastAt < windowMs) {
      prev.count += 1;
      prev.lastAt = now;
      touch(written, key, prev);
      try {
        await client.patch(EVENTS, prev.name, prev.namespace, { count: prev.count, lastTimestamp: time(now) }, "merge");
        return;
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
    const ev = newEvent(obj, type, reason, message, time(now), hex(now, random), opts);
    const { name, namespace } = ev.metadata as { name: string; namespace: string };
    await client.create(EVENTS, ev);
    touch(written, key, { name, namespace, count: 1, lastAt: now });
    while (written.size > EVENT_DEFAULTS.cacheSize) written.delete(written.keys().next().value!);
  };
}

/**
 * The rate limit: a token bucket per object (LRU of EVENT_DEFAULTS.cacheSize objects) and one overall; an event
 * takes a token from both or is dropped. Returns `allowed(objectKey, now)`.
 */
function rateLimiter(
  perObject: TokenBucketConfig,
  overallCfg: TokenBucketConfig,
  start: number,
): (objKey: string, now: number) => boolean {
  const buckets = new Map<string, Bucket>();
  const overall: Bucket = { tokens: overallCfg.burst, at: start };
  const refill = (b: Bucket, cfg: TokenBucketConfig, now: number) => {
    b.tokens = Math.min(cfg.burst, b.tokens + (now - b.at) / cfg.refillMs);
    b.at = now;
  };
  return (objKey, now) => {
    const b = touch(buckets, objKey, buckets.get(objKey) ?? { tokens: perObject.burst, at: now });
    refill(b, perObject, now);
    refill(overall, overallCfg, now);
    const ok = b.tokens >= 1 && overall.tokens >= 1;
    if (ok) {
      b.tokens -= 1;
      overall.tokens -= 1;
    }
    while (buckets.size > EVENT_DEFAULTS.cacheSize) buckets.delete(buckets.keys().next().value!);
    return ok;
  };
}

/** A core/v1 Event about `obj`, first seen at `at`; its name is the object's (cut to fit) plus `suffix`. */
function newEvent(
  obj: InvolvedObject,
  type: EventType,
  reason: string,
  message: string,
  at: string,
  suffix: string,
  opts: EventRecorderOptions,
): KubeObject {
  const m = obj.metadata;
  const limit = EVENT_DEFAULTS.messageLimit;
  return {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: `${(m.name ?? "unknown").slice(0, 236)}.${suffix}`, namespace: m.namespace || "default" },
    involvedObject: {
      apiVersion: obj.apiVersion,
      kind: obj.kind,
      name: m.name,
      namespace: m.namespace,
      uid: m.uid,
      resourceVersion: m.resourceVersion,
    },
    type,
    reason,
    message: message.length > limit ? `${message.slice(0, limit - 3)}...` : message,
    source: opts.reportingInstance
      ? { component: opts.component, host: opts.reportingInstance }
      : { component: opts.component },
    firstTimestamp: at,
    lastTimestamp: at,
    count: 1,
    reportingComponent: opts.reportingController ?? opts.component,
    reportingInstance: opts.reportingInstance ?? "",
  };
}

/** Moves key to the most recent end of an LRU map; returns the value. */
function touch<V>(map: Map<string, V>, key: string, value: V): V {
  map.delete(key);
  map.set(key, value);
  return value;
}

/** metav1.Time: RFC 3339, whole seconds. */
function time(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** 16 hex digits: the time in ms (11) and 20 random bits (5), like client-go's `%x` of UnixNano. */
function hex(now: number, random: () => number): string {
  return (
    Math.floor(now).toString(16).padStart(11, "0").slice(-11) +
    Math.floor(random() * 0x100000)
      .toString(16)
      .padStart(5, "0")
  );
}
