/**
 * The version and git commit baked into the executable at build time (`bun build --define`).
 * Running from source they read "dev" and "unknown".
 */
declare const DEVCTL_VERSION: string | undefined;
declare const DEVCTL_COMMIT: string | undefined;

export const VERSION: string = typeof DEVCTL_VERSION === "string" ? DEVCTL_VERSION : "dev";
export const COMMIT: string = typeof DEVCTL_COMMIT === "string" ? DEVCTL_COMMIT : "unknown";
export const versionLine = (): string => `devctl ${VERSION} (commit ${COMMIT})`;
