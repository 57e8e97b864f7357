/**
 * The origins of the email clients known to send AMP for Email v1 requests
 * (`Origin` + `__amp_source_origin=<sender>`, SPEC §7): the default of
 * `email.clientOrigins`. A v1 answer (`Access-Control-Allow-Origin` with
 * credentials) goes only to one of these, or to an origin the verifier
 * allows; never to an origin because of what the query string says.
 *
 * Each entry is listed only with a public source stating the `Origin` its
 * requests carry:
 * - `https://mail.google.com` — Gmail. Google's "Security requirements" for
 *   AMP for Email (https://developers.google.com/gmail/ampemail/security-requirements,
 *   section "CORS Headers"): requests from Gmail's proxy servers carry
 *   `Origin: https://mail.google.com` and `__amp_source_origin=<sender>`,
 *   and expect `Access-Control-Allow-Origin: https://mail.google.com`.
 *
 * Looked for and left out, for want of a source giving their v1 `Origin`:
 * Mail.ru (its AMP documentation, linked from amp.dev "Testing AMP emails",
 * covers registration only), Yahoo Mail (https://senders.yahooinc.com/amp:
 * registration and requirements only), Outlook.com (Microsoft's
 * "Security requirements" for AMP in Outlook: sender registration only; AMP
 * support has since been withdrawn) and the Gmail AMP for Email Playground
 * (a page anyone can author requests from). The amp.dev guide "CORS in AMP
 * for Email" recommends version 2 (`AMP-Email-Sender`), which needs no
 * `Origin` at all. Add an email client you see in your own logs with
 * `email: { senders, clientOrigins: [...DEFAULT_EMAIL_CLIENT_ORIGINS, 'https://…'] }`.
 */
export const DEFAULT_EMAIL_CLIENT_ORIGINS: readonly string[] = Object.freeze(['https://mail.google.com']);
