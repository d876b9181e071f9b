/**
 * Where devctl operators are installed in a cluster, and what that means for install and run.
 *
 * Properties:
 * - findInstallations() lists, cluster-wide, the Deployments labelled as devctl's operator
 *   (app.kubernetes.io/name=devctl-operator, managed-by=devctl); one per install namespace, sorted.
 *   A caller that may not list Deployments cluster-wide gets a KubeError (Forbidden) to decide on.
 * - otherInstallationProblem(): install into one namespace while an operator is installed in another
 *   is refused (two operators would both reconcile every WebApp), naming it and how to move it.
 * - terminatingProblem(): install into a namespace being deleted is refused before anything is
 *   applied (the API server would refuse the namespaced objects after the CRD was already applied).
 * - leaseNamespaceFor(): the Lease namespace `operator run` uses out of cluster without
 *   --lease-namespace: the one installed operator's, so it joins that fleet instead of starting a
 *   second one; none or several installed is an error saying what to pass.
 */
import { MANAGED_BY_DEVCTL, MANAGED_BY_LABEL } from "../api/crd.ts";
import { isForbidden, isNotFound } from "../kube/errors.ts";
import type { KubeClient, KubeObject, ResourceType } from "../kube/types.ts";
import { InstallError } from "./apply.ts";
import { OPERATOR_CONTAINER_NAME } from "./deployment.ts";
import { APP_NAME, APP_NAME_LABEL, INSTALL_RESOURCES, LEASE_NAME, OPERATOR_NAME, VERSION_LABEL } from "./manifests.ts";
import type { DeploymentLike } from "./rollout.ts";
import { DEPLOYMENTS } from "../kube/resources.ts";

export interface Installation {
  namespace: string;
  version: string;
  image: string;
  replicas: number;
}

export const INSTALLATION_SELECTOR = `${APP_NAME_LABEL}=${APP_NAME},${MANAGED_BY_LABEL}=${MANAGED_BY_DEVCTL}`;

export function installationOf(d: DeploymentLike): Installation {
  const containers =
    (d.spec as { template?: { spec?: { containers?: { name: string; image: string }[] } } } | undefined)?.template?.spec
      ?.containers ?? [];
  const c = containers.find((x) => x.name === OPERATOR_CONTAINER_NAME) ?? containers[0];
  return {
    namespace: d.metadata.namespace ?? "",
    version: d.metadata.labels?.[VERSION_LABEL] ?? "unknown",
    image: c?.image ?? "unknown",
    replicas: d.spec?.replicas ?? 1,
  };
}

export async function findInstallations(client: KubeClient, signal?: AbortSignal): Promise<Installation[]> {
  const list = await client.listAll<DeploymentLike>(DEPLOYMENTS, {
    labelSelector: INSTALLATION_SELECTOR,
    ...(signal ? { signal } : {}),
  });
  return list.items
    .filter((d) => d.metadata.name === OPERATOR_NAME && !d.metadata.deletionTimestamp)
    .map(installationOf)
    .sort((a, b) => a.namespace.localeCompare(b.namespace));
}

const describeOne = (i: Installation) => `namespace ${i.namespace} (version ${i.version}, image ${i.image})`;

export function otherInstallationProblem(namespace: string, installed: readonly Installation[]): string | undefined {
  const others = installed.filter((i) => i.namespace !== namespace);
  if (!others.length) return undefined;
  const first = others[0] as Installation;
  return (
    `a devctl operator is already installed in ${others.map(describeOne).join(" and in ")}; ` +
    `a second one in namespace ${namespace} would reconcile every WebApp as well, and the two would fight. ` +
    `To move it: devctl operator uninstall -n ${first.namespace} --wait, then devctl operator install -n ${namespace}. ` +
    "To install a second one anyway (for example with --namespaces set apart), pass --force"
  );
}

interface NamespaceLike extends KubeObject {
  status?: { phase?: string };
}

export function terminatingProblem(ns: NamespaceLike | undefined): string | undefined {
  if (!ns || (!ns.metadata.deletionTimestamp && ns.status?.phase !== "Terminating")) return undefined;
  const since = ns.metadata.deletionTimestamp ? ` since ${ns.metadata.deletionTimestamp}` : "";
  return (
    `namespace ${ns.metadata.name} is being deleted (Terminating${since}); nothing was applied. ` +
    `Wait until it is gone (devctl operator uninstall -n ${ns.metadata.name} --wait, or ` +
    `kubectl wait --for=delete namespace/${ns.metadata.name}) and install again, or install into another namespace with -n`
  );
}

export type LeaseNamespaceChoice = { kind: "join"; namespace: string } | { kind: "refuse"; message: string };

export function leaseNamespaceFor(installed: readonly Installation[] | { forbidden: string }): LeaseNamespaceChoice {
  const needs = "operator run outside a cluster with leader election needs --lease-namespace";
  const how =
    "pass --lease-namespace NAMESPACE (the installed operator's, to join its leader election), " +
    "or --leader-elect=false to run one operator without a Lease";
  if ("forbidden" in installed)
    return {
      kind: "refuse",
      message:
        `${needs}: this identity may not list Deployments to find the installed operator ` +
        `(${installed.forbidden}); ${how}`,
    };
  if (installed.length === 1) return { kind: "join", namespace: (installed[0] as Installation).namespace };
  if (!installed.length)
    return {
      kind: "refuse",
      message: `${needs}: no devctl operator is installed whose Lease (${LEASE_NAME}) it could share; ${how}`,
    };
  return {
    kind: "refuse",
    message:
      `${needs}: devctl operators are installed in ${installed.map((i) => i.namespace).join(", ")} ` +
      `(two fleets already; see devctl operator status); ${how}`,
  };
}

/**
 * The checks install makes before it writes anything: the namespace is not being deleted, and no
 * operator is installed in another namespace (unless `force`). Reads only; a read this identity may
 * not make is noted and skipped (the permission preflight of applyAll reports what is missing).
 */
export async function installPreflight(
  client: KubeClient,
  namespace: string,
  o: { force: boolean; onNote?: (line: string) => void; signal?: AbortSignal },
): Promise<void> {
  const ns = await client
    .get<NamespaceLike>(INSTALL_RESOURCES.Namespace as ResourceType, namespace, undefined, o.signal)
    .catch((e: unknown) => {
      if (isNotFound(e) || isForbidden(e)) return undefined;
      throw e;
    });
  const terminating = terminatingProblem(ns);
  if (terminating) throw new InstallError(terminating);
  if (o.force) return;
  let installed: Installation[];
  try {
    installed = await findInstallations(client, o.signal);
  } catch (e) {
    if (!isForbidden(e)) throw e;
    o.onNote?.(`could not check for devctl operators in other namespaces: ${(e as Error).message}`);
    return;
  }
  const other = otherInstallationProblem(namespace, installed);
  if (other) throw new InstallError(other);
}
