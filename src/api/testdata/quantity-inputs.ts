/**
 * Quantity texts around every rule of canonicalQuantity (leading zeros, fractions, multiples of 1000 and 1024,
 * the fast path's 18 digits, amounts below 1n, the cap past 8Ei), with every suffix. tests/apicheck.ts records
 * what the API server stores for each into quantities.json.
 */
const INTEGERS = [
  "0",
  "1",
  "5",
  "8",
  "10",
  "100",
  "128",
  "500",
  "512",
  "1000",
  "1023",
  "1024",
  "1025",
  "1536",
  "2048",
  "1048576",
  "123456789012345678",
  "1234567890123456789",
];
const FRACTIONS = ["", ".5", ".25", ".1", ".500", ".000", ".0000000001", ".123456789"];
const SUFFIXES = ["", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];

export const QUANTITY_INPUTS: string[] = INTEGERS.flatMap((i) =>
  FRACTIONS.flatMap((f) => SUFFIXES.map((s) => i + f + s)),
);
