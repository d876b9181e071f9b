/**
 * Writes crd/webapps.apps.example.com.yaml from the schemas (`bun run src/api/crd-gen.ts`), or with
 * `--check` exits 1 when the checked-in file differs from what the schemas give.
 */
import { renderCrdYaml } from "./crd.ts";

export const CRD_FILE = new URL("../../crd/webapps.apps.example.com.yaml", import.meta.url).pathname;

async function main(argv: readonly string[]): Promise<number> {
  const want = renderCrdYaml();
  const file = Bun.file(CRD_FILE);
  const have = (await file.exists()) ? await file.text() : undefined;
  if (argv.includes("--check")) {
    if (have === want) return 0;
    console.error(`${CRD_FILE} is ${have === undefined ? "missing" : "out of date"}; run: bun run src/api/crd-gen.ts`);
    return 1;
  }
  if (have !== want) await Bun.write(CRD_FILE, want);
  console.log(`${have === want ? "unchanged" : "wrote"} ${CRD_FILE}`);
  return 0;
}

if (import.meta.main) process.exit(await main(process.argv.slice(2)));
