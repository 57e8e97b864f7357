/**
 * Appends header names to a `Vary` value without replacing or duplicating
 * what is there (case-insensitive); `*` already covers everything.
 *
 * @example appendVary('Accept-Encoding', ['Origin']) // 'Accept-Encoding, Origin'
 */
export function appendVary(existing: string | readonly string[] | number | null | undefined, names: readonly string[]): string {
  // Fast path, the usual case: no Vary yet and one name, or two that differ.
  if ((existing === undefined || existing === null || existing === '') && names.length <= 2) {
    const [first, second] = names;
    if (second === undefined) return first === undefined || first.trim() === '' ? '' : first.trim();
    if (first !== undefined && first.trim() !== '' && second.trim() !== '' && first.trim().toLowerCase() !== second.trim().toLowerCase()) {
      return `${first.trim()}, ${second.trim()}`;
    }
  }
  const current = existing === undefined || existing === null ? '' : Array.isArray(existing) ? existing.join(', ') : String(existing);
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
