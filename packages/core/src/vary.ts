/**
 * Appends header names to a `Vary` value without replacing or duplicating
 * what is there (case-insensitive); `*` already covers everything.
 *
 * @example appendVary('Accept-Encoding', ['Origin']) // 'Accept-Encoding, Origin'
 */
export function appendVary(existing: string | readonly string[] | number | null | undefined, names: readonly string[]): string {
  const none = existing === undefined || existing === null || existing === '';
  // Fastest path, the usual case: no Vary yet and a frozen list (a plan's lists are shared and frozen): joined once.
  // (Only frozen lists are remembered, so a remembered one needs no `isFrozen`, which costs more than the lookup.)
  if (none) {
    let joined = joinedLists.get(names);
    if (joined === undefined && Object.isFrozen(names)) {
      joined = appendNames('', names);
      joinedLists.set(names, joined);
    }
    if (joined !== undefined) return joined;
  }
  // Fast path: no Vary yet and one name, or two that differ.
  if (none && names.length <= 2) {
    const [first, second] = names;
    if (second === undefined) return first === undefined || first.trim() === '' ? '' : first.trim();
    if (first !== undefined && first.trim() !== '' && second.trim() !== '' && first.trim().toLowerCase() !== second.trim().toLowerCase()) {
      return `${first.trim()}, ${second.trim()}`;
    }
  }
  return appendNames(existing === undefined || existing === null ? '' : Array.isArray(existing) ? existing.join(', ') : String(existing), names);
}

/** The `Vary` value of each frozen name list, when there is no `Vary` yet (names cannot change: the list is frozen). */
const joinedLists = new WeakMap<readonly string[], string>();

/** {@link appendVary} of a `Vary` value given as one string. */
function appendNames(current: string, names: readonly string[]): string {
  const present = current
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (present.includes('*')) return '*';
  const lower = new Set(present.map((name) => name.toLowerCase()));
  for (const raw of names) {
    const name = raw.trim();
    if (name !== '' && !lower.has(name.toLowerCase())) {
      present.push(name);
      lower.add(name.toLowerCase());
    }
  }
  return present.join(', ');
}
