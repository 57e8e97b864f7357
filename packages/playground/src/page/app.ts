// The playground page: three tools over @ampcors/core, which esbuild bundles
// separately as core.js. Every value shown comes from a core function; this
// script only reads the fields, calls core and renders the result.
import {
  type AmpCache,
  CACHES,
  cacheUrl,
  explainOrigin,
  isAmpCorsError,
  type OriginExplanation,
  type ServingType,
  type Verdict,
} from '@ampcors/core';
import { LIMITS } from './limits.js';

/** Delay between the last keystroke and the update. */
const DEBOUNCE_MS = 120;

const DEFAULTS = {
  url: 'https://example.com/amp_document.html',
  origin: 'https://www-example-com.cdn.ampproject.org',
  check: 'https://example-com.cdn.ampproject.org',
  publishers: 'example.com\n*.example.org',
};

/** The serving types tool 1 lists (SPEC §3). */
const SERVING: ReadonlyArray<{ type: ServingType; width?: number; what: string }> = [
  { type: 'c', what: 'content: a standalone AMP page' },
  { type: 'v', what: 'viewer: the page in an AMP viewer' },
  { type: 'wp', what: 'web package (signed exchange)' },
  { type: 'cert', what: 'signed-exchange certificate' },
  { type: 'i', what: 'image' },
  { type: 'ii', width: 800, what: 'image, at most 800 px wide' },
  { type: 'r', what: 'resource such as a font' },
];

/** Keys of the page state in the address's hash. */
const STATE_KEYS = { url: 'url', origin: 'origin', check: 'check', publishers: 'publishers' } as const;
type Field = keyof typeof STATE_KEYS;

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

// ---- Tool 1: publisher URL → cache URLs ----

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

function cacheTable(publisherUrl: string, cache: AmpCache): HTMLElement {
  const rows = SERVING.map(({ type, width, what }) => {
    const url = cacheUrl(publisherUrl, width === undefined ? { cache, servingType: type } : { cache, servingType: type, width });
    const path = width === undefined ? `/${type}` : `/${type}/w${width}`;
    return el(
      'tr',
      { 'data-type': path },
      el('th', { scope: 'row' }, el('code', {}, path), el('br'), el('small', {}, what)),
      el('td', {}, code(url, 'cache-url')),
      el('td', { class: 'copy' }, copyButton(url, `${path} URL on the ${cache.name}`)),
    );
  });
  const first = cacheUrl(publisherUrl, { cache, servingType: 'c' });
  const origin = new URL(first).origin;
  return el(
    'table',
    { 'data-cache': cache.id },
    el('caption', {}, `${cache.name}: origin `, code(origin, 'cache-origin'), ' ', copyButton(origin, `${cache.name} origin`)),
    el('tbody', {}, ...rows),
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
    const tables = CACHES.map((cache) => cacheTable(value, cache));
    results.replaceChildren(...tables);
    if (hasInvisible(value)) message.textContent = 'The URL contains invisible or control characters (shown as \\u{…}); the URL parser drops tabs and line breaks.';
  } catch (error) {
    message.textContent = errorText(error);
  }
}

// ---- Tool 2: Origin → publisher domain, step by step ----

function conclusion(explanation: OriginExplanation): HTMLElement {
  const result = explanation.result;
  if (!result.ok) {
    return el('span', { class: 'denied' }, 'Not reversed: ', el('code', { 'data-role': 'reason' }, result.reason), ` (${result.detail})`);
  }
  if (result.hashed) {
    return el('span', {}, 'Hashed prefix on the ', result.cache.name, ': it cannot be reversed. Paste your domains in tool 3 to see whose it is.');
  }
  return el(
    'span',
    { class: 'allowed' },
    'Publisher domain: ',
    el('code', { 'data-role': 'publisher-domain' }, result.publisherDomain),
    ` on the ${result.cache.name} (prefix form “${result.form}”)`,
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

// ---- Tool 3: Origin + domain list → verdict ----

function row(label: string, field: string, value: Node | string): HTMLElement[] {
  return [el('dt', {}, label), el('dd', { 'data-field': field }, value)];
}

function verdictList(verdict: Verdict, explanation: OriginExplanation): HTMLElement {
  const parts: HTMLElement[] = [
    ...row('Decision', 'allowed', el('strong', { class: verdict.allowed ? 'allowed' : 'denied' }, verdict.allowed ? 'allowed' : 'denied (403 before the handler)')),
    ...row('Reason code', 'reason', el('code', {}, verdict.reason)),
  ];
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
  return el('dl', {}, ...parts);
}

function renderCheck(): void {
  const message = byId('check-message');
  const output = byId('verdict');
  output.replaceChildren();
  message.textContent = limitMessage('check') || limitMessage('publishers');
  if (message.textContent !== '') return;
  const publishers = fields.publishers.value.split(/[\s,]+/u).filter((rule) => rule !== '');
  if (publishers.length > LIMITS.rules) {
    message.textContent = `Too many publisher rules: ${publishers.length}, the limit is ${LIMITS.rules}. Nothing was computed.`;
    return;
  }
  if (publishers.length === 0) {
    message.textContent = 'List at least one publisher domain.';
    return;
  }
  const explanation = explainOrigin(fields.check.value, { publishers });
  if (explanation.configError) {
    message.textContent = `The domain list is refused (${explanation.configError.code}): ${visible(explanation.configError.message)}`;
    return;
  }
  if (explanation.verdict) output.replaceChildren(verdictList(explanation.verdict, explanation));
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
  renderUrls();
  renderTrace();
  renderCheck();
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
