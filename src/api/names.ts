/**
 * Names devctl writes into clusters that more than one layer must agree on: the CLI (`operator run` flag defaults,
 * `webapp create`), the installer (the objects it deploys and removes) and the operator. A leaf without imports,
 * so any command may load it. Each value is on already-installed clusters: changing one is a migration, not an
 * edit (see each).
 */

/**
 * The leader-election Lease in the operator's namespace. Every replica must use the same name, or each would
 * lead on its own Lease; uninstall and status find it by this name.
 */
export const LEASE_NAME = "webapp-operator-lock";

/**
 * The server-side-apply field manager of devctl's own writes (install's manifests). It owns those fields on
 * installed clusters: uninstall removes only objects whose every manager is this one, and a new name would leave
 * the old manager co-owning every field (a dropped field would no longer be pruned). The operator writes its
 * children under its own manager, "webapp-operator" (operator/reconciler.ts).
 */
export const DEVCTL_FIELD_MANAGER = "devctl";
