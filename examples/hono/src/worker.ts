/**
 * The Hono publisher API as a Cloudflare Worker module: the app is the
 * Worker (`app.fetch(request, env, ctx)`). `navigator.userAgent` is
 * `Cloudflare-Workers` in workerd, which `GET /health` reports.
 */
import { createApp } from './app.js';

export default createApp(navigator.userAgent);
