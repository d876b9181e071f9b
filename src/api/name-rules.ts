/**
 * Kubernetes' rules for names and label keys and values (k8s.io/apimachinery/pkg/util/validation), with the reason
 * a text breaks them. Pure. The spec's schema (pod-template.ts) and the CLI's flags (cli/operator/_pod-flags.ts)
 * both check by these, so a value either accepts is one the API server accepts.
 */

/** DNS-1123 subdomain: the names of Secrets, ConfigMaps, and a label key's prefix. */
export const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** The name part of a label key, and a label value that is not empty. */
const QUALIFIED_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** A DNS-1123 subdomain of at most 253 characters. */
export const isDnsSubdomain = (name: string): boolean => name.length <= 253 && DNS1123_SUBDOMAIN.test(name);

/** Why `key` is not a label or annotation key (an optional DNS subdomain prefix and "/", then a name of 1-63). */
export function labelKeyProblem(key: string): string | undefined {
  const slash = key.lastIndexOf("/");
  const [prefix, name] = slash < 0 ? [undefined, key] : [key.slice(0, slash), key.slice(slash + 1)];
  if (prefix !== undefined && !isDnsSubdomain(prefix))
    return `its prefix "${prefix}" must be a DNS subdomain (lower-case letters, digits, '-' and '.')`;
  if (name.length > 63 || !QUALIFIED_NAME.test(name))
    return "its name must be 1 to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit";
  return undefined;
}

export const isQualifiedName = (key: string): boolean => labelKeyProblem(key) === undefined;

/** Why `value` is not a label value (empty, or at most 63 characters of a name). */
export function labelValueProblem(value: string): string | undefined {
  if (value === "" || (value.length <= 63 && QUALIFIED_NAME.test(value))) return undefined;
  return "the value must be at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit";
}
