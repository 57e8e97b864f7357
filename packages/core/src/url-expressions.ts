// SPEC §5 host-suffix / path-prefix expressions (Safe Browsing v5 rule, with
// the Public Suffix List).
import { getDomain } from 'tldts';
import { isIpHost } from './canonical-host.js';
import { canonicalUrlParts } from './canonical-url.js';

/** Hosts formed from the eTLD+1 by adding leading components: at most 4. */
const MAX_SUFFIX_HOSTS = 4;
/** Paths formed from `/` by adding components: at most 4. */
const MAX_PREFIX_PATHS = 4;

// §5 expressions, hosts: the exact host, then (unless it is an IP address) up
// to 4 hosts from the eTLD+1 adding leading components, longest first as in
// the doc's `a.b.c.d.e.f.com` example. ICANN suffixes only: private PSL
// entries do not count. The host is already canonical, so tldts is told not
// to parse it as a URL (`#` and `%` in escaped hosts would confuse that).
function expressionHosts(host: string): string[] {
  if (isIpHost(host)) return [host];
  const domain = getDomain(host, { allowPrivateDomains: false, extractHostname: false });
  if (domain === null) return [host];
  const labels = host.split('.');
  const domainLabels = domain.split('.').length;
  const longest = Math.min(labels.length, domainLabels + MAX_SUFFIX_HOSTS - 1);
  const hosts = [host];
  for (let count = longest; count >= domainLabels; count -= 1) {
    const suffix = labels.slice(labels.length - count).join('.');
    if (suffix !== host) hosts.push(suffix);
  }
  return hosts;
}

// §5 expressions, paths: the exact path with the query (when there is one),
// the exact path, then `/` and up to 3 more directory prefixes, shortest first
// as in the doc's `a.b.com/1/2.html?param=1` example.
function expressionPaths(path: string, query: string | null): string[] {
  const paths = query === null || query === '' ? [path] : [`${path}?${query}`, path];
  const directories = path.split('/').slice(1, -1);
  let prefix = '/';
  for (let i = 0; i < MAX_PREFIX_PATHS; i += 1) {
    if (!paths.includes(prefix)) paths.push(prefix);
    const directory = directories[i];
    if (directory === undefined) break;
    prefix += `${directory}/`;
  }
  return paths;
}

/**
 * The Safe Browsing host-suffix / path-prefix expressions of a URL (SPEC §5,
 * v5 rule): the URL is canonicalized (see `canonicalizeUrl`), scheme, userinfo
 * and port are dropped, and every host is combined with every path:
 *
 * - hosts: the exact host, then, unless it is an IP address, up to 4 hosts
 *   formed from its eTLD+1 (Public Suffix List, ICANN section) by adding
 *   leading components, longest first;
 * - paths: the exact path with its query (if the query is not empty), the
 *   exact path, then up to 4 prefixes from `/` adding one directory at a time.
 *
 * So at most 5 × 6 = 30 expressions, without duplicates, host-major in the
 * order of the doc's examples.
 *
 * @param url - the URL (a missing scheme means `http`)
 * @returns the expressions, as hashed by {@link hashPrefix}
 * @throws AmpCorsError `invalid-url`, `invalid-host` or `invalid-ip` when the
 *   URL cannot be canonicalized
 * @example urlExpressions('http://a.b.com/1/2.html?param=1')
 * // ['a.b.com/1/2.html?param=1', 'a.b.com/1/2.html', 'a.b.com/', 'a.b.com/1/',
 * //  'b.com/1/2.html?param=1', 'b.com/1/2.html', 'b.com/', 'b.com/1/']
 */
export function urlExpressions(url: string): string[] {
  const { host, path, query } = canonicalUrlParts(url);
  const paths = expressionPaths(path, query);
  return expressionHosts(host).flatMap((suffix) => paths.map((prefix) => suffix + prefix));
}
