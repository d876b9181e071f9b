/**
 * TEST DOUBLE — imported by *.test.ts files only.
 *
 * The runtime's scripted fake client (runtime/_fake-kube.ts) plus what install needs:
 * - `apply` records its options (field manager, force) with the call, stores the object merged over
 *   what is there and bumps resourceVersion only when a field it sets differs (as a server-side apply
 *   no-op does not write);
 * - SelfSubjectAccessReviews answer `allowed` unless `deny` says otherwise;
 * - `listAll` answers from the stored objects of that resource (and namespace, if given).
 */
import { createFakeKube, objKey, type FakeKube } from "../runtime/_fake-kube.ts";
import type { KubeList, KubeObject, ListOptions, ResourceType } from "../kube/types.ts";
import type { AccessCheck } from "./access.ts";

export interface FakeCluster extends FakeKube {
  deny: (c: AccessCheck) => boolean;
  /** Display of every apply, in order: "kind/name". */
  readonly applied: string[];
  put(rt: ResourceType, obj: KubeObject): void;
}

const isSubset = (want: unknown, have: unknown): boolean => {
  if (typeof want !== "object" || want === null) return want === have;
  if (typeof have !== "object" || have === null) return false;
  if (Array.isArray(want))
    return Array.isArray(have) && want.length === have.length && want.every((w, i) => isSubset(w, have[i]));
  return Object.entries(want).every(([k, v]) => isSubset(v, (have as Record<string, unknown>)[k]));
};

export function createFakeCluster(now: () => number = () => 0): FakeCluster {
  const base = createFakeKube(now);
  let rv = 1000;
  const applied: string[] = [];
  const cluster: FakeCluster = {
    ...base,
    deny: () => false,
    applied,
    put(rt, obj) {
      base.objects.set(
        objKey(rt, obj.metadata.namespace, obj.metadata.name),
        structuredClone({ ...obj, metadata: { resourceVersion: String(++rv), ...obj.metadata } }),
      );
    },
    async create<T extends KubeObject>(rt: ResourceType, obj: T, o?: Parameters<FakeKube["create"]>[2]) {
      if (rt.plural !== "selfsubjectaccessreviews") return base.create(rt, obj, o);
      const attrs = (obj as unknown as { spec: { resourceAttributes: AccessCheck } }).spec.resourceAttributes;
      base.calls.push({ method: "create", rt, at: now(), args: { obj: structuredClone(obj) } });
      return { ...obj, status: { allowed: !cluster.deny(attrs) } } as T;
    },
    async apply<T extends KubeObject>(rt: ResourceType, obj: KubeObject, o?: Parameters<FakeKube["apply"]>[2]) {
      const { signal: _s, ...options } = o ?? ({} as NonNullable<typeof o>);
      base.calls.push({ method: "apply", rt, at: now(), args: { obj: structuredClone(obj), options } });
      const err = base.failWith?.("apply", rt, obj.metadata.name);
      if (err) throw err;
      applied.push(`${obj.kind}/${obj.metadata.name}`);
      const k = objKey(rt, obj.metadata.namespace, obj.metadata.name);
      const cur = base.objects.get(k);
      const { metadata: _m, ...body } = obj;
      if (cur && isSubset(body, cur) && isSubset(obj.metadata.labels ?? {}, cur.metadata.labels ?? {}))
        return structuredClone(cur) as T;
      const merged = {
        ...(cur ?? {}),
        ...structuredClone(obj),
        metadata: { ...(cur?.metadata ?? {}), ...structuredClone(obj.metadata), resourceVersion: String(++rv) },
      };
      base.objects.set(k, merged);
      return structuredClone(merged) as T;
    },
    async listAll<T extends KubeObject>(rt: ResourceType, o: ListOptions = {}): Promise<KubeList<T>> {
      const prefix = `${rt.plural}/${o.namespace ?? ""}`;
      const items = [...base.objects.entries()]
        .filter(([k]) => (o.namespace ? k.startsWith(`${prefix}/`) : k.startsWith(`${rt.plural}/`)))
        .map(([, v]) => structuredClone(v) as T);
      return { metadata: {}, items };
    },
  };
  // One failWith for both: base's own methods read it from base.
  Object.defineProperty(cluster, "failWith", { get: () => base.failWith, set: (f) => (base.failWith = f) });
  return cluster;
}
