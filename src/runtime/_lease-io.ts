/**
 * The elector's three calls on its one Lease (leader-election.ts): get, create and replace, each bounded by
 * a signal (a call still in flight when it aborts rejects with "aborted"; the request itself is aborted too).
 * Replace carries the Lease's resourceVersion, so a write over a record we did not read is a Conflict.
 */
import type { Clock } from "./clock.ts";
import { race } from "./race.ts";
import type { Lease, LeaseSpec } from "./_leader-config.ts";
import { apiVersionOf, LEASES } from "../kube/resources.ts";
import type { KubeClient } from "../kube/types.ts";

export class LeaseIO {
  readonly #client: KubeClient;
  readonly #name: string;
  readonly #namespace: string;
  readonly #clock: Clock;

  constructor(client: KubeClient, target: { leaseName: string; namespace: string }, clock: Clock) {
    this.#client = client;
    this.#name = target.leaseName;
    this.#namespace = target.namespace;
    this.#clock = clock;
  }

  get(signal: AbortSignal): Promise<Lease> {
    return this.#bounded(this.#client.get<Lease>(LEASES, this.#name, this.#namespace, signal), signal);
  }

  /** Creates the Lease holding `spec`; rejects with AlreadyExists when someone else created it first. */
  create(spec: LeaseSpec, signal: AbortSignal): Promise<Lease> {
    const lease: Lease = {
      apiVersion: apiVersionOf(LEASES),
      kind: LEASES.kind,
      metadata: { name: this.#name, namespace: this.#namespace },
      spec,
    };
    return this.#bounded(this.#client.create<Lease>(LEASES, lease, { signal }), signal);
  }

  /** Replaces the record of `lease` as read; the record as written. */
  async replace(lease: Lease, spec: LeaseSpec, signal: AbortSignal): Promise<LeaseSpec> {
    const written = await this.#bounded(this.#client.replace<Lease>(LEASES, { ...lease, spec }, { signal }), signal);
    return written.spec ?? spec;
  }

  async #bounded<V>(p: Promise<V>, signal: AbortSignal): Promise<V> {
    const r = await race(p, this.#clock, undefined, signal);
    if (r.kind === "value") return r.value;
    throw r.kind === "error" ? r.cause : new Error("aborted");
  }
}
