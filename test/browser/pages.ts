/**
 * The HTML page the browser suite loads on each origin. Its script makes
 * the requests an AMP page makes to a publisher API, the way the AMP runtime
 * makes them:
 * - `list`: a credentialed GET with `__amp_source_origin`, like `amp-list`;
 * - `form`: a credentialed POST with a custom header (so the browser sends a
 *   preflight first), reading the exposed `AMP-Redirect-To`, like an
 *   `amp-form` with a redirect;
 * - `simpleForm`: a credentialed multipart POST without custom headers,
 *   which the browser sends without a preflight, so only the server can stop
 *   its side effect.
 * `AMP-Same-Origin: true` is added only when the page and the API share an
 * origin, as the runtime does. The results go to `window.ampcorsResult` and
 * into the page, so that a failure screenshot shows them.
 */

/** What one request of the page ended with. */
export type RequestOutcome =
  { readonly ok: true; readonly status: number; readonly body: unknown; readonly redirectTo: string | null } | { readonly ok: false; readonly error: string };

/** The outcomes of the page's three requests. */
export interface PageResult {
  readonly sourceOrigin: string;
  readonly list: RequestOutcome;
  readonly form: RequestOutcome;
  readonly simpleForm: RequestOutcome;
}

/** The custom request header of the `form` request, which forces a preflight. */
export const FORM_HEADER = 'X-AmpCors-Form';

// Runs in the browser: plain ES2020, no imports, no TypeScript.
const PAGE_SCRIPT = `
(() => {
  const api = new URL(location.href).searchParams.get('api');
  // The runtime's source origin: the publisher origin spelled in a cache URL
  // (/c/s/<host>/… is https, /c/<host>/… is http), else the page's own origin.
  const cachePath = /^\\/[a-z]+\\/(s\\/)?([^/]+)\\//.exec(location.pathname);
  const sourceOrigin = cachePath ? (cachePath[1] ? 'https://' : 'http://') + cachePath[2] : location.origin;
  const sameOrigin = new URL(api).origin === location.origin;
  const ampHeaders = sameOrigin ? { 'AMP-Same-Origin': 'true' } : {};
  async function outcome(request) {
    try {
      const response = await request();
      const text = await response.text();
      let body = text;
      try { body = JSON.parse(text); } catch {}
      return { ok: true, status: response.status, body, redirectTo: response.headers.get('AMP-Redirect-To') };
    } catch (error) {
      return { ok: false, error: String(error) };
    }
  }
  function formData() {
    const data = new FormData();
    data.append('email', 'reader@example.net');
    return data;
  }
  const withSource = (path) => api + path + '?__amp_source_origin=' + encodeURIComponent(sourceOrigin);
  window.ampcorsResult = (async () => {
    const list = await outcome(() => fetch(withSource('/items'), { credentials: 'include', headers: ampHeaders }));
    const form = await outcome(() => fetch(withSource('/subscribe'), {
      method: 'POST', credentials: 'include', body: formData(), headers: { ...ampHeaders, '${FORM_HEADER}': 'amp-form' },
    }));
    const simpleForm = await outcome(() => fetch(withSource('/subscribe'), {
      method: 'POST', credentials: 'include', body: formData(), headers: ampHeaders,
    }));
    const result = { sourceOrigin, list, form, simpleForm };
    document.getElementById('result').textContent = JSON.stringify(result, null, 2);
    document.title = 'done';
    return result;
  })();
})();
`;

/** The page's HTML, the same on every origin. */
export function pageHtml(): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>running</title></head>
<body>
<h1>ampcors browser check</h1>
<p>Origin: <code id="origin"></code></p>
<pre id="result">running…</pre>
<script>document.getElementById('origin').textContent = location.origin;</script>
<script>${PAGE_SCRIPT}</script>
</body>
</html>
`;
}
