/** The part of `autocannon` 9 (untyped) the benchmark uses. */
declare module 'autocannon' {
  namespace autocannon {
    /** One request template. */
    interface Request {
      readonly method: 'GET' | 'OPTIONS' | 'POST' | 'HEAD';
    }
    /** Options of a run. */
    interface Options {
      readonly url: string;
      readonly method?: Request['method'];
      readonly headers?: Record<string, string>;
      readonly connections?: number;
      readonly pipelining?: number;
      readonly duration?: number;
      /** Stop after this many requests (instead of `duration`). */
      readonly amount?: number;
    }
    /** Summary statistics of one quantity. */
    interface Histogram {
      readonly average: number;
      readonly p50: number;
    }
    /** The request counts of a run, besides the per-second statistics. */
    interface RequestsHistogram extends Histogram {
      /** Requests completed (responses received). */
      readonly total: number;
      /** Requests sent. */
      readonly sent: number;
    }
    /** What a finished run reports. */
    interface Result {
      readonly requests: RequestsHistogram;
      readonly latency: Histogram;
      readonly non2xx: number;
      readonly errors: number;
      readonly timeouts: number;
    }
  }
  /** Runs a load test; resolves when it finishes. */
  function autocannon(options: autocannon.Options): Promise<autocannon.Result>;
  export default autocannon;
}
