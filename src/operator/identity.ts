/**
 * The leader-election identity: it says where the operator runs, so `operator status` and
 * `install --wait` can tell which process leads.
 *
 * Properties:
 * - In a pod (POD_NAME set by the Deployment from the downward API): `<pod name>_<suffix>`.
 * - Elsewhere: `<host>_pid<pid>_<suffix>`; in a pod without POD_NAME the host name is the pod name,
 *   so the identity still starts with `<pod name>_`.
 * - The random suffix keeps two processes of one pod or host (a restart racing its predecessor) apart.
 */
export function leaderIdentity(env: { POD_NAME?: string | undefined }, host: string, pid: number, suffix: string) {
  const pod = env.POD_NAME?.trim();
  return pod ? `${pod}_${suffix}` : `${host}_pid${pid}_${suffix}`;
}
