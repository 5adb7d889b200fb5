import { InvalidOptionsError, shown } from '../errors.js';

/**
 * The names of an options type, written once as `{ name: true, ... } satisfies KnownKeys<Options>`:
 * the compiler then refuses a list that misses a field of the interface or names one it lacks, so
 * the list cannot drift from the type.
 */
export type KnownKeys<T> = Readonly<Record<keyof T, true>>;

/**
 * Refuses an options object with a name its type does not have: a misspelling (`sessionTimeout`,
 * `connectString`) or an option of another version of this package would otherwise be ignored
 * without a word.
 * @param what the options, as a message names them ("a ZkLockModule option").
 * @param prefix put before a name in the error (`cohort.`), for nested objects.
 * @throws InvalidOptionsError naming the first unknown name and the closest known one.
 */
export function refuseUnknownKeys(given: object, known: Readonly<Record<string, true>>, what: string, prefix = ''): void {
  for (const name of Object.keys(given)) {
    if (Object.hasOwn(known, name)) continue;
    const names = Object.keys(known);
    const closest = closestName(name, names);
    throw new InvalidOptionsError(
      `${prefix}${name}`,
      `is not ${what} (misspelt, or an option of another version of nestjs-zk-lock): ` +
        (closest === undefined ? `the options are ${names.join(', ')}` : `the closest option is ${shown(`${prefix}${closest}`)}`),
    );
  }
}

/**
 * The known name nearest to `name`, when near enough to be what was meant: the same letters in
 * another case, a known name that starts with it (`sessionTimeout`), or one a few edits away
 * (`connectString`). Undefined when nothing is close.
 */
export function closestName(name: string, names: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of names) {
    const other = candidate.toLowerCase();
    const distance = other === lower ? 0 : other.startsWith(lower) && lower.length >= 4 ? 1 : editDistance(lower, other);
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return bestDistance <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined;
}

/** Edits (insert, delete, replace, swap of neighbours) from a to b. */
function editDistance(a: string, b: string): number {
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j]!, before[j - 2]! + 1);
    }
    [before, previous] = [previous, row];
  }
  return previous[b.length]!;
}
