/** The part of `@ampproject/toolbox-cors` 2.10 (untyped CommonJS) the benchmark uses. */
declare module '@ampproject/toolbox-cors' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  /** A cache list: what `@ampproject/toolbox-cache-list` offers, and what the middleware calls. */
  interface CacheList {
    list(): Promise<readonly { readonly id: string; readonly cacheDomain: string }[]>;
  }

  /** Creates the AMP CORS middleware; `caches` defaults to the live caches.json. */
  function ampCors(
    options?: { readonly verifyOrigin?: boolean; readonly email?: boolean; readonly sourceOriginPattern?: RegExp },
    caches?: CacheList,
  ): (request: IncomingMessage, response: ServerResponse, next: () => void) => Promise<void>;
  export default ampCors;
}
