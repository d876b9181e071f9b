/**
 * The contract of the Kubernetes client that the rest of devctl codes against.
 *
 * - Every request goes through one Bun-native transport (see transport.ts), so TLS material and
 *   auth headers from the kubeconfig are always applied, and every response is counted once.
 * - Every failure is a `KubeError` (errors.ts) with a `reason`; callers branch on the reason,
 *   never on HTTP codes or message text.
 * - Objects are plain JSON (`KubeObject`); typed views are the caller's business.
 */

/** Which API resource a call is about: enough to build its URL path. */
export interface ResourceType {
  /** "" for the core group. */
  readonly group: string;
  readonly version: string;
  /** Lower-case plural used in URLs, e.g. "deployments". */
  readonly plural: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: unknown[];
}

/** Any Kubernetes object as JSON. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: T[];
}

/** One event of a WATCH stream, as the API server sends it. */
export type WatchEvent<T extends KubeObject = KubeObject> =
  | { type: "ADDED" | "MODIFIED" | "DELETED"; object: T }
  /** Only metadata.resourceVersion is meaningful. */
  | { type: "BOOKMARK"; object: T }
  /** object is a metav1.Status; code 410 means the resourceVersion is too old. */
  | { type: "ERROR"; object: Status };

/** metav1.Status, as returned by the API server on failures. */
export interface Status {
  kind?: "Status";
  apiVersion?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    causes?: { field?: string; message?: string; reason?: string }[];
  };
  metadata?: Record<string, unknown>;
}

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  signal?: AbortSignal;
}

export interface WatchOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  allowWatchBookmarks?: boolean;
  /** Server-side timeout: the API server ends the watch cleanly after this many seconds. */
  timeoutSeconds?: number;
  signal?: AbortSignal;
}

export interface WriteOptions {
  /** Server-side dry run: validated and defaulted, nothing stored. */
  dryRun?: boolean;
  fieldManager?: string;
  signal?: AbortSignal;
}

export interface ApplyOptions extends WriteOptions {
  fieldManager: string;
  /** Take ownership of fields other managers own (kubectl apply --server-side --force-conflicts). */
  force?: boolean;
}

export type PatchType = "merge" | "json" | "strategic";

export interface PatchOptions extends WriteOptions {
  subresource?: string;
  /**
   * The caller does not need the answer: a 2xx body is read off the connection but neither decoded nor parsed,
   * and the call resolves to undefined (a failure is still a KubeError with the server's Status).
   */
  discardResponse?: boolean;
}

/** What the transport reports after every response, for metrics (rest_client_requests_total). */
export interface RequestObservation {
  method: string;
  /** HTTP status, or "<error>" when no response arrived. */
  code: string;
  host: string;
  seconds: number;
}

export interface KubeClient {
  /** The API server's URL, for messages. */
  readonly server: string;
  /** The kubeconfig context in use ("" in-cluster). */
  readonly context: string;
  /** The default namespace of the context (or of the service account in-cluster). */
  readonly namespace: string;

  get<T extends KubeObject>(rt: ResourceType, name: string, namespace?: string, signal?: AbortSignal): Promise<T>;
  /** One page. Use listAll for every page. */
  list<T extends KubeObject>(rt: ResourceType, opts?: ListOptions): Promise<KubeList<T>>;
  /** Every page (limit 500 + continue); resourceVersion of the result is the first page's. */
  listAll<T extends KubeObject>(rt: ResourceType, opts?: ListOptions): Promise<KubeList<T>>;
  /**
   * Opens a WATCH. Resolves once the server answered with 200 (an HTTP error rejects with KubeError,
   * e.g. reason "Gone" for a 410). The iterator ends when the server closes the stream or the signal aborts.
   */
  watch<T extends KubeObject>(rt: ResourceType, opts: WatchOptions): Promise<AsyncIterable<WatchEvent<T>>>;
  create<T extends KubeObject>(rt: ResourceType, obj: T, opts?: WriteOptions): Promise<T>;
  replace<T extends KubeObject>(rt: ResourceType, obj: T, opts?: WriteOptions): Promise<T>;
  /** PUT to the status subresource. */
  replaceStatus<T extends KubeObject>(rt: ResourceType, obj: T, opts?: WriteOptions): Promise<T>;
  /** With `discardResponse: true` resolves to undefined without parsing the answer (see PatchOptions). */
  patch(
    rt: ResourceType,
    name: string,
    namespace: string | undefined,
    patch: unknown,
    type: PatchType,
    opts: PatchOptions & { discardResponse: true },
  ): Promise<void>;
  patch<T extends KubeObject>(
    rt: ResourceType,
    name: string,
    namespace: string | undefined,
    patch: unknown,
    type: PatchType,
    opts?: PatchOptions,
  ): Promise<T>;
  /** Server-side apply (application/apply-patch+yaml, JSON body). */
  apply<T extends KubeObject>(
    rt: ResourceType,
    obj: KubeObject,
    opts: ApplyOptions & { subresource?: string },
  ): Promise<T>;
  delete(
    rt: ResourceType,
    name: string,
    namespace?: string,
    opts?: {
      propagationPolicy?: "Foreground" | "Background" | "Orphan";
      /** The object is deleted only while it still has this uid and resourceVersion (409 Conflict otherwise). */
      preconditions?: { uid?: string; resourceVersion?: string };
      signal?: AbortSignal;
      dryRun?: boolean;
    },
  ): Promise<void>;
  /** A raw request through the same transport (paths like "/version", "/apis"). Returns parsed JSON. */
  raw<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    contentType?: string,
    signal?: AbortSignal,
  ): Promise<T>;
}
