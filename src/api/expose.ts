/**
 * spec.expose: an address for the WebApp outside the cluster, as an Ingress (networking.k8s.io/v1) to its Service.
 * Pure schema.
 *
 * Properties:
 * - host is an Ingress rule's host: a DNS-1123 subdomain, or one with a leading "*." wildcard; no IP, no port.
 * - path (default /) routes by prefix; ingressClassName picks the controller (left out: the cluster's default class);
 *   tlsSecretName serves https with that Secret's certificate for host.
 * - The checks are the API server's own for an Ingress, so a WebApp the CRD admits gives an Ingress it admits.
 */
import * as v from "valibot";
import { shown } from "./_messages.ts";
import { DNS1123_SUBDOMAIN } from "./name-rules.ts";
import { cel } from "./openapi.ts";
import { httpPath, named } from "./pod-template.ts";

/** An Ingress rule's host: a DNS-1123 subdomain, maybe behind a "*." wildcard (networking/v1 validation). */
export const INGRESS_HOST = new RegExp(`^(\\*\\.)?${DNS1123_SUBDOMAIN.source.slice(1, -1)}$`);
const HOST_MESSAGE =
  "must be a host name: lower-case letters, digits, '-' and '.', optionally starting with '*.' (no IP address, " +
  "no port), e.g. shop.example.com";

export const Expose = v.object({
  host: v.pipe(
    v.string(),
    v.description("The host name the WebApp answers on, e.g. shop.example.com (DNS must point it at the Ingress)."),
    v.maxLength(253, (i) => `must be at most 253 characters (got ${i.input.length})`),
    v.regex(INGRESS_HOST, (i) => `${HOST_MESSAGE} (got ${shown(i.input)})`),
    cel(HOST_MESSAGE),
  ),
  path: v.optional(httpPath("The path prefix routed to the WebApp. Defaults to /.")),
  ingressClassName: v.optional(
    named("IngressClass", "The IngressClass (Ingress controller) to use. Left out: the cluster's default class."),
  ),
  tlsSecretName: v.optional(
    named(
      "Secret",
      "A Secret of type kubernetes.io/tls in the WebApp's namespace: the Ingress serves https for host with it.",
    ),
  ),
});
export type Expose = v.InferOutput<typeof Expose>;

/** The path routed when spec.expose.path is left out. */
export const EXPOSE_DEFAULT_PATH = "/";

/** Where an expose answers: https when it has a TLS Secret, else http; its path, / when left out. */
export function exposeUrl(e: Pick<Expose, "host" | "path" | "tlsSecretName">): string {
  return `${e.tlsSecretName !== undefined ? "https" : "http"}://${e.host}${e.path ?? EXPOSE_DEFAULT_PATH}`;
}

export const ExposeField = v.pipe(
  Expose,
  v.description(
    "An address outside the cluster: the operator keeps an Ingress for host (and path) to the WebApp's Service, " +
      "and status.url says where it answers once the Ingress controller gives the Ingress an address.",
  ),
);
