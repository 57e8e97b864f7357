// The playground page: three tools over @ampcors/core, which esbuild bundles
// separately as core.js, in the order of the question people arrive with:
// why is this Origin blocked (the verdict and how to fix it), which publisher
// a cache Origin names (the trace), and what the cache URLs of a page are.
// Every value shown comes from a core function; this script only reads the
// fields, calls core and renders the result.
import {
  type AmpCache,
  CACHES,
  cacheUrl,
  canonicalDomain,
  createVerifier,
  explainOrigin,
  isAmpCorsError,
  type OriginExplanation,
  type ServingType,
  type Verdict,
} from '@ampcors/core';
import { DENY_FIXES } from './fixes.js';
import { LIMITS } from './limits.js';

/** Delay between the last keystroke and the update. */
const DEBOUNCE_MS = 120;

/** Keys of the page state in the address's hash. */
const STATE_KEYS = { url: 'url', origin: 'origin', check: 'check', publishers: 'publishers' } as const;
type Field = keyof typeof STATE_KEYS;

/**
 * The values a field shows when the address does not give one: the server's
 * own (a server such as the demo fills the `ampcors-defaults` meta element
 * with its publisher list, see playgroundHtml), else these examples.
 */
const DEFAULTS: Record<Field, string> = {
  url: 'https://example.com/amp_document.html',
  origin: 'https://www-example-com.cdn.ampproject.org',
  check: 'https://example-com.cdn.ampproject.org',
  publishers: 'example.com\n*.example.org',
  ...serverDefaults(),
};

/** The string fields of the `ampcors-defaults` meta element's JSON; anything else in it is ignored. */
function serverDefaults(): Partial<Record<Field, string>> {
  const content = document.querySelector('meta[name="ampcors-defaults"]')?.getAttribute('content') ?? '{}';
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    return {};
  }
  if (typeof parsed !== 'object' || parsed === null) return {};
  const found: Partial<Record<Field, string>> = {};
  for (const field of Object.keys(STATE_KEYS) as Field[]) {
    const value: unknown = (parsed as Record<string, unknown>)[field];
    if (typeof value === 'string') found[field] = value;
  }
  return found;
}

/** The serving types the cache-URL tool lists (SPEC §3). */
const SERVING: ReadonlyArray<{ type: ServingType; width?: number; what: string }> = [
  { type: 'c', what: 'content: a standalone AMP page' },
  { type: 'v', what: 'viewer: the page in an AMP viewer' },
  { type: 'wp', what: 'web package (signed exchange)' },
  { type: 'cert', what: 'signed-exchange certificate' },
  { type: 'i', what: 'image' },
  { type: 'ii', width: 800, what: 'image, at most 800 px wide' },
  { type: 'r', what: 'resource such as a font' },
];

function byId<T extends HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (!found) throw new Error(`missing #${id}`);
  return found as T;
}

const fields: Record<Field, HTMLInputElement | HTMLTextAreaElement> = {
  url: byId('url-input'),
  origin: byId('origin-input'),
  check: byId('check-origin'),
  publishers: byId('check-publishers'),
};

const FIELD_LIMIT: Record<Field, number> = { url: LIMITS.url, origin: LIMITS.origin, check: LIMITS.origin, publishers: LIMITS.publishers };

// Control characters, and invisible or direction-changing ones, shown as \u{…}.
const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/gu;

/** A value as text the reader can trust: invisible characters made visible. */
function visible(value: string): string {
  return value.replace(INVISIBLE, (ch) => `\\u{${(ch.codePointAt(0) ?? 0).toString(16)}}`);
}

function hasInvisible(value: string): boolean {
  INVISIBLE.lastIndex = 0;
  const found = INVISIBLE.test(value);
  INVISIBLE.lastIndex = 0;
  return found;
}

/** Creates an element with text content and attributes (never HTML from input). */
function el(tag: string, attributes: Record<string, string> = {}, ...children: Array<Node | string>): HTMLElement {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  for (const child of children) node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  return node;
}

function code(value: string, role?: string): HTMLElement {
  return el('code', role ? { 'data-role': role } : {}, visible(value));
}

function errorText(error: unknown): string {
  if (isAmpCorsError(error)) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

/** The message for a field over its limit, or '' when the field can be computed. */
function limitMessage(field: Field): string {
  const length = fields[field].value.length;
  const limit = FIELD_LIMIT[field];
  if (length <= limit) return '';
  return `Input too long: ${length.toLocaleString('en')} characters, the limit is ${limit.toLocaleString('en')}. Nothing was computed.`;
}

// ---- Last on the page: publisher URL → cache URLs ----

const copyStatus = byId('copy-status');

async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // No clipboard API or no permission: copy through a selected, off-screen text area.
    const area = el('textarea', { readonly: '', class: 'visually-hidden' }) as HTMLTextAreaElement;
    area.value = text;
    document.body.append(area);
    area.select();
    const copied = document.execCommand('copy');
    area.remove();
    return copied;
  }
}

function copyButton(text: string, label: string): HTMLElement {
  const button = el('button', { type: 'button', 'aria-label': `Copy ${label}`, 'data-copy': text }, 'Copy');
  button.addEventListener('click', () => {
    void copyText(text).then((copied) => {
      button.textContent = copied ? 'Copied' : 'Copy failed';
      copyStatus.textContent = copied ? `Copied ${label}` : `Could not copy ${label}`;
      setTimeout(() => {
        button.textContent = 'Copy';
      }, 1500);
    });
  });
  return button;
}

/**
 * One cache's URLs as a list (not a table): each row is a grid that puts the
 * URL under its label and beside its Copy button on a narrow screen.
 */
function cacheList(publisherUrl: string, cache: AmpCache): HTMLElement {
  const rows = SERVING.map(({ type, width, what }) => {
    const url = cacheUrl(publisherUrl, width === undefined ? { cache, servingType: type } : { cache, servingType: type, width });
    const path = width === undefined ? `/${type}` : `/${type}/w${width}`;
    return el(
      'li',
      { class: 'cache-row', 'data-type': path },
      el('span', { class: 'what' }, el('code', {}, path), ' ', el('small', {}, what)),
      code(url, 'cache-url'),
      copyButton(url, `${path} URL on the ${cache.name}`),
    );
  });
  const first = cacheUrl(publisherUrl, { cache, servingType: 'c' });
  const origin = new URL(first).origin;
  const titleId = `cache-${cache.id}-title`;
  return el(
    'section',
    { class: 'cache', 'data-cache': cache.id, 'aria-labelledby': titleId },
    el('h3', { id: titleId }, cache.name),
    el('div', { class: 'cache-row' }, el('span', { class: 'what' }, 'origin'), code(origin, 'cache-origin'), copyButton(origin, `${cache.name} origin`)),
    el('ul', { class: 'cache-urls' }, ...rows),
  );
}

function renderUrls(): void {
  const message = byId('url-message');
  const results = byId('url-results');
  results.replaceChildren();
  const value = fields.url.value;
  message.textContent = limitMessage('url');
  if (message.textContent !== '' || value === '') return;
  try {
    results.replaceChildren(...CACHES.map((cache) => cacheList(value, cache)));
    if (hasInvisible(value))
      message.textContent = 'The URL contains invisible or control characters (shown as \\u{…}); the URL parser drops tabs and line breaks.';
  } catch (error) {
    message.textContent = errorText(error);
  }
}

// ---- Second: Origin → publisher domain, step by step ----

function conclusion(explanation: OriginExplanation): HTMLElement {
  const result = explanation.result;
  if (!result.ok) {
    return el('span', { class: 'denied' }, 'Not reversed: ', el('code', { 'data-role': 'reason' }, result.reason), ` (${result.detail})`);
  }
  if (result.hashed) {
    return el(
      'span',
      { class: 'neutral' },
      'Hashed prefix on the ',
      result.cache.name,
      ': it cannot be reversed. Paste it with your domains in the check above to see whose it is.',
    );
  }
  // Neutral on purpose: a reversed prefix names a domain, it does not make it trusted.
  return el(
    'span',
    { class: 'neutral' },
    'Publisher domain: ',
    el('code', { 'data-role': 'publisher-domain' }, result.publisherDomain),
    ` on the ${result.cache.name} (prefix form “${result.form}”). This names the domain only: whether it is trusted depends on your list, checked above.`,
  );
}

function renderTrace(): void {
  const message = byId('origin-message');
  const list = byId('trace-steps');
  const summary = byId('trace-result');
  list.replaceChildren();
  summary.replaceChildren();
  message.textContent = limitMessage('origin');
  const value = fields.origin.value;
  if (message.textContent !== '' || value === '') return;
  const explanation = explainOrigin(value);
  const items = explanation.steps.map((step) =>
    el(
      'li',
      { 'data-step': step.name, 'data-status': step.status, class: `status-${step.status}` },
      el('span', { class: 'title' }, step.title),
      el('span', { class: 'badge' }, step.reason ? `${step.status}: ${step.reason}` : step.status),
      el('span', { class: 'io' }, code(step.input, 'input'), ' → ', step.output === null ? el('em', {}, 'no value') : code(step.output, 'output')),
      el('span', { class: 'note' }, visible(step.note)),
    ),
  );
  list.replaceChildren(...items);
  summary.replaceChildren(conclusion(explanation));
}

// ---- First: Origin + domain list → verdict, and how to fix it ----

function row(label: string, field: string, value: Node | string): HTMLElement[] {
  return [el('dt', {}, label), el('dd', { 'data-field': field }, value)];
}

/** The headline, the "how to fix" line of a denied origin, and every fact of the verdict. */
function verdictView(verdict: Verdict, explanation: OriginExplanation): HTMLElement[] {
  const headline = verdict.allowed
    ? el('p', { class: 'headline allowed', 'data-field': 'allowed' }, 'allowed ', el('code', {}, verdict.reason))
    : el('p', { class: 'headline denied', 'data-field': 'allowed' }, 'denied (403 before the handler): ', el('code', {}, verdict.reason));
  const view: HTMLElement[] = [headline];
  if (!verdict.allowed) view.push(el('p', { class: 'fix', 'data-field': 'fix' }, el('strong', {}, 'How to fix: '), DENY_FIXES[verdict.reason]));
  const parts: HTMLElement[] = [...row('Reason code', 'reason', el('code', {}, verdict.reason))];
  if (!verdict.allowed) parts.push(...row('Detail', 'detail', visible(verdict.detail)));
  if (verdict.allowed) parts.push(...row('Recognized as', 'via', verdict.via));
  if (verdict.publisherDomain !== undefined) parts.push(...row('Publisher domain', 'publisher-domain', code(verdict.publisherDomain)));
  if (verdict.cache !== undefined) parts.push(...row('Cache', 'cache', verdict.cache.name));
  if (verdict.prefix !== undefined) parts.push(...row('Domain prefix', 'prefix', code(verdict.prefix)));
  if (verdict.allowed && verdict.prefixForm !== undefined) parts.push(...row('Prefix form', 'prefix-form', code(verdict.prefixForm)));
  const sources = explanation.producedBy ?? [];
  if (sources.length > 0) {
    const items = sources.map((s) => el('li', {}, code(s.listed), ` (form ${s.form})`));
    parts.push(...row('Prefix produced by', 'produced-by', el('ul', {}, ...items)));
  } else if ('prefix' in explanation.result && explanation.result.prefix !== undefined) {
    parts.push(...row('Prefix produced by', 'produced-by', 'none of the listed domains'));
  }
  if (verdict.allowed && verdict.origin !== null) {
    parts.push(...row('Access-Control-Allow-Origin', 'acao', code(verdict.origin)));
  }
  view.push(el('dl', {}, ...parts));
  return view;
}

/** One rule of the pasted list and the line it is on (1-based). */
interface ListEntry {
  readonly rule: string;
  readonly line: number;
}

function entriesOf(text: string): ListEntry[] {
  return text.split('\n').flatMap((line, index) =>
    line
      .split(/[\s,]+/u)
      .filter((rule) => rule !== '')
      .map((rule) => ({ rule, line: index + 1 })),
  );
}

/** Why one rule is refused, or undefined when core accepts it on its own. */
function entryError(rule: string): string | undefined {
  try {
    createVerifier({ publishers: [rule] });
    return undefined;
  } catch (error) {
    return errorText(error);
  }
}

/**
 * The host of a rule written as a URL or with a path (`https://example.com/`),
 * when that host is a domain core accepts: the rule the user meant.
 */
function meantRule(rule: string): string | undefined {
  if (!/[/:]/u.test(rule)) return undefined;
  try {
    const host = canonicalDomain(new URL(rule.includes('://') ? rule : `https://${rule}`).hostname);
    return entryError(host) === undefined ? host : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Every refused rule of a refused list, each checked on its own by core (the
 * list's own error names only the first), with its line and a suggestion
 * when the rule was a URL. When each rule passes alone, the list's error.
 */
function listErrors(entries: readonly ListEntry[], listError: string): HTMLElement[] {
  const bad = entries.flatMap((entry) => {
    const why = entryError(entry.rule);
    return why === undefined ? [] : [{ ...entry, why }];
  });
  if (bad.length === 0) return [el('p', {}, `The domain list is refused: ${visible(listError)}`)];
  const items = bad.map(({ rule, line, why }) => {
    const meant = meantRule(rule);
    return el(
      'li',
      { 'data-entry': rule },
      `line ${line}: `,
      code(rule),
      ` — ${visible(why)}`,
      ...(meant === undefined ? [] : [' Did you mean ', code(meant), '?']),
    );
  });
  const count = bad.length === 1 ? '1 entry is' : `${bad.length} entries are`;
  return [
    el('p', {}, `The domain list is refused (a server given it would not start): ${count} invalid. Fix or remove:`),
    el('ul', { class: 'entry-errors' }, ...items),
  ];
}

function renderCheck(): void {
  const message = byId('check-message');
  const output = byId('verdict');
  output.replaceChildren();
  message.replaceChildren();
  const tooLong = limitMessage('check') || limitMessage('publishers');
  if (tooLong !== '') {
    message.textContent = tooLong;
    return;
  }
  const entries = entriesOf(fields.publishers.value);
  if (entries.length > LIMITS.rules) {
    message.textContent = `Too many publisher rules: ${entries.length}, the limit is ${LIMITS.rules}. Nothing was computed.`;
    return;
  }
  if (entries.length === 0) {
    message.textContent = 'List at least one publisher domain.';
    return;
  }
  const explanation = explainOrigin(fields.check.value, { publishers: entries.map((entry) => entry.rule) });
  if (explanation.configError) {
    message.replaceChildren(...listErrors(entries, `${explanation.configError.code}: ${explanation.configError.message}`));
    return;
  }
  if (explanation.verdict) output.replaceChildren(...verdictView(explanation.verdict, explanation));
}

// ---- State in the address, debounced updates, wiring ----

const RENDER: Record<Field, () => void> = { url: renderUrls, origin: renderTrace, check: renderCheck, publishers: renderCheck };

function saveState(): void {
  const params = new URLSearchParams();
  for (const field of Object.keys(STATE_KEYS) as Field[]) {
    const value = fields[field].value;
    if (value.length <= FIELD_LIMIT[field]) params.set(STATE_KEYS[field], value);
  }
  history.replaceState(null, '', `#${params.toString()}`);
}

function loadState(): void {
  const params = new URLSearchParams(location.hash.slice(1));
  for (const field of Object.keys(STATE_KEYS) as Field[]) {
    const value = params.get(STATE_KEYS[field]);
    fields[field].value = value === null ? DEFAULTS[field] : value;
  }
}

function renderAll(): void {
  renderCheck();
  renderTrace();
  renderUrls();
}

const timers = new Map<Field, ReturnType<typeof setTimeout>>();

function schedule(field: Field): void {
  clearTimeout(timers.get(field));
  timers.set(
    field,
    setTimeout(() => {
      timers.delete(field);
      RENDER[field]();
      saveState();
      document.body.dataset.pending = String(timers.size);
    }, DEBOUNCE_MS),
  );
  document.body.dataset.pending = String(timers.size);
}

for (const field of Object.keys(STATE_KEYS) as Field[]) {
  fields[field].addEventListener('input', () => schedule(field));
}

for (const button of document.querySelectorAll<HTMLButtonElement>('button.example')) {
  button.addEventListener('click', () => {
    const target = document.getElementById(button.dataset.target ?? '') as HTMLInputElement | null;
    if (!target) return;
    target.value = button.dataset.value ?? '';
    target.dispatchEvent(new Event('input'));
    target.focus();
  });
}

window.addEventListener('hashchange', () => {
  loadState();
  renderAll();
});

loadState();
renderAll();
document.body.dataset.ready = 'true';
document.body.dataset.pending = '0';
