/** Most problems one configuration error lists; its count names them all. */
export const MAX_LISTED_PROBLEMS = 20;

/**
 * The message of one error for several refused entries of an option
 * (`publishers`, `caches`): all are reported at once, not only the first.
 *
 * @example listedProblems('publishers', ['"a" is …', '"b" is …']) // 'publishers: 2 entries are refused:\n  - "a" is …\n  - "b" is …'
 */
export function listedProblems(option: string, problems: readonly string[]): string {
  const listed = problems.slice(0, MAX_LISTED_PROBLEMS).map((problem) => `  - ${problem}`);
  if (problems.length > MAX_LISTED_PROBLEMS) listed.push(`  … and ${problems.length - MAX_LISTED_PROBLEMS} more`);
  return `${option}: ${problems.length} entries are refused:\n${listed.join('\n')}`;
}
