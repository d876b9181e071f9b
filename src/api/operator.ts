/**
 * Names of the WebApp operator itself that more than one layer writes: the CLI (`operator run` flag defaults),
 * the installer (the objects it deploys and removes) and the operator. A leaf without imports, so any command may
 * load it. Each value is on already-installed clusters: changing one is a migration, not an edit.
 */

/**
 * The leader-election Lease in the operator's namespace. Every replica must use the same name, or each would
 * lead on its own Lease; uninstall and status find it by this name.
 */
export const LEASE_NAME = "webapp-operator-lock";
